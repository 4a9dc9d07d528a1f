// Execution timeouts. A handler past its kind's `timeoutMs` has its signal
// aborted with a JobTimeoutError, and the attempt fails transiently whatever
// the handler then throws. A handler that ignores its signal for the grace
// period too is given up: its job leaves the worker's heartbeat, so its lease
// lapses and the reaper of any worker returns it (attempt used, due at once);
// the handler keeps its slot until it returns (a slot cannot be taken back
// from code that is still running), and the lane claims no more than its
// working slots allow (see lanes.ts). Checked on a timer against the
// injected clock, so tests can drive it with `Worker.checkTimeouts()`.
import type { ActiveJob } from './active-job.js';
import { JobTimeoutError, SnoozeJob } from './errors.js';

export interface TimeoutActions {
  /** Aborts the handler's signal (and its batch's). */
  timeOut(active: ActiveJob, error: JobTimeoutError): void;
  /** Gives the job up: no more lease renewals; the handler keeps its slot until it returns. */
  abandon(active: ActiveJob): void;
}

/** Times out the running handlers past their timeout, and gives up those still running `graceMs` after that. */
export function checkTimeouts(actives: Iterable<ActiveJob>, nowMs: number, graceMs: number, act: TimeoutActions): void {
  for (const active of actives) {
    if (active.state !== 'running' || active.timeoutAt === 0) continue;
    if (active.timedOutAt === 0) {
      if (nowMs < active.timeoutAt) continue;
      active.timedOutAt = nowMs;
      act.timeOut(active, new JobTimeoutError(active.timeoutAt - active.startedAt!.getTime()));
    }
    // A completeWith in flight holds the row: it commits or fails on its own.
    if (nowMs >= active.timedOutAt + graceMs && !active.withPromise) act.abandon(active);
  }
}

/**
 * What a timed-out attempt fails with: the timeout (transient), with the
 * handler's own error as its cause, so that a handler that throws a
 * permanent error on abort does not kill the job. A snooze stays a snooze.
 */
export function timeoutFailure(active: ActiveJob, error: unknown): unknown {
  const reason = active.abortReason;
  if (!(reason instanceof JobTimeoutError) || error instanceof JobTimeoutError || error instanceof SnoozeJob) return error;
  return new JobTimeoutError(reason.timeoutMs, { cause: error });
}

/** How often to check: a quarter of the shortest timeout or grace, between 10 ms and 1 s. */
export function timeoutCheckIntervalMs(timeoutsMs: number[], graceMs: number): number {
  return Math.min(1000, Math.max(10, Math.floor(Math.min(graceMs, ...timeoutsMs) / 4)));
}

/**
 * Whether `promise` settles (either way) before `until` (wall-clock ms). The
 * shutdown's waits go through this, so that an unresponsive database cannot
 * hold stop() past its deadline.
 */
export async function settlesBy(promise: Promise<unknown>, until: number): Promise<boolean> {
  let timer: NodeJS.Timeout | undefined;
  const late = new Promise<false>((resolve) => (timer = setTimeout(() => resolve(false), Math.max(0, until - Date.now()))));
  try {
    return await Promise.race([
      promise.then(
        () => true,
        () => true,
      ),
      late,
    ]);
  } finally {
    clearTimeout(timer);
  }
}
