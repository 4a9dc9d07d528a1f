import { queryRows, type QueryExecutor } from './executor.js';
import { enqueueMany } from './enqueue.js';
import { FOLD_DEAD_CHANGES, PRUNE_SUCCESS_COUNTS } from './ops-sql.js';
import { PRUNE, REAP } from './sql.js';
import type { EnqueueResult } from './types.js';

/** Kinds of the queue's own jobs. */
export const REAP_KIND = 'queue.reap';
export const PRUNE_KIND = 'queue.prune';

export interface ReapedJob {
  id: string;
  kind: string;
  attempts: number;
  status: 'queued' | 'dead';
  idempotencyKey: string | null;
  /** The worker whose lease expired. */
  worker: string | null;
}

/**
 * Returns every running job whose lease expired before `now` (null: the
 * database's now()) to queued (or to dead when it was on its last attempt),
 * in batches. Safe to run from any number of processes at once.
 */
export async function reapExpiredJobs(
  executor: QueryExecutor,
  now: Date | null,
  options: { batchSize?: number; maxBatches?: number } = {},
): Promise<ReapedJob[]> {
  const batchSize = options.batchSize ?? 1000;
  const maxBatches = options.maxBatches ?? 100;
  const reaped: ReapedJob[] = [];
  for (let i = 0; i < maxBatches; i++) {
    const rows = await queryRows<{
      id: string;
      kind: string;
      attempts: number;
      status: 'queued' | 'dead';
      idempotency_key: string | null;
      worker: string | null;
    }>(executor, REAP.text, [now, batchSize]);
    for (const r of rows) {
      reaped.push({
        id: String(r.id),
        kind: r.kind,
        attempts: Number(r.attempts),
        status: r.status,
        idempotencyKey: r.idempotency_key,
        worker: r.worker,
      });
    }
    if (rows.length < batchSize) break;
  }
  return reaped;
}

/**
 * Deletes succeeded and cancelled jobs that finished before `olderThan`, and
 * dead ones that finished before `deadOlderThan` (default: `olderThan`),
 * with their history, up to `batchSize` successes and `batchSize` dead or
 * cancelled jobs per statement (each a short transaction of its own when
 * `executor` is a pool), until none is left,
 * `maxBatches` is reached or `signal` aborts. Returns the number deleted.
 */
export async function pruneFinishedJobs(
  executor: QueryExecutor,
  olderThan: Date,
  options: { deadOlderThan?: Date; batchSize?: number; maxBatches?: number; signal?: AbortSignal } = {},
): Promise<number> {
  const deadOlderThan = options.deadOlderThan ?? olderThan;
  const batchSize = options.batchSize ?? 1000;
  const maxBatches = options.maxBatches ?? 1000;
  let deleted = 0;
  for (let i = 0; i < maxBatches && !options.signal?.aborted; i++) {
    const [row] = await queryRows<{ deleted: number }>(executor, PRUNE.text, [olderThan, batchSize, deadOlderThan]);
    const n = Number(row?.deleted ?? 0);
    deleted += n;
    if (n < batchSize) break;
  }
  return deleted;
}

/** How long the success counts are kept: "the last hour" and the dashboard's minutes, with room. */
export const SUCCESS_COUNTS_KEPT_MS = 2 * 3_600_000;

/** Deletes the success counts of completions before `olderThan`. Returns how many rows went. */
export async function pruneSuccessCounts(executor: QueryExecutor, olderThan: Date): Promise<number> {
  const [row] = await queryRows<{ deleted: number }>(executor, PRUNE_SUCCESS_COUNTS, [olderThan]);
  return Number(row?.deleted ?? 0);
}

/**
 * Folds the dead-job changes the triggers noted into the per-kind counts the
 * gauge reads, `batchSize` a statement, until none is left (or `maxBatches`).
 * Returns how many were folded. The counts are right without it (the gauge
 * adds the changes not folded yet); folding keeps the gauge's read short.
 */
export async function foldDeadCounts(executor: QueryExecutor, options: { batchSize?: number; maxBatches?: number } = {}): Promise<number> {
  const batchSize = options.batchSize ?? 10_000;
  const maxBatches = options.maxBatches ?? 100;
  let folded = 0;
  for (let i = 0; i < maxBatches; i++) {
    const [row] = await queryRows<{ folded: number }>(executor, FOLD_DEAD_CHANGES, [batchSize]);
    const n = Number(row?.folded ?? 0);
    folded += n;
    if (n < batchSize) break;
  }
  return folded;
}

export interface RecurringJob {
  kind: string;
  /** Period length. Periods are aligned on the Unix epoch, so every process agrees on them. */
  everySeconds: number;
  payload?: unknown;
  /** Default 3: a failed run is retried a little, and the next period runs anyway. */
  maxAttempts?: number;
  priority?: number;
}

/** Start of the period that contains `now`. */
export function periodStart(now: Date, everySeconds: number): Date {
  const every = everySeconds * 1000;
  return new Date(Math.floor(now.getTime() / every) * every);
}

/** The idempotency key of one period of a recurring job: `system:<kind>:<period start ISO>`. */
export function recurringKey(kind: string, start: Date): string {
  return `system:${kind}:${start.toISOString()}`;
}

export function validateRecurring(job: RecurringJob): void {
  if (typeof job.kind !== 'string' || job.kind.length === 0) throw new TypeError('recurring job kind must be a non-empty string');
  if (!Number.isFinite(job.everySeconds) || job.everySeconds < 1) {
    throw new RangeError(`recurring job ${job.kind}: everySeconds must be at least 1`);
  }
}

/**
 * Makes sure the current period's job of each recurring definition exists,
 * due at the period's start. One statement for all; any number of processes
 * may call it any number of times: the per-period key lets only the first
 * insert through, so each period runs once.
 */
export async function scheduleRecurringJobs(executor: QueryExecutor, jobs: readonly RecurringJob[], now: Date): Promise<EnqueueResult[]> {
  if (jobs.length === 0) return [];
  for (const job of jobs) validateRecurring(job);
  return enqueueMany(
    executor,
    jobs.map((job) => {
      const start = periodStart(now, job.everySeconds);
      return {
        kind: job.kind,
        payload: job.payload ?? {},
        runAt: start,
        idempotencyKey: recurringKey(job.kind, start),
        maxAttempts: job.maxAttempts ?? 3,
        priority: job.priority ?? 0,
      };
    }),
    { now },
  );
}

/** When the earliest of these definitions enters its next period. */
export function nextPeriodStart(jobs: readonly RecurringJob[], now: Date): Date | null {
  let next: number | null = null;
  for (const job of jobs) {
    const t = periodStart(now, job.everySeconds).getTime() + job.everySeconds * 1000;
    if (next === null || t < next) next = t;
  }
  return next === null ? null : new Date(next);
}
