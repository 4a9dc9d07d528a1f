import type { QueryExecutor } from './executor.js';

// The queue's own schema, shipped with the queue (graphile-worker's sql/
// migrations): the steps in order, each with its way back. The project's
// migrations call them by name at their place in the history (migrations/
// *-JobQueue*.ts), so a database migrated before the steps moved here is
// left as it is, and the queue's tables are written in libs/queue alone.

export interface SchemaStep {
  up(db: QueryExecutor): Promise<void>;
  down(db: QueryExecutor): Promise<void>;
}

export const QUEUE_SCHEMA = {
  // jobs and job_runs. Every index below costs a write on each non-HOT
  // update of a job (claim and completion change `status`, so they are never
  // HOT), so the table carries only the indexes some query needs, and most are
  // partial so a row sits in the ones for its current status only.
  jobs: {
    async up(db: QueryExecutor): Promise<void> {
      await db.query(`
        CREATE TABLE jobs (
          id              bigserial PRIMARY KEY,
          kind            text NOT NULL,
          payload         jsonb NOT NULL DEFAULT '{}'::jsonb,
          idempotency_key text,
          priority        integer NOT NULL DEFAULT 0,
          run_at          timestamptz NOT NULL DEFAULT now(),
          attempts        integer NOT NULL DEFAULT 0,
          max_attempts    integer NOT NULL DEFAULT 10 CHECK (max_attempts >= 1),
          status          text NOT NULL DEFAULT 'queued'
                          CHECK (status IN ('queued', 'running', 'succeeded', 'dead', 'cancelled')),
          last_error      text,
          locked_at       timestamptz,
          locked_until    timestamptz,
          locked_by       text,
          finished_at     timestamptz,
          created_at      timestamptz NOT NULL DEFAULT now(),
          updated_at      timestamptz NOT NULL DEFAULT now()
        ) WITH (
          -- Room on each page so a heartbeat (locked_until only, no indexed
          -- column) is a HOT update, and other new versions stay on their page.
          fillfactor = 80,
          -- Every job is inserted, updated twice and deleted: vacuum early and
          -- without throttling rather than let dead tuples pile up in the hot
          -- index the claim walks.
          autovacuum_vacuum_scale_factor = 0.01,
          autovacuum_vacuum_threshold = 1000,
          autovacuum_vacuum_insert_scale_factor = 0.02,
          autovacuum_analyze_scale_factor = 0.02,
          autovacuum_vacuum_cost_delay = 0
        )`);
      // The key is unique while the row exists. Partial (NULL keys are the common
      // case and need no entry) and text_pattern_ops so that a key prefix
      // (`reminder:<id>:%`) is an index range. ON CONFLICT infers this index.
      await db.query(`
        CREATE UNIQUE INDEX jobs_idempotency_key_key ON jobs (idempotency_key text_pattern_ops)
        WHERE idempotency_key IS NOT NULL`);
      // The hot index: the claim walks it in order and stops after its LIMIT.
      await db.query(`CREATE INDEX jobs_runnable_idx ON jobs (priority, run_at, id) WHERE status = 'queued'`);
      // Running jobs: the reaper and the running/stuck gauges walk them all, and
      // every compare-and-set looks one up by id. Keyed on id so that such a
      // lookup is a probe even when the planner picks this index over the
      // primary key (it does: statistics taken at a quiet moment say almost
      // nothing runs, and a partial index keyed on anything else was then
      // scanned whole once per job). locked_until is deliberately not indexed
      // so that heartbeats stay HOT.
      await db.query(`CREATE INDEX jobs_running_idx ON jobs (id) WHERE status = 'running'`);
      await db.query(`CREATE INDEX jobs_dead_idx ON jobs (kind, id) WHERE status = 'dead'`);
      // Pruning by age, and "succeeded in the last hour".
      await db.query(`
        CREATE INDEX jobs_finished_idx ON jobs (finished_at)
        WHERE status IN ('succeeded', 'dead', 'cancelled')`);

      // Execution history. A successful attempt is recorded on the job row itself
      // (status, attempts, locked_by, locked_at, finished_at); this table holds
      // the attempts that did not end in success (failed, dead, snoozed, lease
      // expired, interrupted), which keeps the happy path at one write per job.
      await db.query(`
        CREATE TABLE job_runs (
          id          bigserial PRIMARY KEY,
          job_id      bigint NOT NULL,
          kind        text NOT NULL,
          attempt     integer NOT NULL,
          worker      text,
          started_at  timestamptz,
          finished_at timestamptz NOT NULL,
          outcome     text NOT NULL
                      CHECK (outcome IN ('succeeded', 'failed', 'dead', 'snoozed', 'lease_expired', 'interrupted')),
          error       text,
          next_run_at timestamptz
        ) WITH (autovacuum_vacuum_scale_factor = 0.02, autovacuum_analyze_scale_factor = 0.02)`);
      await db.query(`CREATE INDEX job_runs_job_idx ON job_runs (job_id, id)`);
      await db.query(`CREATE INDEX job_runs_finished_idx ON job_runs (finished_at)`);
    },
    async down(db: QueryExecutor): Promise<void> {
      await db.query('DROP TABLE job_runs');
      await db.query('DROP TABLE jobs');
    },
  },
  // The queue under faults (libs/queue, issue 13).
  // - lease_token: a value of its own for every claim, which every transition
  //   of a running job compares. (id, worker, attempt) repeats after an
  //   operator's retry resets the attempts or a snooze gives one back, so a
  //   stale run could end a later run of the same job; a token never repeats.
  //   Drawn from a sequence (CACHE: each connection takes a block, so a claim
  //   of a thousand rows rarely touches the sequence itself). Not indexed: it
  //   is compared on a row found by id.
  // - snoozes: snoozes in a row since the job last ran to an end, so that a
  //   handler that snoozes for ever (to a past time, say) is stopped.
  // - job_kind_pauses: kinds an operator paused. The claim reads it (a handful
  //   of rows at most), so every worker stops claiming a paused kind at its
  //   next claim and a pause survives restarts.
  controls: {
    async up(db: QueryExecutor): Promise<void> {
      await db.query(`CREATE SEQUENCE jobs_lease_token_seq AS bigint CACHE 1000`);
      await db.query(`ALTER TABLE jobs ADD COLUMN lease_token bigint`);
      await db.query(`ALTER TABLE jobs ADD COLUMN snoozes integer NOT NULL DEFAULT 0`);
      await db.query(`
        CREATE TABLE job_kind_pauses (
          kind      text PRIMARY KEY,
          paused_at timestamptz NOT NULL
        )`);
    },
    async down(db: QueryExecutor): Promise<void> {
      await db.query('DROP TABLE job_kind_pauses');
      await db.query('ALTER TABLE jobs DROP COLUMN snoozes');
      await db.query('ALTER TABLE jobs DROP COLUMN lease_token');
      await db.query('DROP SEQUENCE jobs_lease_token_seq');
    },
  },
  // The claim probes each of its kinds (and each priority level of a kind) for
  // ready jobs: an index led by kind skips the jobs of kinds no worker claiming
  // handles, and (kind, priority) equal makes `run_at <= now` a range, so the
  // jobs scheduled for later are not walked (PostgreSQL 15–17 cannot skip over
  // a leading priority). jobs_runnable_idx stays for the gauges and the
  // "coming due" views, which read every kind.
  claimIndex: {
    async up(db: QueryExecutor): Promise<void> {
      await db.query(`CREATE INDEX jobs_claim_idx ON jobs (kind, priority, run_at, id) WHERE status = 'queued'`);
    },
    async down(db: QueryExecutor): Promise<void> {
      await db.query('DROP INDEX jobs_claim_idx');
    },
  },
  // The W3C trace context a job carries from where it was enqueued to where it
  // runs (docs/tracing.md). Nullable and without a default: with tracing off
  // every row holds NULL, which costs no space in the tuple (the null bitmap)
  // and adding the column rewrites nothing.
  // trace_parent: the job's span is a child of this one (an API request's enqueue).
  // trace_link: the job's span starts a new trace linked to this one (a job that
  // planned the next occurrence of a reminder: a chain that lasts weeks is not one trace).
  traceContext: {
    async up(db: QueryExecutor): Promise<void> {
      await db.query('ALTER TABLE jobs ADD COLUMN trace_parent text, ADD COLUMN trace_link text');
    },
    async down(db: QueryExecutor): Promise<void> {
      await db.query('ALTER TABLE jobs DROP COLUMN trace_parent, DROP COLUMN trace_link');
    },
  },
  // The dead-jobs gauge without counting dead jobs. Counting them through
  // jobs_dead_idx at every scrape cost time in proportion to the dead jobs
  // kept (30 days by default): 7 ms a scrape at 44,000 (docs/performance.md,
  // "History at scale"). Row triggers note each change instead, so every path
  // that makes or unmakes a dead job is counted — the worker, the reaper, an
  // operator's retry, the pruner, an UPDATE typed by hand — in the
  // transaction that makes it.
  // - job_dead_changes: one row per change, +1 or -1. Insert-only, so no
  //   transaction waits on another's counter row (a shared counter row would
  //   be held until commit by every batch that marks a job dead, and a
  //   statement that marks jobs of two kinds dead could deadlock with another).
  // - job_dead_counts: the changes folded per kind (FOLD_DEAD_CHANGES, run by
  //   the reaper's job every few seconds); the gauge adds the two.
  // - The WHEN clauses are evaluated without calling the function, so the
  //   claim and the completion (status changes that neither make nor unmake a
  //   dead job) pay one comparison a row and queue no trigger event.
  // - TRUNCATE jobs clears both.
  // - Every fold deletes the rows it took, so autovacuum is set to clear the
  //   changes table after every thousand (the gauge reads it whole).
  // Built under the trigger's lock on jobs (SHARE ROW EXCLUSIVE, held to the
  // migration's commit), so no write of jobs falls between the count and the
  // triggers.
  deadCounts: {
    async up(db: QueryExecutor): Promise<void> {
      await db.query(`
        CREATE TABLE job_dead_counts (
          kind text PRIMARY KEY,
          dead bigint NOT NULL
        )`);
      await db.query(`
        CREATE TABLE job_dead_changes (
          id    bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
          kind  text NOT NULL,
          delta integer NOT NULL CHECK (delta IN (-1, 1))
        ) WITH (autovacuum_vacuum_threshold = 1000, autovacuum_vacuum_scale_factor = 0, autovacuum_vacuum_cost_delay = 0)`);
      await db.query(`
        CREATE FUNCTION jobs_note_dead_change() RETURNS trigger LANGUAGE plpgsql AS $$
        BEGIN
          IF TG_OP <> 'INSERT' AND OLD.status = 'dead' THEN
            INSERT INTO job_dead_changes (kind, delta) VALUES (OLD.kind, -1);
          END IF;
          IF TG_OP <> 'DELETE' AND NEW.status = 'dead' THEN
            INSERT INTO job_dead_changes (kind, delta) VALUES (NEW.kind, 1);
          END IF;
          RETURN NULL;
        END $$`);
      await db.query(`
        CREATE FUNCTION jobs_clear_dead_counts() RETURNS trigger LANGUAGE plpgsql AS $$
        BEGIN
          DELETE FROM job_dead_changes;
          DELETE FROM job_dead_counts;
          RETURN NULL;
        END $$`);
      await db.query(`
        CREATE TRIGGER jobs_dead_insert AFTER INSERT ON jobs
        FOR EACH ROW WHEN (NEW.status = 'dead') EXECUTE FUNCTION jobs_note_dead_change()`);
      await db.query(`
        CREATE TRIGGER jobs_dead_update AFTER UPDATE OF status, kind ON jobs
        FOR EACH ROW WHEN ((OLD.status = 'dead') <> (NEW.status = 'dead') OR (OLD.status = 'dead' AND OLD.kind <> NEW.kind))
        EXECUTE FUNCTION jobs_note_dead_change()`);
      await db.query(`
        CREATE TRIGGER jobs_dead_delete AFTER DELETE ON jobs
        FOR EACH ROW WHEN (OLD.status = 'dead') EXECUTE FUNCTION jobs_note_dead_change()`);
      await db.query(`
        CREATE TRIGGER jobs_dead_truncate AFTER TRUNCATE ON jobs
        FOR EACH STATEMENT EXECUTE FUNCTION jobs_clear_dead_counts()`);
      await db.query(`INSERT INTO job_dead_counts (kind, dead) SELECT kind, count(*) FROM jobs WHERE status = 'dead' GROUP BY kind`);
    },
    async down(db: QueryExecutor): Promise<void> {
      await db.query('DROP TRIGGER jobs_dead_truncate ON jobs');
      await db.query('DROP TRIGGER jobs_dead_delete ON jobs');
      await db.query('DROP TRIGGER jobs_dead_update ON jobs');
      await db.query('DROP TRIGGER jobs_dead_insert ON jobs');
      await db.query('DROP FUNCTION jobs_clear_dead_counts()');
      await db.query('DROP FUNCTION jobs_note_dead_change()');
      await db.query('DROP TABLE job_dead_changes');
      await db.query('DROP TABLE job_dead_counts');
    },
  },
  // Finished jobs indexed by status: the successes on their own. One index over
  // every finished status (succeeded, dead, cancelled) made "succeeded in the
  // last hour" (GET /v1/ops/queue, the dashboard's throughput) fetch each
  // finished job of the hour from the heap to drop the dead and cancelled ones:
  // at 50,000,000 history rows, 1,412 of them for none counted, 2.2 ms a call
  // (docs/performance.md, "History at scale"). Each job still gets one entry
  // when it finishes, in one of the two. The pruner walks both (PRUNE).
  finishedByStatus: {
    async up(db: QueryExecutor): Promise<void> {
      await db.query(`CREATE INDEX jobs_succeeded_idx ON jobs (finished_at) WHERE status = 'succeeded'`);
      await db.query(`CREATE INDEX jobs_ended_idx ON jobs (finished_at) WHERE status IN ('dead', 'cancelled')`);
      await db.query('DROP INDEX jobs_finished_idx');
    },
    async down(db: QueryExecutor): Promise<void> {
      await db.query(`
        CREATE INDEX jobs_finished_idx ON jobs (finished_at)
        WHERE status IN ('succeeded', 'dead', 'cancelled')`);
      await db.query('DROP INDEX jobs_ended_idx');
      await db.query('DROP INDEX jobs_succeeded_idx');
    },
  },
  // "Succeeded in the last hour" without reading the hour's successes. The
  // count through jobs_succeeded_idx fetched every success of the hour from
  // the heap for its kind: after a million-reminder 08:00, 2.4 s for each
  // GET /v1/ops/queue (docs/performance.md, "History at scale").
  // - job_success_counts: one row per completion statement and kind
  //   (COMPLETE_MANY writes it beside the jobs it completes, in the same
  //   statement, so a handler's transaction that rolls back takes its count
  //   with it). Insert-only: no completion waits on another's counter row. A
  //   flush completes its jobs at one instant, so finished_at is exact and the
  //   hour's boundary falls where the jobs' own would.
  // - Not a trigger: a row trigger would queue an event per completed job on
  //   the drain's hot path. An UPDATE typed by hand that sets 'succeeded' is
  //   not counted (the jobs table stays the record; the count is the view).
  // - Kept two hours (the pruner deletes older rows: PRUNE_SUCCESS_COUNTS);
  //   TRUNCATE jobs clears it, as it clears the dead counts.
  // - Filled from the jobs of the last two hours, so the count is right from
  //   the migration on.
  successCounts: {
    async up(db: QueryExecutor): Promise<void> {
      await db.query(`
        CREATE TABLE job_success_counts (
          finished_at timestamptz NOT NULL,
          kind        text NOT NULL,
          succeeded   integer NOT NULL CHECK (succeeded > 0)
        )`);
      await db.query('CREATE INDEX job_success_counts_finished_idx ON job_success_counts (finished_at)');
      await db.query(`
        CREATE FUNCTION jobs_clear_success_counts() RETURNS trigger LANGUAGE plpgsql AS $$
        BEGIN
          DELETE FROM job_success_counts;
          RETURN NULL;
        END $$`);
      await db.query(`
        CREATE TRIGGER jobs_success_truncate AFTER TRUNCATE ON jobs
        FOR EACH STATEMENT EXECUTE FUNCTION jobs_clear_success_counts()`);
      await db.query(`
        INSERT INTO job_success_counts (finished_at, kind, succeeded)
        SELECT finished_at, kind, count(*) FROM jobs
        WHERE status = 'succeeded' AND finished_at >= now() - interval '2 hours'
        GROUP BY finished_at, kind`);
    },
    async down(db: QueryExecutor): Promise<void> {
      await db.query('DROP TRIGGER jobs_success_truncate ON jobs');
      await db.query('DROP FUNCTION jobs_clear_success_counts()');
      await db.query('DROP TABLE job_success_counts');
    },
  },
} satisfies Record<string, SchemaStep>;
