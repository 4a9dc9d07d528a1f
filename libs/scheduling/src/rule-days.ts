import { civilFromDays, daysFromCivil, daysInMonth, floorDiv, mod, weekdayOf } from './calendar.js';
import { Lru } from './lru.js';
import type { Recurrence } from './rrule-subset.js';

// Which local dates a rule matches, as epoch days. This is rrule's
// (python-dateutil's) expansion, period by period: take the days of one
// DAILY/WEEKLY/MONTHLY/YEARLY period, drop those the BY parts reject, apply
// BYSETPOS; INTERVAL picks every nth period counted from startDate's period.
// The test suite checks it against rrule iterating from DTSTART.
//
// rrule itself is not called here: it always iterates from DTSTART (a
// five-year-old daily rule walks 1,800 days, ~3 µs each), and when a rule
// has no later match it keeps iterating until the year 9999 (minutes for a
// never-matching monthly rule). Here a query jumps straight to the period
// containing its start day, and the search is bounded: the Gregorian calendar
// repeats every 400 years, so one cycle of periods without a match means the
// rule never matches.
//
// One deliberate difference: a WEEKLY period is always the whole week (from
// WKST), also for the week containing startDate, so BYSETPOS means the same
// in every week; rrule truncates that first week at DTSTART.

export interface DayRule {
  readonly freq: Recurrence['freq'];
  readonly interval: number;
  readonly wkst: number;
  readonly phase: number; // startDate's period index mod interval
  readonly weekdays: boolean[] | null; // plain BYDAY, by weekday (MO = 0)
  readonly nthWeekdays: [weekday: number, n: number][] | null;
  readonly monthDays: Set<number> | null; // BYMONTHDAY, negatives counted from month end
  readonly months: boolean[] | null; // BYMONTH, index 1..12
  readonly setPos: number[];
  readonly cache: Map<number, Int32Array>;
}

// In-phase periods per 400-year cycle: after this many without a match the
// pattern only repeats.
const CYCLE_PERIODS = { DAILY: 146_097, WEEKLY: 20_871, MONTHLY: 4_800, YEARLY: 400 } as const;
export const LAST_DAY = daysFromCivil(9999, 12, 31);
const MAX_CACHED_PERIODS = 64;

function periodIndex(freq: DayRule['freq'], wkst: number, day: number): number {
  switch (freq) {
    case 'DAILY':
      return day;
    case 'WEEKLY':
      return floorDiv(day + 3 - wkst, 7); // weeks starting on WKST; day 0 was a Thursday
    case 'MONTHLY': {
      const { year, month } = civilFromDays(day);
      return year * 12 + month - 1;
    }
    case 'YEARLY':
      return civilFromDays(day).year;
  }
}

/** [first day, end day exclusive) of period p. */
function periodRange(rule: DayRule, p: number): [number, number] {
  switch (rule.freq) {
    case 'DAILY':
      return [p, p + 1];
    case 'WEEKLY': {
      const first = p * 7 - 3 + rule.wkst;
      return [first, first + 7];
    }
    case 'MONTHLY': {
      const year = floorDiv(p, 12);
      const month = p - year * 12 + 1;
      const first = daysFromCivil(year, month, 1);
      return [first, first + daysInMonth(year, month)];
    }
    case 'YEARLY':
      return [daysFromCivil(p, 1, 1), daysFromCivil(p + 1, 1, 1)];
  }
}

const rules = new Lru<string, DayRule>(2000);

/** The rule for schedules starting on startDays; shared by all with the same rule and INTERVAL phase. */
export function dayRuleFor(rec: Recurrence, startDays: number): DayRule {
  const start = civilFromDays(startDays);
  let { byDay, byMonthDay, byMonth } = rec;
  // The same defaults rrule takes from DTSTART, made explicit so that the
  // rule no longer depends on where iteration starts.
  if (byDay.length === 0 && byMonthDay.length === 0) {
    if (rec.freq === 'WEEKLY') byDay = [{ weekday: weekdayOf(startDays) }];
    if (rec.freq === 'MONTHLY') byMonthDay = [start.day];
    if (rec.freq === 'YEARLY') {
      byMonthDay = [start.day];
      if (byMonth.length === 0) byMonth = [start.month];
    }
  }
  const phase = mod(periodIndex(rec.freq, rec.wkst, startDays), rec.interval);
  const key = JSON.stringify([rec.freq, rec.interval, rec.wkst, byDay, byMonthDay, byMonth, rec.bySetPos, phase]);
  const cached = rules.get(key);
  if (cached) return cached;
  const plain = byDay.filter((d) => d.n === undefined);
  const nth = byDay.filter((d) => d.n !== undefined);
  const flags = (values: number[], size: number) => {
    const out = new Array<boolean>(size).fill(false);
    for (const v of values) out[v] = true;
    return out;
  };
  return rules.set(key, {
    freq: rec.freq,
    interval: rec.interval,
    wkst: rec.wkst,
    phase,
    weekdays: plain.length > 0 ? flags(plain.map((d) => d.weekday), 7) : null,
    nthWeekdays: nth.length > 0 ? nth.map((d) => [d.weekday, d.n!]) : null,
    monthDays: byMonthDay.length > 0 ? new Set(byMonthDay) : null,
    months: byMonth.length > 0 ? flags(byMonth, 13) : null,
    setPos: rec.bySetPos,
    cache: new Map(),
  });
}

// Days picked by ordinal weekdays (+1MO, -1FR): counted within each month
// for MONTHLY, within each BYMONTH month for YEARLY, else within the year.
function nthWeekdayDays(rule: DayRule, p: number, first: number, end: number): Set<number> {
  const ranges: [number, number][] = [];
  if (rule.freq === 'YEARLY' && rule.months) {
    for (let month = 1; month <= 12; month++) {
      if (!rule.months[month]) continue;
      const a = daysFromCivil(p, month, 1);
      ranges.push([a, a + daysInMonth(p, month)]);
    }
  } else {
    ranges.push([first, end]);
  }
  const out = new Set<number>();
  for (const [a, b] of ranges) {
    for (const [weekday, n] of rule.nthWeekdays!) {
      const day = n > 0 ? a + mod(weekday - weekdayOf(a), 7) + (n - 1) * 7 : b - 1 - mod(weekdayOf(b - 1) - weekday, 7) + (n + 1) * 7;
      if (day >= a && day < b) out.add(day);
    }
  }
  return out;
}

/** The matching days of period p (ascending), before any startDate cut. */
function periodDays(rule: DayRule, p: number): Int32Array {
  const cacheable = rule.freq === 'MONTHLY' || rule.freq === 'YEARLY';
  if (cacheable) {
    const hit = rule.cache.get(p);
    if (hit) return hit;
  }
  const [first, end] = periodRange(rule, p);
  const nth = rule.nthWeekdays ? nthWeekdayDays(rule, p, first, end) : null;
  const found: number[] = [];
  let { year, month, day: dom } = civilFromDays(first);
  let dim = daysInMonth(year, month);
  for (let day = first; day < end; day++, dom++) {
    if (dom > dim) {
      dom = 1;
      if (++month > 12) {
        month = 1;
        year++;
      }
      dim = daysInMonth(year, month);
    }
    if (rule.months && !rule.months[month]) continue;
    if (rule.weekdays && !rule.weekdays[weekdayOf(day)]) continue;
    if (nth && !nth.has(day)) continue;
    if (rule.monthDays && !rule.monthDays.has(dom) && !rule.monthDays.has(dom - dim - 1)) continue;
    found.push(day);
  }
  let days = found;
  if (rule.setPos.length > 0) {
    const picked = new Set<number>();
    for (const pos of rule.setPos) {
      const day = pos > 0 ? found[pos - 1] : found[found.length + pos];
      if (day !== undefined) picked.add(day);
    }
    days = [...picked].sort((a, b) => a - b);
  }
  const result = Int32Array.from(days);
  if (cacheable) {
    if (rule.cache.size >= MAX_CACHED_PERIODS) rule.cache.clear();
    rule.cache.set(p, result);
  }
  return result;
}

/** The first matching day in [fromDay, lastDay], or null. */
export function nextMatchingDay(rule: DayRule, fromDay: number, lastDay = LAST_DAY): number | null {
  const limit = Math.min(lastDay, LAST_DAY);
  let p = periodIndex(rule.freq, rule.wkst, fromDay);
  p += mod(rule.phase - p, rule.interval);
  for (let i = 0; i < CYCLE_PERIODS[rule.freq]; i++, p += rule.interval) {
    const days = periodDays(rule, p);
    for (let k = 0; k < days.length; k++) {
      const day = days[k]!;
      if (day > limit) return null;
      if (day >= fromDay) return day;
    }
    if (periodRange(rule, p)[1] > limit) return null;
  }
  return null;
}

/** The count-th matching day on or after startDay (1-based), or the last one if fewer exist. */
export function countthMatchingDay(rule: DayRule, startDay: number, count: number): number | null {
  let last: number | null = null;
  for (let i = 0, from = startDay; i < count; i++) {
    const day = nextMatchingDay(rule, from);
    if (day === null) break;
    last = day;
    from = day + 1;
  }
  return last;
}
