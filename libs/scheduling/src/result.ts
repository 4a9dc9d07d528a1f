// Validation outcome shared by every parser here: errors are sentences a
// client can read (the API turns them into a 400), never exceptions.
export type Result<T> = { ok: true; value: T } | { ok: false; errors: string[] };

export const ok = <T>(value: T): Result<T> => ({ ok: true, value });
export const fail = <T>(...errors: string[]): Result<T> => ({ ok: false, errors });

// Thrown when a function that expects validated input gets something else:
// a programming error on the caller's side, so it carries the same messages.
export class SchedulingError extends Error {
  readonly code = 'invalid_schedule';
  constructor(readonly errors: string[]) {
    super(errors.join('; '));
    this.name = 'SchedulingError';
  }
}

export function unwrap<T>(result: Result<T>): T {
  if (!result.ok) throw new SchedulingError(result.errors);
  return result.value;
}
