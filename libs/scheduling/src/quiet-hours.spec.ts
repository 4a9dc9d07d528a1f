import fc from 'fast-check';
import { DateTime } from 'luxon';
import { describe, expect, it } from 'vitest';
import { SchedulingError } from './result.js';
import { isInQuietHours, quietHoursEnd, validateQuietHours, type QuietHours } from './quiet-hours.js';

const at = (iso: string) => new Date(iso);
const night: QuietHours = { start: '22:00', end: '07:00' };
const NY = 'America/New_York';

describe('quiet hours', () => {
  it('a window across midnight', () => {
    expect(isInQuietHours(night, NY, at('2026-01-15T02:59:00Z'))).toBe(false); // 21:59 EST
    expect(isInQuietHours(night, NY, at('2026-01-15T03:00:00Z'))).toBe(true); // 22:00, start is inclusive
    expect(quietHoursEnd(night, NY, at('2026-01-15T03:30:00Z'))).toEqual(at('2026-01-15T12:00:00Z')); // next 07:00 EST
    expect(quietHoursEnd(night, NY, at('2026-01-15T11:00:00Z'))).toEqual(at('2026-01-15T12:00:00Z')); // 06:00 → 07:00
    expect(isInQuietHours(night, NY, at('2026-01-15T12:00:00Z'))).toBe(false); // 07:00, end is exclusive
  });

  it('returns the instant itself outside quiet hours', () => {
    const noon = at('2026-01-15T17:00:00Z');
    expect(quietHoursEnd(night, NY, noon)).toBe(noon);
  });

  it('a same-day window, and an empty one', () => {
    const lunch = { start: '12:00', end: '13:00' };
    expect(isInQuietHours(lunch, 'Asia/Kolkata', at('2026-01-15T06:45:00Z'))).toBe(true); // 12:15 IST
    expect(quietHoursEnd(lunch, 'Asia/Kolkata', at('2026-01-15T06:45:00Z'))).toEqual(at('2026-01-15T07:30:00Z'));
    expect(isInQuietHours(lunch, 'Asia/Kolkata', at('2026-01-15T02:00:00Z'))).toBe(false);
    expect(isInQuietHours({ start: '09:00', end: '09:00' }, NY, at('2026-01-15T14:00:00Z'))).toBe(false);
  });

  it('an end in a spring-forward gap runs shifted by the gap, like an occurrence', () => {
    const w = { start: '01:00', end: '02:30' };
    expect(quietHoursEnd(w, NY, at('2026-03-08T06:30:00Z'))).toEqual(at('2026-03-08T07:30:00Z')); // 01:30 EST → 03:30 EDT
    expect(isInQuietHours(w, NY, at('2026-03-08T07:10:00Z'))).toBe(false); // 03:10 EDT
    // Lord Howe's 30-minute gap: 02:15 → 02:45 (+11).
    expect(quietHoursEnd({ start: '01:00', end: '02:15' }, 'Australia/Lord_Howe', at('2026-10-03T14:45:00Z'))).toEqual(
      at('2026-10-03T15:45:00Z'),
    );
    // Santiago's 2026-09-06 starts at 01:00, so 00:30 becomes 01:30 (-03).
    expect(quietHoursEnd({ start: '23:00', end: '00:30' }, 'America/Santiago', at('2026-09-06T03:30:00Z'))).toEqual(
      at('2026-09-06T04:30:00Z'),
    );
  });

  it('in a fall-back overlap the window follows the wall clock through both passes', () => {
    const w = { start: '00:30', end: '01:30' };
    // First pass (EDT): ends at the first 01:30.
    expect(quietHoursEnd(w, NY, at('2026-11-01T05:00:00Z'))).toEqual(at('2026-11-01T05:30:00Z'));
    // 01:10 EST, the second pass: the clock reads inside the window again, until the second 01:30.
    expect(isInQuietHours(w, NY, at('2026-11-01T06:10:00Z'))).toBe(true);
    expect(quietHoursEnd(w, NY, at('2026-11-01T06:10:00Z'))).toEqual(at('2026-11-01T06:30:00Z'));
    // Across midnight into the fall-back night: the first 01:30.
    expect(quietHoursEnd({ start: '22:00', end: '01:30' }, NY, at('2026-11-01T02:30:00Z'))).toEqual(at('2026-11-01T05:30:00Z'));
  });

  it('always ends after the instant, at the window end on the wall clock (or just past a gap)', () => {
    const hhmm = fc
      .tuple(fc.integer({ min: 0, max: 23 }), fc.integer({ min: 0, max: 59 }))
      .map(([h, m]) => `${String(h).padStart(2, '0')}:${String(m).padStart(2, '0')}`);
    fc.assert(
      fc.property(
        fc.constantFrom('America/New_York', 'Europe/London', 'Australia/Lord_Howe', 'America/Santiago', 'Antarctica/Troll', 'Asia/Kolkata'),
        hhmm,
        hhmm,
        fc.integer({ min: Date.UTC(2026, 0, 1), max: Date.UTC(2028, 0, 1) }),
        (zone, start, end, t) => {
          const window = { start, end };
          const instant = new Date(t);
          const done = quietHoursEnd(window, zone, instant);
          if (!isInQuietHours(window, zone, instant)) {
            expect(done).toBe(instant);
            return;
          }
          expect(done.getTime()).toBeGreaterThan(t);
          expect(done.getTime() - t).toBeLessThanOrEqual(26 * 3_600_000);
          const local = DateTime.fromJSDate(done, { zone });
          const shifted = local.offset !== local.minus({ hours: 3 }).offset; // just after a transition
          if (!shifted) expect(local.toFormat('HH:mm')).toBe(end);
        },
      ),
      { numRuns: 500 },
    );
  });

  it('validates its inputs', () => {
    expect(validateQuietHours({ start: '22:00', end: '7:00' })).toEqual({
      ok: false,
      errors: ['end: "7:00" is not a time in HH:mm form (00:00 to 23:59)'],
    });
    expect(() => isInQuietHours({ start: '22:00', end: '07:00' }, 'EST', at('2026-01-15T03:00:00Z'))).toThrow(SchedulingError);
  });
});
