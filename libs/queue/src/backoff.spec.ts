import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { backoffSeconds, BACKOFF_CAP_SECONDS } from './backoff.js';

describe('backoffSeconds', () => {
  it('is base·2^attempts scaled by 0.5 + rand·0.5', () => {
    expect(backoffSeconds(1, () => 0)).toBe(30);
    expect(backoffSeconds(1, () => 1)).toBe(60);
    expect(backoffSeconds(2, () => 0.5)).toBe(120 * 0.75);
    expect(backoffSeconds(3, () => 0.2)).toBeCloseTo(240 * 0.6);
  });

  it('caps the nominal delay at 6 hours, also for absurd attempt numbers', () => {
    expect(backoffSeconds(10, () => 1)).toBe(BACKOFF_CAP_SECONDS);
    expect(backoffSeconds(10, () => 0)).toBe(BACKOFF_CAP_SECONDS / 2);
    expect(backoffSeconds(5000, () => 1)).toBe(BACKOFF_CAP_SECONDS);
  });

  it('always lies between half and all of the nominal delay', () => {
    fc.assert(
      fc.property(fc.integer({ min: 0, max: 60 }), fc.double({ min: 0, max: 1, noNaN: true }), (attempts, r) => {
        const nominal = Math.min(BACKOFF_CAP_SECONDS, 30 * 2 ** attempts);
        const delay = backoffSeconds(attempts, () => r);
        expect(delay).toBeGreaterThanOrEqual(nominal / 2 - 1e-9);
        expect(delay).toBeLessThanOrEqual(nominal + 1e-9);
      }),
    );
  });

  it('grows with attempts for a fixed random value (until the cap)', () => {
    for (let a = 1; a < 12; a++) expect(backoffSeconds(a + 1, () => 0.3)).toBeGreaterThanOrEqual(backoffSeconds(a, () => 0.3));
  });

  it('survives a random source that misbehaves', () => {
    expect(backoffSeconds(1, () => Number.NaN)).toBe(45);
    expect(backoffSeconds(1, () => 7)).toBe(60);
  });
});
