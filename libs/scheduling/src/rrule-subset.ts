import { daysFromCivil, daysInMonth, DAY_MS } from './calendar.js';
import { Lru } from './lru.js';
import { fail, ok, type Result } from './result.js';

// The part of RFC 5545 RRULE a reminder needs. The time of day comes from
// the schedule's localTime and the start from its startDate, so DTSTART and
// BYHOUR/BYMINUTE/BYSECOND are refused rather than half-honoured.

export type Frequency = 'DAILY' | 'WEEKLY' | 'MONTHLY' | 'YEARLY';

export interface WeekdaySpec {
  weekday: number; // MO = 0 … SU = 6
  n?: number; // +1MO / -1FR: the nth such weekday of the month (or year)
}

export type Until =
  | { kind: 'date'; days: number } // YYYYMMDD: through that local date
  | { kind: 'instant'; ms: number } // YYYYMMDDTHHMMSSZ: an instant (UTC)
  | { kind: 'floating'; ms: number }; // YYYYMMDDTHHMMSS: a local wall-clock time

export interface Recurrence {
  freq: Frequency;
  interval: number;
  byDay: WeekdaySpec[];
  byMonthDay: number[];
  byMonth: number[];
  bySetPos: number[];
  wkst: number;
  count?: number;
  until?: Until;
}

export const WEEKDAYS = ['MO', 'TU', 'WE', 'TH', 'FR', 'SA', 'SU'] as const;
export const MAX_INTERVAL = 1000;
export const MAX_COUNT = 10_000;

const FREQS: readonly string[] = ['DAILY', 'WEEKLY', 'MONTHLY', 'YEARLY'];
const UNSUPPORTED: Record<string, string> = {
  DTSTART: 'DTSTART is not allowed in the rule; the start comes from startDate and localTime',
  BYHOUR: 'BYHOUR is not supported; the time of day comes from localTime',
  BYMINUTE: 'BYMINUTE is not supported; the time of day comes from localTime',
  BYSECOND: 'BYSECOND is not supported; the time of day comes from localTime',
  BYWEEKNO: 'BYWEEKNO is not supported',
  BYYEARDAY: 'BYYEARDAY is not supported',
  BYEASTER: 'BYEASTER is not supported',
  RSCALE: 'RSCALE is not supported',
  SKIP: 'SKIP is not supported',
};
const INTEGER = /^[+-]?\d{1,6}$/;
const BYDAY_ITEM = /^([+-]?\d{1,2})?(MO|TU|WE|TH|FR|SA|SU)$/;
const UNTIL_VALUE = /^(\d{4})(\d{2})(\d{2})(?:T(\d{2})(\d{2})(\d{2})(Z?))?$/;

function intList(key: string, raw: string, min: number, max: number, nonZero: boolean, errors: string[]): number[] {
  const out = new Set<number>();
  for (const item of raw.split(',')) {
    const n = Number(item);
    if (!INTEGER.test(item) || n < min || n > max || (nonZero && n === 0)) {
      const range = nonZero ? `±${min === -max ? max : `${min}..${max}`} (not 0)` : `${min}..${max}`;
      errors.push(`${key}: "${item}" must be an integer in ${range}`);
    } else {
      out.add(n);
    }
  }
  return [...out].sort((a, b) => a - b);
}

function positiveInt(key: string, raw: string, max: number, errors: string[]): number | undefined {
  const n = Number(raw);
  if (!/^\d{1,6}$/.test(raw) || n < 1 || n > max) {
    errors.push(`${key}: "${raw}" must be an integer from 1 to ${max}`);
    return undefined;
  }
  return n;
}

function parseUntil(raw: string, errors: string[]): Until | undefined {
  const m = UNTIL_VALUE.exec(raw);
  const bad = () => {
    errors.push(`UNTIL: "${raw}" must be a date YYYYMMDD or a UTC date-time YYYYMMDDTHHMMSSZ`);
    return undefined;
  };
  if (!m) return bad();
  const [y, mo, d] = [Number(m[1]), Number(m[2]), Number(m[3])];
  if (y < 1900 || mo < 1 || mo > 12 || d < 1 || d > daysInMonth(y, mo)) return bad();
  const days = daysFromCivil(y, mo, d);
  if (m[4] === undefined) return { kind: 'date', days };
  const [h, mi, s] = [Number(m[4]), Number(m[5]), Number(m[6])];
  if (h > 23 || mi > 59 || s > 59) return bad();
  const ms = days * DAY_MS + ((h * 60 + mi) * 60 + s) * 1000;
  return m[7] === 'Z' ? { kind: 'instant', ms } : { kind: 'floating', ms };
}

/**
 * Parses and validates an RRULE value (no DTSTART), e.g.
 * `FREQ=WEEKLY;BYDAY=MO,WE` or `FREQ=MONTHLY;BYDAY=-1FR;COUNT=6`.
 * Keys and values are case-insensitive; an optional `RRULE:` prefix is allowed.
 */
export function parseRecurrence(rule: string): Result<Recurrence> {
  if (typeof rule !== 'string' || rule.trim() === '') return fail('recurrence rule is required');
  const text = rule
    .trim()
    .toUpperCase()
    .replace(/^RRULE:/, '');
  if (text.length > 500) return fail('recurrence rule is too long (500 characters at most)');
  const errors: string[] = [];
  const parts = new Map<string, string>();
  const segments = text.split(';');
  if (segments[segments.length - 1] === '') segments.pop(); // tolerate one trailing ';'
  for (const segment of segments) {
    const eq = segment.indexOf('=');
    const key = eq < 0 ? segment : segment.slice(0, eq);
    const value = eq < 0 ? '' : segment.slice(eq + 1);
    if (eq <= 0 || value === '') errors.push(`"${segment}" is not a KEY=VALUE rule part`);
    else if (UNSUPPORTED[key]) errors.push(UNSUPPORTED[key]);
    else if (!['FREQ', 'INTERVAL', 'BYDAY', 'BYMONTHDAY', 'BYMONTH', 'BYSETPOS', 'COUNT', 'UNTIL', 'WKST'].includes(key)) {
      errors.push(`unknown rule part "${key}"`);
    } else if (parts.has(key)) errors.push(`${key} is given more than once`);
    else parts.set(key, value);
  }

  const freqRaw = parts.get('FREQ');
  let freq: Frequency | undefined;
  if (freqRaw === undefined) errors.push('FREQ is required (DAILY, WEEKLY, MONTHLY or YEARLY)');
  else if (FREQS.includes(freqRaw)) freq = freqRaw as Frequency;
  else errors.push(`FREQ=${freqRaw} is not supported; use DAILY, WEEKLY, MONTHLY or YEARLY`);

  const raw = (key: string) => parts.get(key);
  const interval = raw('INTERVAL') === undefined ? 1 : positiveInt('INTERVAL', raw('INTERVAL')!, MAX_INTERVAL, errors);
  const count = raw('COUNT') === undefined ? undefined : positiveInt('COUNT', raw('COUNT')!, MAX_COUNT, errors);
  const until = raw('UNTIL') === undefined ? undefined : parseUntil(raw('UNTIL')!, errors);
  if (raw('COUNT') !== undefined && raw('UNTIL') !== undefined) errors.push('COUNT and UNTIL cannot both be given');

  let wkst = 0;
  const wkstRaw = raw('WKST');
  if (wkstRaw !== undefined) {
    wkst = (WEEKDAYS as readonly string[]).indexOf(wkstRaw);
    if (wkst < 0) errors.push(`WKST: "${wkstRaw}" must be one of ${WEEKDAYS.join(', ')}`);
  }

  const byMonth = raw('BYMONTH') === undefined ? [] : intList('BYMONTH', raw('BYMONTH')!, 1, 12, false, errors);
  const byMonthDay = raw('BYMONTHDAY') === undefined ? [] : intList('BYMONTHDAY', raw('BYMONTHDAY')!, -31, 31, true, errors);
  const bySetPos = raw('BYSETPOS') === undefined ? [] : intList('BYSETPOS', raw('BYSETPOS')!, -366, 366, true, errors);

  const byDay: WeekdaySpec[] = [];
  const seenDays = new Set<string>();
  for (const item of raw('BYDAY')?.split(',') ?? []) {
    const m = BYDAY_ITEM.exec(item);
    if (!m) {
      errors.push(`BYDAY: "${item}" must be a weekday (MO … SU), optionally with an ordinal such as 1MO or -1FR`);
      continue;
    }
    const weekday = (WEEKDAYS as readonly string[]).indexOf(m[2]!);
    const n = m[1] === undefined ? undefined : Number(m[1]);
    if (n !== undefined) {
      // The nth weekday exists only within a month (1..5) or a year (1..53).
      const max = freq === 'YEARLY' && byMonth.length === 0 ? 53 : 5;
      if (freq === 'DAILY' || freq === 'WEEKLY') {
        errors.push(`BYDAY: "${item}": an ordinal weekday is only allowed with FREQ=MONTHLY or FREQ=YEARLY`);
        continue;
      }
      if (n === 0 || Math.abs(n) > max) {
        errors.push(`BYDAY: "${item}": the ordinal must be ±1..${max}`);
        continue;
      }
    }
    const id = `${n ?? ''}${weekday}`;
    if (!seenDays.has(id)) byDay.push(n === undefined ? { weekday } : { weekday, n });
    seenDays.add(id);
  }

  if (byDay.some((d) => d.n !== undefined) && byDay.some((d) => d.n === undefined)) {
    // rrule would intersect the two kinds (a day must be both), RFC 5545
    // readers often expect a union: refuse rather than guess.
    errors.push('BYDAY cannot mix plain weekdays (MO) with ordinal ones (1MO, -1FR)');
  }
  if (freq === 'WEEKLY' && byMonthDay.length > 0) errors.push('BYMONTHDAY cannot be used with FREQ=WEEKLY');
  if (bySetPos.length > 0) {
    if (freq === 'DAILY') errors.push('BYSETPOS cannot be used with FREQ=DAILY');
    else if (byDay.length + byMonthDay.length + byMonth.length === 0) {
      errors.push('BYSETPOS needs another BY rule part (BYDAY, BYMONTHDAY or BYMONTH)');
    } else if (freq === 'WEEKLY' && bySetPos.every((p) => Math.abs(p) > Math.max(byDay.length, 1))) {
      errors.push('BYSETPOS selects a position the weekly set never has, so the rule never matches');
    }
  }
  // Catch the obvious never-matching rules (BYMONTH=2;BYMONTHDAY=30) up front.
  if (byMonthDay.length > 0 && byMonth.length > 0) {
    const possible = byMonth.some((mo) => byMonthDay.some((d) => Math.abs(d) <= daysInMonth(2000, mo)));
    if (!possible) errors.push('BYMONTHDAY never falls in the BYMONTH months, so the rule never matches');
  }

  if (errors.length > 0 || freq === undefined || interval === undefined) return { ok: false, errors };
  const value: Recurrence = { freq, interval, byDay, byMonthDay, byMonth, bySetPos, wkst };
  if (count !== undefined) value.count = count;
  if (until !== undefined) value.until = until;
  return ok(value);
}

const parsed = new Lru<string, Result<Recurrence>>(1000);

/** parseRecurrence memoised by rule text (results are treated as immutable). */
export function parseRecurrenceCached(rule: string): Result<Recurrence> {
  return parsed.get(rule) ?? parsed.set(rule, parseRecurrence(rule));
}
