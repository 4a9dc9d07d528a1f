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

export function invalidCursor(): DomainError {
  return DomainError.invalid([{ path: 'cursor', message: 'cursor is not one this API returned' }]);
}
