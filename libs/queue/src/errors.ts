/** Retry later: with exponential backoff, or exactly after `retryAfterSeconds` when given (a provider's Retry-After). */
export class TransientJobError extends Error {
  override name = 'TransientJobError';
  readonly retryAfterSeconds?: number;

  constructor(message: string, options: { retryAfterSeconds?: number; cause?: unknown } = {}) {
    super(message, options.cause === undefined ? undefined : { cause: options.cause });
    if (options.retryAfterSeconds !== undefined) {
      if (!Number.isFinite(options.retryAfterSeconds) || options.retryAfterSeconds < 0) {
        throw new RangeError(`retryAfterSeconds must be a non-negative number, got ${options.retryAfterSeconds}`);
      }
      this.retryAfterSeconds = options.retryAfterSeconds;
    }
  }
}

/** Retrying cannot help: the job is dead at once, with this message as its last error. */
export class PermanentJobError extends Error {
  override name = 'PermanentJobError';

  constructor(message: string, options: { cause?: unknown } = {}) {
    super(message, options.cause === undefined ? undefined : { cause: options.cause });
  }
}

/** Not now: back to queued at `until` without using an attempt (e.g. quiet hours). */
export class SnoozeJob extends Error {
  override name = 'SnoozeJob';

  constructor(
    readonly until: Date,
    readonly reason: string,
  ) {
    super(`snoozed until ${until.toISOString()}: ${reason}`);
  }
}

/** This worker no longer holds the job: another worker or the reaper does. */
export class LeaseLostError extends Error {
  override name = 'LeaseLostError';

  constructor(readonly jobId: string) {
    super(`lease of job ${jobId} was lost`);
  }
}

/** The worker is stopping and its shutdown deadline has passed. */
export class ShutdownError extends Error {
  override name = 'ShutdownError';
}

/** Text stored as last_error: the message, with the cause's when there is one. Bounded. */
export function errorText(error: unknown): string {
  let text: string;
  if (error instanceof Error) {
    text = `${error.name}: ${error.message}`;
    if (error.cause instanceof Error) text += ` (cause: ${error.cause.name}: ${error.cause.message})`;
  } else {
    text = String(error);
  }
  return text.length > 4000 ? `${text.slice(0, 4000)}…` : text;
}

/** A bounded label for metrics: the error's class name. */
export function errorClass(error: unknown): string {
  const name = error instanceof Error ? error.name : typeof error;
  return /^[A-Za-z0-9_]{1,64}$/.test(name) ? name : 'Error';
}

/**
 * The handler ran past its kind's timeout: its signal was aborted with this,
 * and the attempt fails transiently (backoff, an attempt used) whatever the
 * handler then throws (the handler's error is the cause).
 */
export class JobTimeoutError extends TransientJobError {
  override name = 'JobTimeoutError';

  constructor(
    readonly timeoutMs: number,
    options: { cause?: unknown } = {},
  ) {
    super(`handler did not finish within its timeout of ${timeoutMs} ms`, options);
  }
}
