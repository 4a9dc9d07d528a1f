import { performance } from 'node:perf_hooks';
import { context } from '@opentelemetry/api';
import { type ActiveJob, BatchRun } from './active-job.js';
import type { ClaimLoop } from './claim-loop.js';
import type { Completer } from './completer.js';
import { LeaseLostError, ShutdownError } from './errors.js';
import type { HeldJobs, ShutdownState, StatementClock } from './held-jobs.js';
import type { KindOptions, Lane } from './lanes.js';
import type { QueueMetrics } from './metrics.js';
import * as SQL from './sql.js';
import { checkTimeouts, timeoutFailure } from './timeouts.js';
import { endJobSpan, startJobSpan } from './tracing.js';
import type { BatchJobHandler, JobHandler, QueueLogger } from './types.js';

// Starts buffered jobs in the free slots of their lane — one handler call per
// job, or one per batch for kinds registered with registerBatch — counts each
// attempt before its handler runs, and hands each ended handler's outcome to
// the completer. Also times out handlers past their kind's timeout.

export interface RunnerOptions {
  jobs: HeldJobs;
  lanes: readonly Lane[];
  handlers: ReadonlyMap<string, JobHandler>;
  batchHandlers: ReadonlyMap<string, { handler: BatchJobHandler; maxBatch: number }>;
  kindOptions: ReadonlyMap<string, KindOptions>;
  completer: Completer;
  claimLoop: ClaimLoop;
  at: StatementClock;
  shutdown: ShutdownState;
  timeoutGraceMs: number;
  logger: QueueLogger;
  metrics: QueueMetrics | undefined;
}

interface Start {
  actives: ActiveJob[];
  go: (ready: ActiveJob[]) => void;
}

export class Runner {
  private readonly jobs: HeldJobs;
  private readonly completer: Completer;
  private readonly logger: QueueLogger;
  /** Starts of this pump that wait for their attempt to be counted. */
  private pendingStarts: Start[] = [];

  constructor(private readonly options: RunnerOptions) {
    this.jobs = options.jobs;
    this.completer = options.completer;
    this.logger = options.logger;
  }

  /** Starts what the free slots of every lane allow. */
  pump(): void {
    if (this.options.shutdown.stopping) return;
    for (const lane of this.options.lanes) this.pumpLane(lane);
    this.countStarts();
  }

  private pumpLane(lane: Lane): void {
    while (lane.running < lane.concurrency && lane.head < lane.buffer.length) {
      const active = lane.buffer[lane.head++]!;
      if (active.state !== 'buffered') continue;
      const batch = this.options.batchHandlers.get(active.job.kind);
      if (!batch) {
        this.start(active, this.options.at.clock.now(), performance.now());
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
      const startedAt = this.options.at.clock.now();
      const t0 = performance.now();
      for (const a of chosen) this.start(a, startedAt, t0);
      this.launch(chosen, (ready) => this.runBatch(ready, batch.handler));
    }
    lane.compact();
  }

  private start(active: ActiveJob, startedAt: Date, t0: number): void {
    this.jobs.start(active, startedAt, t0, this.options.kindOptions.get(active.job.kind)?.timeoutMs);
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
    this.completer.track(this.countAttempts(starts));
  }

  // Buffered jobs about to start: their attempts are counted before their
  // handlers run, so a crash can never run an attempt that was not counted.
  private async countAttempts(starts: Start[]): Promise<void> {
    const uncounted = starts.flatMap((s) => s.actives.filter((a) => !a.counted));
    let counted: Set<string> | null = null;
    try {
      const result = await this.completer.durably(uncounted, 'counting attempts', () =>
        this.completer.pool.query<{ id: string }>({
          name: SQL.START_MANY.name,
          text: SQL.START_MANY.text,
          values: [uncounted.map((a) => a.job.id), uncounted.map((a) => a.token), this.options.at.now(), this.jobs.workerId],
        }),
      );
      counted = new Set(result.rows.map((r) => r.id));
    } catch (err) {
      this.logger.error(
        { err, workerId: this.jobs.workerId, jobs: uncounted.length },
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
        if (counted) this.jobs.lost(active, 'start');
        this.jobs.unrun(active);
        this.jobs.release(active);
      }
      if (ready.length > 0) go(ready);
    }
    this.jobs.checkIdle();
    this.pump();
  }

  private run(active: ActiveJob): void {
    const handler = this.options.handlers.get(active.job.kind)!;
    const traced = (active.span = startJobSpan(active.job, active.trace, this.options.at.clock));
    let promise: Promise<void>;
    try {
      promise = traced ? context.with(traced.context, () => handler(active.job, active)) : handler(active.job, active);
    } catch (err) {
      promise = Promise.reject(err);
    }
    promise.then(
      () => this.onHandlerDone(endSpan(active, null), null),
      (err: unknown) => {
        const error = err ?? new Error('handler rejected without a reason');
        this.onHandlerDone(endSpan(active, error), error);
      },
    );
  }

  private onHandlerDone(active: ActiveJob, error: unknown): void {
    if (active.state === 'abandoned') return this.unstick(active, error);
    // Lost to a heartbeat, or put back by shutdown: already accounted for.
    if (active.state !== 'running') {
      if (error && !(error instanceof LeaseLostError) && !(error instanceof ShutdownError)) {
        this.logger.warn({ ...this.jobs.fields(active), err: error }, 'job handler ended after the job was no longer ours');
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
    this.jobs.checkIdle();
    this.pump();
  }

  /** A running job whose handler is done: released, queued for the next completion flush, or failed. */
  private settle(active: ActiveJob, error: unknown): void {
    this.jobs.unrun(active);
    // After a timeout, whatever the handler threw is the timeout (transient).
    if (error !== null) error = timeoutFailure(active, error);
    const seconds = (performance.now() - active.t0) / 1000;
    if (active.completedWith) {
      if (error) this.logger.warn({ ...this.jobs.fields(active), err: error }, 'job handler threw after completeWith committed');
      this.jobs.release(active);
    } else if (active.abortReason instanceof LeaseLostError) {
      this.jobs.release(active);
    } else if (error === null && active.completeWithError !== null) {
      // The handler caught (or never awaited) a failed completeWith: none of
      // its writes committed, so the job did not succeed.
      this.completer.track(this.completer.fail(active, active.completeWithError, seconds));
    } else if (error === null) {
      this.completer.succeeded(active, seconds);
    } else {
      this.completer.track(this.completer.fail(active, error, seconds));
    }
  }

  /** Runs started jobs of one kind in one handler call. */
  private runBatch(actives: ActiveJob[], handler: BatchJobHandler): void {
    const run = new BatchRun(this.completer, actives);
    for (const active of actives) active.span = startJobSpan(active.job, active.trace, this.options.at.clock);
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
    for (const active of run.actives) endSpan(active, active.completedWith ? null : (run.failures.get(active) ?? error));
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
        { workerId: this.jobs.workerId, kind: run.actives[0]!.job.kind, err: error },
        'batch handler threw after completeWith committed',
      );
    }
    this.jobs.checkIdle();
    this.pump();
  }

  // ---- timeouts (see timeouts.ts) ----------------------------------------

  /** Times out handlers past their kind's timeout and gives up those past the grace too. */
  checkTimeouts(): void {
    if (this.jobs.size === 0) return;
    const metrics = this.options.metrics;
    checkTimeouts(this.jobs.list(), this.options.at.clock.now().getTime(), this.options.timeoutGraceMs, {
      timeOut: (active, error) => {
        active.abort(error);
        metrics?.timedOut.inc({ kind: active.job.kind });
        metrics?.pastTimeout.inc({ kind: active.job.kind });
        this.logger.warn({ ...this.jobs.fields(active), timeoutMs: error.timeoutMs }, 'job timed out; its signal is aborted');
      },
      abandon: (active) => {
        this.jobs.abandon(active);
        // A lane whose slots are all stuck gives its buffered jobs back for other workers to take.
        if (active.lane.concurrency - active.lane.stuck <= 0) this.completer.track(this.options.claimLoop.releaseUnstarted(active.lane));
      },
    });
  }

  /** A handler of a given-up job returned at last: its slot is free again. */
  private unstick(active: ActiveJob, error: unknown): void {
    if (!this.jobs.unstick(active, error)) return;
    this.pump();
    this.options.claimLoop.wake();
  }
}

/** Ends the attempt's span (once; nothing when tracing is off). */
function endSpan(active: ActiveJob, error: unknown): ActiveJob {
  endJobSpan(active.span, error);
  active.span = undefined;
  return active;
}
