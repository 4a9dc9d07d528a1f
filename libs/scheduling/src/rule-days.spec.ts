import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { daysFromCivil } from './calendar.js';
import { dayRuleFor, forEachMatchingDay, LAST_DAY, matchesDay, nextMatchingDay } from './rule-days.js';
import { parseRecurrence } from './rrule-subset.js';

// nextMatchingDay itself is checked against rrule.js and a luxon model in
// next-occurrence-properties.spec.ts; these check that the other entry
// points (used for COUNT and isLocalDateOf) agree with it, on rule shapes
// that exercise each search path (residues, BYMONTH/BYMONTHDAY stepping,
// period shapes, weeks inside excluded months).

const WEEKDAYS = ['MO', 'TU', 'WE', 'TH', 'FR', 'SA', 'SU'];
const rule = fc
  .record({
    freq: fc.constantFrom('DAILY', 'WEEKLY', 'MONTHLY', 'YEARLY'),
    interval: fc.constantFrom(1, 1, 2, 3, 7, 12, 13, 52, 997),
    byDay: fc.uniqueArray(fc.tuple(fc.constantFrom(undefined, 1, 2, -1, 5), fc.constantFrom(...WEEKDAYS)), { maxLength: 4 }),
    byMonthDay: fc.uniqueArray(fc.constantFrom(1, 13, 28, 29, 30, 31, -1, -29), { maxLength: 3 }),
    byMonth: fc.uniqueArray(fc.integer({ min: 1, max: 12 }), { maxLength: 3 }),
    bySetPos: fc.uniqueArray(fc.constantFrom(1, 2, -1, 7, 366), { maxLength: 2 }),
    wkst: fc.constantFrom(...WEEKDAYS),
  })
  .map((r) => {
    const ordinals = r.freq === 'MONTHLY' || r.freq === 'YEARLY';
    // Plain weekdays, or (MONTHLY/YEARLY, when the first drawn has one) ordinal ones: never mixed.
    const ordinal = ordinals && r.byDay[0]?.[0] !== undefined;
    const days = r.byDay.filter(([n]) => (n !== undefined) === ordinal);
    const parts = [`FREQ=${r.freq}`, `INTERVAL=${r.interval}`, `WKST=${r.wkst}`];
    if (days.length) parts.push(`BYDAY=${days.map(([n, d]) => `${n ?? ''}${d}`).join(',')}`);
    if (r.byMonthDay.length && r.freq !== 'WEEKLY') parts.push(`BYMONTHDAY=${r.byMonthDay.join(',')}`);
    if (r.byMonth.length) parts.push(`BYMONTH=${r.byMonth.join(',')}`);
    if (r.bySetPos.length && r.freq !== 'DAILY') parts.push(`BYSETPOS=${r.bySetPos.join(',')}`);
    return parts.join(';');
  });
const startDay = fc.integer({ min: daysFromCivil(1900, 1, 1), max: daysFromCivil(2200, 12, 31) });

describe('rule-days entry points agree with nextMatchingDay', () => {
  it('forEachMatchingDay lists the same days as chained nextMatchingDay; matchesDay holds exactly on them', () => {
    fc.assert(
      fc.property(rule, startDay, fc.integer({ min: 0, max: 5000 }), fc.integer({ min: 0, max: 3000 }), (text, start, skip, span) => {
        const parsed = parseRecurrence(text);
        fc.pre(parsed.ok);
        if (!parsed.ok) return;
        const r = dayRuleFor(parsed.value, start);
        const from = start + skip;
        const last = from + span;
        const chained: number[] = [];
        for (let d = nextMatchingDay(r, from, last); d !== null && chained.length < 200; d = nextMatchingDay(r, d + 1, last))
          chained.push(d);
        const listed: number[] = [];
        forEachMatchingDay(r, from, last, (d) => (listed.push(d), listed.length < 200));
        expect(listed).toEqual(chained);
        // Every day of a short window, one by one.
        const matched = new Set(chained);
        for (let d = from; d <= Math.min(last, from + 120); d++) expect(matchesDay(r, d), `${text} day ${d}`).toBe(matched.has(d));
      }),
      { numRuns: 300 },
    );
  });

  it('stops at the year 9999', () => {
    const parsed = parseRecurrence('FREQ=YEARLY;BYMONTH=12;BYMONTHDAY=31');
    if (!parsed.ok) throw new Error('rule');
    const r = dayRuleFor(parsed.value, daysFromCivil(2026, 1, 1));
    expect(nextMatchingDay(r, LAST_DAY)).toBe(LAST_DAY);
    expect(nextMatchingDay(r, LAST_DAY + 1)).toBeNull();
    const seen: number[] = [];
    forEachMatchingDay(r, daysFromCivil(9990, 1, 1), Infinity, (d) => (seen.push(d), true));
    expect(seen).toHaveLength(10);
  });
});
