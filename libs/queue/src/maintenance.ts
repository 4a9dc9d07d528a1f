import type pg from 'pg';
import type { StatementClock } from './held-jobs.js';
import {
  foldDeadCounts,
  nextPeriodStart,
  pruneFinishedJobs,
  pruneSuccessCounts,
  reapExpiredJobs,
  SUCCESS_COUNTS_KEPT_MS,
  scheduleRecurringJobs,
  validateRecurring,
  type RecurringJob,
} from './housekeeping.js';
import type { QueueMetrics } from './metrics.js';
import type { QueueLogger, RandomSource } from './types.js';
import type { HousekeepingOptions } from './worker-options.js';

// A worker's share of the queue's upkeep: the recurring schedule (one job per
// period and kind, whichever worker inserts it first), and the handlers of the
// reaper (expired leases back to the queue) and the pruner (old finished jobs).

export interface MaintenanceOptions {
  pool: pg.Pool;
  at: StatementClock;
  workerId: string;
  housekeeping: Required<HousekeepingOptions> | null;
  logger: QueueLogger;
  metrics: QueueMetrics | undefined;
  random: RandomSource;
  /** Whether the worker is running (started and not stopping). */
  active: () => boolean;
}

export class Maintenance {
  private readonly recurring: RecurringJob[] = [];
  private timer: NodeJS.Timeout | null = null;

  constructor(private readonly options: MaintenanceOptions) {}

  /** Schedules one job of `job.kind` per period (replacing an earlier declaration of the kind). */
  addRecurring(job: RecurringJob): void {
    validateRecurring(job);
    const i = this.recurring.findIndex((r) => r.kind === job.kind);
    if (i >= 0) this.recurring[i] = job;
    else this.recurring.push(job);
    if (this.options.active()) void this.tick();
  }

  stop(): void {
    if (this.timer) clearTimeout(this.timer);
    this.timer = null;
  }

  /** Inserts this period's recurring jobs (idempotently), then waits for the next period. */
  async tick(): Promise<void> {
    this.stop();
    const { pool, at, logger, workerId } = this.options;
    if (!this.options.active() || this.recurring.length === 0) return;
    const now = at.clock.now();
    try {
      const results = await scheduleRecurringJobs(pool, this.recurring, now);
      for (const r of results) {
        if (r.created && logger.isLevelEnabled?.('debug') !== false) {
          logger.debug({ jobId: r.job.id, kind: r.job.kind, idempotencyKey: r.job.idempotencyKey }, 'recurring job scheduled');
        }
      }
    } catch (err) {
      logger.warn({ err, workerId }, 'queue: scheduling recurring jobs failed');
    }
    if (!this.options.active()) return;
    const next = nextPeriodStart(this.recurring, now)!;
    // A little random spread so that many workers do not all insert at the same instant.
    const delay = Math.min(60_000, Math.max(50, next.getTime() - now.getTime())) + Math.floor(this.options.random() * 200);
    this.timer = setTimeout(() => void this.tick(), delay);
    this.timer.unref?.();
  }

  /**
   * The reaper's handler: jobs whose lease lapsed go back to the queue (or
   * dead, out of attempts); then the dead-job changes are folded into the
   * gauge's counts (the same few-second beat).
   */
  async reap(): Promise<void> {
    const reaped = await reapExpiredJobs(this.options.pool, this.options.at.now());
    await foldDeadCounts(this.options.pool);
    for (const job of reaped) {
      this.options.metrics?.reaped.inc({ kind: job.kind, outcome: job.status });
      this.options.logger.warn(
        {
          jobId: job.id,
          kind: job.kind,
          attempt: job.attempts,
          idempotencyKey: job.idempotencyKey,
          lostBy: job.worker,
          status: job.status,
        },
        'job lease expired; reaped',
      );
    }
  }

  /** The pruner's handler: finished jobs past their retention are deleted, and the success counts past their use. */
  async prune(signal: AbortSignal): Promise<void> {
    const { housekeeping, at, pool, logger } = this.options;
    const now = at.clock.now().getTime();
    await pruneSuccessCounts(pool, new Date(now - SUCCESS_COUNTS_KEPT_MS));
    const cutoff = new Date(now - (housekeeping?.retentionDays ?? 14) * 86_400_000);
    const deadCutoff = new Date(now - (housekeeping?.deadRetentionDays ?? 30) * 86_400_000);
    const deleted = await pruneFinishedJobs(pool, cutoff, { deadOlderThan: deadCutoff, signal });
    if (deleted > 0) {
      logger.info({ deleted, cutoff: cutoff.toISOString(), deadCutoff: deadCutoff.toISOString() }, 'queue: pruned finished jobs');
    }
  }
}
