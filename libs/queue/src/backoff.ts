import type { RandomSource } from './types.js';

export const BACKOFF_BASE_SECONDS = 30;
export const BACKOFF_CAP_SECONDS = 6 * 60 * 60;

/**
 * Delay before the next attempt after attempt number `attempts` (from 1)
 * failed: min(cap, base·2^attempts) · (0.5 + random·0.5). Full exponential
 * growth with "equal jitter": never less than half the nominal delay, so a
 * burst of failures spreads out without retrying immediately.
 */
export function backoffSeconds(attempts: number, random: RandomSource, base = BACKOFF_BASE_SECONDS, cap = BACKOFF_CAP_SECONDS): number {
  // 2^attempts overflows to Infinity long after it passes the cap; min handles it.
  const nominal = Math.min(cap, base * 2 ** Math.max(0, attempts));
  const r = random();
  const unit = Number.isFinite(r) ? Math.min(Math.max(r, 0), 1) : 0.5;
  return nominal * (0.5 + unit * 0.5);
}
