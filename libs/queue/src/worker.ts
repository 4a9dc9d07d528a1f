import { randomBytes } from 'node:crypto';
import { hostname } from 'node:os';
import pg from 'pg';
import { ClaimLoop } from './claim-loop.js';
import { Completer } from './completer.js';
import { ShutdownError } from './errors.js';
import { HeldJobs, type ShutdownState, StatementClock } from './held-jobs.js';
import { PRUNE_KIND, REAP_KIND, type RecurringJob } from './housekeeping.js';
import { checkKindOptions, Lane, type KindOptions } from './lanes.js';
import { LeaseKeeper } from './lease-keeper.js';
import { Maintenance } from './maintenance.js';
import type { QueueMetrics } from './metrics.js';
import type { PayloadOf } from './job-kinds.js';
import { Runner } from './runner.js';
import { settlesBy, timeoutCheckIntervalMs } from './timeouts.js';
import { WakeListener } from './wake-listener.js';
import { checkKind, positiveInt, type HousekeepingOptions, type WorkerOptions } from './worker-options.js';
import { silentLogger, systemClock, type BatchHandlerOptions, type BatchJobHandler, type JobHandler, type QueueLogger } from './types.js';

export type { HousekeepingOptions, WorkerOptions } from './worker-options.js';

// The worker's parts, each in its file: the claim loop fills each lane's
// buffer (claim-loop.ts), the runner starts handlers in free slots and times
// them out (runner.ts), the completer writes every terminal transition
// (completer.ts), the lease keeper renews leases (lease-keeper.ts), and the
// maintenance part runs the recurring schedule, the reaper and the pruner
// (maintenance.ts). HeldJobs (held-jobs.ts) is the one place that moves a job
// between states and keeps the counters. This class wires them, registers
// handlers and runs start / stop.

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
  private readonly lanes: Lane[];
  private readonly laneByKind = new Map<string, Lane>();
  private readonly timeoutGraceMs: number;

  private readonly concurrency: number;
  private readonly batchSize: number;
  private readonly leaseMs: number;
  private readonly heartbeatIntervalMs: number;
  private readonly listen: boolean;
  private readonly at: StatementClock;
  private readonly logger: QueueLogger;
  private readonly metrics: QueueMetrics | undefined;

  private readonly jobs: HeldJobs;
  private readonly completer: Completer;
  private readonly claimLoop: ClaimLoop;
  private readonly runner: Runner;
  private readonly leaseKeeper: LeaseKeeper;
  private readonly maintenance: Maintenance;
  private readonly shutdownState: ShutdownState = { stopping: false, deadline: Infinity };

  private started = false;
  private stopPromise: Promise<void> | null = null;
  private claimLoopDone: Promise<void> | null = null;
  private timeoutTimer: NodeJS.Timeout | null = null;
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
    const pollIntervalMs = positiveInt('pollIntervalMs', options.pollIntervalMs ?? 1000);
    const leaseSeconds = options.leaseSeconds ?? 60;
    if (!(leaseSeconds > 0)) throw new RangeError('leaseSeconds must be positive');
    this.leaseMs = leaseSeconds * 1000;
    this.heartbeatIntervalMs = options.heartbeatIntervalMs ?? Math.max(100, Math.floor(this.leaseMs / 3));
    this.listen = options.listen ?? true;
    this.at = new StatementClock(options.clock ?? systemClock);
    const random = options.random ?? Math.random;
    this.logger = options.logger ?? silentLogger;
    this.metrics = options.metrics;
    if (this.ownsPool) {
      this.pool.on('error', (err) => this.logger.warn({ err, workerId: this.workerId }, 'queue pool: idle client error'));
    }

    const { pool, at, logger, metrics, lanes } = this;
    const shutdown = this.shutdownState;
    this.jobs = new HeldJobs({ workerId: this.workerId, logger, metrics, onRoom: () => this.claimLoop.wake() });
    const jobs = this.jobs;
    this.completer = new Completer({
      pool,
      jobs,
      at,
      shutdown,
      logger,
      metrics,
      random,
      batchSize: this.batchSize,
      flushIntervalMs: Math.max(0, options.flushIntervalMs ?? 10),
      backoffBase: options.backoff?.baseSeconds ?? 30,
      backoffCap: options.backoff?.capSeconds ?? 6 * 60 * 60,
      minSnoozeMs: Math.max(0, options.snooze?.minDelaySeconds ?? 5) * 1000,
      maxSnoozesInARow: positiveInt('snooze.maxInARow', options.snooze?.maxInARow ?? 100),
    });
    this.claimLoop = new ClaimLoop({
      pool,
      jobs,
      lanes,
      at,
      shutdown,
      owner: this.completer,
      leaseMs: this.leaseMs,
      pollIntervalMs,
      logger,
      onClaimed: () => this.runner.pump(),
    });
    this.runner = new Runner({
      jobs,
      lanes,
      handlers: this.handlers,
      batchHandlers: this.batchHandlers,
      kindOptions: this.kindOptions,
      completer: this.completer,
      claimLoop: this.claimLoop,
      at,
      shutdown,
      timeoutGraceMs: this.timeoutGraceMs,
      logger,
      metrics,
    });
    this.leaseKeeper = new LeaseKeeper({ pool, jobs, at, leaseMs: this.leaseMs, logger, afterLoss: () => this.runner.pump() });

    let housekeeping: Required<HousekeepingOptions> | null = null;
    if (options.housekeeping !== false) {
      const h = options.housekeeping ?? {};
      housekeeping = {
        reapEverySeconds: h.reapEverySeconds ?? Math.max(5, Math.round(leaseSeconds / 3)),
        pruneEverySeconds: h.pruneEverySeconds ?? 3600,
        retentionDays: h.retentionDays ?? 14,
        deadRetentionDays: h.deadRetentionDays ?? 30,
      };
    }
    this.maintenance = new Maintenance({
      pool,
      at,
      workerId: this.workerId,
      housekeeping,
      logger,
      metrics,
      random,
      active: () => this.started && !shutdown.stopping,
    });

    for (const [kind, handler] of Object.entries(options.handlers ?? {})) this.register(kind, handler);
    if (housekeeping) {
      // Slots of their own: a worker whose job slots are all taken (or stuck) still reaps and prunes.
      this.register(REAP_KIND, () => this.maintenance.reap(), { concurrency: 1 });
      this.register(PRUNE_KIND, (_job, ctx) => this.maintenance.prune(ctx.signal), { concurrency: 1 });
      this.addRecurring({ kind: REAP_KIND, everySeconds: housekeeping.reapEverySeconds, priority: -10, maxAttempts: 1 });
      this.addRecurring({ kind: PRUNE_KIND, everySeconds: housekeeping.pruneEverySeconds, maxAttempts: 3 });
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

  /** The kinds this worker has a handler for (one at a time or in batches), sorted. */
  handledKinds(): string[] {
    return [...this.handlers.keys(), ...this.batchHandlers.keys()].sort();
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
    if (timeouts.length === 0 || this.shutdownState.stopping) return;
    this.timeoutTimer = setInterval(() => this.checkTimeouts(), timeoutCheckIntervalMs(timeouts, this.timeoutGraceMs));
    this.timeoutTimer.unref?.();
  }

  /** Schedules one job of `job.kind` per period from this worker (and any other that declares the same). */
  addRecurring(job: RecurringJob): this {
    this.maintenance.addRecurring(job);
    return this;
  }

  /** Jobs this worker holds: claimed and not yet finished (buffered, running or being completed). */
  get heldCount(): number {
    return this.jobs.size;
  }

  /** Starts claiming, heartbeats, LISTEN and the recurring schedule. Resolves once listening. */
  async start(): Promise<void> {
    if (this.started) throw new Error('worker already started');
    if (this.shutdownState.stopping) throw new Error('worker was stopped');
    this.started = true;
    if (this.listen) {
      this.listener = new WakeListener(this.pool.options as pg.ClientConfig, () => this.claimLoop.wake(), this.logger, this.workerId);
      await this.listener.connect();
    }
    this.leaseKeeper.start(this.heartbeatIntervalMs);
    this.scheduleTimeoutChecks();
    void this.maintenance.tick();
    this.claimLoopDone = this.claimLoop.run();
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
    for (const lane of this.lanes) claimed += await this.claimLoop.claim(lane, Math.min(limit, lane.room));
    await this.idle();
    return claimed;
  }

  /** Resolves when this worker holds no job (handlers stuck past their timeout hold none). */
  idle(): Promise<void> {
    return this.jobs.idle();
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
    this.shutdownState.deadline = deadline;
    this.shutdownState.stopping = true;
    this.claimLoop.wake();
    this.maintenance.stop();
    if (this.listener) await settlesBy(this.listener.close(), deadline);
    if (this.claimLoopDone && !(await settlesBy(this.claimLoopDone, deadline))) {
      this.logger.warn(
        { workerId: this.workerId },
        'queue: a claim did not return by the shutdown deadline; its jobs are left to the reaper',
      );
    }

    await settlesBy(Promise.all(this.lanes.map((lane) => this.claimLoop.releaseUnstarted(lane))), deadline);

    if (this.jobs.busy) await settlesBy(this.jobs.handlersSettled(), deadline);
    if (this.jobs.busy) {
      const reason = new ShutdownError(`worker ${this.workerId} is stopping and its deadline passed`);
      for (const active of this.jobs.list()) if (active.state === 'running') active.abort(reason);
      // A handler that honours its signal gets a moment to wind down.
      await settlesBy(this.jobs.handlersSettled(), Date.now() + windDownMs);
      for (const active of this.jobs.list()) {
        if (active.state === 'running' && !active.withPromise) {
          // Still running: back in the queue, but not before its lease would have
          // lapsed, so that no other worker starts it while this handler may still run.
          this.jobs.unrun(active);
          const delayMs = Math.max(0, active.leaseUntil - this.at.clock.now().getTime());
          this.completer.track(this.completer.interrupt(active, reason, delayMs));
        }
      }
    }
    if (!(await this.completer.drain(lastWrites))) {
      this.logger.error(
        { workerId: this.workerId, writes: this.completer.pendingWrites },
        'queue: writes still pending at the shutdown deadline; their jobs are left to the reaper',
      );
    }
    this.leaseKeeper.stop();
    if (this.timeoutTimer) clearInterval(this.timeoutTimer);
    if (this.ownsPool) await settlesBy(this.pool.end(), lastWrites);
    this.logger.info({ workerId: this.workerId }, 'queue worker stopped');
  }

  /** Renews the lease of every held job; aborts the signal of those that are no longer ours. Runs on a timer after start(). */
  extendLeases(): Promise<void> {
    return this.leaseKeeper.extendLeases();
  }

  /** Times out handlers past their kind's timeout and gives up those past the grace too. Runs on a timer after start(). */
  checkTimeouts(): void {
    this.runner.checkTimeouts();
  }
}
