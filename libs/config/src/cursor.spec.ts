import { describe, expect, it } from 'vitest';
import { cursorInstant, decodeCursor, encodeCursor } from './cursor.js';
import { DomainError } from './domain-error.js';

describe('page cursors', () => {
  it('give back the key they were made of', () => {
    const key = ['2026-03-01T08:00:00.000Z', '7b0e6f5e-1111-4222-8333-944455556666'];
    expect(decodeCursor(encodeCursor(key), 2)).toEqual(key);
    expect(encodeCursor(key)).toMatch(/^[A-Za-z0-9_-]+$/);
  });

  it('refuse what no list handed out, as invalid input naming cursor (a 400)', () => {
    for (const bad of ['', 'not-base64-json', encodeCursor(['only one']), Buffer.from('{"a":1}').toString('base64url')]) {
      let error: unknown;
      try {
        decodeCursor(bad, 2);
      } catch (e) {
        error = e;
      }
      expect(error, bad).toBeInstanceOf(DomainError);
      expect((error as DomainError).code).toBe('invalid_input');
      expect((error as DomainError).errors).toEqual([{ path: 'cursor', message: 'cursor is not one this API returned' }]);
    }
  });

  it('carry only instants a row could have had (1970–9999), so a forged one never reaches the database', () => {
    expect(cursorInstant('2026-03-01T08:00:00.000Z')?.toISOString()).toBe('2026-03-01T08:00:00.000Z');
    expect(cursorInstant(Date.UTC(2026, 2, 1))?.toISOString()).toBe('2026-03-01T00:00:00.000Z');
    // -271821-04-20 is JavaScript's earliest date: PostgreSQL refused it with an error (the 500 fast-check found).
    for (const bad of [
      '-271821-04-20T00:00:00Z',
      '+275760-09-13T00:00:00Z',
      '1969-12-31T23:59:59Z',
      'yesterday',
      -8.64e15,
      Number.NaN,
      null,
      {},
    ]) {
      expect(cursorInstant(bad), String(bad)).toBeNull();
    }
  });
});
