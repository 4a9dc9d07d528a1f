import type { Context } from '@opentelemetry/api';
import type pg from 'pg';

export type JobStatus = 'queued' | 'running' | 'succeeded' | 'dead' | 'cancelled';
export const JOB_STATUSES: readonly JobStatus[] = ['queued', 'running', 'succeeded', 'dead', 'cancelled'];

/** Where "now" comes from. SQL receives it as a parameter so tests can pin it. */
export interface QueueClock {
  now(): Date;
}

/** A uniform random number in [0, 1): the jitter of retry delays. */
export type RandomSource = () => number;

/** The subset of pino the queue writes through: `logger.info(fields, message)`. */
export interface QueueLogger {
  info(obj: object, msg?: string): void;
  warn(obj: object, msg?: string): void;
  error(obj: object, msg?: string): void;
  debug(obj: object, msg?: string): void;
  isLevelEnabled?(level: string): boolean;
}

export const systemClock: QueueClock = { now: () => new Date() };

export const silentLogger: QueueLogger = {
  info: () => undefined,
  warn: () => undefined,
  error: () => undefined,
  debug: () => undefined,
  isLevelEnabled: () => false,
};

export interface EnqueueSpec<P = unknown> {
  kind: string;
  payload?: P;
  /** Default: now (the database's clock is not consulted; pass the caller's). */
  runAt?: Date;
  /**
   * At most one job with this key exists at a time: a second enqueue returns
   * the first job (created = false) for as long as that row exists, i.e. until
   * it is pruned after the retention period, whatever its status.
   */
  idempotencyKey?: string | null;
  /** Attempts before the job is dead. Default 10. */
  maxAttempts?: number;
  /** Lower runs first. Default 0. */
  priority?: number;
  /** Where the job's trace starts (docs/tracing.md). Default: the active context; a batch handler passes jobTraceContext(job). */
  traceContext?: Context;
}

/** A job row as the ops API and enqueue return it. Ids are strings (bigint). */
export interface Job<P = unknown> {
  id: string;
  kind: string;
  payload: P;
  idempotencyKey: string | null;
  priority: number;
  runAt: Date;
  attempts: number;
  maxAttempts: number;
  status: JobStatus;
  lastError: string | null;
  lockedAt: Date | null;
  lockedUntil: Date | null;
  lockedBy: string | null;
  finishedAt: Date | null;
  createdAt: Date;
  updatedAt: Date;
}

export interface EnqueueResult<P = unknown> {
  job: Job<P>;
  created: boolean;
}

/** What a handler receives: the job as claimed for this attempt. */
export interface ClaimedJob<P = any> {
  id: string;
  kind: string;
  payload: P;
  /** This attempt's number, from 1. */
  attempts: number;
  maxAttempts: number;
  idempotencyKey: string | null;
  runAt: Date;
  createdAt: Date;
}

export interface JobContext {
  /** Aborted when this worker loses the job's lease, or at the shutdown deadline. */
  readonly signal: AbortSignal;
  readonly workerId: string;
  /**
   * Runs `fn` in a transaction that also marks the job succeeded (compare-and-set
   * on this worker's lease). If the lease is gone, nothing commits and this
   * rejects with LeaseLostError. After it resolves the job is done: the
   * handler's later return or throw changes nothing.
   */
  completeWith(fn: (tx: pg.PoolClient) => Promise<void>): Promise<void>;
  /**
   * Throws LeaseLostError unless this worker surely still holds the job: its
   * lease was lost, or no renewal of it was sent within a lease by this
   * worker's clock — the process was frozen past its lease (a long pause,
   * SIGSTOP, a suspended VM) and another worker may be running the job now.
   * Synchronous: call it right before an effect that must not happen twice,
   * such as a provider's send.
   */
  assertLease(): void;
}

export type JobHandler<P = any> = (job: ClaimedJob<P>, ctx: JobContext) => Promise<void>;

/**
 * What a batch handler receives beside its jobs. Each job of the batch ends in
 * one of three ways: completed by `completeWith`, failed by `fail` (a retry, a
 * burial or a snooze, as a single handler's throw would), or — neither — it
 * succeeds when the handler resolves. If the handler rejects, every job not yet
 * completed or failed fails with that error.
 */
export interface BatchContext<P = any> {
  /** Aborted at the shutdown deadline. A job whose lease is lost is left out of completeWith's `held`. */
  readonly signal: AbortSignal;
  readonly workerId: string;
  /**
   * Marks `jobs` (some of this batch, each at most once) succeeded in ONE
   * transaction that also runs `fn`: the compare-and-set of every job's lease
   * first (those rows stay locked until commit), then `fn(tx, held)` with the
   * jobs whose lease held, then COMMIT. Resolves with `held`; a job left out
   * was lost to another worker or the reaper and is not completed here. If
   * `fn` throws, nothing commits, the jobs stay running and this rejects.
   * Always synchronous commit.
   */
  completeWith(jobs: readonly ClaimedJob<P>[], fn: (tx: pg.PoolClient, held: ClaimedJob<P>[]) => Promise<void>): Promise<ClaimedJob<P>[]>;
  /** Ends this job as a throw would end a single job (SnoozeJob, TransientJobError, PermanentJobError…), once the handler returns. */
  fail(job: ClaimedJob<P>, error: unknown): void;
  /**
   * JobContext.assertLease's clock check for the batch: throws LeaseLostError
   * when no renewal of a job still open in it was sent within a lease (the
   * batch's jobs are renewed together, so a frozen process finds them all
   * lapsed). A job lost on its own, to another worker, does not throw here: it
   * is left out of completeWith's `held`.
   */
  assertLease(): void;
}

/** Runs several jobs of one kind at once; see BatchContext for how each job ends. */
export type BatchJobHandler<P = any> = (jobs: ClaimedJob<P>[], ctx: BatchContext<P>) => Promise<void>;

export interface BatchHandlerOptions {
  /** Jobs per call at most. Default 50. A batch takes that many of the worker's `concurrency` slots. */
  maxBatch?: number;
}

export type JobRunOutcome = 'succeeded' | 'failed' | 'dead' | 'snoozed' | 'lease_expired' | 'interrupted';

export interface JobRun {
  attempt: number;
  worker: string | null;
  startedAt: Date | null;
  finishedAt: Date;
  outcome: JobRunOutcome;
  error: string | null;
  nextRunAt: Date | null;
}
