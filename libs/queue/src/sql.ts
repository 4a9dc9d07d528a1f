// Every statement the queue runs, in one place, each with why it is shaped so.
//
// Conventions:
// - The worker's statements act at `at($n)`: the instant passed in when the
//   worker was given a clock (tests pin it), else the database's now() ($n is
//   NULL). Leases, the reaper's comparison and due checks must all read one
//   clock; a host whose clock is ahead would otherwise reap other workers'
//   healthy jobs and start jobs early. Lease lengths and delays travel as
//   milliseconds and are added to that instant in SQL, so they follow the
//   same clock. Ops statements still take `now` from the caller.
// - Every transition of a running job is a compare-and-set on
//   (id, status = 'running', lease_token = the claim's token): a worker whose
//   lease was reaped, or a stale run, matches no row and changes nothing, so
//   a slow worker, the reaper and an operator never overwrite each other.
//   The token is new at every claim; (worker, attempt) is not enough, since
//   an operator's retry resets the attempts and a snooze gives one back.
// - Hot-path statements (claim, heartbeat, complete, fail, release) carry a
//   `name`: pg prepares them once per connection and then only sends values.
// - Statements used through a caller's executor (enqueue, ops) are plain text:
//   a TypeORM EntityManager cannot run named statements.

/** The channel NOTIFY wakes idle workers on. The payload is empty on purpose: identical notifies in one transaction collapse into one. */
export const WAKE_CHANNEL = 'jobs_ready';

// The instant a statement acts at: the injected clock's when the worker has
// one, else the database's now() (the start of the statement's transaction).
// Stable, so `run_at <= at(...)` is still an index condition.
const at = (param: string): string => `coalesce(${param}::timestamptz, now())`;
const ms = (param: string): string => `(${param}::float8 * interval '1 millisecond')`;

export interface NamedStatement {
  name: string;
  text: string;
}

export const JOB_COLUMNS = `id, kind, payload, idempotency_key, priority, run_at, attempts, max_attempts, status,
  last_error, locked_at, locked_until, locked_by, finished_at, created_at, updated_at`;

// Timestamps as epoch milliseconds (float8): a number is much cheaper for the
// driver than parsing timestamptz text, at tens of thousands of rows a second.
// trace_parent and trace_link are NULL unless tracing was on at enqueue (docs/tracing.md).
const CLAIMED_COLUMNS = `j.id, j.lease_token, j.kind, j.payload, j.attempts, j.max_attempts, j.idempotency_key, j.snoozes, j.trace_parent, j.trace_link,
  (extract(epoch FROM j.run_at) * 1000)::float8 AS run_at_ms, (extract(epoch FROM j.created_at) * 1000)::float8 AS created_at_ms`;

// Enqueue one job inside the caller's transaction. ON CONFLICT DO NOTHING
// instead of DO UPDATE: a repeat must not touch the existing job (it may be
// running). The existing row comes back from the same statement when our
// snapshot sees it; a row committed concurrently (after our snapshot) is not
// visible here, and enqueue() reads it with a second statement. The NOTIFY
// is evaluated once per statement and only if a row was inserted that is due
// already; it is delivered at commit, so a rolled-back enqueue wakes nobody.
// A job due later sends none: a woken worker would find nothing to claim
// (polling picks the job up once it is due), and a transaction that NOTIFYs
// holds a database-wide lock from its pre-commit until its commit is flushed,
// so every send_reminder completion (which enqueues tomorrow's occurrence)
// would otherwise wait for the previous one's WAL flush.
export const ENQUEUE = `
WITH inserted AS (
  INSERT INTO jobs (kind, payload, idempotency_key, run_at, max_attempts, priority, created_at, updated_at, trace_parent, trace_link)
  VALUES ($1, $2::jsonb, $3, $4, $5, $6, $7, $7, $8, $9)
  ON CONFLICT (idempotency_key) WHERE idempotency_key IS NOT NULL DO NOTHING
  RETURNING ${JOB_COLUMNS}
), wake AS (
  SELECT pg_notify('${WAKE_CHANNEL}', '') FROM (SELECT 1 FROM inserted WHERE run_at <= $7 LIMIT 1) AS one
)
SELECT inserted.*, true AS created FROM inserted WHERE (SELECT count(*) FROM wake) >= 0
UNION ALL
SELECT ${JOB_COLUMNS}, false AS created FROM jobs WHERE $3::text IS NOT NULL AND idempotency_key = $3`;

// Many jobs, one statement: the specs travel as one JSON array (no
// per-row parameters, no 65535-parameter limit), and one NOTIFY covers them
// all (if any of them is due already, as in ENQUEUE). `ord` keeps insertion
// (hence id) order equal to the caller's order.
// A row we inserted holds exactly what the caller sent, so only its id and
// key come back and enqueueMany builds the job from the spec: parsing three
// timestamps and the payload of every row in the driver cost about a third
// of a 1000-job call. The jobs that already held a key are not looked up
// here: enqueueMany reads them (JOBS_BY_KEYS) only when some key conflicted,
// since probing every key again costs the common case (no conflict) about a
// fifth of the statement.
export const ENQUEUE_MANY = `
WITH input AS (
  SELECT * FROM jsonb_to_recordset($1::jsonb)
    AS x(ord integer, kind text, payload jsonb, idempotency_key text, run_at timestamptz, max_attempts integer, priority integer,
         trace_parent text, trace_link text)
), inserted AS (
  INSERT INTO jobs (kind, payload, idempotency_key, run_at, max_attempts, priority, created_at, updated_at, trace_parent, trace_link)
  SELECT kind, payload, idempotency_key, run_at, max_attempts, priority, $2, $2, trace_parent, trace_link FROM input ORDER BY ord
  ON CONFLICT (idempotency_key) WHERE idempotency_key IS NOT NULL DO NOTHING
  RETURNING id, idempotency_key, run_at
), wake AS (
  SELECT pg_notify('${WAKE_CHANNEL}', '') FROM (SELECT 1 FROM inserted WHERE run_at <= $2 LIMIT 1) AS one
)
SELECT id, idempotency_key, true AS created FROM inserted WHERE (SELECT count(*) FROM wake) >= 0`;

export const JOBS_BY_KEYS = `SELECT ${JOB_COLUMNS} FROM jobs WHERE idempotency_key = ANY($1::text[])`;

// Claim up to $3 runnable jobs of the kinds $2 (less the paused ones). The
// claim reads only rows it can take: each kind, and each priority level of a
// kind, is probed on its own through jobs_claim_idx (kind, priority, run_at,
// id), where `run_at <= now` is a range. So the ready jobs of kinds this lane
// does not claim (a backlog of a kind no running worker handles, another
// lane's herd) and the jobs scheduled for later (300,000 reminders) are not
// walked; a single ordered scan of (priority, run_at, id) filtered by kind
// read them all on an idle poll (PostgreSQL 15–17 cannot skip over a leading
// priority; 18 can, but still walks other kinds' ready rows). `levels` finds
// the distinct priorities of each kind with one index probe each (a loose
// index scan: a kind has one or two). Each level's probe takes at most $3
// rows in (run_at, id) order and locks them with SKIP LOCKED, so concurrent
// claimers take disjoint rows instead of queueing behind each other; the
// best $3 of all levels in (priority, run_at, id) order are claimed, and the
// other rows a probe locked are free again when the statement ends (a lane
// has few kinds, and levels with ready jobs are fewer). The lock is taken in
// the probe with its LIMIT, so exactly the rows it returns are locked (`UPDATE
// … WHERE id IN (SELECT … LIMIT n SKIP LOCKED)` may be re-evaluated and claim
// more). FOR NO KEY UPDATE: the weakest lock that still excludes other
// claimers. Each row gets a lease token of its own, which every later
// compare-and-set of this run checks.
// An attempt is used when its handler starts, not at claim: only the first $6
// rows in claim order (those the worker has free slots for, which it starts
// at once) count theirs here and get locked_at (= started); the others wait
// in the worker's buffer and count theirs with START_MANY when they start. A
// worker killed with a full buffer then costs those jobs no attempt (the
// reaper tells them apart by locked_at IS NULL). `cut` is the last row that
// starts at once, so the per-row test is one row comparison. Paused kinds
// (job_kind_pauses, a few rows at most) are read by every claim, so a pause
// holds from the next claim of every worker on; they are taken out of the
// kinds probed.
// The probe names its kind as `kind = ANY (ARRAY[l.kind])` and orders by
// (kind, run_at, id), which only jobs_claim_idx can serve. With a plain
// `kind = l.kind` the kind drops out of the order (an equality makes it a
// constant) and the planner was free to walk jobs_runnable_idx (priority,
// run_at) filtering on kind; it did so once the due rows were mostly of one
// kind, and the sweep's lane walked half a million due reminders ahead of its
// one job, 2.7 s a probe, stalling the herd behind it (test/queue/plans, "a
// rare kind behind a herd"). An array equality is still an equality to the
// index, so (kind, priority) equal keeps `run_at <= now` a bound that ends
// the scan on PostgreSQL 15 too; a row comparison (kind, priority, run_at) <=
// (…) did not: before 18 only its first column ends a scan, and the probe
// walked the 300,000 scheduled rows of its kind.
// `= ANY (ARRAY(…))` rather than a join: a prepared statement soon runs a
// generic plan, which guesses LIMIT $3 at 10% of the table and then
// hash-joins the whole table; an id array always probes the primary key.
const STARTS_NOW = `($6::integer > 0 AND coalesce((j.priority, j.run_at, j.id) <= (SELECT priority, run_at, id FROM cut), true))`;

export const CLAIM: NamedStatement = {
  name: 'queue_claim',
  text: `
WITH RECURSIVE claimable AS (
  SELECT unnest($2::text[]) AS kind EXCEPT SELECT kind FROM job_kind_pauses
), levels (kind, priority) AS (
  SELECT c.kind, (SELECT min(priority) FROM jobs WHERE status = 'queued' AND kind = c.kind) FROM claimable AS c
  UNION ALL
  SELECT l.kind, (SELECT min(priority) FROM jobs WHERE status = 'queued' AND kind = l.kind AND priority > l.priority)
  FROM levels AS l WHERE l.priority IS NOT NULL
), ready AS (
  SELECT r.id, r.priority, r.run_at FROM levels AS l
  CROSS JOIN LATERAL (
    SELECT id, priority, run_at FROM jobs
    WHERE status = 'queued' AND kind = ANY (ARRAY[l.kind]) AND priority = l.priority AND run_at <= ${at('$1')}
    ORDER BY kind, run_at, id
    LIMIT $3
    FOR NO KEY UPDATE SKIP LOCKED
  ) AS r
  WHERE l.priority IS NOT NULL
), picked AS (
  SELECT id, priority, run_at FROM ready ORDER BY priority, run_at, id LIMIT $3
), cut AS (
  SELECT priority, run_at, id FROM picked ORDER BY priority, run_at, id OFFSET greatest($6::integer - 1, 0) LIMIT 1
)
UPDATE jobs AS j
SET status = 'running', attempts = j.attempts + CASE WHEN ${STARTS_NOW} THEN 1 ELSE 0 END,
    locked_at = CASE WHEN ${STARTS_NOW} THEN ${at('$1')} END, locked_until = ${at('$1')} + ${ms('$4')}, locked_by = $5,
    updated_at = ${at('$1')},
    lease_token = nextval('jobs_lease_token_seq')
WHERE j.id = ANY (ARRAY(SELECT id FROM picked))
RETURNING ${CLAIMED_COLUMNS}, j.locked_at IS NOT NULL AS counted`,
};

// The rows of a batch that this worker still holds, as (id, lease token) pairs
// in two parallel arrays. Each pair is looked up through the primary key in
// a LATERAL subquery, so the cost follows the batch, not the number of
// running jobs: a plain join lets the planner (which, from statistics taken
// at a quiet moment, believes almost nothing is running) walk the whole
// jobs_running_idx once per batch row, which is what a generic plan of a
// prepared statement did (O(batch × running)). The row locks are taken here,
// in array order.
function heldRows(lock: string, worker = '$4'): string {
  return `
  SELECT t.id FROM unnest($1::bigint[], $2::bigint[]) AS held(id, token)
  CROSS JOIN LATERAL (
    SELECT id FROM jobs
    WHERE id = held.id AND status = 'running' AND locked_by = ${worker} AND lease_token = held.token
    ${lock}
  ) AS t`;
}

// Completions of one flush in one statement; also the compare-and-set that
// completeWith (one job or a batch) runs first inside the handler's
// transaction, so that the rows stay locked (and the reaper, which skips
// locked rows, keeps off them) until the handler's writes commit. Returns the ids whose
// compare-and-set held; an id missing from the result was lost (reaped,
// retried) and is left to its new holder. locked_by and locked_at stay as the
// record of who ran the successful attempt and when (the success is not
// written to job_runs: one write per job on this path). The UPDATE reaches
// the rows through `id = ANY (ARRAY(…))`: primary-key probes whatever the plan.
// The statement also notes how many it completed of each kind in
// job_success_counts (one row a kind, none when nothing held): what
// "succeeded in the last hour" reads (schema.ts `successCounts`).
export const COMPLETE_MANY: NamedStatement = {
  name: 'queue_complete_many',
  text: `
WITH mine AS (${heldRows('FOR NO KEY UPDATE')}
), done AS (
  UPDATE jobs
  SET status = 'succeeded', finished_at = ${at('$3')}, locked_until = NULL, updated_at = ${at('$3')}
  WHERE id = ANY (ARRAY(SELECT id FROM mine))
  RETURNING id, kind
), counted AS (
  INSERT INTO job_success_counts (finished_at, kind, succeeded)
  SELECT ${at('$3')}, kind, count(*) FROM done GROUP BY kind
)
SELECT id FROM done`,
};

// Buffered jobs whose handlers start now: their attempt counts from here,
// and locked_at records the start. The handler runs once this has landed, so
// an attempt that ran is always counted.
export const START_MANY: NamedStatement = {
  name: 'queue_start_many',
  text: `
WITH mine AS (${heldRows('FOR NO KEY UPDATE')}
)
UPDATE jobs
SET attempts = attempts + 1, locked_at = ${at('$3')}
WHERE id = ANY (ARRAY(SELECT id FROM mine))
RETURNING id`,
};

// Heartbeat: push the lease of every job this worker holds to $5 ms from now. Touches only
// locked_until, which no index contains, so the update is HOT (no index
// writes). SKIP LOCKED: a row locked right now is being completed or failed
// by this worker (or taken by the reaper), and waiting on it could deadlock
// against a completion that locks the same rows in another order. Ids missing
// from the result are checked with LEASE_CHECK before being declared lost.
export const EXTEND_LEASES: NamedStatement = {
  name: 'queue_extend_leases',
  text: `
WITH mine AS (${heldRows('FOR NO KEY UPDATE SKIP LOCKED')}
)
UPDATE jobs
SET locked_until = ${at('$3')} + ${ms('$5')}
WHERE id = ANY (ARRAY(SELECT id FROM mine))
RETURNING id`,
};

// Which of these jobs are still this worker's, without locking (the ones the
// heartbeat skipped because a lock was held on them).
// LIMIT 1 keeps the lateral subquery from being flattened into a join (the
// locking variants cannot be flattened because of their FOR … UPDATE): as a
// join, a plan built from a statistics sample that saw no running jobs scanned
// the running index once per batch row (test/queue/plans caught it, sometimes).
export const LEASE_CHECK: NamedStatement = {
  name: 'queue_lease_check',
  text: heldRows('LIMIT 1', '$3'),
};

// job_runs.started_at: the start as the worker saw it ($n, with a test
// clock), else the row's locked_at (set from the database's clock at the
// start). The subquery reads the statement's snapshot: the row before the update.
const STARTED_AT = (param: string): string => `coalesce(${param}::timestamptz, (SELECT locked_at FROM jobs WHERE id = $1))`;

// A failed attempt that will be retried $5 ms from now (backoff or
// Retry-After), or an attempt interrupted by shutdown ($8 = 'interrupted',
// $5 = 0, or the time its lease has left). The attempt
// ran to an end, so the snoozes in a row start again from 0. The job row
// and its history row change in one statement, so history never disagrees
// with the row.
export const RETRY: NamedStatement = {
  name: 'queue_retry',
  text: `
WITH updated AS (
  UPDATE jobs
  SET status = 'queued', run_at = ${at('$4')} + ${ms('$5')}, last_error = $6, locked_at = NULL, locked_until = NULL, locked_by = NULL,
      updated_at = ${at('$4')}, snoozes = 0
  WHERE id = $1 AND status = 'running' AND locked_by = $2 AND lease_token = $3
  RETURNING id, kind, attempts, run_at
)
INSERT INTO job_runs (job_id, kind, attempt, worker, started_at, finished_at, outcome, error, next_run_at)
SELECT id, kind, attempts, $2, ${STARTED_AT('$7')}, ${at('$4')}, $8, $6, run_at FROM updated
RETURNING job_id`,
};

// Out of attempts, or a permanent error: dead, with its error, until an
// operator retries it or it is pruned. locked_by/locked_at are kept.
export const DEAD: NamedStatement = {
  name: 'queue_mark_dead',
  text: `
WITH updated AS (
  UPDATE jobs
  SET status = 'dead', last_error = $5, locked_until = NULL, finished_at = ${at('$4')}, updated_at = ${at('$4')}
  WHERE id = $1 AND status = 'running' AND locked_by = $2 AND lease_token = $3
  RETURNING id, kind, attempts
)
INSERT INTO job_runs (job_id, kind, attempt, worker, started_at, finished_at, outcome, error)
SELECT id, kind, attempts, $2, ${STARTED_AT('$6')}, ${at('$4')}, 'dead', $5 FROM updated
RETURNING job_id`,
};

// Snooze: back to queued at $5 and the attempt given back (attempts - 1), so
// quiet hours never push a job towards dead. A snooze to the past would run
// again at the poll rate: it waits $8 ms from now instead (to now exactly is
// kept: "after this instant"). Recorded in the history, and
// counted in `snoozes` (the worker bounds snoozes in a row).
export const SNOOZE: NamedStatement = {
  name: 'queue_snooze',
  text: `
WITH updated AS (
  UPDATE jobs
  SET status = 'queued', run_at = CASE WHEN $5::timestamptz < ${at('$4')} THEN ${at('$4')} + ${ms('$8')} ELSE $5 END,
      attempts = attempts - 1, snoozes = snoozes + 1, locked_at = NULL, locked_until = NULL, locked_by = NULL, updated_at = ${at('$4')}
  WHERE id = $1 AND status = 'running' AND locked_by = $2 AND lease_token = $3
  RETURNING id, kind, attempts + 1 AS attempt, run_at
)
INSERT INTO job_runs (job_id, kind, attempt, worker, started_at, finished_at, outcome, error, next_run_at)
SELECT id, kind, attempt, $2, ${STARTED_AT('$7')}, ${at('$4')}, 'snoozed', $6, run_at FROM updated
RETURNING job_id`,
};

// Shutdown: jobs claimed but never started go back as they were (an attempt
// counted at claim for a job that then did not start is given back; run_at
// unchanged so they keep their place in line). Nothing ran, so nothing goes
// to the history.
export const RELEASE_MANY: NamedStatement = {
  name: 'queue_release_many',
  text: `
WITH mine AS (${heldRows('FOR NO KEY UPDATE')}
)
UPDATE jobs
SET status = 'queued', attempts = attempts - (locked_at IS NOT NULL)::integer,
    locked_at = NULL, locked_until = NULL, locked_by = NULL, updated_at = ${at('$3')}
WHERE id = ANY (ARRAY(SELECT id FROM mine))
RETURNING id`,
};

// The reaper: running jobs whose lease ran out go back to queued (ready at
// once), or to dead when that was their last attempt. A job that never
// started (locked_at IS NULL: claimed into a buffer, its worker gone) used
// no attempt: it goes back as it was, with no history row (nothing ran). Batched ($2) so one run
// never holds many row locks; SKIP LOCKED so it never waits behind a worker
// that is completing the very job (completeWith holds the row lock); the
// UPDATE re-checks the lease so a heartbeat that landed in between wins.
const OUT_OF_ATTEMPTS = `(j.locked_at IS NOT NULL AND j.attempts >= j.max_attempts)`;

export const REAP: NamedStatement = {
  name: 'queue_reap',
  text: `
WITH expired AS (
  SELECT id, locked_by, locked_at FROM jobs
  WHERE status = 'running' AND locked_until < ${at('$1')}
  ORDER BY id
  LIMIT $2
  FOR NO KEY UPDATE SKIP LOCKED
), updated AS (
  UPDATE jobs AS j
  SET status = CASE WHEN ${OUT_OF_ATTEMPTS} THEN 'dead' ELSE 'queued' END,
      run_at = CASE WHEN ${OUT_OF_ATTEMPTS} THEN j.run_at ELSE ${at('$1')} END,
      last_error = CASE WHEN j.locked_at IS NULL THEN j.last_error
                   ELSE 'lease expired: worker ' || coalesce(expired.locked_by, '?') || ' stopped renewing it' END,
      locked_at = CASE WHEN ${OUT_OF_ATTEMPTS} THEN j.locked_at END,
      locked_by = CASE WHEN ${OUT_OF_ATTEMPTS} THEN j.locked_by END,
      locked_until = NULL,
      finished_at = CASE WHEN ${OUT_OF_ATTEMPTS} THEN ${at('$1')} END,
      updated_at = ${at('$1')}
  FROM expired
  WHERE j.id = expired.id AND j.status = 'running' AND j.locked_until < ${at('$1')}
  RETURNING j.id, j.kind, j.attempts, j.status, j.idempotency_key, expired.locked_by AS worker, expired.locked_at AS started_at
), history AS (
  INSERT INTO job_runs (job_id, kind, attempt, worker, started_at, finished_at, outcome, error, next_run_at)
  SELECT id, kind, attempts, worker, started_at, ${at('$1')}, 'lease_expired', 'lease expired',
         CASE WHEN status = 'queued' THEN ${at('$1')} END
  FROM updated WHERE started_at IS NOT NULL
)
SELECT id, kind, attempts, status, idempotency_key, worker FROM updated`,
};

// Pruning: finished jobs older than the cutoff ($1; dead jobs: $3, kept
// longer for inspection by default), a small batch per statement (each its
// own short transaction): up to $2 successes, oldest first through
// jobs_succeeded_idx, and up to $2 dead or cancelled jobs through
// jobs_ended_idx, so a statement deletes at most 2 × $2 and fewer than $2
// only when both are done. Dead jobs younger than their cutoff but older
// than $1 are walked past on every run: few, since dead jobs are.
// Their history goes in the same statement. SKIP LOCKED: never wait behind an
// operator's retry of the same row.
export const PRUNE: NamedStatement = {
  name: 'queue_prune',
  text: `
WITH succeeded AS (
  SELECT id FROM jobs
  WHERE status = 'succeeded' AND finished_at < $1::timestamptz
  ORDER BY finished_at
  LIMIT $2
  FOR UPDATE SKIP LOCKED
), ended AS (
  SELECT id FROM jobs
  WHERE status IN ('dead', 'cancelled') AND finished_at < greatest($1::timestamptz, $3::timestamptz)
    AND finished_at < CASE WHEN status = 'dead' THEN $3::timestamptz ELSE $1::timestamptz END
  ORDER BY finished_at
  LIMIT $2
  FOR UPDATE SKIP LOCKED
), gone AS (
  DELETE FROM jobs WHERE id = ANY (ARRAY(SELECT id FROM succeeded UNION ALL SELECT id FROM ended)) RETURNING id
), history AS (
  DELETE FROM job_runs AS r USING gone WHERE r.job_id = gone.id
)
SELECT count(*)::integer AS deleted FROM gone`,
};
