import { describe, expect, it } from 'vitest';
import { DEFAULT_PACE_SETTINGS as S, delayMs, newPace, type PaceState, refilled, resumeAfterMs, take, throttle } from './pace.js';

const T0 = Date.parse('2026-06-01T08:00:00Z');
const at = (seconds: number) => T0 + seconds * 1000;

/** Offers `count` sends one at a time, `offeredRate` a second from T0: when each went (seconds after T0), by take()'s delays. */
function steadyStream(state: PaceState, count: number, offeredRate: number): { sentAt: number[]; state: PaceState } {
  const sentAt: number[] = [];
  for (let i = 0; i < count; i++) {
    const now = at(i / offeredRate);
    const result = take(state, 1, now);
    state = result.state;
    expect(result.grant.granted).toBe(1);
    sentAt.push((now - T0 + delayMs(result.grant, 0)) / 1000);
  }
  return { sentAt, state };
}

describe('the pace bucket', () => {
  it('starts full: a burst of a tenth of a second of its rate goes at once, the rest at the rate', () => {
    const { grant } = take(newPace(40, T0), 10, T0);
    expect(grant).toMatchObject({ granted: 10, available: 4, rate: 40 });
    const delays = Array.from({ length: 10 }, (_, i) => delayMs(grant, i));
    expect(delays.slice(0, 4)).toEqual([0, 0, 0, 0]);
    expect(delays.slice(4)).toEqual([25, 50, 75, 100, 125, 150]);
  });

  it('meets its rate within 5 % for a stream offered faster than it (the sends are spread, not refused)', () => {
    // Offered at 200 a second, for a bucket of 40: each send is promised its turn.
    // Only as many as fit in the in-job wait are granted at once, so offer them in waves the senders would retry.
    let state = newPace(40, T0);
    const sentAt: number[] = [];
    let now = T0;
    while (sentAt.length < 320) {
      const result = take(state, 1, now);
      state = result.state;
      if (result.grant.granted === 1) sentAt.push((now - T0 + delayMs(result.grant, 0)) / 1000);
      now += 5; // 200 offers a second
    }
    const measured = (sentAt.length - 1) / (sentAt.at(-1)! - sentAt[0]!);
    expect(Math.abs(measured - 40) / 40).toBeLessThan(0.05);
    // Sends never go out of order.
    expect([...sentAt].sort((a, b) => a - b)).toEqual(sentAt);
  });

  it('lets a stream slower than its rate through without delay', () => {
    const { sentAt } = steadyStream(newPace(40, T0), 50, 20);
    sentAt.forEach((t, i) => expect(t).toBeCloseTo(i / 20, 6));
  });

  it('grants only what fits in the in-job wait; the rest come back after it', () => {
    const first = take(newPace(10, T0), 100, T0);
    // 1 token (the burst's minimum) + 2 s × 10 a second.
    expect(first.grant.granted).toBe(21);
    expect(delayMs(first.grant, 20)).toBe(2000);
    expect(first.state.tokens).toBe(-20);
    // The 79 others: their turn comes after the 20 promised and their own 79 at 10 a second.
    expect(first.grant.resumeLeadMs).toBeCloseTo(9900, 6);
    // A second sender at the same instant gets nothing (the wait is full), and a turn after the first one's.
    const second = take(first.state, 5, T0);
    expect(second.grant.granted).toBe(0);
    expect(second.grant.resumeLeadMs).toBeCloseTo(10_400, 6);
    // One second later, ten more fit.
    expect(take(second.state, 50, at(1)).grant.granted).toBe(10);
  });

  it('never counts time backwards (a statement whose clock reads earlier than the last refresh)', () => {
    const later = take(newPace(10, T0), 1, at(5)).state;
    const earlier = take(later, 1, at(4));
    expect(earlier.grant.at).toBe(at(5));
    expect(earlier.state.refreshedAt).toBe(at(5));
  });

  it('halves the rate on a 429, once per overshoot, not below the floor; recovers additively to its maximum', () => {
    let state = throttle(newPace(600, T0), at(1), 50, null);
    expect(state.rate).toBe(300);
    expect(state.tokens).toBeLessThanOrEqual(0);
    // More 429s of the same overshoot (within a second) do not halve again (it has climbed by 600 / 60 × 0.5 since).
    state = throttle(state, at(1.5), 20, null);
    expect(state.rate).toBeCloseTo(305, 6);
    expect(state.throttles).toBe(70);
    // 600 / 60 s: ten a second more every second.
    expect(refilled(state, at(11)).rate).toBeCloseTo(400, 6);
    expect(refilled(state, at(1000)).rate).toBe(600);
    // Many overshoots in a row stop at the floor.
    let low = newPace(4, T0);
    for (let i = 1; i < 10; i++) low = throttle(low, at(i * 2), 1, null);
    expect(low.rate).toBeGreaterThanOrEqual(S.floorRate);
    expect(low.rate).toBeLessThan(1.1);
  });

  it('honours Retry-After: nothing is granted to go before it, and the rate climbs only after it', () => {
    const state = throttle(newPace(100, T0), T0, 1, 30);
    expect(state.rate).toBe(50);
    // Further than the in-job wait away: nothing now.
    expect(take(state, 1, at(27)).grant.granted).toBe(0);
    const { grant } = take(state, 1, at(29));
    expect(grant).toMatchObject({ granted: 1, rate: 50, leadMs: 1000 });
    expect(at(29) + delayMs(grant, 0)).toBeGreaterThanOrEqual(at(30));
    expect(resumeAfterMs({ rate: state.rate, tokens: state.tokens, leadMs: state.refreshedAt - T0 }, 1)).toBeCloseTo(30_020, 6);
    expect(refilled(state, at(36)).rate).toBeCloseTo(60, 6);
  });

  it('an unpaced bucket (APNs) grants everything until a 429, then starts from half the rate it was sending at', () => {
    let state = newPace(null, T0);
    // 200 a second for 3 seconds: all granted at once, and measured.
    for (let i = 0; i < 600; i++) {
      const result = take(state, 1, at(i / 200));
      expect(result.grant).toMatchObject({ granted: 1, rate: null });
      expect(delayMs(result.grant, 0)).toBe(0);
      state = result.state;
    }
    expect(state.observedRate).toBeCloseTo(200, 0);
    state = throttle(state, at(3), 1, null);
    expect(state.rate).toBeCloseTo(100, 0);
    expect(state.ceiling).toBeCloseTo(200, 0);
    // It climbs back by its ceiling every 60 s, and is unpaced again once there.
    expect(refilled(state, at(3 + 15)).rate).toBeCloseTo(150, 0);
    expect(refilled(state, at(3 + 31))).toMatchObject({ rate: null, ceiling: null });
  });
});
