// The worker's options, and the checks its constructor and registration use.
import type pg from 'pg';
import type { RecurringJob } from './housekeeping.js';
import type { KindOptions } from './lanes.js';
import type { QueueMetrics } from './metrics.js';
import type { JobHandler, QueueClock, QueueLogger, RandomSource } from './types.js';

export interface HousekeepingOptions {
  /** How often the reaper job runs. Default: a third of the lease, at least 5 s. */
  reapEverySeconds?: number;
  /** How often the prune job runs. Default 3600. */
  pruneEverySeconds?: number;
  /** Succeeded and cancelled jobs finished longer ago than this are deleted. Default 14. */
  retentionDays?: number;
  /** Dead jobs are kept longer, for someone to look at or retry: deleted after this many days. Default 30. */
  deadRetentionDays?: number;
}

export interface WorkerOptions {
  /** Where to connect; the worker then owns a small pool of its own (poolSize). */
  connectionString?: string;
  /** Or a pool to use (not ended by stop()). Keep it for the queue: the hot path should not wait behind other queries. */
  pool?: pg.Pool;
  /** Connections of the worker's own pool. Default 8 (claim, flushes, heartbeat, failures, and the completeWith transactions of batches in flight). */
  poolSize?: number;
  /** Written to locked_by and the history. Default host:pid:random. */
  workerId?: string;
  handlers?: Record<string, JobHandler>;
  /** Per-kind options (timeout, slots of its own), merged under those given to register()/registerBatch(). */
  kinds?: Record<string, KindOptions>;
  /** How long a handler past its timeout may take to stop before its job is given up (its lease left to lapse). Default 5000 ms. */
  timeoutGraceMs?: number;
  /** Handlers running at once in the shared slots (kinds without slots of their own). Default 100. No-op benchmarks want thousands; I/O-bound handlers tens to hundreds. */
  concurrency?: number;
  /** Jobs claimed per round trip, and completions per flush. Default 200. The local buffer holds up to one batch beyond `concurrency`. */
  batchSize?: number;
  /** A partial batch of completions waits at most this long. Default 10 ms. */
  flushIntervalMs?: number;
  /** Claim attempts while idle when no NOTIFY arrives (also picks up jobs that became due). Default 1000 ms. */
  pollIntervalMs?: number;
  /** A claimed job is this worker's for this long, renewed by heartbeats. Default 60 s. */
  leaseSeconds?: number;
  /** Default: a third of the lease. */
  heartbeatIntervalMs?: number;
  /**
   * Whether the worker's own connections (not a pool passed in) wait for each
   * claim, completion and failure to reach disk. Default false: after a
   * PostgreSQL crash the last fraction of a second of those writes may be
   * gone, which can only make a job run again (a claim undone puts it back in
   * the queue, a completion undone lets its lease expire) — the queue's
   * at-least-once promise, never a lost job. Enqueues happen in the caller's
   * transaction and completeWith transactions are always synchronous, so no
   * job and no handler write is lost. Waiting for the disk on every batch
   * costs about half the throughput on ordinary disks.
   */
  synchronousCommit?: boolean;
  /** LISTEN for enqueue notifications. Default true. */
  listen?: boolean;
  /** Reaper and pruning as recurring jobs run by this worker; false to leave them to others. Default on. */
  housekeeping?: HousekeepingOptions | false;
  /** Further recurring jobs this worker schedules (it must handle their kinds, or another worker must). */
  recurring?: RecurringJob[];
  /**
   * Bounds on SnoozeJob: a snooze to the past runs the job `minDelaySeconds`
   * from now (default 5; it would otherwise run again at the poll rate), and
   * a job snoozed more than `maxInARow` times in a row without running to an
   * end is dead with that reason (default 100).
   */
  snooze?: { minDelaySeconds?: number; maxInARow?: number };
  /** Retry delays: base and cap of the exponential backoff, seconds. Defaults 30 and 21600. */
  backoff?: { baseSeconds?: number; capSeconds?: number };
  clock?: QueueClock;
  random?: RandomSource;
  logger?: QueueLogger;
  metrics?: QueueMetrics;
}

/**
 * A failure of the connection or the server's state rather than of the
 * statement: no SQLSTATE (a socket error, a terminated connection), or
 * class 08 (connection), 53 (resources), 57 (operator intervention: shutdown,
 * restart), 58 (system) or 40 (serialization failure, deadlock).
 */
export function isConnectionError(err: unknown): boolean {
  const code = (err as { code?: unknown } | null)?.code;
  if (typeof code !== 'string' || !/^[0-9A-Z]{5}$/.test(code)) return true;
  return ['08', '53', '57', '58', '40'].includes(code.slice(0, 2));
}

export function checkKind(kind: string): void {
  if (typeof kind !== 'string' || kind.length === 0) throw new TypeError('job kind must be a non-empty string');
}

export function positiveInt(name: string, value: number): number {
  if (!Number.isInteger(value) || value < 1) throw new RangeError(`${name} must be a positive integer, got ${value}`);
  return value;
}
