import { describe, expect, it } from 'vitest';
import { SchedulingError } from './result.js';
import { isLocalDateOf, nextOccurrence, occurrences, validateSchedule, type Schedule } from './next-occurrence.js';

const schedule = (timeZone: string, localTime: string, startDate: string, recurrence = 'FREQ=DAILY'): Schedule => ({
  timeZone,
  localTime,
  startDate,
  recurrence,
});
const at = (iso: string) => new Date(iso);
const instants = (s: Schedule, after: string, count: number) => occurrences(s, at(after), count).map((o) => o.at.toISOString());

describe('nextOccurrence across DST transitions', () => {
  // Expected instants worked out by hand from each zone's rules (tzdata
  // 2025c), not from this code:
  //   US (New_York -5/-4, Chicago -6/-5): 02:00 → 03:00 on 2026-03-08, 02:00 → 01:00 on 2026-11-01
  //   EU (London 0/+1 at 01:00, Berlin +1/+2 at 02:00 local): 2026-03-29 and 2026-10-25, both at 01:00Z
  //   Sydney +10/+11: 02:00 → 03:00 on 2026-10-04, 03:00 → 02:00 on 2026-04-05
  //   Lord_Howe +10:30/+11 (30 min): 02:00 → 02:30 on 2026-10-04, 02:00 → 01:30 on 2026-04-05
  //   Chatham +12:45/+13:45: 02:45 → 03:45 on 2026-09-27, 03:45 → 02:45 on 2026-04-05
  //   Santiago -4/-3 at midnight: 2026-09-06 starts at 01:00; 2026-04-04 24:00 → 23:00
  //   Havana -5/-4: 2026-03-08 starts at 01:00; 2026-11-01 01:00 → 00:00
  //   Troll 0/+2 (2 hours) at 01:00Z: 2026-03-29 01:00 → 03:00, 2026-10-25 03:00 → 01:00
  //   Kolkata +05:30, no DST
  // [zone, localTime, local date, expected UTC instant, expected local ISO]
  const cases: [string, string, string, string, string][] = [
    ['America/New_York', '02:30', '2026-03-08', '2026-03-08T07:30:00.000Z', '2026-03-08T03:30:00.000-04:00'],
    ['America/New_York', '02:00', '2026-03-08', '2026-03-08T07:00:00.000Z', '2026-03-08T03:00:00.000-04:00'],
    ['America/New_York', '01:59', '2026-03-08', '2026-03-08T06:59:00.000Z', '2026-03-08T01:59:00.000-05:00'],
    ['America/New_York', '03:00', '2026-03-08', '2026-03-08T07:00:00.000Z', '2026-03-08T03:00:00.000-04:00'],
    ['America/New_York', '01:30', '2026-11-01', '2026-11-01T05:30:00.000Z', '2026-11-01T01:30:00.000-04:00'],
    ['America/New_York', '01:00', '2026-11-01', '2026-11-01T05:00:00.000Z', '2026-11-01T01:00:00.000-04:00'],
    ['America/New_York', '02:00', '2026-11-01', '2026-11-01T07:00:00.000Z', '2026-11-01T02:00:00.000-05:00'],
    ['America/New_York', '02:30', '2027-03-14', '2027-03-14T07:30:00.000Z', '2027-03-14T03:30:00.000-04:00'],
    ['America/Chicago', '02:30', '2026-03-08', '2026-03-08T08:30:00.000Z', '2026-03-08T03:30:00.000-05:00'],
    ['America/Chicago', '01:30', '2026-11-01', '2026-11-01T06:30:00.000Z', '2026-11-01T01:30:00.000-05:00'],
    ['Europe/London', '01:30', '2026-03-29', '2026-03-29T01:30:00.000Z', '2026-03-29T02:30:00.000+01:00'],
    ['Europe/London', '01:30', '2026-10-25', '2026-10-25T00:30:00.000Z', '2026-10-25T01:30:00.000+01:00'],
    ['Europe/Berlin', '02:30', '2026-03-29', '2026-03-29T01:30:00.000Z', '2026-03-29T03:30:00.000+02:00'],
    ['Europe/Berlin', '02:30', '2026-10-25', '2026-10-25T00:30:00.000Z', '2026-10-25T02:30:00.000+02:00'],
    ['Europe/Berlin', '09:00', '2026-03-29', '2026-03-29T07:00:00.000Z', '2026-03-29T09:00:00.000+02:00'],
    ['Australia/Sydney', '02:30', '2026-10-04', '2026-10-03T16:30:00.000Z', '2026-10-04T03:30:00.000+11:00'],
    ['Australia/Sydney', '02:30', '2026-04-05', '2026-04-04T15:30:00.000Z', '2026-04-05T02:30:00.000+11:00'],
    ['Australia/Lord_Howe', '02:15', '2026-10-04', '2026-10-03T15:45:00.000Z', '2026-10-04T02:45:00.000+11:00'],
    ['Australia/Lord_Howe', '02:30', '2026-10-04', '2026-10-03T15:30:00.000Z', '2026-10-04T02:30:00.000+11:00'],
    ['Australia/Lord_Howe', '01:45', '2026-04-05', '2026-04-04T14:45:00.000Z', '2026-04-05T01:45:00.000+11:00'],
    ['Pacific/Chatham', '03:00', '2026-09-27', '2026-09-26T14:15:00.000Z', '2026-09-27T04:00:00.000+13:45'],
    ['Pacific/Chatham', '03:00', '2026-04-05', '2026-04-04T13:15:00.000Z', '2026-04-05T03:00:00.000+13:45'],
    ['Asia/Kolkata', '09:00', '2026-03-08', '2026-03-08T03:30:00.000Z', '2026-03-08T09:00:00.000+05:30'],
    ['Asia/Kolkata', '00:00', '2026-11-01', '2026-10-31T18:30:00.000Z', '2026-11-01T00:00:00.000+05:30'],
    ['America/Santiago', '00:30', '2026-09-06', '2026-09-06T04:30:00.000Z', '2026-09-06T01:30:00.000-03:00'],
    ['America/Santiago', '00:00', '2026-09-06', '2026-09-06T04:00:00.000Z', '2026-09-06T01:00:00.000-03:00'],
    ['America/Santiago', '23:30', '2026-04-04', '2026-04-05T02:30:00.000Z', '2026-04-04T23:30:00.000-03:00'],
    ['America/Havana', '00:30', '2026-03-08', '2026-03-08T05:30:00.000Z', '2026-03-08T01:30:00.000-04:00'],
    ['America/Havana', '00:30', '2026-11-01', '2026-11-01T04:30:00.000Z', '2026-11-01T00:30:00.000-04:00'],
    ['Antarctica/Troll', '01:30', '2026-03-29', '2026-03-29T01:30:00.000Z', '2026-03-29T03:30:00.000+02:00'],
    ['Antarctica/Troll', '02:00', '2026-10-25', '2026-10-25T00:00:00.000Z', '2026-10-25T02:00:00.000+02:00'],
    ['UTC', '02:30', '2026-03-08', '2026-03-08T02:30:00.000Z', '2026-03-08T02:30:00.000+00:00'],
  ];

  it.each(cases)('%s %s on %s → %s', (zone, time, date, expectedAt, expectedLocal) => {
    // A daily rule that began long before, asked from two days earlier.
    const s = schedule(zone, time, '2025-06-01');
    const after = new Date(Date.parse(`${date}T12:00:00Z`) - 2 * 86_400_000);
    const found = occurrences(s, after, 3).find((o) => o.localDate === date);
    expect(found).toEqual({ at: new Date(expectedAt), localDate: date, local: expectedLocal });
  });

  it('keeps one occurrence per local day through both transitions', () => {
    const s = schedule('America/New_York', '01:30', '2026-10-30');
    expect(instants(s, '2026-10-29T00:00:00Z', 4)).toEqual([
      '2026-10-30T05:30:00.000Z',
      '2026-10-31T05:30:00.000Z',
      '2026-11-01T05:30:00.000Z', // first 01:30 (EDT); the second one does not run
      '2026-11-02T06:30:00.000Z',
    ]);
    // Asked between the two 01:30s: the repeat is not an occurrence.
    expect(nextOccurrence(s, at('2026-11-01T05:45:00Z'))?.at.toISOString()).toBe('2026-11-02T06:30:00.000Z');
  });

  it('is strictly after `after`', () => {
    const s = schedule('America/New_York', '09:00', '2026-01-01');
    expect(nextOccurrence(s, at('2026-01-05T14:00:00Z'))?.localDate).toBe('2026-01-06');
    expect(nextOccurrence(s, at('2026-01-05T13:59:59.999Z'))?.localDate).toBe('2026-01-05');
  });
});

describe('nextOccurrence rules', () => {
  it('weekly by day, across spring forward', () => {
    const s = schedule('America/New_York', '09:00', '2026-03-04', 'FREQ=WEEKLY;BYDAY=MO,WE');
    expect(instants(s, '2026-03-01T00:00:00Z', 3)).toEqual([
      '2026-03-04T14:00:00.000Z', // Wed, EST
      '2026-03-09T13:00:00.000Z', // Mon, EDT
      '2026-03-11T13:00:00.000Z',
    ]);
  });

  it('counts startDate only when it matches the rule', () => {
    // 2026-03-04 is a Wednesday.
    expect(nextOccurrence(schedule('UTC', '09:00', '2026-03-04', 'FREQ=WEEKLY;BYDAY=MO'), at('2026-01-01'))?.localDate).toBe('2026-03-09');
    expect(nextOccurrence(schedule('UTC', '09:00', '2026-03-20', 'FREQ=MONTHLY;BYMONTHDAY=15'), at('2026-01-01'))?.localDate).toBe(
      '2026-04-15',
    );
    expect(nextOccurrence(schedule('UTC', '09:00', '2026-03-04', 'FREQ=WEEKLY;BYDAY=WE'), at('2026-01-01'))?.localDate).toBe('2026-03-04');
  });

  it('defaults a bare WEEKLY / MONTHLY / YEARLY rule to startDate', () => {
    const dates = (rule: string, start: string, n: number) =>
      occurrences(schedule('UTC', '08:00', start, rule), at('2020-01-01'), n).map((o) => o.localDate);
    expect(dates('FREQ=WEEKLY', '2026-03-04', 2)).toEqual(['2026-03-04', '2026-03-11']);
    expect(dates('FREQ=MONTHLY', '2026-01-31', 3)).toEqual(['2026-01-31', '2026-03-31', '2026-05-31']); // months without a 31st are skipped
    expect(dates('FREQ=YEARLY', '2024-02-29', 3)).toEqual(['2024-02-29', '2028-02-29', '2032-02-29']);
  });

  it('monthly last Friday, with the time following the local offset', () => {
    const s = schedule('Europe/Berlin', '09:00', '2026-01-01', 'FREQ=MONTHLY;BYDAY=-1FR');
    expect(occurrences(s, at('2026-01-01'), 4).map((o) => o.local)).toEqual([
      '2026-01-30T09:00:00.000+01:00',
      '2026-02-27T09:00:00.000+01:00',
      '2026-03-27T09:00:00.000+01:00',
      '2026-04-24T09:00:00.000+02:00',
    ]);
  });

  it('BYSETPOS: last weekday of the month', () => {
    const s = schedule('UTC', '17:00', '2026-01-01', 'FREQ=MONTHLY;BYDAY=MO,TU,WE,TH,FR;BYSETPOS=-1');
    expect(occurrences(s, at('2026-01-01'), 5).map((o) => o.localDate)).toEqual([
      '2026-01-30',
      '2026-02-27',
      '2026-03-31',
      '2026-04-30',
      '2026-05-29',
    ]);
  });

  it('yearly nth weekday (US Thanksgiving)', () => {
    const s = schedule('America/Chicago', '10:00', '2026-01-01', 'FREQ=YEARLY;BYMONTH=11;BYDAY=4TH');
    expect(occurrences(s, at('2026-01-01'), 3).map((o) => o.localDate)).toEqual(['2026-11-26', '2027-11-25', '2028-11-23']);
  });

  it('INTERVAL with WKST (RFC 5545 §3.8.5.3 examples)', () => {
    const dates = (rule: string) => occurrences(schedule('UTC', '09:00', '1997-08-05', rule), at('1997-01-01'), 10).map((o) => o.localDate);
    expect(dates('FREQ=WEEKLY;INTERVAL=2;COUNT=4;BYDAY=TU,SU;WKST=MO')).toEqual(['1997-08-05', '1997-08-10', '1997-08-19', '1997-08-24']);
    expect(dates('FREQ=WEEKLY;INTERVAL=2;COUNT=4;BYDAY=TU,SU;WKST=SU')).toEqual(['1997-08-05', '1997-08-17', '1997-08-19', '1997-08-31']);
  });

  it('INTERVAL keeps its phase far from startDate', () => {
    // Day 1991 after 2026-01-01 is 2031-06-15; 1992 is the next multiple of 3.
    const daily = schedule('UTC', '09:00', '2026-01-01', 'FREQ=DAILY;INTERVAL=3');
    expect(nextOccurrence(daily, at('2031-06-15T12:00:00Z'))?.localDate).toBe('2031-06-16');
    const weekly = schedule('UTC', '09:00', '2026-01-01', 'FREQ=WEEKLY;INTERVAL=2;BYDAY=TU,TH');
    expect(occurrences(weekly, at('2025-12-01'), 5).map((o) => o.localDate)).toEqual([
      '2026-01-01',
      '2026-01-13',
      '2026-01-15',
      '2026-01-27',
      '2026-01-29',
    ]);
    // 2026-01-01 + 130 weeks = 2028-06-29 (Thu), an in-phase week.
    expect(occurrences(weekly, at('2028-06-25T00:00:00Z'), 2).map((o) => o.localDate)).toEqual(['2028-06-27', '2028-06-29']);
    const monthly = schedule('UTC', '09:00', '2026-01-15', 'FREQ=MONTHLY;INTERVAL=5');
    expect(nextOccurrence(monthly, at('2031-01-01'))?.localDate).toBe('2031-01-15'); // 60 months later
  });

  it('COUNT counts from the first matching day and ends the rule', () => {
    const s = schedule('UTC', '09:00', '2026-01-01', 'FREQ=WEEKLY;BYDAY=MO;COUNT=5'); // 2026-01-01 is a Thursday
    expect(occurrences(s, at('2025-01-01'), 10).map((o) => o.localDate)).toEqual([
      '2026-01-05',
      '2026-01-12',
      '2026-01-19',
      '2026-01-26',
      '2026-02-02',
    ]);
    expect(nextOccurrence(s, at('2026-01-27T00:00:00Z'))?.localDate).toBe('2026-02-02');
    expect(nextOccurrence(s, at('2026-02-02T09:00:00Z'))).toBeNull();
    expect(nextOccurrence(s, at('2035-01-01'))).toBeNull();
  });

  it('COUNT is right when asked long after startDate', () => {
    const s = schedule('America/New_York', '09:00', '2026-01-01', 'FREQ=DAILY;COUNT=2000');
    const last = new Date(Date.UTC(2026, 0, 1) + 1999 * 86_400_000).toISOString().slice(0, 10);
    expect(last).toBe('2031-06-23');
    expect(nextOccurrence(s, at('2031-06-22T20:00:00Z'))?.localDate).toBe('2031-06-23');
    expect(nextOccurrence(s, at('2031-06-23T13:00:00Z'))).toBeNull();
  });

  it('UNTIL as a date includes that local date', () => {
    const s = schedule('America/New_York', '23:30', '2026-03-08', 'FREQ=DAILY;UNTIL=20260310');
    expect(occurrences(s, at('2026-01-01'), 10).map((o) => o.localDate)).toEqual(['2026-03-08', '2026-03-09', '2026-03-10']);
  });

  it('UNTIL as a UTC date-time bounds the instant, inclusively', () => {
    // 23:30 EDT is 03:30Z the next day.
    const s = schedule('America/New_York', '23:30', '2026-03-08', 'FREQ=DAILY;UNTIL=20260310T033000Z');
    expect(instants(s, '2026-01-01T00:00:00Z', 10)).toEqual(['2026-03-09T03:30:00.000Z', '2026-03-10T03:30:00.000Z']);
  });

  it('UNTIL without Z bounds the local wall-clock time', () => {
    const s = schedule('America/New_York', '23:30', '2026-03-08', 'FREQ=DAILY;UNTIL=20260309T233000');
    expect(occurrences(s, at('2026-01-01'), 10).map((o) => o.localDate)).toEqual(['2026-03-08', '2026-03-09']);
  });

  it('returns null for a rule that has run out', () => {
    expect(nextOccurrence(schedule('UTC', '09:00', '2026-01-01', 'FREQ=DAILY;UNTIL=20251231'), at('2020-01-01'))).toBeNull();
    expect(occurrences(schedule('UTC', '09:00', '2026-01-01', 'FREQ=DAILY;COUNT=2'), at('2020-01-01'), 5)).toHaveLength(2);
  });

  it('refuses rules that can never fire', () => {
    for (const rule of [
      'FREQ=YEARLY;INTERVAL=4;BYMONTH=2;BYMONTHDAY=29', // from 2025, every 4th year is never a leap year
      'FREQ=MONTHLY;BYMONTHDAY=15;BYSETPOS=2',
      'FREQ=MONTHLY;BYDAY=1MO;BYMONTHDAY=20',
      'FREQ=DAILY;INTERVAL=7;BYDAY=TU', // 2025-01-01 is a Wednesday
      'FREQ=MONTHLY;INTERVAL=12;BYMONTH=3',
    ]) {
      const s = schedule('UTC', '09:00', '2025-01-01', rule);
      expect(validateSchedule(s), rule).toEqual({ ok: false, errors: ['recurrence: the rule never matches on or after startDate'] });
      expect(() => nextOccurrence(s, at('2025-01-01')), rule).toThrow(SchedulingError);
    }
    // Rare but real: 29 February on a Monday (2044, then 2072).
    const rare = schedule('UTC', '09:00', '2025-01-01', 'FREQ=YEARLY;BYMONTH=2;BYMONTHDAY=29;BYDAY=MO');
    expect(occurrences(rare, at('2025-01-01'), 2).map((o) => o.localDate)).toEqual(['2044-02-29', '2072-02-29']);
  });

  it('applies BYSETPOS to the whole week containing startDate', () => {
    // 2026-03-04 is a Wednesday; the first weekday of that week (Monday) is
    // before startDate, so that week contributes nothing.
    const s = schedule('UTC', '09:00', '2026-03-04', 'FREQ=WEEKLY;BYDAY=MO,WE,FR;BYSETPOS=1');
    expect(occurrences(s, at('2026-01-01'), 2).map((o) => o.localDate)).toEqual(['2026-03-09', '2026-03-16']);
  });

  it('does not depend on the process time zone', () => {
    const original = process.env.TZ;
    const localHours: number[] = [];
    try {
      // Distinct years per setting, so no cached offset table hides a difference.
      const cases: [string, string][] = [
        ['Pacific/Kiritimati', '2031-03-30'],
        ['America/Los_Angeles', '2032-03-28'],
        ['Asia/Kathmandu', '2033-03-27'],
      ];
      for (const [tz, gapDay] of cases) {
        process.env.TZ = tz;
        localHours.push(new Date(0).getHours()); // proves the setting took effect
        // Helsinki springs forward 03:00 → 04:00 (01:00Z) on the last Sunday of March.
        const s = schedule('Europe/Helsinki', '03:30', `${gapDay.slice(0, 4)}-01-01`);
        const found = occurrences(s, at(`${gapDay}T00:00:00Z`), 2).map((o) => `${o.localDate} ${o.at.toISOString()} ${o.local}`);
        expect(found[0]).toBe(`${gapDay} ${gapDay}T01:30:00.000Z ${gapDay}T04:30:00.000+03:00`);
      }
    } finally {
      if (original === undefined) delete process.env.TZ;
      else process.env.TZ = original;
    }
    expect(localHours).toEqual([13, 16, 5]); // Kiritimati was -10:40 in 1970
  });

  it('throws SchedulingError with every problem for an invalid schedule', () => {
    const bad = { localTime: '25:00', timeZone: 'EST', recurrence: 'FREQ=HOURLY', startDate: '2026-02-30' };
    expect(() => nextOccurrence(bad, at('2026-01-01'))).toThrow(SchedulingError);
    const result = validateSchedule(bad);
    expect(result.ok).toBe(false);
    if (!result.ok) {
      expect(result.errors.map((e) => e.split(':')[0])).toEqual(['localTime', 'timeZone', 'recurrence', 'startDate']);
    }
    expect(() => nextOccurrence(schedule('UTC', '09:00', '2026-01-01'), new Date(Number.NaN))).toThrow(RangeError);
  });
});

describe('local dates a zone skips entirely', () => {
  // Samoa (Pacific/Apia) moved west of the date line: 2011-12-29 23:59:59
  // UTC-10 was followed by 2011-12-31 00:00 UTC+14, so 2011-12-30 never
  // happened there. Such a date has no occurrence and uses no COUNT slot.
  const apia = (localTime: string, recurrence: string, startDate = '2011-12-29') =>
    schedule('Pacific/Apia', localTime, startDate, recurrence);
  const listed = (s: Schedule, after: string, n: number) =>
    occurrences(s, at(after), n).map((o) => `${o.localDate} ${o.at.toISOString()} ${o.local}`);

  it('has no occurrence on the skipped date', () => {
    expect(listed(apia('09:00', 'FREQ=DAILY'), '2011-12-28T00:00:00Z', 4)).toEqual([
      '2011-12-29 2011-12-29T19:00:00.000Z 2011-12-29T09:00:00.000-10:00',
      '2011-12-31 2011-12-30T19:00:00.000Z 2011-12-31T09:00:00.000+14:00',
      '2012-01-01 2011-12-31T19:00:00.000Z 2012-01-01T09:00:00.000+14:00',
      '2012-01-02 2012-01-01T19:00:00.000Z 2012-01-02T09:00:00.000+14:00',
    ]);
    // Asked right after the 29th's push: the next one is the 31st's, not a "30th" at the same instant.
    expect(nextOccurrence(apia('09:00', 'FREQ=DAILY'), at('2011-12-29T19:00:00Z'))?.localDate).toBe('2011-12-31');
    expect(listed(apia('00:00', 'FREQ=DAILY'), '2011-12-29T00:00:00Z', 2)).toEqual([
      '2011-12-29 2011-12-29T10:00:00.000Z 2011-12-29T00:00:00.000-10:00',
      '2011-12-31 2011-12-30T10:00:00.000Z 2011-12-31T00:00:00.000+14:00',
    ]);
    // 2011-12-30 was a Friday.
    const fridays = apia('09:00', 'FREQ=WEEKLY;BYDAY=FR', '2011-12-01');
    expect(occurrences(fridays, at('2011-12-20'), 2).map((o) => o.localDate)).toEqual(['2011-12-23', '2012-01-06']);
    expect(isLocalDateOf(apia('09:00', 'FREQ=DAILY'), '2011-12-30')).toBe(false);
    expect(isLocalDateOf(apia('09:00', 'FREQ=DAILY'), '2011-12-31')).toBe(true);
  });

  it('does not count it toward COUNT', () => {
    const s = apia('09:00', 'FREQ=DAILY;COUNT=3');
    expect(occurrences(s, at('2011-12-01'), 10).map((o) => o.localDate)).toEqual(['2011-12-29', '2011-12-31', '2012-01-01']);
    expect(nextOccurrence(s, at('2011-12-31T19:00:00Z'))).toBeNull();
    expect(isLocalDateOf(s, '2012-01-01')).toBe(true);
    expect(isLocalDateOf(s, '2012-01-02')).toBe(false);
    // A rule starting on the skipped date begins the next day.
    expect(occurrences(apia('09:00', 'FREQ=DAILY;COUNT=2', '2011-12-30'), at('2011-12-01'), 5).map((o) => o.localDate)).toEqual([
      '2011-12-31',
      '2012-01-01',
    ]);
    // Kiribati's Line Islands skipped 1994-12-31.
    const line = schedule('Pacific/Kiritimati', '12:00', '1994-12-30', 'FREQ=DAILY;COUNT=2');
    expect(occurrences(line, at('1994-01-01'), 5).map((o) => o.localDate)).toEqual(['1994-12-30', '1995-01-01']);
  });

  it('changes nothing on an ordinary DST day', () => {
    // 02:30 in New York's 2026-03-08 gap still runs (at 03:30 EDT) and counts.
    const s = schedule('America/New_York', '02:30', '2026-03-07', 'FREQ=DAILY;COUNT=3');
    expect(listed(s, '2026-03-01T00:00:00Z', 5)).toEqual([
      '2026-03-07 2026-03-07T07:30:00.000Z 2026-03-07T02:30:00.000-05:00',
      '2026-03-08 2026-03-08T07:30:00.000Z 2026-03-08T03:30:00.000-04:00',
      '2026-03-09 2026-03-09T06:30:00.000Z 2026-03-09T02:30:00.000-04:00',
    ]);
    expect(isLocalDateOf(s, '2026-03-08')).toBe(true);
    // Lord Howe's 30-minute gap and Santiago's midnight gap likewise.
    expect(isLocalDateOf(schedule('Australia/Lord_Howe', '02:15', '2026-10-01', 'FREQ=DAILY;COUNT=5'), '2026-10-04')).toBe(true);
    expect(isLocalDateOf(schedule('America/Santiago', '00:30', '2026-09-01', 'FREQ=DAILY;COUNT=6'), '2026-09-06')).toBe(true);
  });
});

describe('COUNT resolved lazily', () => {
  it('gives the same answers whatever order it is asked in', () => {
    // Two spellings of one rule get separate cached plans.
    const a = schedule('Europe/Berlin', '09:00', '2026-01-01', 'FREQ=WEEKLY;BYDAY=MO,TH;COUNT=50');
    const b = schedule('Europe/Berlin', '09:00', '2026-01-01', 'freq=weekly;byday=mo,th;count=50');
    // 2026-01-01 is a Thursday (#1); #50 is the Monday 2026-06-22, at 07:00Z.
    const probes = [
      '2030-01-01',
      '2026-03-01',
      '2026-06-15',
      '2026-06-22T06:59:00Z',
      '2025-01-01',
      '2026-06-22T07:00:00Z',
      '2026-06-18T08:00:00Z',
    ];
    const forward = probes.map((p) => nextOccurrence(a, at(p))?.localDate ?? null);
    const backward = [...probes]
      .reverse()
      .map((p) => nextOccurrence(b, at(p))?.localDate ?? null)
      .reverse();
    expect(forward).toEqual(backward);
    expect(forward).toEqual([null, '2026-03-02', '2026-06-15', '2026-06-22', '2026-01-01', null, '2026-06-22']);
  });

  it('from 1900, asked about today', () => {
    // 10,000 days from 1900-01-01 end on 1927-05-19.
    const s = schedule('Europe/Berlin', '08:00', '1900-01-01', 'FREQ=DAILY;COUNT=10000');
    expect(nextOccurrence(s, at('2026-01-01'))).toBeNull();
    expect(nextOccurrence(s, at('1927-05-18T12:00:00Z'))?.localDate).toBe('1927-05-19');
    expect(isLocalDateOf(s, '1927-05-19')).toBe(true);
    expect(isLocalDateOf(s, '1927-05-20')).toBe(false);
  });
});

describe('isLocalDateOf', () => {
  it('is true exactly on the dates the schedule produces', () => {
    const s = schedule('America/New_York', '09:00', '2026-03-04', 'FREQ=WEEKLY;BYDAY=MO,WE'); // a Wednesday
    expect(['2026-03-02', '2026-03-04', '2026-03-05', '2026-03-09', '2031-07-02'].map((d) => isLocalDateOf(s, d))).toEqual([
      false, // before startDate
      true,
      false,
      true,
      true,
    ]);
    expect(isLocalDateOf(schedule('UTC', '09:00', '2026-03-04', 'FREQ=WEEKLY;INTERVAL=2;BYDAY=WE'), '2026-03-11')).toBe(false);
    expect(isLocalDateOf(schedule('UTC', '09:00', '2026-01-01', 'FREQ=MONTHLY;BYDAY=-1FR'), '2026-01-30')).toBe(true);
    expect(isLocalDateOf(schedule('UTC', '09:00', '2026-01-01', 'FREQ=MONTHLY;BYDAY=-1FR'), '2026-01-23')).toBe(false);
  });

  it('applies COUNT and every kind of UNTIL', () => {
    const counted = schedule('UTC', '09:00', '2026-01-01', 'FREQ=WEEKLY;BYDAY=MO;COUNT=5');
    expect(isLocalDateOf(counted, '2026-02-02')).toBe(true);
    expect(isLocalDateOf(counted, '2026-02-09')).toBe(false);
    expect(isLocalDateOf(schedule('America/New_York', '23:30', '2026-03-08', 'FREQ=DAILY;UNTIL=20260310'), '2026-03-10')).toBe(true);
    expect(isLocalDateOf(schedule('America/New_York', '23:30', '2026-03-08', 'FREQ=DAILY;UNTIL=20260310'), '2026-03-11')).toBe(false);
    // 23:30 EDT on the 9th is 03:30Z on the 10th.
    const instant = schedule('America/New_York', '23:30', '2026-03-08', 'FREQ=DAILY;UNTIL=20260310T033000Z');
    expect(['2026-03-08', '2026-03-09', '2026-03-10'].map((d) => isLocalDateOf(instant, d))).toEqual([true, true, false]);
    const floating = schedule('America/New_York', '23:30', '2026-03-08', 'FREQ=DAILY;UNTIL=20260309T233000');
    expect(['2026-03-09', '2026-03-10'].map((d) => isLocalDateOf(floating, d))).toEqual([true, false]);
  });

  it('is false for a string that is not a date, and throws for an invalid schedule', () => {
    const s = schedule('UTC', '09:00', '2026-01-01');
    for (const bad of ['2026-3-9', '2026-02-30', '', 'today']) expect(isLocalDateOf(s, bad), bad).toBe(false);
    expect(() => isLocalDateOf(schedule('EST', '09:00', '2026-01-01'), '2026-01-02')).toThrow(SchedulingError);
  });
});
