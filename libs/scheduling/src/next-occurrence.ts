import { DAY_MS, daysFromCivil, floorDiv, formatDate, formatLocalIso, MINUTE_MS, parseLocalDate, parseLocalTime } from './calendar.js';
import { Lru } from './lru.js';
import { ok, unwrap, type Result } from './result.js';
import { dayRuleFor, forEachMatchingDay, matchesDay, nextMatchingDay, type DayRule } from './rule-days.js';
import { parseRecurrenceCached } from './rrule-subset.js';
import { isMissingLocalDay, localToInstant, missingLocalDays, offsetAt, validateTimeZone } from './time-zone.js';

export interface Schedule {
  /** Wall-clock time of day, HH:mm. */
  localTime: string;
  /** IANA region name, e.g. America/New_York. */
  timeZone: string;
  /** RRULE value without DTSTART, e.g. FREQ=WEEKLY;BYDAY=MO,WE. */
  recurrence: string;
  /** First local date the rule may match, YYYY-MM-DD. */
  startDate: string;
}

export interface Occurrence {
  /** The UTC instant it runs at. */
  at: Date;
  /** The nominal local date (YYYY-MM-DD), even when a DST gap moved the time. */
  localDate: string;
  /** The instant in the zone, ISO-8601 with its actual offset, e.g. 2026-03-08T03:30:00.000-04:00. */
  local: string;
}

// Everything about a schedule that does not depend on `after`.
interface Plan {
  zone: string; // canonical
  timeMs: number; // localTime as ms after local midnight
  startDay: number;
  rule: DayRule;
  untilDay: number; // UNTIL as a local date; Infinity if none
  untilFloating: number; // UNTIL as a local wall-clock time; Infinity if none
  untilInstant: number; // UNTIL as a UTC instant; Infinity if none
  count: CountState | null;
}

// COUNT counts occurrences, i.e. the matching local dates from startDate that
// exist in the zone (a date a date-line move skipped is no occurrence and
// uses no slot). It is resolved lazily and memoised here: matches are counted
// from startDate only as far as a query needs, so a rule from 1900 asked
// about 2026 never counts beyond its COUNT (at most 10,000 matches), and a
// check near startDate counts a handful.
interface CountState {
  readonly limit: number;
  countedTo: number; // every occurrence in [startDay, countedTo] is counted…
  counted: number; // …and there are this many (fewer than limit)
  lastDay: number | null; // the limit-th occurrence's date, once reached
}

function compile(schedule: Schedule): Result<Plan> {
  const errors: string[] = [];
  const field = <T>(name: string, result: Result<T>): T | undefined => {
    if (result.ok) return result.value;
    errors.push(...result.errors.map((e) => `${name}: ${e}`));
    return undefined;
  };
  const time = field('localTime', parseLocalTime(schedule?.localTime));
  const zone = field('timeZone', validateTimeZone(schedule?.timeZone));
  const recurrence = field('recurrence', parseRecurrenceCached(schedule?.recurrence));
  const start = field('startDate', parseLocalDate(schedule?.startDate));
  if (!time || !zone || !recurrence || !start) return { ok: false, errors };

  const startDay = daysFromCivil(start.year, start.month, start.day);
  const rule = dayRuleFor(recurrence, startDay);
  // Bounded (one 400-year calendar cycle, a few ms at most), so this also
  // catches rules like FREQ=MONTHLY;BYDAY=1MO;BYMONTHDAY=20 that parse but
  // can never fire.
  if (nextMatchingDay(rule, startDay) === null) {
    return { ok: false, errors: ['recurrence: the rule never matches on or after startDate'] };
  }
  const until = recurrence.until;
  const count = recurrence.count;
  return {
    ok: true,
    value: {
      zone,
      timeMs: (time.hour * 60 + time.minute) * MINUTE_MS,
      startDay,
      rule,
      untilDay: until?.kind === 'date' ? until.days : Infinity,
      untilFloating: until?.kind === 'floating' ? until.ms : Infinity,
      untilInstant: until?.kind === 'instant' ? until.ms : Infinity,
      count: count === undefined ? null : { limit: count, countedTo: startDay - 1, counted: 0, lastDay: null },
    },
  };
}

// Counting walks this many days of skipped-date lookups at a time, so that a
// count that stops early does not look far ahead.
const SKIP_WINDOW_DAYS = 4096;

/** Whether `day`, a matching date that exists in the zone, is within COUNT. */
function withinCount(plan: Plan, day: number): boolean {
  const state = plan.count;
  if (!state) return true;
  if (state.lastDay !== null) return day <= state.lastDay;
  if (day <= state.countedTo) return true;
  let windowEnd = state.countedTo;
  let missing: number[] = [];
  let next = 0;
  forEachMatchingDay(plan.rule, state.countedTo + 1, day, (match) => {
    if (match > windowEnd) {
      windowEnd = Math.min(match + SKIP_WINDOW_DAYS, day);
      missing = missingLocalDays(plan.zone, match, windowEnd);
      next = 0;
    }
    while (next < missing.length && missing[next]! < match) next++;
    if (missing[next] === match) return true;
    if (++state.counted === state.limit) state.lastDay = match;
    return state.lastDay === null;
  });
  if (state.lastDay !== null) return day <= state.lastDay;
  state.countedTo = day;
  return true;
}

/** The last date the rule may produce, as far as UNTIL (date) and an already resolved COUNT tell. */
const lastKnownDay = (plan: Plan): number => Math.min(plan.untilDay, plan.count?.lastDay ?? Infinity);

const plans = new Lru<string, Plan>(10_000);
const planKey = (s: Schedule) => `${s.recurrence}\n${s.startDate}\n${s.localTime}\n${s.timeZone}`;

/** Checks every field of a schedule, reporting all problems at once (messages fit an HTTP 400). */
export function validateSchedule(schedule: Schedule): Result<Schedule> {
  if (typeof schedule === 'object' && schedule !== null && plans.get(planKey(schedule))) return ok(schedule);
  const plan = compile(schedule);
  return plan.ok ? ok(schedule) : plan;
}

function planFor(schedule: Schedule): Plan {
  const key = planKey(schedule);
  return plans.get(key) ?? plans.set(key, unwrap(compile(schedule)));
}

/**
 * The first occurrence strictly after `after`, or null once the rule is
 * exhausted. Occurrences are the local dates the rule matches on or after
 * startDate (startDate itself only if it matches), at localTime in the zone;
 * a time in a DST gap runs shifted forward by the gap, a time in an overlap
 * runs at its first instant, and a date the zone skipped entirely (a
 * date-line move) has no occurrence and does not count toward COUNT.
 * Throws SchedulingError for an invalid schedule.
 */
export function nextOccurrence(schedule: Schedule, after: Date): Occurrence | null {
  const afterMs = after.getTime();
  if (Number.isNaN(afterMs)) throw new RangeError('nextOccurrence: `after` is an invalid Date');
  const plan = planFor(schedule);
  const { zone } = plan;
  // Start two local days back: anything earlier ran before `after` even if a
  // gap pushed it forward (gaps are shorter than a day).
  const afterLocalDay = floorDiv(afterMs + offsetAt(zone, afterMs), DAY_MS);
  let from = Math.max(plan.startDay, afterLocalDay - 2);
  for (;;) {
    const day = nextMatchingDay(plan.rule, from, lastKnownDay(plan));
    if (day === null) return null;
    from = day + 1;
    if (isMissingLocalDay(zone, day)) continue;
    if (!withinCount(plan, day)) return null;
    const floating = day * DAY_MS + plan.timeMs;
    if (floating > plan.untilFloating) return null;
    const at = localToInstant(zone, floating);
    if (at > plan.untilInstant) return null;
    if (at > afterMs) {
      return { at: new Date(at), localDate: formatDate(day), local: formatLocalIso(at, offsetAt(zone, at)) };
    }
  }
}

/** Up to `count` consecutive occurrences strictly after `after` (fewer if the rule runs out). */
export function occurrences(schedule: Schedule, after: Date, count: number): Occurrence[] {
  const out: Occurrence[] = [];
  let cursor = after;
  while (out.length < count) {
    const next = nextOccurrence(schedule, cursor);
    if (!next) break;
    out.push(next);
    cursor = next.at;
  }
  return out;
}

/**
 * True iff the schedule has an occurrence on `localDate` (YYYY-MM-DD): on or
 * after startDate, matched by the rule, a date that exists in the zone,
 * within COUNT and UNTIL. False for a string that is not a real date. Costs
 * about one nextOccurrence. Throws SchedulingError for an invalid schedule.
 */
export function isLocalDateOf(schedule: Schedule, localDate: string): boolean {
  const plan = planFor(schedule);
  const parsed = parseLocalDate(localDate);
  if (!parsed.ok) return false;
  const { year, month, day: dom } = parsed.value;
  const day = daysFromCivil(year, month, dom);
  if (day < plan.startDay || day > plan.untilDay || !matchesDay(plan.rule, day)) return false;
  if (isMissingLocalDay(plan.zone, day) || !withinCount(plan, day)) return false;
  const floating = day * DAY_MS + plan.timeMs;
  return floating <= plan.untilFloating && localToInstant(plan.zone, floating) <= plan.untilInstant;
}
