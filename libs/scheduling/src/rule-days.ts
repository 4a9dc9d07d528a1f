import { civilFromDays, daysFromCivil, daysInMonth, floorDiv, isLeapYear, mod, weekdayOf } from './calendar.js';
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
// The cost of a search is bounded too (a few ms at worst, to the year 9999):
// - DAILY rules, and WEEKLY ones without BYSETPOS, have one-day "periods", so
//   instead of visiting every day they step through whichever is sparser: the
//   days INTERVAL and BYDAY allow (residues modulo INTERVAL×7 days at most) or
//   the dates BYMONTH/BYMONTHDAY allow (month by month, skipping the rest).
//   `FREQ=DAILY;BYMONTH=2;BYMONTHDAY=29;BYDAY=MO` looks at one date per leap
//   year, not at 146,097 days.
// - MONTHLY, YEARLY and WEEKLY-with-BYSETPOS periods are computed once per
//   "shape" (length and starting weekday, at most 32 per rule) as offsets
//   from the period's first day; after that a period costs a lookup, and a
//   month BYMONTH excludes one comparison (a week inside one is skipped).
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
  readonly doms: Int32Array[] | null; // BYMONTHDAY as ascending days of a month of 28 + i days
  readonly months: boolean[] | null; // BYMONTH, index 1..12
  readonly setPos: number[];
  // DAILY, and WEEKLY without BYSETPOS: the days INTERVAL and BYDAY allow are
  // `residues` (ascending) modulo `span`; `byCalendar` says whether to step
  // through those or through the BYMONTH/BYMONTHDAY dates. Null otherwise.
  readonly residues: number[] | null;
  readonly span: number;
  readonly byCalendar: boolean;
  // MONTHLY, YEARLY, WEEKLY with BYSETPOS: a period's matching days, as
  // offsets from its first day, depend only on its length and the weekday it
  // starts on (see shapeOf).
  readonly shapes: (Int32Array | undefined)[];
}

// In-phase periods per 400-year cycle: after this many without a match the
// pattern only repeats. (INTERVAL of them span 146,097 × INTERVAL days, a
// multiple of every pattern's period.)
const CYCLE_PERIODS = { DAILY: 146_097, WEEKLY: 20_871, MONTHLY: 4_800, YEARLY: 400 } as const;
export const LAST_DAY = daysFromCivil(9999, 12, 31);

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

/** First day of period p. */
function periodStart(rule: DayRule, p: number): number {
  switch (rule.freq) {
    case 'DAILY':
      return p;
    case 'WEEKLY':
      return p * 7 - 3 + rule.wkst;
    case 'MONTHLY': {
      const year = floorDiv(p, 12);
      return daysFromCivil(year, p - year * 12 + 1, 1);
    }
    case 'YEARLY':
      return daysFromCivil(p, 1, 1);
  }
}

const gcd = (a: number, b: number): number => (b === 0 ? a : gcd(b, a % b));

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
  const monthDays = byMonthDay.length > 0 ? new Set(byMonthDay) : null;
  const doms = monthDays
    ? [28, 29, 30, 31].map((dim) => {
        const days = new Set([...monthDays].map((d) => (d > 0 ? d : dim + 1 + d)).filter((d) => d >= 1 && d <= dim));
        return Int32Array.from([...days].sort((a, b) => a - b));
      })
    : null;
  const months = byMonth.length > 0 ? flags(byMonth, 13) : null;
  const weekdays =
    plain.length > 0
      ? flags(
          plain.map((d) => d.weekday),
          7,
        )
      : null;

  let residues: number[] | null = null;
  let span = 0;
  let byCalendar = false;
  if (rec.freq === 'DAILY' || (rec.freq === 'WEEKLY' && rec.bySetPos.length === 0)) {
    // The allowed days repeat every `span` days: INTERVAL days (×7 when BYDAY
    // picks weekdays) for DAILY, INTERVAL weeks for WEEKLY.
    const I = rec.interval;
    span = rec.freq === 'WEEKLY' ? 7 * I : weekdays ? (I * 7) / gcd(I, 7) : I;
    // One in-phase period's days, shifted by whole periods to cover the span.
    const base = rec.freq === 'WEEKLY' ? [0, 1, 2, 3, 4, 5, 6].map((j) => phase * 7 - 3 + rec.wkst + j) : [phase];
    const step = rec.freq === 'WEEKLY' ? 7 * I : I;
    const found = new Set<number>();
    for (let k = 0; k * step < span; k++) {
      for (const d of base) if (!weekdays || weekdays[weekdayOf(d + k * step)]) found.add(mod(d + k * step, span));
    }
    residues = [...found].sort((a, b) => a - b);
    // Step through whichever is sparser: allowed residues, or BYMONTH/BYMONTHDAY dates.
    if (months || doms) {
      const monthCount = months ? byMonth.length : 12;
      const perMonth = doms ? doms[3]!.length : 30.4;
      byCalendar = monthCount * (perMonth + 2) < (365.25 * residues.length) / span;
    }
  }

  return rules.set(key, {
    freq: rec.freq,
    interval: rec.interval,
    wkst: rec.wkst,
    phase,
    weekdays,
    nthWeekdays: nth.length > 0 ? nth.map((d) => [d.weekday, d.n!]) : null,
    monthDays,
    doms,
    months,
    setPos: rec.bySetPos,
    residues,
    span,
    byCalendar,
    shapes: [],
  });
}

// ---- DAILY, and WEEKLY without BYSETPOS ------------------------------------

function inPhase(rule: DayRule, day: number): boolean {
  const p = rule.freq === 'DAILY' ? day : floorDiv(day + 3 - rule.wkst, 7);
  return mod(p, rule.interval) === rule.phase && (!rule.weekdays || rule.weekdays[weekdayOf(day)]!);
}

function monthDayMatches(rule: DayRule, dom: number, dim: number): boolean {
  return !rule.monthDays || rule.monthDays.has(dom) || rule.monthDays.has(dom - dim - 1);
}

/** The first month >= `month` of `year` that BYMONTH allows, or 13 if none. */
function allowedMonthFrom(rule: DayRule, month: number): number {
  while (month <= 12 && rule.months && !rule.months[month]) month++;
  return month;
}

/** First day on or after `day` that INTERVAL and BYDAY allow. */
function nextResidueDay(rule: DayRule, day: number): number {
  const residues = rule.residues!;
  const x = mod(day, rule.span);
  for (const r of residues) if (r >= x) return day + r - x;
  return day + residues[0]! + rule.span - x;
}

function nextByResidue(rule: DayRule, fromDay: number, limit: number): number | null {
  const filtered = rule.months !== null || rule.monthDays !== null;
  for (let day = fromDay; ;) {
    day = nextResidueDay(rule, day);
    if (day > limit) return null;
    if (!filtered) return day;
    const { year, month, day: dom } = civilFromDays(day);
    if (rule.months && !rule.months[month]) {
      const next = allowedMonthFrom(rule, month + 1);
      day = next <= 12 ? daysFromCivil(year, next, 1) : daysFromCivil(year + 1, allowedMonthFrom(rule, 1), 1);
      continue;
    }
    if (monthDayMatches(rule, dom, daysInMonth(year, month))) return day;
    day++;
  }
}

function nextByCalendar(rule: DayRule, fromDay: number, limit: number): number | null {
  let { year, month } = civilFromDays(fromDay);
  for (;;) {
    month = allowedMonthFrom(rule, month);
    if (month > 12) {
      year++;
      month = allowedMonthFrom(rule, 1);
    }
    const first = daysFromCivil(year, month, 1);
    if (first > limit) return null;
    const dim = daysInMonth(year, month);
    if (rule.doms) {
      const doms = rule.doms[dim - 28]!;
      for (let k = 0; k < doms.length; k++) {
        const day = first + doms[k]! - 1;
        if (day < fromDay) continue;
        if (day > limit) return null;
        if (inPhase(rule, day)) return day;
      }
    } else {
      for (let day = Math.max(first, fromDay); day < first + dim; day++) {
        if (day > limit) return null;
        if (inPhase(rule, day)) return day;
      }
    }
    month++;
  }
}

// ---- MONTHLY, YEARLY, and WEEKLY with BYSETPOS -----------------------------

// Scratch space for one period's days (a year has at most 366).
const scratch = new Int32Array(372);
const picks = new Int32Array(372);

/** Sorts out[from, n) and drops repeats in place; returns the new end. */
function sortUnique(out: Int32Array, from: number, n: number): number {
  if (n - from < 2) return n;
  out.subarray(from, n).sort();
  let w = from + 1;
  for (let r = from + 1; r < n; r++) if (out[r] !== out[w - 1]) out[w++] = out[r]!;
  return w;
}

// Days picked by ordinal weekdays (+1MO, -1FR) within [a, b).
function pushNth(rule: DayRule, a: number, b: number, out: Int32Array, n: number): number {
  const from = n;
  for (const [weekday, k] of rule.nthWeekdays!) {
    const day = k > 0 ? a + mod(weekday - weekdayOf(a), 7) + (k - 1) * 7 : b - 1 - mod(weekdayOf(b - 1) - weekday, 7) + (k + 1) * 7;
    if (day >= a && day < b) out[n++] = day;
  }
  return sortUnique(out, from, n);
}

function isNthOfMonth(rule: DayRule, weekday: number, dom: number, dim: number): boolean {
  for (const [w, k] of rule.nthWeekdays!) {
    if (w === weekday && (k > 0 ? Math.floor((dom - 1) / 7) === k - 1 : Math.floor((dim - dom) / 7) === -k - 1)) return true;
  }
  return false;
}

// The days of one month that the day-level BY parts allow, ascending;
// ordinal weekdays count within this month.
function pushMonth(rule: DayRule, first: number, dim: number, out: Int32Array, n: number): number {
  const weekday0 = weekdayOf(first);
  if (rule.doms) {
    const doms = rule.doms[dim - 28]!;
    for (let k = 0; k < doms.length; k++) {
      const dom = doms[k]!;
      const weekday = (weekday0 + dom - 1) % 7;
      if (rule.weekdays && !rule.weekdays[weekday]) continue;
      if (rule.nthWeekdays && !isNthOfMonth(rule, weekday, dom, dim)) continue;
      out[n++] = first + dom - 1;
    }
    return n;
  }
  if (rule.nthWeekdays) return pushNth(rule, first, first + dim, out, n);
  for (let dom = 1, weekday = weekday0; dom <= dim; dom++, weekday = weekday === 6 ? 0 : weekday + 1) {
    if (!rule.weekdays || rule.weekdays[weekday]) out[n++] = first + dom - 1;
  }
  return n;
}

/** Writes the matching days of period p (before any startDate cut) into `out`, ascending; returns how many. */
function fillPeriod(rule: DayRule, p: number, out: Int32Array): number {
  let n = 0;
  switch (rule.freq) {
    case 'MONTHLY': {
      const year = floorDiv(p, 12);
      const month = p - year * 12 + 1;
      if (rule.months && !rule.months[month]) return 0;
      n = pushMonth(rule, daysFromCivil(year, month, 1), daysInMonth(year, month), out, 0);
      break;
    }
    case 'YEARLY': {
      if (rule.nthWeekdays && !rule.months) {
        // Ordinals count within the whole year.
        n = pushNth(rule, daysFromCivil(p, 1, 1), daysFromCivil(p + 1, 1, 1), out, 0);
        if (rule.monthDays) {
          let w = 0;
          for (let k = 0; k < n; k++) {
            const { year, month, day } = civilFromDays(out[k]!);
            if (monthDayMatches(rule, day, daysInMonth(year, month))) out[w++] = out[k]!;
          }
          n = w;
        }
        break;
      }
      for (let month = allowedMonthFrom(rule, 1); month <= 12; month = allowedMonthFrom(rule, month + 1)) {
        n = pushMonth(rule, daysFromCivil(p, month, 1), daysInMonth(p, month), out, n);
      }
      break;
    }
    default: {
      // WEEKLY (with BYSETPOS): the week's BYDAY days in BYMONTH months.
      const first = p * 7 - 3 + rule.wkst;
      const a = civilFromDays(first);
      const sameMonth = a.day + 6 <= daysInMonth(a.year, a.month);
      if (sameMonth && rule.months && !rule.months[a.month]) return 0;
      for (let j = 0; j < 7; j++) {
        const day = first + j;
        if (rule.weekdays && !rule.weekdays[(rule.wkst + j) % 7]) continue;
        if (!sameMonth && rule.months && !rule.months[civilFromDays(day).month]) continue;
        out[n++] = day;
      }
    }
  }
  if (rule.setPos.length === 0) return n;
  let k = 0;
  for (const pos of rule.setPos) {
    const i = pos > 0 ? pos - 1 : n + pos;
    if (i >= 0 && i < n) picks[k++] = out[i]!;
  }
  k = sortUnique(picks, 0, k);
  out.set(picks.subarray(0, k));
  return k;
}

/**
 * For WEEKLY with BYMONTH, the first in-phase week from p on that is not
 * wholly inside a month BYMONTH excludes (those weeks have no days); else p.
 */
function skipExcludedWeeks(rule: DayRule, p: number): number {
  if (rule.freq !== 'WEEKLY' || !rule.months) return p;
  for (;;) {
    const a = civilFromDays(periodStart(rule, p));
    if (rule.months[a.month] || a.day + 6 > daysInMonth(a.year, a.month)) return p;
    const next = allowedMonthFrom(rule, a.month + 1);
    const first = next <= 12 ? daysFromCivil(a.year, next, 1) : daysFromCivil(a.year + 1, allowedMonthFrom(rule, 1), 1);
    // The in-phase week containing that month's first day, or the one after.
    const q = periodIndex('WEEKLY', rule.wkst, first);
    p = q + mod(rule.phase - q, rule.interval);
  }
}

const NO_DAYS = new Int32Array(0);

/**
 * The matching days of period p (MONTHLY, YEARLY, WEEKLY with BYSETPOS) as
 * offsets from its first day. Every BY part and BYSETPOS look only at the
 * days of the period, so the answer depends on nothing but its length (a
 * month's, or whether the year is a leap year) and the weekday it starts on
 * (for a week: where a month boundary falls in it and which months BYMONTH
 * allows): at most 32 shapes per rule, each computed once. A dense yearly
 * rule is thus not refilled per year, and nothing is allocated per period.
 */
function shapeOf(rule: DayRule, p: number, first: number): Int32Array {
  let key: number;
  if (rule.freq === 'MONTHLY') {
    const year = floorDiv(p, 12);
    const month = p - year * 12 + 1;
    if (rule.months && !rule.months[month]) return NO_DAYS;
    key = daysInMonth(year, month) * 7 + weekdayOf(first);
  } else if (rule.freq === 'YEARLY') {
    key = (isLeapYear(p) ? 7 : 0) + weekdayOf(first);
  } else {
    // A week: where a new month starts in it, and which of its two months BYMONTH allows.
    const { year, month, day } = civilFromDays(first);
    const split = Math.min(daysInMonth(year, month) - day + 1, 7);
    const allowed = (m: number) => (!rule.months || rule.months[m > 12 ? 1 : m] ? 1 : 0);
    key = split * 4 + allowed(month) * 2 + (split < 7 ? allowed(month + 1) : 0);
  }
  let shape = rule.shapes[key];
  if (!shape) {
    const n = fillPeriod(rule, p, scratch);
    shape = new Int32Array(n);
    for (let k = 0; k < n; k++) shape[k] = scratch[k]! - first;
    rule.shapes[key] = shape;
  }
  return shape;
}

/** The first matching day in [fromDay, lastDay], or null. */
export function nextMatchingDay(rule: DayRule, fromDay: number, lastDay = LAST_DAY): number | null {
  let limit = Math.min(lastDay, LAST_DAY);
  if (rule.residues) {
    if (rule.residues.length === 0) return null;
    limit = Math.min(limit, fromDay + CYCLE_PERIODS.DAILY * rule.interval - 1);
    return rule.byCalendar ? nextByCalendar(rule, fromDay, limit) : nextByResidue(rule, fromDay, limit);
  }
  let p = periodIndex(rule.freq, rule.wkst, fromDay);
  p += mod(rule.phase - p, rule.interval);
  const end = p + CYCLE_PERIODS[rule.freq] * rule.interval;
  for (; (p = skipExcludedWeeks(rule, p)) < end; p += rule.interval) {
    const first = periodStart(rule, p);
    if (first > limit) return null;
    const shape = shapeOf(rule, p, first);
    for (let k = 0; k < shape.length; k++) {
      const day = first + shape[k]!;
      if (day > limit) return null;
      if (day >= fromDay) return day;
    }
  }
  return null;
}

/** Whether the rule matches `day` (before any startDate, COUNT or UNTIL cut). */
export function matchesDay(rule: DayRule, day: number): boolean {
  return nextMatchingDay(rule, day, day) === day;
}

/**
 * Calls `visit` with each matching day in [fromDay, lastDay], ascending,
 * until it returns false. Costs one nextMatchingDay per match (DAILY,
 * WEEKLY without BYSETPOS) or one shape lookup per period (the others).
 */
export function forEachMatchingDay(rule: DayRule, fromDay: number, lastDay: number, visit: (day: number) => boolean): void {
  const limit = Math.min(lastDay, LAST_DAY);
  if (rule.residues) {
    for (let day = nextMatchingDay(rule, fromDay, limit); day !== null; day = nextMatchingDay(rule, day + 1, limit)) {
      if (!visit(day)) return;
    }
    return;
  }
  let p = periodIndex(rule.freq, rule.wkst, fromDay);
  p += mod(rule.phase - p, rule.interval);
  for (; ; p += rule.interval) {
    const first = periodStart(rule, (p = skipExcludedWeeks(rule, p)));
    if (first > limit) return;
    const shape = shapeOf(rule, p, first);
    for (let k = 0; k < shape.length; k++) {
      const day = first + shape[k]!;
      if (day < fromDay) continue;
      if (day > limit || !visit(day)) return;
    }
  }
}
