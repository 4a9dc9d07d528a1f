import type { ActiveJob } from './active-job.js';
import { LeaseLostError } from './errors.js';
import type { QueueMetrics } from './metrics.js';
import { systemClock, type QueueClock, type QueueLogger } from './types.js';

// The jobs one worker holds and the counters over them: the one place that
// moves a job between states (see State in active-job.ts) and keeps the
// worker's and its lanes' counts of held, running and stuck jobs in step.
// The claim loop, the runner, the completer and the lease keeper all go
// through it.

export interface HeldJobsOptions {
  workerId: string;
  logger: QueueLogger;
  metrics: QueueMetrics | undefined;
  /** A lane that waited for room has some again: wake the claim loop. */
  onRoom: () => void;
}

export class HeldJobs {
  readonly workerId: string;
  private readonly byId = new Map<string, ActiveJob>();
  /** Handlers in progress in every lane, stuck ones included. */
  private running = 0;
  /** Handlers past their timeout and grace: their jobs were given up, their slots are held until they return. */
  private readonly stuck = new Set<ActiveJob>();
  private idleWaiters: (() => void)[] = [];
  private runningWaiters: (() => void)[] = [];
  private readonly logger: QueueLogger;
  private readonly metrics: QueueMetrics | undefined;
  private readonly onRoom: () => void;
  readonly debug: boolean;

  constructor(options: HeldJobsOptions) {
    this.workerId = options.workerId;
    this.logger = options.logger;
    this.metrics = options.metrics;
    this.onRoom = options.onRoom;
    this.debug = this.logger.isLevelEnabled ? this.logger.isLevelEnabled('debug') : true;
  }

  /** Jobs held: claimed and not yet finished (buffered, running or being completed). */
  get size(): number {
    return this.byId.size;
  }

  list(): ActiveJob[] {
    return [...this.byId.values()];
  }

  /** Whether `active` is still the job this worker holds under its id. */
  holds(active: ActiveJob): boolean {
    return this.byId.get(active.job.id) === active;
  }

  /** Some handler that is not stuck is still running. */
  get busy(): boolean {
    return this.running > this.stuck.size;
  }

  /** Claimed: held in its lane's buffer. */
  hold(active: ActiveJob): void {
    this.byId.set(active.job.id, active);
    active.lane.held++;
    if (this.debug) this.logger.debug(this.fields(active), 'job claimed');
  }

  /** Its handler takes a slot from now on. */
  start(active: ActiveJob, startedAt: Date, t0: number, timeoutMs: number | undefined): void {
    active.state = 'running';
    this.running++;
    active.lane.running++;
    active.startedAt = startedAt;
    active.t0 = t0;
    if (timeoutMs !== undefined) active.timeoutAt = startedAt.getTime() + timeoutMs;
    if (this.debug) this.logger.debug(this.fields(active), 'job started');
  }

  /** Its handler no longer takes a slot. */
  unrun(active: ActiveJob): void {
    this.running--;
    active.lane.running--;
    if (active.timedOutAt > 0) this.metrics?.pastTimeout.dec({ kind: active.job.kind });
  }

  /** Another worker or the reaper holds the job now: its handler's signal is aborted. */
  lost(active: ActiveJob, where: string): void {
    active.abort(new LeaseLostError(active.job.id));
    this.metrics?.leasesLost.inc({ kind: active.job.kind });
    this.logger.warn({ ...this.fields(active), where }, 'job lease lost: another worker or the reaper holds it now');
  }

  /** The job is no longer this worker's concern. */
  release(active: ActiveJob): void {
    active.state = 'done';
    this.forget(active);
    this.checkIdle();
  }

  /** Out of the held jobs (no more heartbeats); a lane that waited for room wakes the claim loop. */
  forget(active: ActiveJob): void {
    if (!this.holds(active)) return;
    this.byId.delete(active.job.id);
    const lane = active.lane;
    lane.held--;
    if (lane.waitingForRoom && lane.wantsClaim) {
      lane.waitingForRoom = false;
      this.onRoom();
    }
  }

  // The handler ignored its signal for the grace period: the job is given up
  // (no more heartbeats, so the reaper returns it once the lease lapses) and
  // the handler keeps its slot until it returns.
  abandon(active: ActiveJob): void {
    active.state = 'abandoned';
    this.forget(active);
    this.stuck.add(active);
    active.lane.stuck++;
    this.logger.error(
      { ...this.fields(active), leaseUntil: new Date(active.leaseUntil).toISOString() },
      'job handler ignored its timeout; the job is given up to the reaper and its slot stays taken until the handler returns',
    );
    this.checkIdle();
  }

  /** A handler of a given-up job returned at last: its slot is free; its outcome is not ours to write. False when it was not stuck. */
  unstick(active: ActiveJob, error: unknown): boolean {
    if (!this.stuck.delete(active)) return false;
    active.state = 'done';
    active.lane.stuck--;
    this.unrun(active);
    this.logger.warn({ ...this.fields(active), err: error ?? undefined }, 'job handler returned after its job was given up');
    this.checkIdle();
    return true;
  }

  checkIdle(): void {
    if (this.busy) return;
    for (const resolve of this.runningWaiters.splice(0)) resolve();
    if (this.byId.size === 0) for (const resolve of this.idleWaiters.splice(0)) resolve();
  }

  /** Resolves when no job is held (handlers stuck past their timeout hold none). */
  idle(): Promise<void> {
    if (this.byId.size === 0 && !this.busy) return Promise.resolve();
    return new Promise((resolve) => this.idleWaiters.push(resolve));
  }

  /** Resolves when every handler that is not stuck has returned. */
  handlersSettled(): Promise<void> {
    if (!this.busy) return Promise.resolve();
    return new Promise((resolve) => this.runningWaiters.push(resolve));
  }

  /** The log fields of a job. */
  fields(active: ActiveJob) {
    const job = active.job;
    return { jobId: job.id, kind: job.kind, attempt: job.attempts, idempotencyKey: job.idempotencyKey, workerId: this.workerId };
  }
}

/**
 * The instants the worker's statements act at: the injected clock's, or NULL
 * for the database's now() when the worker runs on the system clock — one
 * clock for every lease, reap and due check, whichever host runs them.
 */
export class StatementClock {
  /** No clock given: leases, the reaper and due checks use the database's now(). */
  private readonly database: boolean;

  constructor(readonly clock: QueueClock) {
    this.database = clock === systemClock;
  }

  now(): Date | null {
    return this.database ? null : this.clock.now();
  }

  /** A run's start for its history row: ours with a test clock, else the row's (database) locked_at. */
  startedAt(active: ActiveJob): Date | null {
    return this.database ? null : active.startedAt;
  }
}

/** Whether the worker is stopping, and until when (wall-clock ms) its writes may still be retried. */
export interface ShutdownState {
  stopping: boolean;
  deadline: number;
}
