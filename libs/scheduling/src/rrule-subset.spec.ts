import { describe, expect, it } from 'vitest';
import { parseRecurrence } from './rrule-subset.js';

const errorsOf = (rule: string): string[] => {
  const result = parseRecurrence(rule);
  return result.ok ? [] : result.errors;
};

describe('parseRecurrence', () => {
  it('parses the supported subset', () => {
    expect(parseRecurrence('FREQ=WEEKLY;BYDAY=MO,WE')).toEqual({
      ok: true,
      value: { freq: 'WEEKLY', interval: 1, byDay: [{ weekday: 0 }, { weekday: 2 }], byMonthDay: [], byMonth: [], bySetPos: [], wkst: 0 },
    });
    const monthly = parseRecurrence('freq=monthly;byday=+1mo,-1fr;interval=2;count=6;wkst=su');
    expect(monthly.ok && monthly.value).toMatchObject({
      freq: 'MONTHLY',
      interval: 2,
      byDay: [
        { weekday: 0, n: 1 },
        { weekday: 4, n: -1 },
      ],
      count: 6,
      wkst: 6,
    });
    const until = parseRecurrence('RRULE:FREQ=DAILY;UNTIL=20261231T235959Z');
    expect(until.ok && until.value.until).toEqual({ kind: 'instant', ms: Date.UTC(2026, 11, 31, 23, 59, 59) });
    const untilDate = parseRecurrence('FREQ=DAILY;UNTIL=20261231;');
    expect(untilDate.ok && untilDate.value.until?.kind).toBe('date');
    for (const rule of [
      'FREQ=YEARLY;BYMONTH=3;BYDAY=2SU',
      'FREQ=YEARLY;BYDAY=20MO',
      'FREQ=MONTHLY;BYDAY=MO,TU,WE,TH,FR;BYSETPOS=-1',
      'FREQ=MONTHLY;BYMONTHDAY=-1',
      'FREQ=YEARLY;BYMONTH=2;BYMONTHDAY=29',
      'FREQ=DAILY;INTERVAL=1000;BYMONTH=1,7',
      'FREQ=WEEKLY;BYDAY=SA,SU;BYSETPOS=1',
    ]) {
      expect(errorsOf(rule), rule).toEqual([]);
    }
  });

  it.each([
    ['', /required/],
    ['BYDAY=MO', /FREQ is required/],
    ['FREQ=HOURLY', /FREQ=HOURLY is not supported/],
    ['FREQ=DAILY;DTSTART=20260101T090000Z', /DTSTART is not allowed/],
    ['FREQ=DAILY;BYHOUR=9', /BYHOUR is not supported/],
    ['FREQ=DAILY;BYMINUTE=0', /BYMINUTE is not supported/],
    ['FREQ=DAILY;BYSECOND=0', /BYSECOND is not supported/],
    ['FREQ=YEARLY;BYWEEKNO=1', /BYWEEKNO is not supported/],
    ['FREQ=DAILY;FOO=1', /unknown rule part "FOO"/],
    ['FREQ=DAILY;FREQ=WEEKLY', /FREQ is given more than once/],
    ['FREQ=DAILY;;INTERVAL=2', /not a KEY=VALUE/],
    ['FREQ=DAILY;INTERVAL', /not a KEY=VALUE/],
    ['FREQ=DAILY;INTERVAL=0', /INTERVAL: "0" must be an integer from 1 to 1000/],
    ['FREQ=DAILY;INTERVAL=1001', /INTERVAL/],
    ['FREQ=DAILY;INTERVAL=1.5', /INTERVAL/],
    ['FREQ=DAILY;COUNT=0', /COUNT/],
    ['FREQ=DAILY;COUNT=10001', /COUNT/],
    ['FREQ=DAILY;COUNT=3;UNTIL=20261231', /COUNT and UNTIL cannot both be given/],
    ['FREQ=DAILY;UNTIL=20260231', /UNTIL/],
    ['FREQ=DAILY;UNTIL=2026-12-31', /UNTIL/],
    ['FREQ=DAILY;UNTIL=20261231T250000Z', /UNTIL/],
    ['FREQ=WEEKLY;BYDAY=XX', /BYDAY: "XX"/],
    ['FREQ=WEEKLY;BYDAY=1MO', /only allowed with FREQ=MONTHLY or FREQ=YEARLY/],
    ['FREQ=MONTHLY;BYDAY=6MO', /ordinal must be ±1..5/],
    ['FREQ=MONTHLY;BYDAY=0MO', /ordinal/],
    ['FREQ=MONTHLY;BYDAY=MO,1FR', /cannot mix plain weekdays/],
    ['FREQ=YEARLY;BYDAY=54MO', /ordinal must be ±1..53/],
    ['FREQ=MONTHLY;BYMONTHDAY=0', /BYMONTHDAY: "0"/],
    ['FREQ=MONTHLY;BYMONTHDAY=32', /BYMONTHDAY/],
    ['FREQ=YEARLY;BYMONTH=13', /BYMONTH: "13"/],
    ['FREQ=WEEKLY;BYMONTHDAY=1', /cannot be used with FREQ=WEEKLY/],
    ['FREQ=MONTHLY;BYSETPOS=1', /BYSETPOS needs another BY rule part/],
    ['FREQ=DAILY;BYDAY=MO;BYSETPOS=1', /BYSETPOS cannot be used with FREQ=DAILY/],
    ['FREQ=WEEKLY;BYDAY=MO,TU;BYSETPOS=3', /never matches/],
    ['FREQ=YEARLY;BYMONTH=2;BYMONTHDAY=30', /never matches/],
    ['FREQ=DAILY;WKST=XX', /WKST/],
  ])('rejects %j', (rule, message) => {
    const errors = errorsOf(rule);
    expect(errors.length).toBeGreaterThan(0);
    expect(errors.join('\n')).toMatch(message);
  });

  it('reports every problem at once', () => {
    expect(errorsOf('FREQ=SECONDLY;INTERVAL=0;BYHOUR=3;X=1')).toHaveLength(4);
  });
});
