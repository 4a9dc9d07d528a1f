// The token bucket that paces one provider for one app (docs/pacing.md), as
// pure functions of a bucket's state and an instant. The `push_pace` row
// holds the state; pace.repository.ts runs the same steps in one SQL
// statement per provider call group (so that every worker process shares one
// pace), and test/push/pacing.integration-spec.ts checks that the two agree.
//
// - A paced bucket refills at `rate` tokens a second up to a burst of
//   `burstSeconds` of its rate. A sender takes what it needs; tokens may go
//   below zero, down to `maxWaitSeconds` of the rate: those sends are promised
//   and wait their turn (the i-th token of a debt comes i / rate seconds
//   later). What would wait longer is not granted: the job comes back later,
//   at a turn after the turns of the senders sent back before it
//   (`queueUntil`), so that they come back one after another at the rate.
// - A provider's 429 halves the rate (at most once per `throttleGapSeconds`,
//   not to below `floorRate`) and drops the burst; a Retry-After moves the
//   bucket's refresh that far into the future, so that nothing is granted to
//   go before it. The rate then climbs back additively, by its target every
//   `recoverySeconds`.
// - Without a configured maximum a bucket is unpaced (`rate` null) until a
//   429: then it starts from half the rate it was observed sending at, climbs
//   back to that rate (`ceiling`), and is unpaced again once there.

export interface PaceSettings {
  /** A full bucket lets this many seconds of its rate out at once. */
  burstSeconds: number;
  /** The longest a sender waits inside its job for its turn; beyond that its sends are deferred. */
  maxWaitSeconds: number;
  /** After a 429 the rate climbs back by its target every this many seconds (from half in half of it). */
  recoverySeconds: number;
  /** A 429 never halves the rate below this many sends a second. */
  floorRate: number;
  /** At most one halving per this many seconds: the 429s of one overshoot halve once. */
  throttleGapSeconds: number;
}

export const DEFAULT_PACE_SETTINGS: PaceSettings = {
  burstSeconds: 0.1,
  maxWaitSeconds: 2,
  recoverySeconds: 60,
  floorRate: 1,
  throttleGapSeconds: 1,
};

/** A `push_pace` row; instants as epoch milliseconds. */
export interface PaceState {
  maxRate: number | null;
  /** Sends a second now; null: unpaced. */
  rate: number | null;
  /** Where an adaptive bucket (no maxRate) climbs back to after a 429. */
  ceiling: number | null;
  tokens: number;
  refreshedAt: number;
  /** The end of the turns handed to senders told to come back later. */
  queueUntil: number | null;
  windowStartedAt: number;
  windowSent: number;
  observedRate: number;
  throttles: number;
  throttledAt: number | null;
}

/** What a sender got: `granted` of the sends it asked for, the i-th (from 0) after `delayMs(grant, i)`. */
export interface PaceGrant {
  granted: number;
  /** Tokens in the bucket before the grant (after refilling). */
  available: number;
  /** The rate the grant was made at; null: unpaced. */
  rate: number | null;
  /** The instant of the grant (the database's clock in production): the bucket's refresh, never before it. */
  at: number;
  /** How far `at` lies after the instant asked at (a Retry-After not yet over), in milliseconds. */
  leadMs: number;
  /** For the sends not granted: their turn, from the instant asked at, in milliseconds (0 when all were granted). */
  resumeLeadMs: number;
}

/** A fresh bucket: full, at its maximum (or unpaced without one). */
export function newPace(maxRate: number | null, at: number, settings: PaceSettings = DEFAULT_PACE_SETTINGS): PaceState {
  return {
    maxRate,
    rate: maxRate,
    ceiling: null,
    tokens: maxRate === null ? 0 : burstOf(maxRate, settings),
    refreshedAt: at,
    queueUntil: null,
    windowStartedAt: at,
    windowSent: 0,
    observedRate: 0,
    throttles: 0,
    throttledAt: null,
  };
}

export function burstOf(rate: number, settings: PaceSettings): number {
  return Math.max(1, rate * settings.burstSeconds);
}

/** The bucket at `now` (never before its last refresh): the rate recovered, the tokens refilled. */
export function refilled(state: PaceState, now: number, settings: PaceSettings = DEFAULT_PACE_SETTINGS): PaceState {
  const at = Math.max(now, state.refreshedAt);
  const elapsed = (at - state.refreshedAt) / 1000;
  const target = state.maxRate ?? state.ceiling;
  let rate: number | null;
  if (state.rate === null) rate = state.maxRate;
  else if (target === null) rate = state.rate;
  else rate = Math.min(target, state.rate + (target / settings.recoverySeconds) * elapsed);
  let ceiling = state.ceiling;
  if (state.maxRate === null && rate !== null && ceiling !== null && rate >= ceiling) {
    rate = null;
    ceiling = null;
  }
  const tokens = rate === null ? 0 : Math.min(burstOf(rate, settings), state.tokens + rate * elapsed);
  return { ...state, rate, ceiling, tokens, refreshedAt: at };
}

/** Takes up to `wanted` sends at `now`: the new state and what was granted. */
export function take(
  state: PaceState,
  wanted: number,
  now: number,
  settings: PaceSettings = DEFAULT_PACE_SETTINGS,
): { state: PaceState; grant: PaceGrant } {
  const next = refilled(state, now, settings);
  const at = next.refreshedAt;
  const available = next.tokens;
  const lead = (at - now) / 1000;
  const granted =
    next.rate === null
      ? wanted
      : Math.min(wanted, Math.max(0, Math.floor(available + next.rate * (settings.maxWaitSeconds - lead) + 1e-9)));
  const newWindow = at - state.windowStartedAt >= 1000;
  const denied = wanted - granted;
  let queueUntil = state.queueUntil;
  let resumeLeadMs = 0;
  if (next.rate !== null && denied > 0) {
    // After the sends promised so far, and after the turns handed out before.
    const promisedUntil = at + ((granted - available) / next.rate) * 1000;
    queueUntil = Math.max(promisedUntil, queueUntil ?? -Infinity) + (denied / next.rate) * 1000;
    resumeLeadMs = queueUntil - now;
  }
  return {
    state: {
      ...next,
      queueUntil,
      tokens: next.rate === null ? 0 : available - granted,
      windowStartedAt: newWindow ? at : state.windowStartedAt,
      windowSent: newWindow ? granted : state.windowSent + granted,
      observedRate: newWindow ? state.windowSent / ((at - state.windowStartedAt) / 1000) : state.observedRate,
    },
    grant: { granted, available, rate: next.rate, at, leadMs: at - now, resumeLeadMs },
  };
}

/** A provider answered `count` sends with 429 at `now` (with its Retry-After, if any): the rate halves; nothing goes before the Retry-After. */
export function throttle(
  state: PaceState,
  now: number,
  count: number,
  retryAfterSeconds: number | null,
  settings: PaceSettings = DEFAULT_PACE_SETTINGS,
): PaceState {
  const next = refilled(state, now, settings);
  const at = next.refreshedAt;
  const windowSeconds = Math.max(1, (at - state.windowStartedAt) / 1000);
  const base = next.rate ?? Math.max(state.observedRate, state.windowSent / windowSeconds);
  const recent = state.throttledAt !== null && at - state.throttledAt < settings.throttleGapSeconds * 1000;
  const rate = recent && next.rate !== null ? next.rate : Math.max(settings.floorRate, base / 2);
  const ceiling = state.maxRate !== null ? null : recent && next.ceiling !== null ? next.ceiling : Math.max(settings.floorRate, base);
  return {
    ...next,
    rate,
    ceiling,
    tokens: Math.min(next.tokens, 0),
    refreshedAt: Math.max(at, now + (retryAfterSeconds ?? 0) * 1000),
    throttles: state.throttles + count,
    throttledAt: recent ? state.throttledAt : at,
  };
}

/** How long after the grant its i-th send (from 0) goes, in milliseconds. */
export function delayMs(grant: PaceGrant, i: number): number {
  if (grant.rate === null) return grant.leadMs;
  return grant.leadMs + Math.max(0, ((i + 1 - grant.available) / grant.rate) * 1000);
}

/**
 * How long until a bucket holding `tokens` at `leadMs` from now (after a
 * grant or a throttle) has `count` more for a sender that comes back, in
 * milliseconds: at least the in-job wait, so that the job does not come back
 * into the same queue.
 */
export function resumeAfterMs(
  bucket: { rate: number | null; tokens: number; leadMs: number },
  count: number,
  settings: PaceSettings = DEFAULT_PACE_SETTINGS,
): number {
  const wait = bucket.rate === null ? 0 : ((count - bucket.tokens) / bucket.rate) * 1000;
  return Math.max(settings.maxWaitSeconds * 1000, bucket.leadMs + wait);
}
