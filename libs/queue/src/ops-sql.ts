// The statements of the operator's views and commands and of the metrics'
// gauges (ops.ts, metrics.ts): plain text, run through the caller's executor,
// with `now` from the caller. The worker's own statements are in sql.ts.
import { JOB_COLUMNS, WAKE_CHANNEL } from './sql.js';

// The gauges, at scrape time, in one round trip. The ready and running
// branches read one partial index each (jobs_runnable_idx bounded by
// run_at <= now; jobs_running_idx), so their cost follows the number of ready
// and running jobs, not the size of the table (finished and scheduled rows
// are never visited). Dead jobs are not counted here: the triggers of
// schema.ts `deadCounts` keep their number per kind (the folded counts plus
// the changes not folded yet), so the dead branch reads a few rows however
// many dead jobs are kept.
//
// Measured at 1,000,000 jobs: 6.5 ms warm, 30 ms cold, 3,150 buffers, none of
// them the finished rows (the plan: libs/queue/README.md, "The gauges' plan").
// The paused kinds ride along as a fourth branch (a few rows). The oldest
// running job's start (locked_at; NULL for a job claimed into a buffer and
// not started) comes from the running rows the branch reads anyway.
export const GAUGES = `
SELECT kind, count(*)::integer AS ready, min(run_at) AS oldest_ready, 0 AS running, 0 AS stuck, 0 AS dead, false AS paused,
       NULL::timestamptz AS oldest_running
FROM jobs WHERE status = 'queued' AND run_at <= $1 GROUP BY kind
UNION ALL
SELECT kind, 0, NULL, count(*)::integer, (count(*) FILTER (WHERE locked_until < $1))::integer, 0, false, min(locked_at)
FROM jobs WHERE status = 'running' GROUP BY kind
UNION ALL
SELECT kind, 0, NULL, 0, 0, sum(dead)::integer, false, NULL
FROM (SELECT kind, dead FROM job_dead_counts UNION ALL SELECT kind, delta FROM job_dead_changes) AS d
GROUP BY kind HAVING sum(dead) <> 0
UNION ALL
SELECT kind, 0, NULL, 0, 0, 0, true, NULL FROM job_kind_pauses`;

// Folds the dead-job changes into the counts (the reaper's job runs it every
// few seconds, so the gauge's dead branch reads few change rows). SKIP LOCKED:
// two folds at once take disjoint rows and never wait; the counts are
// upserted in kind order, so two folds lock them in the same order.
export const FOLD_DEAD_CHANGES = `
WITH taken AS (
  SELECT id FROM job_dead_changes ORDER BY id LIMIT $1 FOR UPDATE SKIP LOCKED
), gone AS (
  DELETE FROM job_dead_changes WHERE id IN (SELECT id FROM taken) RETURNING kind, delta
), folded AS (
  INSERT INTO job_dead_counts AS c (kind, dead)
  SELECT kind, sum(delta) FROM gone GROUP BY kind ORDER BY kind
  ON CONFLICT (kind) DO UPDATE SET dead = c.dead + EXCLUDED.dead
)
SELECT count(*)::integer AS folded FROM gone`;

// The success counts past the last hour's use (the pruner's beat). The rows
// are few: one per completion statement and kind.
export const PRUNE_SUCCESS_COUNTS = `
WITH gone AS (DELETE FROM job_success_counts WHERE finished_at < $1 RETURNING 1)
SELECT count(*)::integer AS deleted FROM gone`;

// Not on any scrape: the ops page. Scheduled (queued, run_at > now) walks the
// future part of jobs_runnable_idx, which is as large as the number of
// scheduled reminders; acceptable for an operator's click, not for /metrics.
export const SCHEDULED_BY_KIND = `
SELECT kind, count(*)::integer AS scheduled FROM jobs WHERE status = 'queued' AND run_at > $1 GROUP BY kind`;

// Last hour: successes from job_success_counts (a row per completion
// statement and kind, written by COMPLETE_MANY; a few thousand rows for a
// million successes), failed attempts from job_runs_finished_idx (a failure
// is a row of its own there, and failures are few).
export const SUCCEEDED_SINCE = `
SELECT kind, sum(succeeded)::integer AS succeeded FROM job_success_counts
WHERE finished_at >= $1 GROUP BY kind`;

export const FAILED_SINCE = `
SELECT kind, count(*)::integer AS failed FROM job_runs
WHERE finished_at >= $1 AND outcome IN ('failed', 'dead', 'lease_expired') GROUP BY kind`;

// Newest first by id (the primary key walked backwards); the cursor is the
// last id seen. Status and kind are optional filters; ops traffic only.
export const LIST_JOBS = `
SELECT ${JOB_COLUMNS} FROM jobs
WHERE ($1::text IS NULL OR status = $1) AND ($2::text IS NULL OR kind = $2) AND ($3::bigint IS NULL OR id < $3)
ORDER BY id DESC
LIMIT $4`;

export const GET_JOB = `SELECT ${JOB_COLUMNS} FROM jobs WHERE id = $1`;

// Several jobs by id (an operator's view of a user's deliveries): a primary key probe each.
export const GET_JOBS = `SELECT ${JOB_COLUMNS} FROM jobs WHERE id = ANY($1::bigint[])`;

// Queued jobs coming due per minute and kind (the herds ahead). A range of
// jobs_runnable_idx on run_at (PostgreSQL 18 skips over its leading priority);
// it reads as many rows as are coming due, so the dashboard asks once a minute.
export const DUE_BY_MINUTE = `
SELECT date_trunc('minute', run_at) AS minute, kind, count(*)::integer AS due
FROM jobs
WHERE status = 'queued' AND run_at >= $1 AND run_at < $2
GROUP BY 1, 2 ORDER BY 1, 2`;

// The dashboard's completed/failed per minute chart. Read beside the
// scrape's statements (not on any scrape): the same two ranges as
// SUCCEEDED_SINCE and FAILED_SINCE, bucketed by minute.
export const THROUGHPUT_BY_MINUTE = `
SELECT date_trunc('minute', finished_at) AS minute,
       coalesce(sum(n) FILTER (WHERE ok), 0)::integer AS succeeded,
       coalesce(sum(n) FILTER (WHERE NOT ok), 0)::integer AS failed
FROM (
  SELECT finished_at, succeeded AS n, true AS ok FROM job_success_counts WHERE finished_at >= $1 AND finished_at <= $2
  UNION ALL
  SELECT finished_at, 1, false FROM job_runs
  WHERE finished_at >= $1 AND finished_at <= $2 AND outcome IN ('failed', 'dead', 'lease_expired')
) AS finished
GROUP BY 1 ORDER BY 1`;

export const JOB_RUNS = `
SELECT attempt, worker, started_at, finished_at, outcome, error, next_run_at
FROM job_runs WHERE job_id = $1 ORDER BY id`;

export const JOB_RUNS_MANY = `
SELECT job_id, attempt, worker, started_at, finished_at, outcome, error, next_run_at
FROM job_runs WHERE job_id = ANY($1::bigint[]) ORDER BY job_id, id`;

// Operator retry: only a dead or cancelled job, attempts reset, ready now.
// The status read beside it tells "not found" from "not retryable" in the
// same round trip (it sees the row as before the update).
export const RETRY_JOB = `
WITH updated AS (
  UPDATE jobs
  SET status = 'queued', attempts = 0, snoozes = 0, run_at = $2, locked_at = NULL, locked_until = NULL, locked_by = NULL,
      finished_at = NULL, updated_at = $2
  WHERE id = $1 AND status IN ('dead', 'cancelled')
  RETURNING id
), wake AS (
  SELECT pg_notify('${WAKE_CHANNEL}', '') FROM (SELECT 1 FROM updated LIMIT 1) AS one
)
SELECT (SELECT count(*) FROM updated)::integer AS changed, (SELECT count(*) FROM wake)::integer AS woken,
       (SELECT status FROM jobs WHERE id = $1) AS status`;

// Bulk retry: every dead job of a kind back to queued, as RETRY_JOB does one
// (jobs_dead_idx is keyed on kind). One statement: dead jobs are few.
export const RETRY_DEAD_OF_KIND = `
WITH updated AS (
  UPDATE jobs
  SET status = 'queued', attempts = 0, snoozes = 0, run_at = $2, locked_at = NULL, locked_until = NULL, locked_by = NULL,
      finished_at = NULL, updated_at = $2
  WHERE kind = $1 AND status = 'dead'
  RETURNING id
), wake AS (
  SELECT pg_notify('${WAKE_CHANNEL}', '') FROM (SELECT 1 FROM updated LIMIT 1) AS one
)
SELECT (SELECT count(*) FROM updated)::integer AS retried, (SELECT count(*) FROM wake)::integer AS woken`;

// Pause and resume a kind: the claim reads job_kind_pauses. Pausing twice
// keeps the first time. Resuming wakes the workers (the kind's ready jobs
// wait for no poll).
export const PAUSE_KIND = `
INSERT INTO job_kind_pauses (kind, paused_at) VALUES ($1, $2) ON CONFLICT (kind) DO NOTHING RETURNING kind`;

export const RESUME_KIND = `
WITH deleted AS (DELETE FROM job_kind_pauses WHERE kind = $1 RETURNING kind),
wake AS (SELECT pg_notify('${WAKE_CHANNEL}', '') FROM (SELECT 1 FROM deleted LIMIT 1) AS one)
SELECT (SELECT count(*) FROM deleted)::integer AS resumed, (SELECT count(*) FROM wake)::integer AS woken`;

export const PAUSED_KINDS = `SELECT kind, paused_at FROM job_kind_pauses ORDER BY kind`;

// Cancel: only a queued job. A running job is not cancelled (its handler may
// already have sent the push); the caller gets 'conflict'.
export const CANCEL_JOB = `
WITH updated AS (
  UPDATE jobs
  SET status = 'cancelled', finished_at = $2, updated_at = $2
  WHERE id = $1 AND status = 'queued'
  RETURNING id
)
SELECT (SELECT count(*) FROM updated)::integer AS changed, (SELECT status FROM jobs WHERE id = $1) AS status`;

export const CANCEL_QUEUED_BY_KEY = `
UPDATE jobs SET status = 'cancelled', finished_at = $2, updated_at = $2
WHERE idempotency_key = $1 AND status = 'queued'
RETURNING id`;

// Prefix match on jobs_idempotency_key_key (text_pattern_ops makes LIKE
// 'prefix%' an index range); the prefix's own % and _ are escaped by the caller.
export const CANCEL_QUEUED_BY_KEY_PREFIX = `
UPDATE jobs SET status = 'cancelled', finished_at = $2, updated_at = $2
WHERE idempotency_key LIKE $1 AND status = 'queued'
RETURNING id`;

export const CANCEL_QUEUED_BY_IDS = `
UPDATE jobs SET status = 'cancelled', finished_at = $2, updated_at = $2
WHERE id = ANY($1::bigint[]) AND status = 'queued'
RETURNING id`;
