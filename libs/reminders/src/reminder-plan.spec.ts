import { describe, expect, it } from 'vitest';
import { planChain, type ChainInput, type ReminderFacts, type UserFacts } from './reminder-plan.js';

// The chain planner on fixed instants: quiet hours, travel, edits and
// outages, each as a user would live it.

const reminder = (over: Partial<ReminderFacts> = {}): ReminderFacts => ({
  id: '00000000-0000-4000-8000-000000000001',
  userId: 'u',
  version: 1,
  localTime: '09:00',
  timeZone: null,
  recurrence: 'FREQ=DAILY',
  startDate: '2027-01-01',
  timeSensitive: false,
  ...over,
});
const user = (over: Partial<UserFacts> = {}): UserFacts => ({
  timeZone: 'Europe/London',
  quietHoursStart: null,
  quietHoursEnd: null,
  ...over,
});

function plan(over: Partial<ChainInput>) {
  return planChain({
    reminder: reminder(),
    user: user(),
    now: new Date('2027-06-01T12:00:00Z'),
    jitterSeconds: 0,
    mode: 'chain',
    afterDate: null,
    settled: new Set(),
    ...over,
  });
}

describe('planChain', () => {
  it('defers a 22:30 reminder inside 22:00–07:00 quiet hours to 07:00, and counts staleness from there', () => {
    const quiet = user({ timeZone: 'Europe/Berlin', quietHoursStart: '22:00', quietHoursEnd: '07:00' });
    const { next } = plan({ reminder: reminder({ localTime: '22:30' }), user: quiet, afterDate: '2027-06-01' });
    expect(next!.occurrence.localDate).toBe('2027-06-02');
    expect(next!.occurrence.at.toISOString()).toBe('2027-06-02T20:30:00.000Z');
    expect(next!.runAt.toISOString()).toBe('2027-06-03T05:00:00.000Z');
    expect(next!.earliestAt.toISOString()).toBe('2027-06-03T05:00:00.000Z');
  });

  it('lets a time-sensitive reminder through quiet hours', () => {
    const quiet = user({ timeZone: 'Europe/Berlin', quietHoursStart: '22:00', quietHoursEnd: '07:00' });
    const { next } = plan({ reminder: reminder({ localTime: '22:30', timeSensitive: true }), user: quiet, afterDate: '2027-06-01' });
    expect(next!.runAt.toISOString()).toBe('2027-06-02T20:30:00.000Z');
  });

  it('after a London → New York flight that followed the 09:00 push, plans the next date, not 09:00 New York of the same date', () => {
    // 09:00 London on 06-01 was sent (08:00Z); at 13:00Z the user is in New York (09:00 there is still ahead).
    const { next, skipped } = plan({
      user: user({ timeZone: 'America/New_York' }),
      now: new Date('2027-06-01T13:00:00Z'),
      mode: 'replan',
      afterDate: '2027-06-01',
      settled: new Set(['2027-06-01']),
    });
    expect(skipped).toEqual([]);
    expect(next!.occurrence.localDate).toBe('2027-06-02');
    expect(next!.occurrence.at.toISOString()).toBe('2027-06-02T13:00:00.000Z');
  });

  it('flying east before the time: a pending occurrence whose new instant passed delivers at once within six hours', () => {
    // Pending 09:00 New York on 06-01 (13:00Z); at 10:00Z the user lands in London, where 09:00 was 08:00Z.
    const { next } = plan({
      now: new Date('2027-06-01T10:00:00Z'),
      mode: 'replan',
      afterDate: '2027-05-31',
      pendingDate: '2027-06-01',
    });
    expect(next!.occurrence.localDate).toBe('2027-06-01');
    expect(next!.runAt.toISOString()).toBe('2027-06-01T10:00:00.000Z');
  });

  it('…and skips it as rescheduled past six hours, moving on to the next date', () => {
    const { next, skipped } = plan({
      now: new Date('2027-06-01T15:00:00Z'),
      mode: 'replan',
      afterDate: '2027-05-31',
      pendingDate: '2027-06-01',
    });
    expect(skipped.map((s) => [s.occurrence.localDate, s.reason])).toEqual([['2027-06-01', 'rescheduled']]);
    expect(next!.occurrence.localDate).toBe('2027-06-02');
  });

  it('an edit that adds dates before the pending one plans the first of them (weekly on Mondays → daily)', () => {
    // Thursday 06-03: the pending occurrence was Monday 06-07; daily from now on means Friday 06-04.
    const { next, skipped } = plan({
      now: new Date('2027-06-03T12:00:00Z'),
      mode: 'replan',
      afterDate: '2027-05-31',
      pendingDate: '2027-06-07',
      settled: new Set(['2027-05-31']),
    });
    expect(skipped).toEqual([]);
    expect(next!.occurrence.localDate).toBe('2027-06-04');
  });

  it('a re-plan does not owe dates whose instant passed unless they were pending', () => {
    const { next, skipped } = plan({ now: new Date('2027-06-03T12:00:00Z'), mode: 'replan', afterDate: '2027-05-31' });
    expect(skipped).toEqual([]);
    expect(next!.occurrence.localDate).toBe('2027-06-04');
  });

  it('after a two-day outage the chain records the missed dates as stale and delivers today’s once, now', () => {
    // The 05-30 occurrence ran late on 06-01 at 12:00Z; 05-31 is stale, 06-01 09:00 BST (08:00Z) is 4 h late: delivered now.
    const { next, skipped } = plan({ afterDate: '2027-05-30' });
    expect(skipped.map((s) => [s.occurrence.localDate, s.reason])).toEqual([['2027-05-31', 'stale']]);
    expect(next!.occurrence.localDate).toBe('2027-06-01');
    expect(next!.runAt.toISOString()).toBe('2027-06-01T12:00:00.000Z');
  });

  it('never plans a date already settled ahead of time (done or skipped in advance)', () => {
    const { next } = plan({ afterDate: '2027-06-01', settled: new Set(['2027-06-02', '2027-06-03']) });
    expect(next!.occurrence.localDate).toBe('2027-06-04');
  });

  it('plans the one occurrence of a one-off reminder, and nothing after it', () => {
    const oneOff = reminder({ recurrence: null, startDate: '2027-06-05', localTime: '18:15' });
    const first = plan({ reminder: oneOff, mode: 'replan' });
    expect(first.next!.occurrence.at.toISOString()).toBe('2027-06-05T17:15:00.000Z');
    expect(plan({ reminder: oneOff, afterDate: '2027-06-05' }).next).toBeNull();
  });
});
