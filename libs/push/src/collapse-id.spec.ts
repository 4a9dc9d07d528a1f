import { describe, expect, it } from 'vitest';
import { collapseIdFor, MAX_COLLAPSE_ID_BYTES } from './collapse-id.js';

describe('collapseIdFor', () => {
  it('is readable and deterministic for a job', () => {
    expect(collapseIdFor(42)).toBe('nudge:42');
    expect(collapseIdFor('42')).toBe(collapseIdFor(42n));
    expect(collapseIdFor(42, 'reminder')).toBe('nudge:42:reminder');
    expect(collapseIdFor(42)).not.toBe(collapseIdFor(43));
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
