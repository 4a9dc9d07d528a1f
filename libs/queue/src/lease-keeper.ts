import type pg from 'pg';
import type { HeldJobs, StatementClock } from './held-jobs.js';
import * as SQL from './sql.js';
import type { QueueLogger } from './types.js';

// Renews the lease of every job a worker holds, on a timer (a third of the
// lease by default), in one statement; a job whose lease is no longer ours
// (the reaper or another worker took it) has its handler's signal aborted
// and leaves the worker.

export interface LeaseKeeperOptions {
  pool: pg.Pool;
  jobs: HeldJobs;
  at: StatementClock;
  leaseMs: number;
  logger: QueueLogger;
  /** Jobs were lost and released: the runner may start others. */
  afterLoss: () => void;
}

export class LeaseKeeper {
  private timer: NodeJS.Timeout | null = null;
  private inFlight = false;

  constructor(private readonly options: LeaseKeeperOptions) {}

  start(intervalMs: number): void {
    this.timer = setInterval(() => void this.extendLeases(), intervalMs);
    this.timer.unref?.();
  }

  stop(): void {
    if (this.timer) clearInterval(this.timer);
    this.timer = null;
  }

  /** Renews the lease of every held job; aborts the signal of those that are no longer ours. */
  async extendLeases(): Promise<void> {
    const { pool, jobs, at, leaseMs, logger } = this.options;
    if (this.inFlight || jobs.size === 0) return;
    this.inFlight = true;
    const sent = jobs.list();
    try {
      const until = at.clock.now().getTime() + leaseMs;
      const extended = await pool.query<{ id: string }>({
        name: SQL.EXTEND_LEASES.name,
        text: SQL.EXTEND_LEASES.text,
        values: [sent.map((a) => a.job.id), sent.map((a) => a.token), at.now(), jobs.workerId, leaseMs],
      });
      const ok = new Set(extended.rows.map((r) => r.id));
      for (const active of sent) if (ok.has(active.job.id)) active.leaseUntil = until;
      if (extended.rows.length === sent.length) return;
      const unsure = sent.filter((a) => !ok.has(a.job.id));
      const check = await pool.query<{ id: string }>({
        name: SQL.LEASE_CHECK.name,
        text: SQL.LEASE_CHECK.text,
        values: [unsure.map((a) => a.job.id), unsure.map((a) => a.token), jobs.workerId],
      });
      const stillOurs = new Set(check.rows.map((r) => r.id));
      for (const active of unsure) {
        // Only a job not yet handed to a completion or failure write is
        // declared lost here; those writes find out for themselves.
        if (stillOurs.has(active.job.id) || !jobs.holds(active)) continue;
        if ((active.state === 'buffered' || active.state === 'running') && !active.withPromise) {
          jobs.lost(active, 'heartbeat');
          if (active.state === 'running') jobs.unrun(active);
          jobs.release(active);
          this.options.afterLoss();
        }
      }
    } catch (err) {
      logger.warn({ err, workerId: jobs.workerId }, 'queue heartbeat failed');
    } finally {
      this.inFlight = false;
    }
  }
}
