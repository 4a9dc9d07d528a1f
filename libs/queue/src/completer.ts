import { performance } from 'node:perf_hooks';
import type pg from 'pg';
import type { ActiveJob, BatchRun, JobOwner } from './active-job.js';
import { backoffSeconds } from './backoff.js';
import { errorClass, errorText, LeaseLostError, PermanentJobError, ShutdownError, SnoozeJob, TransientJobError } from './errors.js';
import { withClient } from './executor.js';
import type { HeldJobs, ShutdownState, StatementClock } from './held-jobs.js';
import type { QueueMetrics } from './metrics.js';
import * as SQL from './sql.js';
import { settlesBy } from './timeouts.js';
import type { ClaimedJob, QueueLogger, RandomSource } from './types.js';
import { isConnectionError } from './worker-options.js';

// Every terminal transition of a job, written to the database: successes in
// batches (one statement per flush), completeWith's transaction, failures
// (retry with backoff, or dead), snoozes and interruptions. Each write is a
// compare-and-set on the job's lease token, retried across a database blip
// for as long as the lease may hold.

export interface CompleterOptions {
  pool: pg.Pool;
  jobs: HeldJobs;
  at: StatementClock;
  shutdown: ShutdownState;
  logger: QueueLogger;
  metrics: QueueMetrics | undefined;
  random: RandomSource;
  /** Successes written together once this many wait, else after flushIntervalMs. */
  batchSize: number;
  flushIntervalMs: number;
  backoffBase: number;
  backoffCap: number;
  minSnoozeMs: number;
  maxSnoozesInARow: number;
}

function sleep(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms));
}

export class Completer implements JobOwner {
  readonly workerId: string;
  readonly pool: pg.Pool;
  private readonly jobs: HeldJobs;
  private readonly at: StatementClock;
  private readonly logger: QueueLogger;
  private readonly metrics: QueueMetrics | undefined;
  private pending: ActiveJob[] = [];
  private flushTimer: NodeJS.Timeout | null = null;
  private readonly writes = new Set<Promise<void>>();

  constructor(private readonly options: CompleterOptions) {
    this.pool = options.pool;
    this.jobs = options.jobs;
    this.at = options.at;
    this.logger = options.logger;
    this.metrics = options.metrics;
    this.workerId = options.jobs.workerId;
  }

  nowMs(): number {
    return this.at.clock.now().getTime();
  }

  /** Keeps a write in flight until it settles, so that shutdown waits for it. */
  track(promise: Promise<void>): void {
    this.writes.add(promise);
    void promise.finally(() => this.writes.delete(promise));
  }

  /** Writes what waits, then waits for every write in flight, until `until` (wall-clock ms); false if some were still pending then. */
  async drain(until: number): Promise<boolean> {
    this.flushNow();
    try {
      while (this.writes.size > 0) {
        if (!(await settlesBy(Promise.allSettled([...this.writes]), until))) return false;
      }
      return true;
    } finally {
      if (this.flushTimer) clearTimeout(this.flushTimer);
    }
  }

  get pendingWrites(): number {
    return this.writes.size;
  }

  /** A handler succeeded: its job is written with the next flush. */
  succeeded(active: ActiveJob, seconds: number): void {
    this.metrics?.observeDuration(active.job.kind, 'succeeded', seconds);
    active.state = 'completing';
    this.pending.push(active);
    if (this.pending.length >= this.options.batchSize) this.flushNow();
    else if (!this.flushTimer) this.flushTimer = setTimeout(() => this.flushNow(), this.options.flushIntervalMs);
  }

  flushNow(): void {
    if (this.flushTimer) {
      clearTimeout(this.flushTimer);
      this.flushTimer = null;
    }
    if (this.pending.length === 0) return;
    const batch = this.pending;
    this.pending = [];
    for (const active of batch) active.state = 'flushing';
    this.track(this.flush(batch));
  }

  private async flush(batch: ActiveJob[]): Promise<void> {
    const ids = batch.map((a) => a.job.id);
    const tokens = batch.map((a) => a.token);
    let completed: Set<string>;
    try {
      const result = await this.durably(batch, 'writing completions', () =>
        this.pool.query<{ id: string }>({
          name: SQL.COMPLETE_MANY.name,
          text: SQL.COMPLETE_MANY.text,
          values: [ids, tokens, this.at.now(), this.workerId],
        }),
      );
      completed = new Set(result.rows.map((r) => r.id));
    } catch (err) {
      // Given up: every lease ran out (or the shutdown deadline passed), or
      // the statement itself failed. The reaper returns the jobs: they run
      // again rather than being lost.
      this.logger.error({ err, workerId: this.workerId, jobs: ids.length }, 'queue: writing completions failed; the jobs will run again');
      for (const active of batch) this.jobs.release(active);
      return;
    }
    const counts = new Map<string, number>();
    for (const active of batch) {
      if (completed.has(active.job.id)) {
        counts.set(active.job.kind, (counts.get(active.job.kind) ?? 0) + 1);
        if (this.jobs.debug) this.logger.debug(this.jobs.fields(active), 'job succeeded');
      } else {
        this.jobs.lost(active, 'completion');
      }
      this.jobs.release(active);
    }
    if (this.metrics) for (const [kind, n] of counts) this.metrics.completed.inc({ kind }, n);
  }

  /** JobContext.completeWith: completeManyWithin for one job that must hold. */
  completeWithin(active: ActiveJob, fn: (tx: pg.PoolClient) => Promise<void>): Promise<void> {
    if (active.completedWith || active.withPromise) return Promise.reject(new Error('completeWith was already called for this job'));
    if (active.state !== 'running' || active.abortReason instanceof LeaseLostError) {
      return Promise.reject(new LeaseLostError(active.job.id));
    }
    return this.completeManyWithin(null, [active], async (tx, held) => {
      if (held.length === 0) throw new LeaseLostError(active.job.id);
      await fn(tx);
    }).then(() => undefined);
  }

  /**
   * BatchContext.completeWith: one compare-and-set for all (rows locked until
   * commit), then fn with the held jobs, then COMMIT. Marks the call as in
   * progress on the batch (when there is one) and on each job, so that
   * handler ends, heartbeats and shutdown wait for it.
   */
  completeManyWithin(
    run: BatchRun | null,
    actives: ActiveJob[],
    fn: (tx: pg.PoolClient, held: ClaimedJob[]) => Promise<void>,
  ): Promise<ClaimedJob[]> {
    if (run?.withPromise) return Promise.reject(new Error('completeWith: the previous call of this batch has not finished'));
    const work = this.completeInTransaction(actives, fn);
    const settled = work.then(
      () => {
        for (const active of actives) if (active.completedWith) active.completeWithError = null;
      },
      (err: unknown) => {
        for (const active of actives) if (!active.completedWith) active.completeWithError = err ?? new Error('completeWith failed');
      },
    );
    if (run) run.withPromise = settled;
    for (const active of actives) active.withPromise = settled;
    return work.finally(() => {
      if (run?.withPromise === settled) run.withPromise = null;
      for (const active of actives) if (active.withPromise === settled) active.withPromise = null;
    });
  }

  private async completeInTransaction(
    actives: ActiveJob[],
    fn: (tx: pg.PoolClient, held: ClaimedJob[]) => Promise<void>,
  ): Promise<ClaimedJob[]> {
    const candidates = actives.filter((a) => a.state === 'running' && !(a.abortReason instanceof LeaseLostError));
    const held = await withClient(this.pool, async (client) => {
      // Durable whatever the session says: fn's writes are the caller's data.
      await client.query('BEGIN; SET LOCAL synchronous_commit = on');
      try {
        const cas =
          candidates.length === 0
            ? { rows: [] as { id: string }[] }
            : await client.query<{ id: string }>({
                name: SQL.COMPLETE_MANY.name,
                text: SQL.COMPLETE_MANY.text,
                values: [candidates.map((a) => a.job.id), candidates.map((a) => a.token), this.at.now(), this.workerId],
              });
        const ok = new Set(cas.rows.map((r) => r.id));
        const kept = candidates.filter((a) => ok.has(a.job.id));
        for (const active of actives) if (!ok.has(active.job.id) && active.state === 'running') this.jobs.lost(active, 'completeWith');
        await fn(
          client,
          kept.map((a) => a.job),
        );
        await client.query('COMMIT');
        return kept;
      } catch (err) {
        await client.query('ROLLBACK').catch(() => undefined);
        throw err;
      }
    });
    for (const active of held) {
      active.completedWith = true;
      this.metrics?.observeDuration(active.job.kind, 'succeeded', (performance.now() - active.t0) / 1000);
      if (this.jobs.debug) this.logger.debug(this.jobs.fields(active), 'job succeeded');
      // Done in the database; still counted as running until the handler returns.
      this.jobs.forget(active);
    }
    if (held.length > 0) this.metrics?.completed.inc({ kind: held[0]!.job.kind }, held.length);
    return held.map((a) => a.job);
  }

  /** A handler failed (or snoozed): retry with backoff, dead, snoozed or put back, as the error says. */
  async fail(active: ActiveJob, error: unknown, seconds: number): Promise<void> {
    active.state = 'finishing';
    const job = active.job;
    const kind = job.kind;
    const cls = errorClass(error);
    if (error instanceof LeaseLostError) {
      // Thrown by the handler itself (its signal's reason, or assertLease): the job is not ours to write.
      // Still held means the heartbeat has not said so yet: assertLease found the lease lapsed by our clock.
      if (this.jobs.holds(active)) this.jobs.lost(active, 'handler');
      this.jobs.release(active);
      return;
    }
    const now = this.at.now();
    if (error instanceof SnoozeJob && active.snoozes >= this.options.maxSnoozesInARow) {
      // A handler that always snoozes would otherwise keep the job for ever.
      error = new PermanentJobError(`snoozed ${active.snoozes + 1} times in a row without running to an end (last: ${error.reason})`);
    }
    try {
      if (error instanceof SnoozeJob) {
        // A snooze to the past waits the minimum delay instead (in SQL, on the statement's clock).
        const until = error.until;
        const ok = await this.writeDurably(active, SQL.SNOOZE, [
          job.id,
          this.workerId,
          active.token,
          now,
          until,
          error.reason,
          this.at.startedAt(active),
          this.options.minSnoozeMs,
        ]);
        this.metrics?.observeDuration(kind, 'snoozed', seconds);
        if (!ok) this.jobs.lost(active, 'snooze');
        else {
          this.metrics?.snoozed.inc({ kind });
          this.logger.info({ ...this.jobs.fields(active), until: until.toISOString(), reason: error.reason }, 'job snoozed');
        }
        return;
      }
      // Aborted at the shutdown deadline: back in the queue, unless the handler said retrying cannot help.
      if (this.options.shutdown.stopping && active.abortReason instanceof ShutdownError && !(error instanceof PermanentJobError)) {
        await this.interrupt(active, error);
        return;
      }
      const text = errorText(error);
      this.metrics?.observeDuration(kind, 'failed', seconds);
      const permanent = error instanceof PermanentJobError;
      if (permanent || job.attempts >= job.maxAttempts) {
        const ok = await this.writeDurably(active, SQL.DEAD, [job.id, this.workerId, active.token, now, text, this.at.startedAt(active)]);
        if (!ok) return this.jobs.lost(active, 'dead');
        this.metrics?.failed.inc({ kind, error_class: cls });
        this.metrics?.deadTotal.inc({ kind, error_class: cls });
        this.logger.error(
          { ...this.jobs.fields(active), err: error, reason: permanent ? 'permanent error' : 'out of attempts' },
          'job dead',
        );
        return;
      }
      const retryAfter = error instanceof TransientJobError ? error.retryAfterSeconds : undefined;
      // A provider's Retry-After is capped like the backoff: a huge value would
      // make an invalid date, and the failure write would then fail.
      const delaySeconds =
        retryAfter === undefined
          ? backoffSeconds(job.attempts, this.options.random, this.options.backoffBase, this.options.backoffCap)
          : Math.min(retryAfter, this.options.backoffCap);
      const delayMs = Math.round(delaySeconds * 1000);
      const ok = await this.writeDurably(active, SQL.RETRY, [
        job.id,
        this.workerId,
        active.token,
        now,
        delayMs,
        text,
        this.at.startedAt(active),
        'failed',
      ]);
      if (!ok) return this.jobs.lost(active, 'retry');
      this.metrics?.failed.inc({ kind, error_class: cls });
      this.metrics?.retried.inc({ kind, error_class: cls });
      this.logger.warn(
        { ...this.jobs.fields(active), err: error, retryInSeconds: delayMs / 1000, retryAfterSeconds: retryAfter ?? null },
        'job failed; will retry',
      );
    } catch (err) {
      // Retried until the lease ran out: the reaper returns the job, so
      // nothing is lost, only delayed.
      this.logger.error({ ...this.jobs.fields(active), err, handlerError: errorText(error) }, 'queue: could not record a failure');
    } finally {
      this.jobs.release(active);
    }
  }

  /** Puts a job back, due `delayMs` from now (by the statement's clock). */
  async interrupt(active: ActiveJob, reason: unknown, delayMs = 0): Promise<void> {
    active.state = 'finishing';
    try {
      const ok = await this.write(SQL.RETRY, [
        active.job.id,
        this.workerId,
        active.token,
        this.at.now(),
        delayMs,
        errorText(reason),
        this.at.startedAt(active),
        'interrupted',
      ]);
      if (ok) this.logger.warn(this.jobs.fields(active), 'job interrupted by shutdown; back in the queue');
      else this.jobs.lost(active, 'interrupt');
    } catch (err) {
      this.logger.error({ ...this.jobs.fields(active), err }, 'queue: could not put back an interrupted job');
    } finally {
      this.jobs.release(active);
    }
  }

  private async write(statement: SQL.NamedStatement, values: unknown[]): Promise<boolean> {
    const result = await this.pool.query({ name: statement.name, text: statement.text, values });
    return (result.rowCount ?? 0) > 0;
  }

  private writeDurably(active: ActiveJob, statement: SQL.NamedStatement, values: unknown[]): Promise<boolean> {
    return this.durably([active], `writing ${statement.name}`, () => this.write(statement, values));
  }

  /**
   * Runs `write` again across a database blip (a lost connection, a
   * restart), with backoff, for as long as one of `actives` may still hold
   * its lease, and when stopping until the deadline. A finished job's write
   * is worth waiting for: giving up re-runs a job that succeeded, or lets
   * the reaper record "lease expired" instead of the real error. Retrying is
   * safe because every write is a compare-and-set. An error of the statement
   * itself (not the connection) is not retried.
   */
  async durably<T>(actives: ActiveJob[], what: string, write: () => Promise<T>): Promise<T> {
    for (let attempt = 0; ; attempt++) {
      try {
        return await write();
      } catch (err) {
        const now = this.at.clock.now().getTime();
        const leaseLeft = actives.some((a) => a.leaseUntil > now);
        const { stopping, deadline } = this.options.shutdown;
        if (!isConnectionError(err) || !leaseLeft || (stopping && Date.now() >= deadline)) throw err;
        const retryInMs = Math.min(2000, 100 * 2 ** attempt);
        this.logger.warn(
          { err, workerId: this.workerId, jobs: actives.length, retryInMs },
          `queue: ${what} failed; retrying while the lease holds`,
        );
        await sleep(retryInMs);
      }
    }
  }
}
