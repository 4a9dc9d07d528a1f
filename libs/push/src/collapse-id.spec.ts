import { describe, expect, it } from 'vitest';
import { collapseIdFor, MAX_COLLAPSE_ID_BYTES } from './collapse-id.js';

describe('collapseIdFor', () => {
  it('is readable and deterministic for a job', () => {
    expect(collapseIdFor(42)).toBe('nudge:42');
    expect(collapseIdFor('42')).toBe(collapseIdFor(42n));
    expect(collapseIdFor(42, 'reminder')).toBe('nudge:42:reminder');
    expect(collapseIdFor(42)).not.toBe(collapseIdFor(43));
  });

  it('takes a namespaced collapse key as readily as a job id, apart from any job id', () => {
    expect(collapseIdFor('reminder:0b9e5c1a-7d7e-4c52-9a57-6a1f0f7f2c11')).toBe('nudge:reminder:0b9e5c1a-7d7e-4c52-9a57-6a1f0f7f2c11');
    expect(collapseIdFor('notification:order-7')).toBe('nudge:notification:order-7');
    expect(collapseIdFor('notification:42')).not.toBe(collapseIdFor(42));
    // An idempotency key may run to 512 characters: hashed, still ≤ 64 bytes and the same each time.
    const long = collapseIdFor(`notification:${'k'.repeat(512)}`);
    expect(Buffer.byteLength(long)).toBeLessThanOrEqual(MAX_COLLAPSE_ID_BYTES);
    expect(collapseIdFor(`notification:${'k'.repeat(512)}`)).toBe(long);
  });

  it('hashes ids that would pass 64 bytes, staying deterministic and distinct', () => {
    const long = 'é'.repeat(40);
    const id = collapseIdFor(9_007_199_254_740_991, long);
    expect(Buffer.byteLength(id)).toBeLessThanOrEqual(MAX_COLLAPSE_ID_BYTES);
    expect(id).toMatch(/^nudge:h:[\w-]+$/);
    expect(collapseIdFor(9_007_199_254_740_991, long)).toBe(id);
    expect(collapseIdFor(9_007_199_254_740_992, long)).not.toBe(id);
  });
});
