// nextOccurrence per second on one core (this child process), for daily,
// weekday, monthly and yearly rules across zones, for rules whose startDate is
// today and five years ago. 1,000 distinct schedules per age (all fit the
// compiled-plan cache, as a worker's active reminders would after warm-up),
// each asked for its next occurrence after instants spread over a year.
import { DateTime } from 'luxon';
import { nextOccurrence, type Schedule } from '../../libs/scheduling/src/index.js';
import { childConfig, reportAndExit } from '../support/child.js';

export interface SchedulingConfig {
  /** Measured calls per age per round. */
  calls: number;
  rounds: number;
}

export interface SchedulingResult {
  /** Calls per second, one value per round, per age. */
  new: number[];
  old: number[];
  byRule: Record<string, { new: number; old: number }>;
}

export const RULES = {
  daily: 'FREQ=DAILY',
  weekday: 'FREQ=WEEKLY;BYDAY=MO,TU,WE,TH,FR',
  monthly: 'FREQ=MONTHLY;BYMONTHDAY=15',
  yearly: 'FREQ=YEARLY;BYMONTH=3;BYMONTHDAY=10',
} as const;

const ZONES = [
  'UTC',
  'Europe/London',
  'Europe/Berlin',
  'Europe/Moscow',
  'Africa/Cairo',
  'Asia/Dubai',
  'Asia/Tehran',
  'Asia/Kolkata',
  'Asia/Kathmandu',
  'Asia/Shanghai',
  'Asia/Tokyo',
  'Australia/Adelaide',
  'Australia/Sydney',
  'Pacific/Auckland',
  'Pacific/Chatham',
  'Pacific/Honolulu',
  'America/Anchorage',
  'America/Los_Angeles',
  'America/Denver',
  'America/Chicago',
  'America/New_York',
  'America/Sao_Paulo',
  'America/St_Johns',
  'America/Santiago',
  'Atlantic/Azores',
];

const config = childConfig<SchedulingConfig>();
const now = DateTime.utc();
const today = now.toISODate()!;
const fiveYearsAgo = now.minus({ years: 5 }).toISODate()!;

function schedules(startDate: string, rule: string): Schedule[] {
  const out: Schedule[] = [];
  for (const timeZone of ZONES) {
    for (let i = 0; i < 10; i++) {
      const localTime = `${String(6 + i).padStart(2, '0')}:${i % 2 ? '30' : '00'}`;
      out.push({ timeZone, localTime, recurrence: rule, startDate });
    }
  }
  return out;
}

// `after` instants over the coming year, the same for both ages.
const afters = Array.from({ length: 997 }, (_, i) => new Date(now.toMillis() + Math.floor((i * 365 * 86_400_000) / 997)));

let sink = 0;
function measure(list: Schedule[], calls: number): number {
  const t0 = performance.now();
  for (let i = 0; i < calls; i++) {
    const o = nextOccurrence(list[i % list.length]!, afters[i % afters.length]!);
    if (o) sink += o.at.getTime() & 1;
  }
  return calls / ((performance.now() - t0) / 1000);
}

const ages = { new: today, old: fiveYearsAgo } as const;
const byAge = {
  new: Object.values(RULES).flatMap((rule) => schedules(ages.new, rule)),
  old: Object.values(RULES).flatMap((rule) => schedules(ages.old, rule)),
};
// Warm-up: compile every plan and let the JIT settle.
for (const list of Object.values(byAge)) measure(list, 50_000);

const result: SchedulingResult = { new: [], old: [], byRule: {} };
for (let round = 0; round < config.rounds; round++) {
  // Interleaved: new, old, new, old …
  result.new.push(measure(byAge.new, config.calls));
  result.old.push(measure(byAge.old, config.calls));
}
for (const [name, rule] of Object.entries(RULES)) {
  const fresh = schedules(ages.new, rule);
  const aged = schedules(ages.old, rule);
  measure(fresh, 20_000);
  measure(aged, 20_000);
  result.byRule[name] = { new: measure(fresh, config.calls / 4), old: measure(aged, config.calls / 4) };
}
if (sink < 0) console.log(sink);
reportAndExit(result);
