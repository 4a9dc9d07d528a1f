import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { civilFromDays, daysFromCivil, formatDate, formatLocalIso, parseLocalDate, parseLocalTime, weekdayOf } from './calendar.js';

describe('calendar', () => {
  it('converts epoch days like Date.UTC does', () => {
    fc.assert(
      fc.property(fc.integer({ min: -30_000, max: 3_000_000 }), (days) => {
        const d = new Date(days * 86_400_000);
        expect(civilFromDays(days)).toEqual({ year: d.getUTCFullYear(), month: d.getUTCMonth() + 1, day: d.getUTCDate() });
        expect(daysFromCivil(d.getUTCFullYear(), d.getUTCMonth() + 1, d.getUTCDate())).toBe(days);
        expect(weekdayOf(days)).toBe((d.getUTCDay() + 6) % 7);
      }),
    );
  });

  it('formats dates and offsets', () => {
    expect(formatDate(daysFromCivil(2026, 3, 8))).toBe('2026-03-08');
    expect(formatLocalIso(Date.UTC(2026, 2, 8, 7, 30), -4 * 3_600_000)).toBe('2026-03-08T03:30:00.000-04:00');
    expect(formatLocalIso(Date.UTC(2026, 0, 1, 0, 0), 0)).toBe('2026-01-01T00:00:00.000+00:00');
    expect(formatLocalIso(Date.UTC(2026, 8, 26, 14, 15), 825 * 60_000)).toBe('2026-09-27T04:00:00.000+13:45');
  });

  it('parses local dates', () => {
    expect(parseLocalDate('2028-02-29')).toEqual({ ok: true, value: { year: 2028, month: 2, day: 29 } });
    for (const bad of ['2027-02-29', '2026-13-01', '2026-04-31', '2026-4-01', '20260401', '2026-04-01T00:00', '', '1899-12-31']) {
      expect(parseLocalDate(bad).ok, bad).toBe(false);
    }
  });

  it('parses local times', () => {
    expect(parseLocalTime('00:00')).toEqual({ ok: true, value: { hour: 0, minute: 0 } });
    expect(parseLocalTime('23:59')).toEqual({ ok: true, value: { hour: 23, minute: 59 } });
    for (const bad of ['24:00', '9:00', '09:0', '09:60', '09:00:00', ' 09:00', 'noon']) {
      expect(parseLocalTime(bad).ok, bad).toBe(false);
    }
  });
});
