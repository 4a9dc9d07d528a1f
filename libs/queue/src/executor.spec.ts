import { describe, expect, it } from 'vitest';
import { rowsOf } from './executor.js';
import { errorClass, errorText, TransientJobError } from './errors.js';
import { parseJobId } from './rows.js';

describe('rowsOf', () => {
  it('reads pg results, TypeORM rows, TypeORM [rows, affected] and structured results', () => {
    const rows = [{ id: '1' }, { id: '2' }];
    expect(rowsOf({ rows, rowCount: 2 })).toEqual(rows);
    expect(rowsOf(rows)).toEqual(rows);
    expect(rowsOf([rows, 2])).toEqual(rows);
    expect(rowsOf({ records: rows, affected: 2 })).toEqual(rows);
    expect(rowsOf(undefined)).toEqual([]);
  });
});

describe('job ids and errors', () => {
  it('accepts only positive bigint ids', () => {
    expect(parseJobId('42')).toBe('42');
    expect(parseJobId(42)).toBe('42');
    expect(parseJobId(42n)).toBe('42');
    for (const bad of ['0', '-1', 'abc', '1.5', '', '99999999999999999999', '9223372036854775808']) expect(parseJobId(bad)).toBeNull();
  });

  it('rejects a negative Retry-After and names error classes safely', () => {
    expect(() => new TransientJobError('x', { retryAfterSeconds: -1 })).toThrow(RangeError);
    expect(errorClass(new TransientJobError('x'))).toBe('TransientJobError');
    expect(errorClass('a string')).toBe('string');
    expect(errorText(new Error('boom', { cause: new Error('root') }))).toBe('Error: boom (cause: Error: root)');
  });
});
