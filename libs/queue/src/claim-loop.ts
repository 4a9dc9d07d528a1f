import { performance } from 'node:perf_hooks';
import type pg from 'pg';
import { ActiveJob, type ClaimRow, type JobOwner } from './active-job.js';
import type { HeldJobs, ShutdownState, StatementClock } from './held-jobs.js';
import type { Lane } from './lanes.js';
import * as SQL from './sql.js';
import type { QueueLogger } from './types.js';

// Claims due jobs into each lane's local buffer (FOR UPDATE SKIP LOCKED under
// a lease; see CLAIM in sql.ts), woken by NOTIFY, by a poll interval, or by
// room freed in a lane; and gives unstarted jobs back at shutdown.

export interface ClaimLoopOptions {
  pool: pg.Pool;
  jobs: HeldJobs;
  /** The worker's lanes (the array grows as kinds with slots of their own are registered). */
  lanes: readonly Lane[];
  at: StatementClock;
  shutdown: ShutdownState;
  /** Whose JobContext the claimed jobs get. */
  owner: JobOwner;
  leaseMs: number;
  pollIntervalMs: number;
  logger: QueueLogger;
  /** Jobs were claimed: start what the slots allow. */
  onClaimed: () => void;
}

export class ClaimLoop {
  private wakeWork: (() => void) | null = null;
  private workPending = false;

  constructor(private readonly options: ClaimLoopOptions) {}

  async run(): Promise<void> {
    const { lanes, shutdown, pollIntervalMs, logger, jobs } = this.options;
    let failures = 0;
    let woken = true;
    while (!shutdown.stopping) {
      // Each lane's buffer holds at most one batch beyond what its handlers
      // run; a lane claims again once half a batch of room is free, so the
      // next batch arrives while the current one is still running. A lane
      // without room waits for a release (which wakes this loop), the others
      // for work. On a round that only continues a full claim (no NOTIFY,
      // poll or release since), a lane whose last claim came up short is
      // asked again only once a poll interval has passed: a round trip
      // per lane per round would add up during a herd.
      woken ||= this.workPending;
      this.workPending = false;
      let more = false;
      const now = performance.now();
      try {
        for (const lane of lanes) {
          lane.waitingForRoom = false;
          if (lane.kinds.length === 0 || shutdown.stopping) continue;
          if (!lane.wantsClaim) {
            lane.waitingForRoom = true;
            continue;
          }
          if (!woken && !lane.backlog && now - lane.claimedAt < pollIntervalMs) continue;
          const asked = Math.min(lane.batchSize, lane.room);
          lane.backlog = (await this.claim(lane, asked)) >= asked;
          lane.claimedAt = now;
          if (lane.backlog) more = true;
        }
        failures = 0;
      } catch (err) {
        failures++;
        logger.error({ err, workerId: jobs.workerId }, 'queue claim failed');
        await this.waitForWork(Math.min(30_000, pollIntervalMs * 2 ** Math.min(failures, 5)));
        woken = true;
        continue;
      }
      woken = false;
      if (!more) {
        await this.waitForWork(pollIntervalMs);
        woken = true;
      }
    }
  }

  private waitForWork(ms: number): Promise<void> {
    if (this.workPending || this.options.shutdown.stopping) {
      this.workPending = false;
      return Promise.resolve();
    }
    return new Promise<void>((resolve) => {
      const done = () => {
        clearTimeout(timer);
        this.wakeWork = null;
        resolve();
      };
      const timer = setTimeout(done, ms);
      this.wakeWork = done;
    });
  }

  /** A NOTIFY, or anything else saying new work or room exists. */
  wake(): void {
    if (this.wakeWork) this.wakeWork();
    else this.workPending = true;
  }

  /** Claims up to `limit` due jobs of the lane's kinds into its buffer. */
  async claim(lane: Lane, limit: number): Promise<number> {
    const { pool, jobs, at, leaseMs, owner } = this.options;
    if (limit <= 0 || lane.kinds.length === 0) return 0;
    // Our own estimate of the lease, on our clock: for local decisions only (how long a write may be retried).
    const lockedUntil = at.clock.now().getTime() + leaseMs;
    // Slots free for these rows once the buffer ahead of them has started: their attempts count at claim.
    const startsNow = Math.max(0, lane.free - lane.buffered);
    const result = await pool.query<ClaimRow>({
      name: SQL.CLAIM.name,
      text: SQL.CLAIM.text,
      values: [at.now(), lane.kinds, limit, leaseMs, jobs.workerId, startsNow],
    });
    // The counted rows first: they are the ones the free slots start.
    const rows = result.rows.filter((r) => r.counted).concat(result.rows.filter((r) => !r.counted));
    for (const row of rows) {
      const active = new ActiveJob(
        owner,
        {
          id: row.id,
          kind: row.kind,
          payload: row.payload,
          attempts: row.counted ? row.attempts : row.attempts + 1,
          maxAttempts: row.max_attempts,
          idempotencyKey: row.idempotency_key,
          runAt: new Date(row.run_at_ms),
          createdAt: new Date(row.created_at_ms),
        },
        row.lease_token,
        lane,
      );
      active.leaseUntil = lockedUntil;
      active.counted = row.counted;
      active.snoozes = row.snoozes;
      if (row.trace_parent !== null || row.trace_link !== null) active.trace = { traceParent: row.trace_parent, traceLink: row.trace_link };
      jobs.hold(active);
      lane.buffer.push(active);
    }
    if (rows.length > 0) this.options.onClaimed();
    return rows.length;
  }

  /** Gives the lane's unstarted jobs back to the queue (attempt not used). */
  async releaseUnstarted(lane: Lane): Promise<void> {
    const { pool, jobs, at, logger } = this.options;
    const unstarted = lane.drain();
    for (let i = 0; i < unstarted.length; i += 1000) {
      const chunk = unstarted.slice(i, i + 1000);
      for (const a of chunk) a.state = 'finishing';
      try {
        const result = await pool.query<{ id: string }>({
          name: SQL.RELEASE_MANY.name,
          text: SQL.RELEASE_MANY.text,
          values: [chunk.map((a) => a.job.id), chunk.map((a) => a.token), at.clock.now(), jobs.workerId],
        });
        logger.info({ workerId: jobs.workerId, released: result.rowCount }, 'queue: unstarted jobs given back');
      } catch (err) {
        logger.error({ err, workerId: jobs.workerId }, 'queue: could not give back unstarted jobs; the reaper will');
      }
      for (const a of chunk) jobs.release(a);
    }
  }
}
