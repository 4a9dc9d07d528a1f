import { randomBytes } from 'node:crypto';
import { hostname } from 'node:os';
import { performance } from 'node:perf_hooks';
import { context } from '@opentelemetry/api';
import pg from 'pg';
import { ActiveJob, BatchRun, type ClaimRow } from './active-job.js';
import { withClient } from './executor.js';
import { backoffSeconds } from './backoff.js';
import { errorClass, errorText, LeaseLostError, PermanentJobError, ShutdownError, SnoozeJob, TransientJobError } from './errors.js';
import {
  nextPeriodStart,
  PRUNE_KIND,
  pruneFinishedJobs,
  REAP_KIND,
  reapExpiredJobs,
  scheduleRecurringJobs,
  validateRecurring,
  type RecurringJob,
} from './housekeeping.js';
import { checkKindOptions, Lane, type KindOptions } from './lanes.js';
import type { QueueMetrics } from './metrics.js';
import type { PayloadOf } from './job-kinds.js';
import * as SQL from './sql.js';
import { endJobSpan, startJobSpan } from './tracing.js';
import { WakeListener } from './wake-listener.js';
import { checkKind, isConnectionError, positiveInt, type HousekeepingOptions, type WorkerOptions } from './worker-options.js';
import { checkTimeouts, settlesBy, timeoutCheckIntervalMs, timeoutFailure } from './timeouts.js';
import {
  silentLogger,
  systemClock,
  type BatchHandlerOptions,
  type BatchJobHandler,
  type ClaimedJob,
  type JobContext,
  type JobHandler,
  type QueueClock,
  type QueueLogger,
  type RandomSource,
} from './types.js';

export type { HousekeepingOptions, WorkerOptions } from './worker-options.js';

function sleep(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms));
}

/**
 * Claims jobs of the kinds it has handlers for and runs them. Plain class:
 * usable from a script (`new Worker({...}).start()`), wrapped by QueueModule
 * in Nest.
 */
export class Worker {
  readonly workerId: string;
  readonly pool: pg.Pool;
  private readonly ownsPool: boolean;
  private readonly handlers = new Map<string, JobHandler>();
  private readonly batchHandlers = new Map<string, { handler: BatchJobHandler; maxBatch: number }>();
  private kinds: string[] = [];
  /** Options given for kinds (WorkerOptions.kinds, then register's), and the lanes they make. */
  private readonly kindOptions = new Map<string, KindOptions>();
  private readonly sharedLane: Lane;
  private lanes: Lane[] = [];
  private readonly laneByKind = new Map<string, Lane>();
  private readonly timeoutGraceMs: number;
  private readonly recurring: RecurringJob[] = [];

  private readonly concurrency: number;
  private readonly batchSize: number;
  private readonly flushIntervalMs: number;
  private readonly pollIntervalMs: number;
  private readonly leaseMs: number;
  private readonly heartbeatIntervalMs: number;
  private readonly listen: boolean;
  private readonly housekeeping: Required<HousekeepingOptions> | null;
  private readonly backoffBase: number;
  private readonly backoffCap: number;
  private readonly minSnoozeMs: number;
  private readonly maxSnoozesInARow: number;
  private readonly clock: QueueClock;
  /** No clock given: leases, the reaper and due checks use the database's now() (see sqlNow). */
  private readonly databaseClock: boolean;
  private readonly random: RandomSource;
  private readonly logger: QueueLogger;
  private readonly metrics: QueueMetrics | undefined;
  private readonly debug: boolean;

  private readonly held = new Map<string, ActiveJob>();
  /** Handlers in progress in every lane, stuck ones included. */
  private running = 0;
  /** Handlers past their timeout and grace: their jobs were given up, their slots are held until they return. */
  private readonly stuck = new Set<ActiveJob>();
  private timeoutTimer: NodeJS.Timeout | null = null;
  private pendingComplete: ActiveJob[] = [];
  /** Starts of this pump that wait for their attempt to be counted. */
  private pendingStarts: { actives: ActiveJob[]; go: (ready: ActiveJob[]) => void }[] = [];
  private flushTimer: NodeJS.Timeout | null = null;
  private readonly writes = new Set<Promise<void>>();

  private started = false;
  private stopping = false;
  /** Wall-clock ms after which a stopping worker stops retrying its writes. */
  private stopDeadline = Infinity;
  private stopPromise: Promise<void> | null = null;
  private claimLoopDone: Promise<void> | null = null;
  private wakeWork: (() => void) | null = null;
  private workPending = false;
  private idleWaiters: (() => void)[] = [];
  private runningWaiters: (() => void)[] = [];
  private heartbeatTimer: NodeJS.Timeout | null = null;
  private heartbeatInFlight = false;
  private recurringTimer: NodeJS.Timeout | null = null;
  private listener: WakeListener | null = null;

  constructor(options: WorkerOptions) {
    if (options.pool) {
      this.pool = options.pool;
      this.ownsPool = false;
    } else if (options.connectionString) {
      this.pool = new pg.Pool({
        connectionString: options.connectionString,
        max: options.poolSize ?? 8,
        application_name: 'queue-worker',
        // See WorkerOptions.synchronousCommit.
        ...(options.synchronousCommit === true ? {} : { options: '-c synchronous_commit=off' }),
      });
      this.ownsPool = true;
    } else {
      throw new TypeError('Worker needs a connectionString or a pool');
    }
    this.workerId = options.workerId ?? `${hostname()}:${process.pid}:${randomBytes(3).toString('hex')}`;
    this.concurrency = positiveInt('concurrency', options.concurrency ?? 100);
    this.batchSize = positiveInt('batchSize', options.batchSize ?? 200);
    this.sharedLane = new Lane(null, this.concurrency, this.batchSize);
    this.lanes = [this.sharedLane];
    this.timeoutGraceMs = Math.max(0, options.timeoutGraceMs ?? 5000);
    for (const [kind, kindOptions] of Object.entries(options.kinds ?? {})) this.kindOptions.set(kind, checkKindOptions(kind, kindOptions));
    this.flushIntervalMs = Math.max(0, options.flushIntervalMs ?? 10);
    this.pollIntervalMs = positiveInt('pollIntervalMs', options.pollIntervalMs ?? 1000);
    const leaseSeconds = options.leaseSeconds ?? 60;
    if (!(leaseSeconds > 0)) throw new RangeError('leaseSeconds must be positive');
    this.leaseMs = leaseSeconds * 1000;
    this.heartbeatIntervalMs = options.heartbeatIntervalMs ?? Math.max(100, Math.floor(this.leaseMs / 3));
    this.listen = options.listen ?? true;
    this.backoffBase = options.backoff?.baseSeconds ?? 30;
    this.backoffCap = options.backoff?.capSeconds ?? 6 * 60 * 60;
    this.minSnoozeMs = Math.max(0, options.snooze?.minDelaySeconds ?? 5) * 1000;
    this.maxSnoozesInARow = positiveInt('snooze.maxInARow', options.snooze?.maxInARow ?? 100);
    this.clock = options.clock ?? systemClock;
    this.databaseClock = this.clock === systemClock;
    this.random = options.random ?? Math.random;
    this.logger = options.logger ?? silentLogger;
    this.metrics = options.metrics;
    this.debug = this.logger.isLevelEnabled ? this.logger.isLevelEnabled('debug') : true;
    if (this.ownsPool) {
      this.pool.on('error', (err) => this.logger.warn({ err, workerId: this.workerId }, 'queue pool: idle client error'));
    }

    for (const [kind, handler] of Object.entries(options.handlers ?? {})) this.register(kind, handler);
    if (options.housekeeping !== false) {
      const h = options.housekeeping ?? {};
      this.housekeeping = {
        reapEverySeconds: h.reapEverySeconds ?? Math.max(5, Math.round(leaseSeconds / 3)),
        pruneEverySeconds: h.pruneEverySeconds ?? 3600,
        retentionDays: h.retentionDays ?? 14,
        deadRetentionDays: h.deadRetentionDays ?? 30,
      };
      // Slots of their own: a worker whose job slots are all taken (or stuck) still reaps and prunes.
      this.register(REAP_KIND, (_job, ctx) => this.runReaper(ctx), { concurrency: 1 });
      this.register(PRUNE_KIND, (_job, ctx) => this.runPrune(ctx), { concurrency: 1 });
      this.addRecurring({ kind: REAP_KIND, everySeconds: this.housekeeping.reapEverySeconds, priority: -10, maxAttempts: 1 });
      this.addRecurring({ kind: PRUNE_KIND, everySeconds: this.housekeeping.pruneEverySeconds, maxAttempts: 3 });
    } else {
      this.housekeeping = null;
    }
    for (const job of options.recurring ?? []) this.addRecurring(job);
  }

  /**
   * Handles jobs of `kind`, with its options (timeout, slots of its own)
   * over those of WorkerOptions.kinds. May be called after start(): the next
   * claim includes it.
   */
  register<K extends string>(kind: K, handler: JobHandler<PayloadOf<K>>, options: KindOptions = {}): this {
    checkKind(kind);
    this.checkUnhandled(kind);
    this.handlers.set(kind, handler);
    this.setKind(kind, options);
    return this;
  }

  /**
   * Handles jobs of `kind` several at a time: the handler gets up to
   * `maxBatch` claimed jobs of that kind at once (fewer when fewer are ready
   * or fewer concurrency slots are free) and ends each as BatchContext says.
   * For handlers whose cost is per statement rather than per row.
   */
  registerBatch<K extends string>(kind: K, handler: BatchJobHandler<PayloadOf<K>>, options: BatchHandlerOptions & KindOptions = {}): this {
    checkKind(kind);
    this.checkUnhandled(kind);
    const { maxBatch: max, ...kindOptions } = options;
    const maxBatch = positiveInt('maxBatch', max ?? 50);
    this.batchHandlers.set(kind, { handler, maxBatch });
    this.setKind(kind, kindOptions);
    return this;
  }

  /**
   * The boot check: throws, naming them, if any of `kinds` (those the app
   * enqueues) has no handler here — a job of a kind nobody handles would wait
   * for ever. Call it once every handler is registered.
   */
  assertHandles(kinds: readonly string[]): void {
    const missing = [...new Set(kinds)].filter((kind) => !this.handlers.has(kind) && !this.batchHandlers.has(kind));
    if (missing.length > 0) throw new Error(`no handler registered for job kind(s) this app enqueues: ${missing.join(', ')}`);
  }

  // One handler per kind: a second registration is a wiring mistake, not a replacement.
  private checkUnhandled(kind: string): void {
    if (this.handlers.has(kind) || this.batchHandlers.has(kind)) throw new Error(`job kind ${kind} already has a handler`);
  }

  /** The kind's options and lane: its own (concurrency given) or the shared one. A kind's lane is fixed once it has one. */
  private setKind(kind: string, options: KindOptions): void {
    const merged = checkKindOptions(kind, { ...this.kindOptions.get(kind), ...options });
    this.kindOptions.set(kind, merged);
    // A series from the start (0), so that dashboards and alerts see the kind before anything times out.
    if (merged.timeoutMs !== undefined) this.metrics?.pastTimeout.inc({ kind }, 0);
    this.kinds = [...this.handlers.keys(), ...this.batchHandlers.keys()];
    if (!this.laneByKind.has(kind)) {
      const lane =
        merged.concurrency === undefined
          ? this.sharedLane
          : new Lane(kind, merged.concurrency, merged.batchSize ?? Math.min(this.batchSize, merged.concurrency));
      if (lane !== this.sharedLane) this.lanes.push(lane);
      this.laneByKind.set(kind, lane);
    }
    for (const lane of this.lanes) lane.kinds = this.kinds.filter((k) => this.laneByKind.get(k) === lane);
    if (this.started) this.scheduleTimeoutChecks();
  }

  private scheduleTimeoutChecks(): void {
    const timeouts = [...this.kindOptions.values()].flatMap((o) => (o.timeoutMs === undefined ? [] : [o.timeoutMs]));
    if (this.timeoutTimer) clearInterval(this.timeoutTimer);
    this.timeoutTimer = null;
    if (timeouts.length === 0 || this.stopping) return;
    this.timeoutTimer = setInterval(() => this.checkTimeouts(), timeoutCheckIntervalMs(timeouts, this.timeoutGraceMs));
    this.timeoutTimer.unref?.();
  }

  /** Schedules one job of `job.kind` per period from this worker (and any other that declares the same). */
  addRecurring(job: RecurringJob): this {
    validateRecurring(job);
    const i = this.recurring.findIndex((r) => r.kind === job.kind);
    if (i >= 0) this.recurring[i] = job;
    else this.recurring.push(job);
    if (this.started && !this.stopping) void this.tickRecurring();
    return this;
  }

  /** Jobs this worker holds: claimed and not yet finished (buffered, running or being completed). */
  get heldCount(): number {
    return this.held.size;
  }

  /** Starts claiming, heartbeats, LISTEN and the recurring schedule. Resolves once listening. */
  async start(): Promise<void> {
    if (this.started) throw new Error('worker already started');
    if (this.stopping) throw new Error('worker was stopped');
    this.started = true;
    if (this.listen) {
      this.listener = new WakeListener(this.pool.options as pg.ClientConfig, () => this.onWork(), this.logger, this.workerId);
      await this.listener.connect();
    }
    this.heartbeatTimer = setInterval(() => void this.extendLeases(), this.heartbeatIntervalMs);
    this.heartbeatTimer.unref?.();
    this.scheduleTimeoutChecks();
    void this.tickRecurring();
    this.claimLoopDone = this.claimLoop();
    this.logger.info(
      { workerId: this.workerId, kinds: this.kinds, concurrency: this.concurrency, batchSize: this.batchSize },
      'queue worker started',
    );
  }

  /**
   * Claims one batch (up to `limit`), runs it and waits until every job is
   * finished and written. For tests and scripts that drive the worker step by
   * step; not to be mixed with start().
   */
  async runOnce(limit = this.batchSize): Promise<number> {
    if (this.started) throw new Error('runOnce() is for a worker that was not start()ed');
    let claimed = 0;
    for (const lane of this.lanes) claimed += await this.claim(lane, Math.min(limit, lane.room));
    await this.idle();
    return claimed;
  }

  /** Resolves when this worker holds no job (handlers stuck past their timeout hold none). */
  idle(): Promise<void> {
    if (this.held.size === 0 && this.running === this.stuck.size) return Promise.resolve();
    return new Promise((resolve) => this.idleWaiters.push(resolve));
  }

  /**
   * Stops claiming, gives back the jobs claimed but not started (attempt not
   * consumed), lets running handlers finish until `deadlineMs`, then aborts
   * their signals; a handler still running after a short grace has its job
   * put back as interrupted (attempt consumed, due at once). Then writes
   * every pending completion and closes the worker's connections.
   */
  stop(options: { deadlineMs?: number } = {}): Promise<void> {
    this.stopPromise ??= this.shutdown(options.deadlineMs ?? 30_000);
    return this.stopPromise;
  }

  // Every wait is bounded, so an unresponsive database cannot hold stop()
  // past deadline + wind-down + the last writes' allowance: waits before the
  // deadline end at it, and the writes after it (interruptions, completions)
  // get at most a fifth of the deadline more (0.2–5 s); what is still unwritten
  // then is left to the reaper (its leases lapse).
  private async shutdown(deadlineMs: number): Promise<void> {
    const deadline = Date.now() + deadlineMs;
    const windDownMs = Math.min(1000, Math.max(100, deadlineMs / 10));
    const lastWrites = deadline + windDownMs + Math.min(5000, Math.max(200, deadlineMs / 5));
    this.stopDeadline = deadline;
    this.stopping = true;
    this.wakeWork?.();
    if (this.recurringTimer) clearTimeout(this.recurringTimer);
    if (this.listener) await settlesBy(this.listener.close(), deadline);
    if (this.claimLoopDone && !(await settlesBy(this.claimLoopDone, deadline))) {
      this.logger.warn(
        { workerId: this.workerId },
        'queue: a claim did not return by the shutdown deadline; its jobs are left to the reaper',
      );
    }

    await settlesBy(Promise.all(this.lanes.map((lane) => this.releaseUnstarted(lane))), deadline);

    if (this.running > this.stuck.size) await settlesBy(this.allHandlersSettled(), deadline);
    if (this.running > this.stuck.size) {
      const reason = new ShutdownError(`worker ${this.workerId} is stopping and its deadline passed`);
      for (const active of this.held.values()) if (active.state === 'running') active.abort(reason);
      // A handler that honours its signal gets a moment to wind down.
      await settlesBy(this.allHandlersSettled(), Date.now() + windDownMs);
      for (const active of [...this.held.values()]) {
        if (active.state === 'running' && !active.withPromise) {
          // Still running: back in the queue, but not before its lease would have
          // lapsed, so that no other worker starts it while this handler may still run.
          this.unrun(active);
          this.track(this.interrupt(active, reason, Math.max(0, active.leaseUntil - this.clock.now().getTime())));
        }
      }
    }
    this.flushNow();
    while (this.writes.size > 0) {
      if (!(await settlesBy(Promise.allSettled([...this.writes]), lastWrites))) {
        this.logger.error(
          { workerId: this.workerId, writes: this.writes.size },
          'queue: writes still pending at the shutdown deadline; their jobs are left to the reaper',
        );
        break;
      }
    }
    if (this.heartbeatTimer) clearInterval(this.heartbeatTimer);
    if (this.timeoutTimer) clearInterval(this.timeoutTimer);
    if (this.flushTimer) clearTimeout(this.flushTimer);
    if (this.ownsPool) await settlesBy(this.pool.end(), lastWrites);
    this.logger.info({ workerId: this.workerId }, 'queue worker stopped');
  }

  private allHandlersSettled(): Promise<void> {
    if (this.running === this.stuck.size) return Promise.resolve();
    return new Promise((resolve) => this.runningWaiters.push(resolve));
  }

  // ---- claiming ----------------------------------------------------------

  private async claimLoop(): Promise<void> {
    let failures = 0;
    let woken = true;
    while (!this.stopping) {
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
        for (const lane of this.lanes) {
          lane.waitingForRoom = false;
          if (lane.kinds.length === 0 || this.stopping) continue;
          if (!lane.wantsClaim) {
            lane.waitingForRoom = true;
            continue;
          }
          if (!woken && !lane.backlog && now - lane.claimedAt < this.pollIntervalMs) continue;
          const asked = Math.min(lane.batchSize, lane.room);
          lane.backlog = (await this.claim(lane, asked)) >= asked;
          lane.claimedAt = now;
          if (lane.backlog) more = true;
        }
        failures = 0;
      } catch (err) {
        failures++;
        this.logger.error({ err, workerId: this.workerId }, 'queue claim failed');
        await this.waitForWork(Math.min(30_000, this.pollIntervalMs * 2 ** Math.min(failures, 5)));
        woken = true;
        continue;
      }
      woken = false;
      if (!more) {
        await this.waitForWork(this.pollIntervalMs);
        woken = true;
      }
    }
  }

  private waitForWork(ms: number): Promise<void> {
    if (this.workPending || this.stopping) {
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

  /** A NOTIFY (or anything else saying new work exists). */
  private onWork(): void {
    if (this.wakeWork) this.wakeWork();
    else this.workPending = true;
  }

  private async claim(lane: Lane, limit: number): Promise<number> {
    if (limit <= 0 || lane.kinds.length === 0) return 0;
    // Our own estimate of the lease, on our clock: for local decisions only (how long a write may be retried).
    const lockedUntil = this.clock.now().getTime() + this.leaseMs;
    // Slots free for these rows once the buffer ahead of them has started: their attempts count at claim.
    const startsNow = Math.max(0, lane.free - lane.buffered);
    const result = await this.pool.query<ClaimRow>({
      name: SQL.CLAIM.name,
      text: SQL.CLAIM.text,
      values: [this.sqlNow(), lane.kinds, limit, this.leaseMs, this.workerId, startsNow],
    });
    // The counted rows first: they are the ones the free slots start.
    const rows = result.rows.filter((r) => r.counted).concat(result.rows.filter((r) => !r.counted));
    for (const row of rows) {
      const active = new ActiveJob(
        this,
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
      this.held.set(row.id, active);
      lane.held++;
      lane.buffer.push(active);
      if (this.debug) this.logger.debug(this.fields(active), 'job claimed');
    }
    if (rows.length > 0) this.pump();
    return rows.length;
  }

  // ---- running -----------------------------------------------------------

  private pump(): void {
    if (this.stopping) return;
    for (const lane of this.lanes) this.pumpLane(lane);
    this.countStarts();
  }

  private pumpLane(lane: Lane): void {
    while (lane.running < lane.concurrency && lane.head < lane.buffer.length) {
      const active = lane.buffer[lane.head++]!;
      if (active.state !== 'buffered') continue;
      const batch = this.batchHandlers.get(active.job.kind);
      if (!batch) {
        this.begin(active, this.clock.now(), performance.now());
        this.launch([active], () => this.run(active));
        continue;
      }
      // Wait for room for a whole batch (while others run), so that batches
      // stay large instead of splitting into whatever slots come free. At
      // most half the slots, so that two batches can overlap.
      const free = lane.free;
      const wanted = Math.min(batch.maxBatch, Math.max(1, Math.floor(lane.concurrency / 2)));
      const size = Math.min(batch.maxBatch, free);
      const group = [active, ...lane.bufferedOfKind(active.job.kind, Math.max(wanted, size) - 1)];
      if (lane.running > 0 && free < Math.min(wanted, group.length)) {
        lane.head--;
        break;
      }
      const chosen = group.slice(0, size);
      const startedAt = this.clock.now();
      const t0 = performance.now();
      for (const a of chosen) this.begin(a, startedAt, t0);
      this.launch(chosen, (ready) => this.runBatch(ready, batch.handler));
    }
    lane.compact();
  }

  private begin(active: ActiveJob, startedAt: Date, t0: number): void {
    active.state = 'running';
    this.running++;
    active.lane.running++;
    active.startedAt = startedAt;
    active.t0 = t0;
    const timeoutMs = this.kindOptions.get(active.job.kind)?.timeoutMs;
    if (timeoutMs !== undefined) active.timeoutAt = startedAt.getTime() + timeoutMs;
    if (this.debug) this.logger.debug(this.fields(active), 'job started');
  }

  /** Calls `go` with those of `actives` whose attempt is counted: at once when all are, else once this pump's START_MANY has landed. */
  private launch(actives: ActiveJob[], go: (ready: ActiveJob[]) => void): void {
    if (actives.every((a) => a.counted)) go(actives);
    else this.pendingStarts.push({ actives, go });
  }

  private countStarts(): void {
    if (this.pendingStarts.length === 0) return;
    const starts = this.pendingStarts;
    this.pendingStarts = [];
    this.track(this.countAttempts(starts));
  }

  // Buffered jobs about to start: their attempts are counted before their
  // handlers run, so a crash can never run an attempt that was not counted.
  private async countAttempts(starts: { actives: ActiveJob[]; go: (ready: ActiveJob[]) => void }[]): Promise<void> {
    const uncounted = starts.flatMap((s) => s.actives.filter((a) => !a.counted));
    let counted: Set<string> | null = null;
    try {
      const result = await this.durably(uncounted, 'counting attempts', () =>
        this.pool.query<{ id: string }>({
          name: SQL.START_MANY.name,
          text: SQL.START_MANY.text,
          values: [uncounted.map((a) => a.job.id), uncounted.map((a) => a.token), this.sqlNow(), this.workerId],
        }),
      );
      counted = new Set(result.rows.map((r) => r.id));
    } catch (err) {
      this.logger.error(
        { err, workerId: this.workerId, jobs: uncounted.length },
        'queue: could not start jobs; they go back to the queue when their lease runs out',
      );
    }
    for (const active of uncounted) if (counted?.has(active.job.id)) active.counted = true;
    for (const { actives, go } of starts) {
      const ready: ActiveJob[] = [];
      for (const active of actives) {
        // Lost to a heartbeat meanwhile: already accounted for.
        if (active.state !== 'running') continue;
        if (active.counted) {
          ready.push(active);
          continue;
        }
        if (counted) this.lost(active, 'start');
        this.unrun(active);
        this.release(active);
      }
      if (ready.length > 0) go(ready);
    }
    this.checkIdle();
    this.pump();
  }

  private run(active: ActiveJob): void {
    const handler = this.handlers.get(active.job.kind)!;
    const traced = (active.span = startJobSpan(active.job, active.trace, this.clock));
    let promise: Promise<void>;
    try {
      promise = traced ? context.with(traced.context, () => handler(active.job, active)) : handler(active.job, active);
    } catch (err) {
      promise = Promise.reject(err);
    }
    promise.then(
      () => this.onHandlerDone(this.endSpan(active, null), null),
      (err: unknown) => {
        const error = err ?? new Error('handler rejected without a reason');
        this.onHandlerDone(this.endSpan(active, error), error);
      },
    );
  }

  /** Ends the attempt's span (once; nothing when tracing is off). */
  private endSpan(active: ActiveJob, error: unknown): ActiveJob {
    endJobSpan(active.span, error);
    active.span = undefined;
    return active;
  }

  private onHandlerDone(active: ActiveJob, error: unknown): void {
    if (active.state === 'abandoned') return this.unstick(active, error);
    // Lost to a heartbeat, or put back by shutdown: already accounted for.
    if (active.state !== 'running') {
      if (error && !(error instanceof LeaseLostError) && !(error instanceof ShutdownError)) {
        this.logger.warn({ ...this.fields(active), err: error }, 'job handler ended after the job was no longer ours');
      }
      return;
    }
    if (active.withPromise) {
      // The handler returned without awaiting completeWith: let it finish first.
      const pending = active.withPromise;
      active.withPromise = null;
      void pending.then(() => this.onHandlerDone(active, error));
      return;
    }
    this.settle(active, error);
    this.checkIdle();
    this.pump();
  }

  /** A running job whose handler is done: released, queued for the next completion flush, or failed. */
  private settle(active: ActiveJob, error: unknown): void {
    this.unrun(active);
    // After a timeout, whatever the handler threw is the timeout (transient).
    if (error !== null) error = timeoutFailure(active, error);
    const seconds = (performance.now() - active.t0) / 1000;
    if (active.completedWith) {
      if (error) this.logger.warn({ ...this.fields(active), err: error }, 'job handler threw after completeWith committed');
      this.release(active);
    } else if (active.abortReason instanceof LeaseLostError) {
      this.release(active);
    } else if (error === null && active.completeWithError !== null) {
      // The handler caught (or never awaited) a failed completeWith: none of
      // its writes committed, so the job did not succeed.
      this.track(this.fail(active, active.completeWithError, seconds));
    } else if (error === null) {
      this.metrics?.observeDuration(active.job.kind, 'succeeded', seconds);
      active.state = 'completing';
      this.pendingComplete.push(active);
      if (this.pendingComplete.length >= this.batchSize) this.flushNow();
      else if (!this.flushTimer) this.flushTimer = setTimeout(() => this.flushNow(), this.flushIntervalMs);
    } else {
      this.track(this.fail(active, error, seconds));
    }
  }

  // ---- batches -----------------------------------------------------------

  /** Runs started jobs of one kind in one handler call. */
  private runBatch(actives: ActiveJob[], handler: BatchJobHandler): void {
    const run = new BatchRun(this, actives);
    for (const active of actives) active.span = startJobSpan(active.job, active.trace, this.clock);
    // One job: its handler runs in its span's context; several: the handler passes jobTraceContext(job) where it matters.
    const only = actives.length === 1 ? actives[0]!.span : undefined;
    const call = () =>
      handler(
        actives.map((a) => a.job),
        run,
      );
    let promise: Promise<void>;
    try {
      promise = only ? context.with(only.context, call) : call();
    } catch (err) {
      promise = Promise.reject(err);
    }
    promise.then(
      () => this.onBatchDone(run, null),
      (err: unknown) => this.onBatchDone(run, err ?? new Error('batch handler rejected without a reason')),
    );
  }

  private onBatchDone(run: BatchRun, error: unknown): void {
    if (run.withPromise) {
      // Returned without awaiting completeWith: let it finish first.
      const pending = run.withPromise;
      run.withPromise = null;
      void pending.then(() => this.onBatchDone(run, error));
      return;
    }
    for (const active of run.actives) this.endSpan(active, active.completedWith ? null : (run.failures.get(active) ?? error));
    for (const active of run.actives) {
      if (active.state === 'abandoned') {
        this.unstick(active, error);
        continue;
      }
      // Lost to a heartbeat, or put back by shutdown: already accounted for.
      if (active.state !== 'running') continue;
      this.settle(active, active.completedWith ? null : run.failures.has(active) ? run.failures.get(active) : error);
    }
    if (error && !(error instanceof LeaseLostError) && !(error instanceof ShutdownError) && run.actives.every((a) => a.completedWith)) {
      this.logger.warn(
        { workerId: this.workerId, kind: run.actives[0]!.job.kind, err: error },
        'batch handler threw after completeWith committed',
      );
    }
    this.checkIdle();
    this.pump();
  }

  /** BatchContext.completeWith: one compare-and-set for all (rows locked until commit), then fn with the held jobs, then COMMIT. */
  // Marks the call as in progress on the batch (when there is one) and on each
  // job, so that handler ends, heartbeats and shutdown wait for it.
  completeManyWithin(
    run: BatchRun | null,
    actives: ActiveJob[],
    fn: (tx: pg.PoolClient, held: ClaimedJob[]) => Promise<void>,
  ): Promise<ClaimedJob[]> {
    if (run?.withPromise) return Promise.reject(new Error('completeWith: the previous call of this batch has not finished'));
    const work = this.completeManyInTransaction(actives, fn);
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

  private async completeManyInTransaction(
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
                values: [candidates.map((a) => a.job.id), candidates.map((a) => a.token), this.sqlNow(), this.workerId],
              });
        const ok = new Set(cas.rows.map((r) => r.id));
        const kept = candidates.filter((a) => ok.has(a.job.id));
        for (const active of actives) if (!ok.has(active.job.id) && active.state === 'running') this.lost(active, 'completeWith');
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
      if (this.debug) this.logger.debug(this.fields(active), 'job succeeded');
      // Done in the database; still counted as running until the handler returns.
      this.forget(active);
    }
    if (held.length > 0) this.metrics?.completed.inc({ kind: held[0]!.job.kind }, held.length);
    return held.map((a) => a.job);
  }

  // ---- completion --------------------------------------------------------

  private flushNow(): void {
    if (this.flushTimer) {
      clearTimeout(this.flushTimer);
      this.flushTimer = null;
    }
    if (this.pendingComplete.length === 0) return;
    const batch = this.pendingComplete;
    this.pendingComplete = [];
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
          values: [ids, tokens, this.sqlNow(), this.workerId],
        }),
      );
      completed = new Set(result.rows.map((r) => r.id));
    } catch (err) {
      // Given up: every lease ran out (or the shutdown deadline passed), or
      // the statement itself failed. The reaper returns the jobs: they run
      // again rather than being lost.
      this.logger.error({ err, workerId: this.workerId, jobs: ids.length }, 'queue: writing completions failed; the jobs will run again');
      for (const active of batch) this.release(active);
      return;
    }
    const counts = new Map<string, number>();
    for (const active of batch) {
      if (completed.has(active.job.id)) {
        counts.set(active.job.kind, (counts.get(active.job.kind) ?? 0) + 1);
        if (this.debug) this.logger.debug(this.fields(active), 'job succeeded');
      } else {
        this.lost(active, 'completion');
      }
      this.release(active);
    }
    if (this.metrics) for (const [kind, n] of counts) this.metrics.completed.inc({ kind }, n);
  }

  /** JobContext.completeWith: a batch completeWith of one job that must hold. */
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

  // ---- failure -----------------------------------------------------------

  private async fail(active: ActiveJob, error: unknown, seconds: number): Promise<void> {
    active.state = 'finishing';
    const job = active.job;
    const kind = job.kind;
    const cls = errorClass(error);
    if (error instanceof LeaseLostError) {
      // Thrown by the handler itself (e.g. its signal's reason): the job is not ours to write.
      this.release(active);
      return;
    }
    const now = this.sqlNow();
    if (error instanceof SnoozeJob && active.snoozes >= this.maxSnoozesInARow) {
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
          this.startedAt(active),
          this.minSnoozeMs,
        ]);
        this.metrics?.observeDuration(kind, 'snoozed', seconds);
        if (!ok) this.lost(active, 'snooze');
        else {
          this.metrics?.snoozed.inc({ kind });
          this.logger.info({ ...this.fields(active), until: until.toISOString(), reason: error.reason }, 'job snoozed');
        }
        return;
      }
      // Aborted at the shutdown deadline: back in the queue, unless the handler said retrying cannot help.
      if (this.stopping && active.abortReason instanceof ShutdownError && !(error instanceof PermanentJobError)) {
        await this.interrupt(active, error);
        return;
      }
      const text = errorText(error);
      this.metrics?.observeDuration(kind, 'failed', seconds);
      const permanent = error instanceof PermanentJobError;
      if (permanent || job.attempts >= job.maxAttempts) {
        const ok = await this.writeDurably(active, SQL.BURY, [job.id, this.workerId, active.token, now, text, this.startedAt(active)]);
        if (!ok) return this.lost(active, 'bury');
        this.metrics?.failed.inc({ kind, error_class: cls });
        this.metrics?.buried.inc({ kind, error_class: cls });
        this.logger.error({ ...this.fields(active), err: error, reason: permanent ? 'permanent error' : 'out of attempts' }, 'job dead');
        return;
      }
      const retryAfter = error instanceof TransientJobError ? error.retryAfterSeconds : undefined;
      // A provider's Retry-After is capped like the backoff: a huge value would
      // make an invalid date, and the failure write would then fail.
      const delaySeconds =
        retryAfter === undefined
          ? backoffSeconds(job.attempts, this.random, this.backoffBase, this.backoffCap)
          : Math.min(retryAfter, this.backoffCap);
      const delayMs = Math.round(delaySeconds * 1000);
      const ok = await this.writeDurably(active, SQL.RETRY, [
        job.id,
        this.workerId,
        active.token,
        now,
        delayMs,
        text,
        this.startedAt(active),
        'failed',
      ]);
      if (!ok) return this.lost(active, 'retry');
      this.metrics?.failed.inc({ kind, error_class: cls });
      this.metrics?.retried.inc({ kind, error_class: cls });
      this.logger.warn(
        { ...this.fields(active), err: error, retryInSeconds: delayMs / 1000, retryAfterSeconds: retryAfter ?? null },
        'job failed; will retry',
      );
    } catch (err) {
      // Retried until the lease ran out: the reaper returns the job, so
      // nothing is lost, only delayed.
      this.logger.error({ ...this.fields(active), err, handlerError: errorText(error) }, 'queue: could not record a failure');
    } finally {
      this.release(active);
    }
  }

  /** Puts a job back, due `delayMs` from now (by the statement's clock). */
  private async interrupt(active: ActiveJob, reason: unknown, delayMs = 0): Promise<void> {
    active.state = 'finishing';
    try {
      const ok = await this.write(SQL.RETRY, [
        active.job.id,
        this.workerId,
        active.token,
        this.sqlNow(),
        delayMs,
        errorText(reason),
        this.startedAt(active),
        'interrupted',
      ]);
      if (ok) this.logger.warn(this.fields(active), 'job interrupted by shutdown; back in the queue');
      else this.lost(active, 'interrupt');
    } catch (err) {
      this.logger.error({ ...this.fields(active), err }, 'queue: could not put back an interrupted job');
    } finally {
      this.release(active);
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
  private async durably<T>(actives: ActiveJob[], what: string, write: () => Promise<T>): Promise<T> {
    for (let attempt = 0; ; attempt++) {
      try {
        return await write();
      } catch (err) {
        const now = this.clock.now().getTime();
        const leaseLeft = actives.some((a) => a.leaseUntil > now);
        if (!isConnectionError(err) || !leaseLeft || (this.stopping && Date.now() >= this.stopDeadline)) throw err;
        const retryInMs = Math.min(2000, 100 * 2 ** attempt);
        this.logger.warn(
          { err, workerId: this.workerId, jobs: actives.length, retryInMs },
          `queue: ${what} failed; retrying while the lease holds`,
        );
        await sleep(retryInMs);
      }
    }
  }

  // ---- leases ------------------------------------------------------------

  /** Renews the lease of every held job; aborts the signal of those that are no longer ours. Runs on a timer after start(). */
  async extendLeases(): Promise<void> {
    if (this.heartbeatInFlight || this.held.size === 0) return;
    this.heartbeatInFlight = true;
    const sent = [...this.held.values()];
    const ids = sent.map((a) => a.job.id);
    const tokens = sent.map((a) => a.token);
    try {
      const until = this.clock.now().getTime() + this.leaseMs;
      const extended = await this.pool.query<{ id: string }>({
        name: SQL.EXTEND_LEASES.name,
        text: SQL.EXTEND_LEASES.text,
        values: [ids, tokens, this.sqlNow(), this.workerId, this.leaseMs],
      });
      const ok = new Set(extended.rows.map((r) => r.id));
      for (const active of sent) if (ok.has(active.job.id)) active.leaseUntil = until;
      if (extended.rows.length === sent.length) return;
      const unsure = sent.filter((a) => !ok.has(a.job.id));
      const check = await this.pool.query<{ id: string }>({
        name: SQL.LEASE_CHECK.name,
        text: SQL.LEASE_CHECK.text,
        values: [unsure.map((a) => a.job.id), unsure.map((a) => a.token), this.workerId],
      });
      const stillOurs = new Set(check.rows.map((r) => r.id));
      for (const active of unsure) {
        // Only a job not yet handed to a completion or failure write is
        // declared lost here; those writes find out for themselves.
        if (stillOurs.has(active.job.id) || this.held.get(active.job.id) !== active) continue;
        if ((active.state === 'buffered' || active.state === 'running') && !active.withPromise) {
          this.lost(active, 'heartbeat');
          if (active.state === 'running') this.unrun(active);
          this.release(active);
          this.checkIdle();
          this.pump();
        }
      }
    } catch (err) {
      this.logger.warn({ err, workerId: this.workerId }, 'queue heartbeat failed');
    } finally {
      this.heartbeatInFlight = false;
    }
  }

  /**
   * The instant the worker's statements act at: the injected clock's, or
   * NULL for the database's now() when the worker runs on the system clock.
   * One clock for every lease, reap and due check, whichever host runs them.
   */
  private sqlNow(): Date | null {
    return this.databaseClock ? null : this.clock.now();
  }

  /** A run's start for its history row: ours with a test clock, else the row's (database) locked_at. */
  private startedAt(active: ActiveJob): Date | null {
    return this.databaseClock ? null : active.startedAt;
  }

  private lost(active: ActiveJob, where: string): void {
    active.abort(new LeaseLostError(active.job.id));
    this.metrics?.leasesLost.inc({ kind: active.job.kind });
    this.logger.warn({ ...this.fields(active), where }, 'job lease lost: another worker or the reaper holds it now');
  }

  /** The job is no longer this worker's concern. */
  private release(active: ActiveJob): void {
    active.state = 'done';
    this.forget(active);
    this.checkIdle();
  }

  /** Out of the held jobs (no more heartbeats); a lane that waited for room wakes the claim loop. */
  private forget(active: ActiveJob): void {
    if (this.held.get(active.job.id) !== active) return;
    this.held.delete(active.job.id);
    const lane = active.lane;
    lane.held--;
    if (lane.waitingForRoom && lane.wantsClaim) {
      lane.waitingForRoom = false;
      this.onWork();
    }
  }

  /** Its handler no longer takes a slot. */
  private unrun(active: ActiveJob): void {
    this.running--;
    active.lane.running--;
    if (active.timedOutAt > 0) this.metrics?.pastTimeout.dec({ kind: active.job.kind });
  }

  private checkIdle(): void {
    if (this.running === this.stuck.size) for (const resolve of this.runningWaiters.splice(0)) resolve();
    if (this.held.size === 0 && this.running === this.stuck.size) for (const resolve of this.idleWaiters.splice(0)) resolve();
  }

  // ---- timeouts (see timeouts.ts) ----------------------------------------

  /** Times out handlers past their kind's timeout and gives up those past the grace too. Runs on a timer after start(). */
  checkTimeouts(): void {
    if (this.held.size === 0) return;
    checkTimeouts([...this.held.values()], this.clock.now().getTime(), this.timeoutGraceMs, {
      timeOut: (active, error) => {
        active.abort(error);
        this.metrics?.timedOut.inc({ kind: active.job.kind });
        this.metrics?.pastTimeout.inc({ kind: active.job.kind });
        this.logger.warn({ ...this.fields(active), timeoutMs: error.timeoutMs }, 'job timed out; its signal is aborted');
      },
      abandon: (active) => this.abandon(active),
    });
  }

  // The handler ignored its signal for the grace period: the job is given up
  // (no more heartbeats, so the reaper returns it once the lease lapses) and
  // the handler keeps its slot until it returns. A lane whose slots are all
  // stuck gives its buffered jobs back for other workers to take.
  private abandon(active: ActiveJob): void {
    active.state = 'abandoned';
    this.forget(active);
    this.stuck.add(active);
    active.lane.stuck++;
    this.logger.error(
      { ...this.fields(active), leaseUntil: new Date(active.leaseUntil).toISOString() },
      'job handler ignored its timeout; the job is given up to the reaper and its slot stays taken until the handler returns',
    );
    if (active.lane.concurrency - active.lane.stuck <= 0) this.track(this.releaseUnstarted(active.lane));
    this.checkIdle();
  }

  /** A handler of a given-up job returned at last: its slot is free; its outcome is not ours to write. */
  private unstick(active: ActiveJob, error: unknown): void {
    if (!this.stuck.delete(active)) return;
    active.state = 'done';
    active.lane.stuck--;
    this.unrun(active);
    this.logger.warn({ ...this.fields(active), err: error ?? undefined }, 'job handler returned after its job was given up');
    this.checkIdle();
    this.pump();
    this.onWork();
  }

  private async releaseUnstarted(lane: Lane): Promise<void> {
    const unstarted = lane.drain();
    for (let i = 0; i < unstarted.length; i += 1000) {
      const chunk = unstarted.slice(i, i + 1000);
      for (const a of chunk) a.state = 'finishing';
      try {
        const result = await this.pool.query<{ id: string }>({
          name: SQL.RELEASE_MANY.name,
          text: SQL.RELEASE_MANY.text,
          values: [chunk.map((a) => a.job.id), chunk.map((a) => a.token), this.clock.now(), this.workerId],
        });
        this.logger.info({ workerId: this.workerId, released: result.rowCount }, 'queue: unstarted jobs given back');
      } catch (err) {
        this.logger.error({ err, workerId: this.workerId }, 'queue: could not give back unstarted jobs; the reaper will');
      }
      for (const a of chunk) this.release(a);
    }
  }

  // ---- housekeeping ------------------------------------------------------

  private async runReaper(ctx: JobContext): Promise<void> {
    void ctx;
    const reaped = await reapExpiredJobs(this.pool, this.sqlNow());
    for (const job of reaped) {
      this.metrics?.reaped.inc({ kind: job.kind, outcome: job.status });
      this.logger.warn(
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

  private async runPrune(ctx: JobContext): Promise<void> {
    const now = this.clock.now().getTime();
    const cutoff = new Date(now - (this.housekeeping?.retentionDays ?? 14) * 86_400_000);
    const deadCutoff = new Date(now - (this.housekeeping?.deadRetentionDays ?? 30) * 86_400_000);
    const deleted = await pruneFinishedJobs(this.pool, cutoff, { deadOlderThan: deadCutoff, signal: ctx.signal });
    if (deleted > 0) {
      this.logger.info({ deleted, cutoff: cutoff.toISOString(), deadCutoff: deadCutoff.toISOString() }, 'queue: pruned finished jobs');
    }
  }

  private async tickRecurring(): Promise<void> {
    if (this.recurringTimer) clearTimeout(this.recurringTimer);
    this.recurringTimer = null;
    if (this.stopping || this.recurring.length === 0) return;
    const now = this.clock.now();
    try {
      const results = await scheduleRecurringJobs(this.pool, this.recurring, now);
      for (const r of results) {
        if (r.created && this.debug) {
          this.logger.debug({ jobId: r.job.id, kind: r.job.kind, idempotencyKey: r.job.idempotencyKey }, 'recurring job scheduled');
        }
      }
    } catch (err) {
      this.logger.warn({ err, workerId: this.workerId }, 'queue: scheduling recurring jobs failed');
    }
    if (this.stopping) return;
    const next = nextPeriodStart(this.recurring, now)!;
    // A little random spread so that many workers do not all insert at the same instant.
    const delay = Math.min(60_000, Math.max(50, next.getTime() - now.getTime())) + Math.floor(this.random() * 200);
    this.recurringTimer = setTimeout(() => void this.tickRecurring(), delay);
    this.recurringTimer.unref?.();
  }

  // ---- misc --------------------------------------------------------------

  private track(promise: Promise<void>): void {
    this.writes.add(promise);
    void promise.finally(() => this.writes.delete(promise));
  }

  private fields(active: ActiveJob) {
    const job = active.job;
    return { jobId: job.id, kind: job.kind, attempt: job.attempts, idempotencyKey: job.idempotencyKey, workerId: this.workerId };
  }
}
