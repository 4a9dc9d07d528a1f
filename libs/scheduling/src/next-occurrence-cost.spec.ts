import { beforeAll, describe, expect, it } from 'vitest';
import { isLocalDateOf, nextOccurrence, occurrences, validateSchedule, type Schedule } from './next-occurrence.js';

// No single call may cost more than a few ms, whatever rule the parser
// accepts: a rule is stored once and then asked about on every push, and a
// request must not be able to buy a second of CPU with one RRULE. The rules
// below are the worst found: sparse rules searched to the year 9999, COUNT
// resolved from 1900, rules that never match. Each call is allowed 50 ms
// (the real figures are a few ms, but test machines are shared and noisy);
// before this bound existed some of them took over a second.
// SCHEDULING_COSTS=1 prints the measured costs.
const BOUND_MS = 50;
const DAY = 86_400_000;

/** The smaller of CPU and wall time: CPU counts GC threads, wall counts preemption. */
function costOf<T>(f: () => T): [ms: number, value: T] {
  const cpu = process.cpuUsage();
  const wall = performance.now();
  const value = f();
  const cpuMs = (process.cpuUsage().user - cpu.user + process.cpuUsage().system - cpu.system) / 1000;
  return [Math.min(cpuMs, performance.now() - wall), value];
}

const iso = (ms: number) => new Date(ms).toISOString().slice(0, 10);
const isLeap = (y: number) => (y % 4 === 0 && y % 100 !== 0) || y % 400 === 0;
/** 29 February on a Monday, from `fromYear` on (an independent model). */
const leapMondays = (fromYear: number): string[] => {
  const out: string[] = [];
  for (let y = fromYear; y <= 9999; y++) if (isLeap(y) && new Date(Date.UTC(y, 1, 29)).getUTCDay() === 1) out.push(`${y}-02-29`);
  return out;
};

interface Case {
  name: string;
  recurrence: string;
  startDate: string;
  timeZone?: string;
  check: (s: Schedule) => void;
}

const cases: Case[] = [
  {
    name: 'the brief example: 29 February on a Monday, COUNT=10000 (~285 exist before 9999)',
    recurrence: 'FREQ=DAILY;BYMONTH=2;BYMONTHDAY=29;BYDAY=MO;COUNT=10000',
    startDate: '2026-01-01',
    check: (s) => {
      const model = leapMondays(2026);
      expect(model.slice(0, 3)).toEqual(['2044-02-29', '2072-02-29', '2112-02-29']);
      expect(occurrences(s, new Date('2026-01-01'), 100).map((o) => o.localDate)).toEqual(model.slice(0, 100));
      expect(nextOccurrence(s, new Date('9000-01-01'))?.localDate).toBe(model.find((d) => d >= '9000'));
      expect(nextOccurrence(s, new Date(`${model.at(-1)}T12:00:00Z`))).toBeNull();
    },
  },
  ...(['DAILY', 'MONTHLY', 'YEARLY'] as const).map((freq): Case => ({
    name: `29 February on a Monday, ${freq}, from 1900 with COUNT`,
    recurrence: `FREQ=${freq};BYMONTH=2;BYMONTHDAY=29;BYDAY=MO;COUNT=10000`,
    startDate: '1900-01-01',
    check: (s) => {
      const model = leapMondays(1900);
      expect(occurrences(s, new Date('1899-01-01'), 100).map((o) => o.localDate)).toEqual(model.slice(0, 100));
      expect(nextOccurrence(s, new Date('2026-06-01'))?.localDate).toBe('2044-02-29');
      expect(isLocalDateOf(s, '2044-02-29')).toBe(true);
      expect(isLocalDateOf(s, '2040-02-29')).toBe(false); // a Wednesday
    },
  })),
  {
    name: 'one date in 8,000 years (INTERVAL=997 meets 29 February once)',
    recurrence: 'FREQ=DAILY;INTERVAL=997;BYMONTH=2;BYMONTHDAY=29',
    startDate: '1900-01-01',
    check: (s) => {
      const model: string[] = [];
      for (let t = Date.UTC(1900, 0, 1); t <= Date.UTC(9999, 11, 31); t += 997 * DAY) if (iso(t).endsWith('-02-29')) model.push(iso(t));
      expect(model).toEqual(['8028-02-29']);
      expect(occurrences(s, new Date('1899-01-01'), 100).map((o) => o.localDate)).toEqual(model);
      expect(isLocalDateOf(s, '8028-02-29')).toBe(true);
    },
  },
  {
    name: 'DAILY COUNT=10000 from 1900, asked about today',
    recurrence: 'FREQ=DAILY;COUNT=10000',
    startDate: '1900-01-01',
    check: (s) => {
      const last = iso(Date.UTC(1900, 0, 1) + 9999 * DAY);
      expect(nextOccurrence(s, new Date('2026-06-01'))).toBeNull();
      expect(nextOccurrence(s, new Date(`${last}T00:00:00Z`))?.localDate).toBe(last);
      expect(isLocalDateOf(s, last)).toBe(true);
      expect(isLocalDateOf(s, iso(Date.parse(last) + DAY))).toBe(false);
    },
  },
  {
    name: 'YEARLY COUNT=10000 from 1900 (fewer than 10,000 years left)',
    recurrence: 'FREQ=YEARLY;COUNT=10000',
    startDate: '1900-01-01',
    check: (s) => {
      expect(nextOccurrence(s, new Date('9000-01-01'))?.localDate).toBe('9000-01-01');
      expect(occurrences(s, new Date('1899-01-01'), 100).map((o) => o.localDate)).toEqual(
        Array.from({ length: 100 }, (_, i) => `${1900 + i}-01-01`),
      );
    },
  },
  {
    name: 'WEEKLY BYSETPOS, COUNT=10000 from 1900',
    recurrence: 'FREQ=WEEKLY;BYDAY=MO,TU,WE,TH,FR,SA,SU;BYSETPOS=1;COUNT=10000',
    startDate: '1900-01-01', // a Monday
    check: (s) => {
      const last = iso(Date.UTC(1900, 0, 1) + 9999 * 7 * DAY);
      expect(nextOccurrence(s, new Date('2026-06-02'))?.localDate).toBe('2026-06-08');
      expect(isLocalDateOf(s, last)).toBe(true);
      expect(isLocalDateOf(s, iso(Date.parse(last) + 7 * DAY))).toBe(false);
      expect(nextOccurrence(s, new Date('9000-01-01'))).toBeNull();
    },
  },
  {
    name: 'WEEKLY BYMONTH=2 BYSETPOS=7 (the Sunday ending each full February week), COUNT=10000 from 1900',
    recurrence: 'FREQ=WEEKLY;BYMONTH=2;BYDAY=MO,TU,WE,TH,FR,SA,SU;BYSETPOS=7;COUNT=10000',
    startDate: '1900-01-01',
    check: (s) => {
      // Model: Sundays in February at least 7 days into it.
      const model: string[] = [];
      for (let y = 1900; model.length <= 10_000; y++) {
        for (let d = 7; d <= (isLeap(y) ? 29 : 28); d++)
          if (new Date(Date.UTC(y, 1, d)).getUTCDay() === 0) model.push(iso(Date.UTC(y, 1, d)));
      }
      expect(occurrences(s, new Date('2026-01-01'), 3).map((o) => o.localDate)).toEqual(['2026-02-08', '2026-02-15', '2026-02-22']);
      expect(isLocalDateOf(s, model[9_999]!)).toBe(true);
      expect(isLocalDateOf(s, model[10_000]!)).toBe(false);
      expect(nextOccurrence(s, new Date('9000-01-01'))).toBeNull();
    },
  },
  {
    name: 'YEARLY BYSETPOS=366 (31 December of leap years), COUNT=10000 from 1900',
    recurrence: 'FREQ=YEARLY;BYDAY=MO,TU,WE,TH,FR,SA,SU;BYSETPOS=366;COUNT=10000',
    startDate: '1900-01-01',
    check: (s) => {
      expect(nextOccurrence(s, new Date('2026-06-01'))?.localDate).toBe('2028-12-31');
      expect(nextOccurrence(s, new Date('9000-01-01'))?.localDate).toBe('9004-12-31');
    },
  },
  {
    name: 'COUNT across a skipped date (Samoa, 2011-12-30), from 1990',
    recurrence: 'FREQ=DAILY;COUNT=10000',
    startDate: '1990-01-01',
    timeZone: 'Pacific/Apia',
    check: (s) => {
      // 10,000 days from 1990-01-01 end on 2017-05-18, but one of them never happened there.
      expect(iso(Date.UTC(1990, 0, 1) + 9999 * DAY)).toBe('2017-05-18');
      expect(isLocalDateOf(s, '2017-05-19')).toBe(true);
      expect(isLocalDateOf(s, '2017-05-20')).toBe(false);
      expect(nextOccurrence(s, new Date('2026-06-01'))).toBeNull();
    },
  },
];

const neverMatching: [string, string][] = [
  ['FREQ=DAILY;INTERVAL=7;BYDAY=TU', '2025-01-01'], // every 7th day is a Wednesday
  ['FREQ=DAILY;INTERVAL=1000;BYMONTH=2;BYMONTHDAY=29;BYDAY=MO', '1900-01-01'],
  ['FREQ=DAILY;INTERVAL=999;BYMONTH=2;BYMONTHDAY=29;BYDAY=SU', '1900-01-01'],
  ['FREQ=MONTHLY;BYDAY=1MO;BYMONTHDAY=20', '1900-01-01'],
  ['FREQ=YEARLY;INTERVAL=4;BYDAY=MO,TU,WE,TH,FR,SA,SU;BYSETPOS=366', '2025-01-01'], // never a leap year
  ['FREQ=YEARLY;INTERVAL=997;BYMONTH=2;BYMONTHDAY=29;BYDAY=MO', '1900-01-01'],
];

describe('the cost of one call is bounded', () => {
  const at = (recurrence: string, startDate: string, timeZone = 'Europe/Berlin', localTime = '08:00'): Schedule => ({
    localTime,
    timeZone,
    recurrence,
    startDate,
  });

  beforeAll(() => {
    // Compile the code paths (and load ICU's zone data) on other schedules,
    // so that what is measured is the rule, not the process's first call.
    for (const c of cases) {
      const s = at(c.recurrence, c.startDate, 'Asia/Tokyo', '07:15');
      validateSchedule(s);
      occurrences(s, new Date('1899-01-01'), 100);
      nextOccurrence(s, new Date('9000-01-01'));
      isLocalDateOf(s, '2044-02-29');
    }
    for (const [rule, start] of neverMatching) validateSchedule(at(rule, start, 'Asia/Tokyo', '07:15'));
    occurrences(at('FREQ=DAILY', '2026-01-01'), new Date('2026-01-01'), 10);
  });

  it.each(cases.map((c) => [c.name, c] as const))('%s', (_name, c) => {
    // Three copies of the schedule (each its own cached plan, with its own
    // instants): each call is measured on all three and the cheapest counts,
    // so that one GC pause or a busy neighbour does not fail the test.
    const copies = ['08:00', '08:20', '08:40'].map((time) => at(c.recurrence, c.startDate, c.timeZone, time));
    const costs: Record<string, number> = {};
    const measure = <T>(label: string, f: (s: Schedule) => T): T[] => {
      const runs = copies.map((s) => costOf(() => f(s)));
      costs[label] = Math.round(Math.min(...runs.map(([ms]) => ms)) * 10) / 10;
      return runs.map(([, value]) => value);
    };
    for (const result of measure('validateSchedule', (s) => validateSchedule(s))) expect(result.ok).toBe(true);
    measure('nextOccurrence 2026', (s) => nextOccurrence(s, new Date('2026-06-01')));
    measure('nextOccurrence 9000', (s) => nextOccurrence(s, new Date('9000-01-01')));
    measure('nextOccurrence 9999', (s) => nextOccurrence(s, new Date('9999-12-01')));
    measure('occurrences 100 from 1899', (s) => occurrences(s, new Date('1899-01-01'), 100));
    measure('occurrences 100 from 2026', (s) => occurrences(s, new Date('2026-01-01'), 100));
    measure('isLocalDateOf', (s) => isLocalDateOf(s, '2044-02-29'));
    measure('isLocalDateOf 9999', (s) => isLocalDateOf(s, '9999-12-31'));
    if (process.env.SCHEDULING_COSTS) console.log(c.name, JSON.stringify(costs));
    for (const [label, ms] of Object.entries(costs)) expect(ms, `${label} (all: ${JSON.stringify(costs)})`).toBeLessThan(BOUND_MS);
    for (const s of copies) c.check(s);
  });

  it.each(neverMatching)('refuses %s from %s quickly', (rule, start) => {
    const runs = ['08:00', '08:20', '08:40'].map((time) => costOf(() => validateSchedule(at(rule, start, 'Europe/Berlin', time))));
    for (const [, result] of runs)
      expect(result).toEqual({ ok: false, errors: ['recurrence: the rule never matches on or after startDate'] });
    expect(Math.min(...runs.map(([ms]) => ms))).toBeLessThan(BOUND_MS);
  });
});
