// Read-only relations of the queue's jobs for another lib's statement to
// join (a reminder's deliveries, the sweep's broken chains), so that only
// libs/queue names `jobs` and spells its status words. Plain subqueries,
// which PostgreSQL pulls up into the caller's join (the same plan).

/** Every job's state. */
export const JOB_STATES = `(SELECT id, kind, status, attempts, last_error FROM jobs)`;

/** Jobs waiting for their run_at. */
export const QUEUED_JOBS = `(SELECT id FROM jobs WHERE status = 'queued')`;

/** Jobs that have not ended: queued or running. */
export const UNFINISHED_JOBS = `(SELECT id FROM jobs WHERE status IN ('queued', 'running'))`;
