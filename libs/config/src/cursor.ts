import { DomainError } from './domain-error.js';

// The API's page cursors: the last row's sort key as a JSON array, in
// base64url, opaque to clients. Each list decodes its own key and checks its
// parts; anything it did not hand out is a 400 naming `cursor`.

export function encodeCursor(key: readonly (string | number)[]): string {
  return Buffer.from(JSON.stringify(key)).toString('base64url');
}

/** The key parts, when `cursor` is a JSON array of `length` in base64url; else the 400 every list answers. */
export function decodeCursor(cursor: string, length: number): unknown[] {
  let parsed: unknown;
  try {
    parsed = JSON.parse(Buffer.from(cursor, 'base64url').toString('utf8'));
  } catch {
    parsed = null;
  }
  if (Array.isArray(parsed) && parsed.length === length) return parsed;
  throw invalidCursor();
}

// The instants a list hands out are rows' times; a cursor may only carry one
// from 1970 to 9999, so that no forged one reaches PostgreSQL out of its range.
const LATEST_INSTANT = Date.UTC(9999, 11, 31, 23, 59, 59, 999);

/** The instant a cursor's part holds (an ISO string or epoch milliseconds), when it is one a list could have handed out; else null. */
export function cursorInstant(value: unknown): Date | null {
  if (typeof value !== 'string' && typeof value !== 'number') return null;
  const at = new Date(value);
  const ms = at.getTime();
  return ms >= 0 && ms <= LATEST_INSTANT ? at : null;
}

export function invalidCursor(): DomainError {
  return DomainError.invalid([{ path: 'cursor', message: 'cursor is not one this API returned' }]);
}
