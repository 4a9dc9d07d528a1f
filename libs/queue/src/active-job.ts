// One claimed job and one call of a batch handler, as the worker tracks them:
// each is also the context its handler receives (JobContext, BatchContext).
import type pg from 'pg';
import type { Lane } from './lanes.js';
import { JobTimeoutError, LeaseLostError, ShutdownError } from './errors.js';
import type { JobSpan, StoredTrace } from './tracing.js';
import type { BatchContext, ClaimedJob, JobContext } from './types.js';

/** What a job's context needs of the worker that holds it. */
export interface JobOwner {
  readonly workerId: string;
  /** The injected clock's ms: what leases are estimated on (ActiveJob.leaseUntil). */
  nowMs(): number;
  completeWithin(active: ActiveJob, fn: (tx: pg.PoolClient) => Promise<void>): Promise<void>;
  completeManyWithin(
    run: BatchRun | null,
    actives: ActiveJob[],
    fn: (tx: pg.PoolClient, held: ClaimedJob[]) => Promise<void>,
  ): Promise<ClaimedJob[]>;
}

export type State =
  | 'buffered' // claimed, waiting in the local buffer
  | 'running' // handler in progress
  | 'completing' // handler done, waiting for the next flush
  | 'flushing' // in a completion statement
  | 'finishing' // a failure/snooze/completeWith statement is in flight
  | 'abandoned' // past its timeout and grace: the job is given up (lease left to lapse), the handler still holds its slot
  | 'done'; // released, finished or lost: no longer ours

export interface ClaimRow {
  id: string;
  lease_token: string;
  kind: string;
  payload: unknown;
  attempts: number;
  max_attempts: number;
  idempotency_key: string | null;
  run_at_ms: number;
  created_at_ms: number;
  snoozes: number;
  trace_parent: string | null;
  trace_link: string | null;
  /** Its attempt was counted at claim (a free slot was waiting for it); else it is counted when it starts. */
  counted: boolean;
}

// A signal for a handler, created on first use: most handlers never look, and
// an AbortController per job is measurable at tens of thousands of jobs a second.
class Abortable {
  abortReason: Error | null = null;
  private controller: AbortController | null = null;

  get signal(): AbortSignal {
    if (!this.controller) {
      this.controller = new AbortController();
      if (this.abortReason) this.controller.abort(this.abortReason);
    }
    return this.controller.signal;
  }

  abort(reason: Error): void {
    if (this.abortReason) return;
    this.abortReason = reason;
    this.controller?.abort(reason);
  }
}

// One claimed job: its handler context too, so a job costs one object here.
export class ActiveJob extends Abortable implements JobContext {
  state: State = 'buffered';
  startedAt: Date | null = null;
  t0 = 0;
  completedWith = false;
  /** Snoozes in a row before this run (jobs.snoozes as claimed). */
  snoozes = 0;
  /** Whether the database counts this attempt yet (see CLAIM and START_MANY in sql.ts). */
  counted = false;
  /** Until when (the injected clock's ms) the database holds this job for us, as far as we last heard. */
  leaseUntil = 0;
  /** Why the last completeWith of this job failed (its fn threw): the job fails with it if the handler then resolves. */
  completeWithError: unknown = null;
  /** The batch it runs in, for a kind registered with registerBatch. */
  group: BatchRun | null = null;
  /** A completeWith in progress, awaited by onHandlerDone if the handler returns without waiting for it. */
  withPromise: Promise<void> | null = null;
  /** When (the injected clock's ms) the handler times out, if its kind has a timeout; set at start. */
  timeoutAt = 0;
  /** When it timed out (its signal was aborted); 0 while it has not. */
  timedOutAt = 0;
  /** The trace columns as claimed (docs/tracing.md); NULLs when tracing was off at enqueue. */
  trace: StoredTrace | null = null;
  /** This attempt's `job <kind>` span, while tracing is on. */
  span: JobSpan | undefined = undefined;

  constructor(
    readonly worker: JobOwner,
    readonly job: ClaimedJob,
    /** This claim's lease token: every write of this run compares it. */
    readonly token: string,
    /** The slots it runs in. */
    readonly lane: Lane,
  ) {
    super();
  }

  get workerId(): string {
    return this.worker.workerId;
  }

  override abort(reason: Error): void {
    super.abort(reason);
    // The batch's one signal stands for shutdown and timeout (its jobs started together): one lost lease must not stop the others.
    if (reason instanceof ShutdownError || reason instanceof JobTimeoutError) this.group?.abort(reason);
  }

  completeWith(fn: (tx: pg.PoolClient) => Promise<void>): Promise<void> {
    return this.worker.completeWithin(this, fn);
  }

  assertLease(): void {
    if (this.abortReason instanceof LeaseLostError || this.leaseLapsed()) throw new LeaseLostError(this.job.id);
  }

  /** No renewal was sent within a lease, by our clock: the database may have given the job to another worker. */
  leaseLapsed(): boolean {
    return this.worker.nowMs() >= this.leaseUntil;
  }
}

// One call of a batch handler: its jobs and their context.
export class BatchRun extends Abortable implements BatchContext {
  readonly byId = new Map<string, ActiveJob>();
  /** Jobs the handler ended with ctx.fail, and how. */
  readonly failures = new Map<ActiveJob, unknown>();
  /** A completeWith in progress (at most one at a time is tracked; see ActiveJob.withPromise). */
  withPromise: Promise<void> | null = null;

  constructor(
    readonly worker: JobOwner,
    readonly actives: ActiveJob[],
  ) {
    super();
    for (const active of actives) {
      active.group = this;
      this.byId.set(active.job.id, active);
    }
  }

  get workerId(): string {
    return this.worker.workerId;
  }

  completeWith(jobs: readonly ClaimedJob[], fn: (tx: pg.PoolClient, held: ClaimedJob[]) => Promise<void>): Promise<ClaimedJob[]> {
    let actives: ActiveJob[];
    try {
      actives = jobs.map((job) => this.own(job, 'completeWith'));
    } catch (err) {
      return Promise.reject(err);
    }
    return this.worker.completeManyWithin(this, actives, fn);
  }

  fail(job: ClaimedJob, error: unknown): void {
    this.failures.set(this.own(job, 'fail'), error ?? new Error('failed without a reason'));
  }

  assertLease(): void {
    // A job lost on its own (the heartbeat heard so) is renewed no more; it is left out, as completeWith leaves it out.
    const open = (a: ActiveJob) => !a.completedWith && !this.failures.has(a) && !(a.abortReason instanceof LeaseLostError);
    const lapsed = this.actives.find((a) => open(a) && a.leaseLapsed());
    if (lapsed) throw new LeaseLostError(lapsed.job.id);
  }

  /** The ActiveJob of a job of this batch that is still open. */
  private own(job: ClaimedJob, what: string): ActiveJob {
    const active = this.byId.get(job?.id);
    if (!active || active.job !== job) throw new Error(`${what}: job ${job?.id} is not one of this batch`);
    if (active.completedWith || this.failures.has(active)) throw new Error(`${what}: job ${job.id} was already completed or failed`);
    return active;
  }
}
