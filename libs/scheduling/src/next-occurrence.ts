import {
  DAY_MS,
  daysFromCivil,
  floorDiv,
  formatDate,
  formatLocalIso,
  MINUTE_MS,
  parseLocalDate,
  parseLocalTime,
} from './calendar.js';
import { Lru } from './lru.js';
import { ok, unwrap, type Result } from './result.js';
import { countthMatchingDay, dayRuleFor, nextMatchingDay, type DayRule } from './rule-days.js';
import { parseRecurrenceCached } from './rrule-subset.js';
import { localToInstant, offsetAt, validateTimeZone } from './time-zone.js';

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
  zone: string;
  timeMs: number; // localTime as ms after local midnight
  startDay: number;
  rule: DayRule;
  lastDay: number; // from UNTIL (date) or COUNT; Infinity if neither
  untilFloating: number; // UNTIL as a local wall-clock time; Infinity if none
  untilInstant: number; // UNTIL as a UTC instant; Infinity if none
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
  // Bounded (one 400-year calendar cycle), so this also catches rules like
  // FREQ=MONTHLY;BYDAY=1MO;BYMONTHDAY=20 that parse but can never fire.
  if (nextMatchingDay(rule, startDay) === null) {
    return { ok: false, errors: ['recurrence: the rule never matches on or after startDate'] };
  }
  const until = recurrence.until;
  let lastDay = until?.kind === 'date' ? until.days : Infinity;
  if (recurrence.count !== undefined) {
    // COUNT counts matching local dates from startDate (the first is #1).
    // Turning it into a last date once lets every later call start near
    // `after` instead of counting from the start again.
    lastDay = countthMatchingDay(rule, startDay, recurrence.count)!;
  }
  return {
    ok: true,
    value: {
      zone,
      timeMs: (time.hour * 60 + time.minute) * MINUTE_MS,
      startDay,
      rule,
      lastDay,
      untilFloating: until?.kind === 'floating' ? until.ms : Infinity,
      untilInstant: until?.kind === 'instant' ? until.ms : Infinity,
    },
  };
}

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
 * runs at its first instant. Throws SchedulingError for an invalid schedule.
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
    const day = nextMatchingDay(plan.rule, from, plan.lastDay);
    if (day === null) return null;
    const floating = day * DAY_MS + plan.timeMs;
    if (floating > plan.untilFloating) return null;
    const at = localToInstant(zone, floating);
    if (at > plan.untilInstant) return null;
    if (at > afterMs) {
      return { at: new Date(at), localDate: formatDate(day), local: formatLocalIso(at, offsetAt(zone, at)) };
    }
    from = day + 1;
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
