import { describe, expect, it } from 'vitest';
import { jitterFor } from './jitter.js';

describe('jitterFor', () => {
  it('is deterministic and within [0, spread)', () => {
    const a = jitterFor('0b6f1c1e-8a51-4c39-9d0e-1c3f5a7e2b11', '2026-03-08', 300);
    expect(jitterFor('0b6f1c1e-8a51-4c39-9d0e-1c3f5a7e2b11', '2026-03-08', 300)).toBe(a);
    expect(Number.isInteger(a)).toBe(true);
    expect(a).toBeGreaterThanOrEqual(0);
    expect(a).toBeLessThan(300);
  });

  it('is 0 without a spread and refuses a negative one', () => {
    expect(jitterFor('r1', '2026-03-08', 0)).toBe(0);
    expect(jitterFor('r1', '2026-03-08', 0.9)).toBe(0);
    expect(() => jitterFor('r1', '2026-03-08', -1)).toThrow(RangeError);
    expect(() => jitterFor('r1', '2026-03-08', Number.NaN)).toThrow(RangeError);
  });

  it('spreads sequential ids and dates evenly', () => {
    const buckets = new Array<number>(10).fill(0);
    for (let i = 0; i < 10_000; i++) buckets[jitterFor(`reminder-${i}`, '2026-03-08', 10)]!++;
    for (const n of buckets) {
      expect(n).toBeGreaterThan(850);
      expect(n).toBeLessThan(1150);
    }
    const days = new Set(Array.from({ length: 30 }, (_, d) => jitterFor('r1', `2026-04-${String(d + 1).padStart(2, '0')}`, 3600)));
    expect(days.size).toBeGreaterThan(25);
  });
});
