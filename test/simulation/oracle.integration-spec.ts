import { describe, expect, it } from 'vitest';
import { MINUTE } from './local-time.js';
import {
  type ActionKind,
  type ApiResponse,
  type OracleEnv,
  type Outage,
  type ReminderInput,
  type ReminderPatch,
  UserOracle,
} from './oracle.js';

// The oracle on hand-made timelines, without the application: a tiny
// reference "system" delivers each occurrence at the earliest instant the
// oracle allows and answers each request with the status it expects. What
// comes out is the oracle's own statement of what the user should see.

type Step =
  | { t: string; device: { token?: string; timeZone?: string } }
  | { t: string; create: ReminderInput & { ref: string } }
  | { t: string; patch: ReminderPatch & { ref: string } }
  | { t: string; profile: { quietHours?: { start: string; end: string } | null; notificationsEnabled?: boolean } }
  | { t: string; action: { ref: string; kind: ActionKind; date: string; minutes?: number } };

function env(outages: Outage[] = [], jitter = 0): OracleEnv {
  return { outages, jitterSecondsAt: () => jitter, slackMs: 0, horizon: '2029-12-31' };
}

/** Runs a timeline; returns the pushes ("<reminder ref> <date> @ <UTC ISO>") and the oracle. */
function selfDrive(options: { zone: string; quiet?: { start: string; end: string }; steps: Step[]; until: string; env?: OracleEnv }) {
  const e = options.env ?? env();
  const steps = [...options.steps].sort((a, b) => Date.parse(a.t) - Date.parse(b.t));
  const t0 = Date.parse(steps[0]!.t) - MINUTE;
  const o = new UserOracle('u1', e, { zone: options.zone, quiet: options.quiet ?? null }, t0);
  o.device(t0, { token: 'sim-u1-1', timeZone: options.zone }, { status: 201, body: {} });
  const pushes: string[] = [];
  const until = Date.parse(options.until);
  let i = 0;
  const ok = (expected: number[]): ApiResponse => ({ status: expected[0]! });
  for (let guard = 0; guard < 100_000; guard++) {
    // The earliest delivery the oracle insists on.
    let next: { at: number; reminderId: string; date: string } | null = null;
    for (const r of o.reminders.values()) {
      for (const occ of [r.pending, ...r.snoozes.values()]) {
        if (!occ) continue;
        const a = o.analyze(occ);
        if (a.mustDeliver && (!next || a.lo < next.at)) next = { at: a.lo, reminderId: r.id, date: occ.date };
      }
    }
    const nextStep = steps[i] ? Date.parse(steps[i]!.t) : Infinity;
    const t = Math.min(next?.at ?? Infinity, nextStep, until, o.wakeAt);
    o.advance(t, { stopAtDeliverable: true });
    if (next && next.at === t && t < until && next.at <= nextStep) {
      const r = o.byId.get(next.reminderId)!;
      o.observePush({
        at: t,
        token: o.token!,
        reminderId: r.id,
        date: next.date,
        title: r.titleAt(t),
        collapseId: `c-${r.id}`,
        outcome: 'sent',
      });
      pushes.push(`${r.ref} ${next.date} @ ${new Date(t).toISOString()}`);
      continue;
    }
    if (t >= until) break;
    if (t !== nextStep) continue; // something settled
    const step = steps[i++]!;
    if ('device' in step) o.device(t, { token: step.device.token ?? o.token!, timeZone: step.device.timeZone }, { status: 200 });
    else if ('create' in step) {
      const { ref, ...input } = step.create;
      o.create(t, ref, input, { status: o.expectCreate(t, input)[0]!, body: { id: ref } });
    } else if ('patch' in step) {
      const { ref, ...patch } = step.patch;
      o.patch(t, ref, patch, ok(o.expectPatch(t, ref, patch)));
    } else if ('profile' in step) o.profile(t, step.profile, { status: 200 });
    else {
      const { ref, kind, date, minutes } = step.action;
      o.action(t, ref, kind, date, minutes, ok(o.expectAction(t, ref, kind, date, minutes)));
    }
  }
  o.advance(until);
  return { pushes, oracle: o };
}

describe('the calendar oracle', () => {
  it('delivers a daily 22:30 with quiet hours 22:00–07:00 at 07:00 every day, never lost', () => {
    const { pushes, oracle } = selfDrive({
      zone: 'Europe/London',
      quiet: { start: '22:00', end: '07:00' },
      steps: [{ t: '2027-06-01T12:00:00Z', create: { ref: 'r1', title: 'pill', localTime: '22:30', recurrence: 'FREQ=DAILY' } }],
      until: '2027-06-05T12:00:00Z',
    });
    // 07:00 BST = 06:00 UTC, the morning after each 22:30.
    expect(pushes).toEqual([
      'r1 2027-06-01 @ 2027-06-02T06:00:00.000Z',
      'r1 2027-06-02 @ 2027-06-03T06:00:00.000Z',
      'r1 2027-06-03 @ 2027-06-04T06:00:00.000Z',
      'r1 2027-06-04 @ 2027-06-05T06:00:00.000Z',
    ]);
    expect(oracle.violations).toEqual([]);
  });

  it('after the 09:00 push in London, a flight to New York does not deliver 09:00 New York of the same date', () => {
    const { pushes, oracle } = selfDrive({
      zone: 'Europe/London',
      steps: [
        { t: '2027-05-31T12:00:00Z', create: { ref: 'r1', title: 'walk', localTime: '09:00', recurrence: 'FREQ=DAILY' } },
        // Lands at 07:00 New York (11:00 UTC) on 06-01, two hours after London's 09:00 (08:00 UTC).
        { t: '2027-06-01T11:00:00Z', device: { timeZone: 'America/New_York' } },
      ],
      until: '2027-06-03T00:00:00Z',
    });
    expect(pushes).toEqual([
      'r1 2027-06-01 @ 2027-06-01T08:00:00.000Z', // 09:00 London
      'r1 2027-06-02 @ 2027-06-02T13:00:00.000Z', // 09:00 New York, the next date
    ]);
    expect(oracle.violations).toEqual([]);
  });

  it('flying east before the time delivers the pending occurrence at once when it is at most 6 h past', () => {
    const { pushes } = selfDrive({
      zone: 'America/New_York',
      steps: [
        { t: '2027-05-31T20:00:00Z', create: { ref: 'r1', title: 'walk', localTime: '09:00', recurrence: 'FREQ=DAILY' } },
        // 07:00 New York: 09:00 New York (13:00 UTC) is ahead, but 09:00 London (08:00 UTC) is 3 h past.
        { t: '2027-06-01T11:00:00Z', device: { timeZone: 'Europe/London' } },
      ],
      until: '2027-06-02T12:00:00Z',
    });
    expect(pushes).toEqual(['r1 2027-06-01 @ 2027-06-01T11:00:00.000Z', 'r1 2027-06-02 @ 2027-06-02T08:00:00.000Z']);
  });

  it('an alias spelling of the zone is not travel', () => {
    const { pushes, oracle } = selfDrive({
      zone: 'Asia/Kolkata',
      steps: [
        { t: '2027-05-31T12:00:00Z', create: { ref: 'r1', title: 'tea', localTime: '17:00', recurrence: 'FREQ=DAILY' } },
        { t: '2027-06-01T05:00:00Z', device: { timeZone: 'Asia/Calcutta' } },
      ],
      until: '2027-06-02T00:00:00Z',
    });
    expect(oracle.zone).toBe('Asia/Kolkata');
    expect(pushes).toEqual(['r1 2027-06-01 @ 2027-06-01T11:30:00.000Z']);
    expect(oracle.timeline.some((l) => l.text.includes('travel'))).toBe(false);
  });

  it('runs a 02:30 reminder at 03:30 on the spring-forward day, and at 02:30 the days around it', () => {
    const { pushes } = selfDrive({
      zone: 'America/New_York',
      steps: [{ t: '2027-03-12T12:00:00Z', create: { ref: 'r1', title: 'night', localTime: '02:30', recurrence: 'FREQ=DAILY' } }],
      until: '2027-03-16T00:00:00Z',
    });
    expect(pushes).toEqual([
      'r1 2027-03-13 @ 2027-03-13T07:30:00.000Z', // 02:30 EST
      'r1 2027-03-14 @ 2027-03-14T07:30:00.000Z', // 02:30 does not exist: 03:30 EDT
      'r1 2027-03-15 @ 2027-03-15T06:30:00.000Z', // 02:30 EDT
    ]);
  });

  it('runs a time that happens twice once, at its first reading (Lord Howe falls back 30 minutes)', () => {
    const { pushes } = selfDrive({
      zone: 'Australia/Lord_Howe',
      steps: [{ t: '2027-04-02T00:00:00Z', create: { ref: 'r1', title: 'x', localTime: '01:45', recurrence: 'FREQ=DAILY' } }],
      until: '2027-04-05T00:00:00Z',
    });
    expect(pushes).toEqual([
      'r1 2027-04-03 @ 2027-04-02T14:45:00.000Z', // +11:00
      'r1 2027-04-04 @ 2027-04-03T14:45:00.000Z', // 01:45 twice: the first, still +11:00
      'r1 2027-04-05 @ 2027-04-04T15:15:00.000Z', // +10:30 from then on
    ]);
  });

  it('after a 2-day worker outage skips the stale occurrences instead of a burst, and the chain goes on', () => {
    const outage = { from: Date.parse('2027-03-10T08:00:00.500Z'), to: Date.parse('2027-03-12T10:00:00.500Z') };
    const { pushes, oracle } = selfDrive({
      zone: 'UTC',
      env: env([outage]),
      steps: [{ t: '2027-03-08T12:00:00Z', create: { ref: 'r1', title: 'daily', localTime: '09:00', recurrence: 'FREQ=DAILY' } }],
      until: '2027-03-13T12:00:00Z',
    });
    expect(pushes).toEqual([
      'r1 2027-03-09 @ 2027-03-09T09:00:00.000Z',
      'r1 2027-03-12 @ 2027-03-12T10:00:00.500Z', // 1 h late: within 6 h, delivered when the worker is back
      'r1 2027-03-13 @ 2027-03-13T09:00:00.000Z',
    ]);
    const r = oracle.reminders.get('r1')!;
    expect(r.settled.get('2027-03-10')).toMatchObject({ how: 'skipped', reasons: new Set(['stale']) });
    expect(r.settled.get('2027-03-11')).toMatchObject({ how: 'skipped', reasons: new Set(['stale']) });
    expect(oracle.violations).toEqual([]);
  });

  it('done before delivery: not delivered; snooze after delivery: exactly one more push; skip after delivery: 409', () => {
    const { pushes, oracle } = selfDrive({
      zone: 'Europe/Berlin',
      steps: [
        { t: '2027-05-31T12:00:00Z', create: { ref: 'r1', title: 'meds', localTime: '08:00', recurrence: 'FREQ=DAILY' } },
        { t: '2027-06-01T05:00:00Z', action: { ref: 'r1', kind: 'done', date: '2027-06-01' } },
        { t: '2027-06-02T06:10:00Z', action: { ref: 'r1', kind: 'snooze', date: '2027-06-02', minutes: 10 } },
        { t: '2027-06-02T06:15:00Z', action: { ref: 'r1', kind: 'snooze', date: '2027-06-02', minutes: 30 } }, // replaces the first
      ],
      until: '2027-06-02T12:00:00Z',
    });
    expect(pushes).toEqual(['r1 2027-06-02 @ 2027-06-02T06:00:00.000Z', 'r1 2027-06-02 @ 2027-06-02T06:45:00.000Z']);
    expect(oracle.expectAction(Date.parse('2027-06-02T07:00:00Z'), 'r1', 'skip', '2027-06-02')).toEqual([409]);
    expect(oracle.expectAction(Date.parse('2027-06-02T07:00:00Z'), 'r1', 'snooze', '2027-06-03', 10)).toEqual([409]);
    expect(oracle.expectAction(Date.parse('2027-06-02T07:00:00Z'), 'r1', 'done', '2027-06-03')).toEqual([200]);
  });

  it('quiet hours set after planning still defer; an edit of the title keeps the deferred instant and delivers the new title', () => {
    const { pushes, oracle } = selfDrive({
      zone: 'Europe/Paris',
      steps: [
        { t: '2027-07-01T12:00:00Z', create: { ref: 'r1', title: 'early', localTime: '06:00', recurrence: 'FREQ=DAILY' } },
        { t: '2027-07-01T13:00:00Z', profile: { quietHours: { start: '22:00', end: '07:00' } } },
        { t: '2027-07-02T04:30:00Z', patch: { ref: 'r1', title: 'early v2' } },
      ],
      until: '2027-07-02T12:00:00Z',
    });
    expect(pushes).toEqual(['r1 2027-07-02 @ 2027-07-02T05:00:00.000Z']);
    expect(oracle.timeline.filter((l) => l.text.includes('PUSH')).map((l) => l.text)).toEqual(['[r1] PUSH 2027-07-02 "early v2"']);
  });

  describe('judging what the system did', () => {
    const base = () => {
      const o = new UserOracle(
        'u1',
        env(),
        { zone: 'Europe/London', quiet: { start: '22:00', end: '07:00' } },
        Date.parse('2027-06-01T00:00:00Z'),
      );
      o.device(Date.parse('2027-06-01T00:00:00Z'), { token: 'sim-u1-1' }, { status: 201 });
      o.create(
        Date.parse('2027-06-01T12:00:00Z'),
        'r1',
        { title: 'pill', localTime: '22:30', recurrence: 'FREQ=DAILY' },
        { status: 201, body: { id: 'id-1' } },
      );
      const push = (at: string, date: string) =>
        o.observePush({ at: Date.parse(at), token: 'sim-u1-1', reminderId: 'id-1', date, title: 'pill', collapseId: 'c', outcome: 'sent' });
      return { o, push };
    };

    it('flags a push inside quiet hours and a stale skip of a deferred occurrence', () => {
      const { o, push } = base();
      push('2027-06-01T21:30:00Z', '2027-06-01'); // 22:30 BST: inside quiet hours
      expect(o.violations.map((v) => v.kind)).toEqual(['quiet-hours', 'early']);
      o.advance(Date.parse('2027-06-03T12:00:00Z')); // 06-02 never delivered at 07:00 06-03
      expect(o.violations.map((v) => v.kind)).toEqual(['quiet-hours', 'early', 'missing']);
    });

    it('flags a second push for one date', () => {
      const { o, push } = base();
      push('2027-06-02T06:00:00Z', '2027-06-01');
      push('2027-06-02T06:00:00Z', '2027-06-01');
      expect(o.violations.map((v) => v.kind)).toEqual(['duplicate']);
    });

    it('flags a push after delete and while disabled', () => {
      const { o, push } = base();
      o.patch(Date.parse('2027-06-01T13:00:00Z'), 'r1', { enabled: false }, { status: 200 });
      push('2027-06-02T06:00:00Z', '2027-06-01');
      expect(o.violations.map((v) => v.kind)).toEqual(['while-disabled', 'unexpected']);
      o.patch(Date.parse('2027-06-02T12:00:00Z'), 'r1', { enabled: true }, { status: 200 });
      o.remove(Date.parse('2027-06-02T13:00:00Z'), 'r1', { status: 204 });
      push('2027-06-03T06:00:00Z', '2027-06-02');
      expect(o.violations.map((v) => v.kind)).toEqual(['while-disabled', 'unexpected', 'after-delete', 'unexpected']);
    });
  });
});
