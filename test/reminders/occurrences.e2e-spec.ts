import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { collapseIdFor } from '@nudge/push';
import { createTestDatabase, type TestDatabase } from '../support/database.js';
import { eventually, startTestApi, type TestApi } from '../support/api-app.js';
import { makeUser } from '../factories/user.js';
import { simulatedPushesTo } from '../support/simulated-pushes.js';

// Occurrences as a user lives them, through HTTP and the real worker on a
// pinned clock: quiet hours of any length, travel both ways, edits while an
// occurrence waits, zone spellings, actions from the notification, one-off
// reminders, and schedules that could never fire. Each case is one that the
// reminders lost, duplicated or accepted silently before occurrences were
// records of their own.

interface JobRow {
  id: string;
  status: string;
  run_at: Date;
  attempts: number;
  payload: { localDate: string; snooze?: boolean };
}

describe('occurrences', () => {
  let db: TestDatabase;
  let api: TestApi;

  beforeAll(async () => {
    db = await createTestDatabase();
    api = await startTestApi({ databaseUrl: db.url, worker: { pollIntervalMs: 20 } });
  });
  afterAll(async () => {
    await api?.close();
    await db?.drop();
  });

  const user = (id: string, profile: Record<string, unknown>, device: Record<string, unknown> = {}) =>
    makeUser(api, id, profile, { phone: { platform: 'ios', pushToken: `sim-${id}`, ...device } });

  async function create(bearer: string, body: Record<string, unknown>) {
    const res = await api.request('POST', '/v1/reminders', { token: bearer, body });
    expect(res.status, JSON.stringify(res.body)).toBe(201);
    return res.body as { id: string; version: number; nextOccurrence: { at: string } | null };
  }

  const pending = async (reminderId: string): Promise<JobRow[]> =>
    (
      await db.pool.query<JobRow>(
        `SELECT j.id, j.status, j.run_at, j.attempts, j.payload FROM reminder_jobs m JOIN jobs j ON j.id = m.job_id
          WHERE m.reminder_id = $1 AND j.status IN ('queued', 'running') ORDER BY j.run_at`,
        [reminderId],
      )
    ).rows;

  // created_at: the simulated provider records the injected clock.
  const pushes = (token: string) =>
    simulatedPushesTo<{ title: string; occurrence: string; collapse_id: string; created_at: Date }>(
      db.pool,
      token,
      `title, data->>'occurrence' AS occurrence, collapse_id, created_at`,
    );

  /** Moves the clock to `at` and waits until the job has run (finished, or back in the queue for later). */
  async function runAt(job: JobRow, at: string): Promise<JobRow> {
    api.clock.set(at);
    return eventually(async () => {
      const [row] = (await db.pool.query<JobRow>(`SELECT * FROM jobs WHERE id = $1`, [job.id])).rows;
      return row && row.status !== 'running' && (row.status !== 'queued' || row.run_at.getTime() !== job.run_at.getTime())
        ? row
        : undefined;
    }, `job ${job.id} to run`);
  }

  /** Runs the reminder's pending job at its due time (or at `at`), `times` times in a row. */
  async function runNext(reminderId: string, times = 1, at?: string): Promise<JobRow> {
    let last!: JobRow;
    for (let i = 0; i < times; i++) {
      const [job] = await pending(reminderId);
      expect(job, `a pending job for ${reminderId}`).toBeDefined();
      last = await runAt(job!, at ?? job!.run_at.toISOString());
    }
    return last;
  }

  const occurrencesOf = async (bearer: string, id: string, query: string) =>
    (await api.request('GET', `/v1/reminders/${id}/occurrences?${query}`, { token: bearer })).body.occurrences as {
      localDate: string;
      status: string;
      reason?: string;
      local: string;
    }[];

  it('delivers a 22:30 reminder at the end of 22:00–07:00 quiet hours, once a day, day after day', async () => {
    api.clock.set('2027-04-01T12:00:00Z');
    const bearer = await user('night', { timeZone: 'Europe/Berlin', quietHours: { start: '22:00', end: '07:00' } });
    const reminder = await create(bearer, { title: 'Pill', localTime: '22:30', recurrence: 'FREQ=DAILY' });
    expect(reminder.nextOccurrence!.at).toBe('2027-04-01T20:30:00.000Z');
    const [first] = await pending(reminder.id);
    expect(first!.run_at.toISOString()).toBe('2027-04-02T05:00:00.000Z');

    await runNext(reminder.id, 3);
    const sent = await pushes('sim-night');
    expect(sent.map((p) => [p.occurrence, p.created_at.toISOString()])).toEqual([
      ['2027-04-01', '2027-04-02T05:00:00.000Z'],
      ['2027-04-02', '2027-04-03T05:00:00.000Z'],
      ['2027-04-03', '2027-04-04T05:00:00.000Z'],
    ]);
    const history = await occurrencesOf(bearer, reminder.id, 'after=2027-04-01T00:00:00Z&count=4');
    expect(history.map((o) => [o.localDate, o.status])).toEqual([
      ['2027-04-01', 'sent'],
      ['2027-04-02', 'sent'],
      ['2027-04-03', 'sent'],
      ['2027-04-04', 'scheduled'],
    ]);
  });

  it('after a London → New York flight that followed the 09:00 push, does not deliver 09:00 New York of the same date', async () => {
    api.clock.set('2027-05-31T12:00:00Z');
    const bearer = await user('west', { timeZone: 'Europe/London' });
    const reminder = await create(bearer, { title: 'Stretch', localTime: '09:00', recurrence: 'FREQ=DAILY' });
    await runNext(reminder.id); // 06-01 09:00 BST = 08:00Z
    api.clock.set('2027-06-01T13:00:00Z'); // landed: 09:00 in New York is still ahead
    const moved = await api.request('PUT', '/v1/me/devices/phone', {
      token: bearer,
      body: { platform: 'ios', pushToken: 'sim-west', timeZone: 'America/New_York' },
    });
    expect(moved.status).toBe(200);
    const [next] = await pending(reminder.id);
    expect([next!.payload.localDate, next!.run_at.toISOString()]).toEqual(['2027-06-02', '2027-06-02T13:00:00.000Z']);
    await runNext(reminder.id);
    expect((await pushes('sim-west')).map((p) => p.occurrence)).toEqual(['2027-06-01', '2027-06-02']);

    // The history keeps the local time each ran at: 06-01 at 09:00 in London, not 04:00 in New York.
    const shown = async (query: string) => (await occurrencesOf(bearer, reminder.id, query)).map((o) => [o.localDate, o.status, o.local]);
    expect(await shown('before=2027-06-03T00:00:00Z&count=2')).toEqual([
      ['2027-06-01', 'sent', '2027-06-01T09:00:00.000+01:00'],
      ['2027-06-02', 'sent', '2027-06-02T09:00:00.000-04:00'],
    ]);
    expect(await shown('after=2027-06-01T00:00:00Z&count=3')).toEqual([
      ['2027-06-01', 'sent', '2027-06-01T09:00:00.000+01:00'],
      ['2027-06-02', 'sent', '2027-06-02T09:00:00.000-04:00'],
      ['2027-06-03', 'scheduled', '2027-06-03T09:00:00.000-04:00'],
    ]);
  });

  it('flying east before the time delivers the pending occurrence at once (within six hours), not never', async () => {
    api.clock.set('2027-05-31T20:00:00Z');
    const bearer = await user('east', { timeZone: 'America/New_York' });
    const reminder = await create(bearer, { title: 'Water', localTime: '09:00', recurrence: 'FREQ=DAILY' });
    // Lands in London at 10:00Z on 06-01: 09:00 London passed an hour ago, 09:00 New York is three hours ahead.
    api.clock.set('2027-06-01T10:00:00Z');
    await api.request('PUT', '/v1/me/devices/phone', {
      token: bearer,
      body: { platform: 'ios', pushToken: 'sim-east', timeZone: 'Europe/London' },
    });
    const [now] = await pending(reminder.id);
    expect([now!.payload.localDate, now!.run_at.toISOString()]).toEqual(['2027-06-01', '2027-06-01T10:00:00.000Z']);
    await runNext(reminder.id, 2);
    const sent = await pushes('sim-east');
    expect(sent.map((p) => [p.occurrence, p.created_at.toISOString()])).toEqual([
      ['2027-06-01', '2027-06-01T10:00:00.000Z'],
      ['2027-06-02', '2027-06-02T08:00:00.000Z'],
    ]);
  });

  it('lists dates delivered in New York as sent after a flight to Sydney, on every page (records lie a day from their Sydney instant)', async () => {
    // Found by the 2,000-user simulation (seed 20261203): a record due after the page's last nominal instant
    // was left out, and its date shown as skipped/not_scheduled.
    api.clock.set('2027-06-01T12:00:00Z');
    const bearer = await user('pager', { timeZone: 'America/New_York' });
    const reminder = await create(bearer, { title: 'Evening', localTime: '20:00', recurrence: 'FREQ=DAILY' });
    await runNext(reminder.id, 5); // 06-01 … 06-05, each at 20:00 EDT = 00:00Z the next day
    api.clock.set('2027-06-06T12:00:00Z');
    const moved = await api.request('PUT', '/v1/me/devices/phone', {
      token: bearer,
      body: { platform: 'ios', pushToken: 'sim-pager', timeZone: 'Australia/Sydney' },
    });
    expect(moved.status).toBe(200);
    const seen: [string, string][] = [];
    let after = '2027-06-01T00:00:00.000Z';
    for (let page = 0; page < 4; page++) {
      const list = (await api.request('GET', `/v1/reminders/${reminder.id}/occurrences?count=2&after=${after}`, { token: bearer })).body
        .occurrences as { localDate: string; at: string; status: string }[];
      expect(list).toHaveLength(2);
      seen.push(...list.map((o): [string, string] => [o.localDate, o.status]));
      after = list[list.length - 1]!.at;
    }
    expect(seen.slice(0, 5)).toEqual(['2027-06-01', '2027-06-02', '2027-06-03', '2027-06-04', '2027-06-05'].map((d) => [d, 'sent']));
    expect(new Set(seen.map(([d]) => d)).size).toBe(seen.length);
  });

  it('keeps the pending occurrence of an edit that leaves the schedule alone, and delivers the new title', async () => {
    api.clock.set('2027-07-01T12:00:00Z');
    const bearer = await user('editor', { timeZone: 'Europe/Paris', quietHours: { start: '22:00', end: '07:00' } });
    const reminder = await create(bearer, { title: 'old', localTime: '23:00', recurrence: 'FREQ=DAILY' });
    const [before] = await pending(reminder.id);
    // 23:00 on 07-01 waits for the end of quiet hours (07:00 on 07-02); the title changes meanwhile.
    api.clock.set('2027-07-01T23:30:00Z');
    const edited = await api.request('PATCH', `/v1/reminders/${reminder.id}`, { token: bearer, body: { title: 'new' } });
    expect(edited.body).toMatchObject({ version: 2, title: 'new', nextOccurrence: { at: '2027-07-01T21:00:00.000Z' } });
    const [after] = await pending(reminder.id);
    expect([after!.id, after!.run_at.toISOString()]).toEqual([before!.id, '2027-07-02T05:00:00.000Z']);
    await runNext(reminder.id);
    expect((await pushes('sim-editor')).map((p) => [p.title, p.occurrence])).toEqual([['new', '2027-07-01']]);
  });

  it('keeps retry state across an edit: a job waiting out a provider Retry-After delivers the new content once', async () => {
    api.clock.set('2027-07-10T12:00:00Z');
    const bearer = await user('retry', { timeZone: 'UTC' }, { pushToken: 'sim-429-retry' });
    const reminder = await create(bearer, { title: 'first', localTime: '13:00', recurrence: 'FREQ=DAILY' });
    const failed = await runNext(reminder.id);
    expect([failed.status, failed.attempts]).toEqual(['queued', 1]);
    expect(failed.run_at.toISOString()).toBe('2027-07-10T13:02:00.000Z');
    await api.request('PATCH', `/v1/reminders/${reminder.id}`, { token: bearer, body: { title: 'second' } });
    await api.request('PUT', '/v1/me/devices/phone', { token: bearer, body: { platform: 'ios', pushToken: 'sim-retry-ok' } });
    const [job] = await pending(reminder.id);
    expect(job!.id).toBe(failed.id);
    expect((await runNext(reminder.id)).status).toBe('succeeded');
    expect((await pushes('sim-retry-ok')).map((p) => p.title)).toEqual(['second']);
  });

  it('an occurrence that reached one device while another kept failing is sent, not skipped, when its retries go stale', async () => {
    api.clock.set('2027-07-20T12:00:00Z');
    const bearer = await user('half', { timeZone: 'UTC' });
    await api.request('PUT', '/v1/me/devices/tablet', { token: bearer, body: { platform: 'android', pushToken: 'sim-500-half-tablet' } });
    const reminder = await create(bearer, { title: 'Half', localTime: '13:00', recurrence: 'FREQ=DAILY' });
    const failed = await runNext(reminder.id);
    expect([failed.status, failed.attempts]).toEqual(['queued', 1]);
    // The retries outlast the six-hour window.
    await runAt(failed, '2027-07-20T19:30:00Z');
    const [state] = await occurrencesOf(bearer, reminder.id, 'after=2027-07-20T00:00:00Z&count=1');
    expect(state).toMatchObject({ localDate: '2027-07-20', status: 'sent' });
    expect((await pushes('sim-half')).map((p) => p.occurrence)).toEqual(['2027-07-20']);
  });

  it('stores zone names canonical: an alias from a device is the same zone, not travel', async () => {
    api.clock.set('2027-08-01T12:00:00Z');
    const bearer = await user('kolkata', { timeZone: 'asia/kolkata' });
    const reminder = await create(bearer, { title: 'Chai', localTime: '17:00', recurrence: 'FREQ=DAILY' });
    for (const spelling of ['Asia/Calcutta', 'Asia/Kolkata', 'ASIA/CALCUTTA']) {
      const res = await api.request('PUT', '/v1/me/devices/phone', {
        token: bearer,
        body: { platform: 'ios', pushToken: 'sim-kolkata', timeZone: spelling },
      });
      expect(res.status).toBe(200);
      expect(res.body.timeZone).toBe('Asia/Kolkata');
    }
    expect((await api.request('GET', '/v1/me', { token: bearer })).body.timeZone).toBe('Asia/Kolkata');
    expect((await api.request('GET', `/v1/reminders/${reminder.id}`, { token: bearer })).body).toMatchObject({
      version: 1,
      timeZone: 'Asia/Kolkata',
    });
  });

  it.each([
    ['recurrence', { recurrence: 'FREQ=DAILY;UNTIL=20270101', startDate: '2027-02-01' }],
    ['recurrence', { recurrence: 'FREQ=DAILY;COUNT=3', startDate: '2027-08-01' }],
    ['startDate', { startDate: '2027-08-05' }],
    ['localTime', { localTime: '08:00' }],
  ])('refuses a reminder that could never fire (%s), writing nothing', async (path, change) => {
    api.clock.set('2027-08-10T12:00:00Z');
    const bearer = await api.token('kolkata');
    // Reminders, and reminder jobs of no reminder (the worker keeps chaining the others meanwhile).
    const count = async () =>
      (
        await db.pool.query(
          `SELECT (SELECT count(*) FROM reminders) + (SELECT count(*) FROM jobs WHERE kind = 'send_reminder'
             AND (payload->>'reminderId')::uuid NOT IN (SELECT id FROM reminders)) AS n`,
        )
      ).rows[0].n;
    const before = await count();
    // The last case is a one-off for today (the default startDate) at 08:00 in Kolkata, where it is 17:30.
    const res = await api.request('POST', '/v1/reminders', { token: bearer, body: { title: 'never', localTime: '18:00', ...change } });
    expect(res.status).toBe(400);
    expect(res.body.errors.map((e: { path: string }) => e.path)).toContain(path);
    expect(await count()).toBe(before);
  });

  it('delivers a one-off reminder once, then has no next occurrence', async () => {
    api.clock.set('2027-09-01T12:00:00Z');
    const bearer = await user('once', { timeZone: 'America/Chicago' });
    const reminder = await create(bearer, { title: 'Dentist', localTime: '08:30', startDate: '2027-09-03' });
    expect(reminder).toMatchObject({ recurrence: null, nextOccurrence: { at: '2027-09-03T13:30:00.000Z' } });
    await runNext(reminder.id);
    expect((await pushes('sim-once')).map((p) => p.occurrence)).toEqual(['2027-09-03']);
    expect(await pending(reminder.id)).toEqual([]);
    expect((await api.request('GET', `/v1/reminders/${reminder.id}`, { token: bearer })).body.nextOccurrence).toBeNull();
  });

  it('a disabled reminder lists no coming date as scheduled (it plans none), and lists them again once enabled', async () => {
    // Found by hand: a paused reminder's occurrences said `scheduled` while its nextOccurrence was null.
    api.clock.set('2027-09-10T12:00:00Z');
    const bearer = await user('pauser', { timeZone: 'Europe/Paris' });
    const reminder = await create(bearer, { title: 'Sale', localTime: '09:00', recurrence: 'FREQ=DAILY' });
    const list = async () =>
      (await api.request('GET', `/v1/reminders/${reminder.id}/occurrences?count=3`, { token: bearer })).body.occurrences as {
        localDate: string;
        status: string;
      }[];
    expect((await list()).map((o) => `${o.localDate}:${o.status}`)).toEqual([
      '2027-09-11:scheduled',
      '2027-09-12:scheduled',
      '2027-09-13:scheduled',
    ]);
    // Skipped ahead while enabled: a record, shown whatever the switch says.
    expect((await api.request('POST', `/v1/reminders/${reminder.id}/occurrences/2027-09-12/skip`, { token: bearer })).status).toBe(200);
    expect(
      (await api.request('PATCH', `/v1/reminders/${reminder.id}`, { token: bearer, body: { enabled: false } })).body.nextOccurrence,
    ).toBeNull();
    expect((await list()).map((o) => `${o.localDate}:${o.status}`)).toEqual(['2027-09-12:skipped']);
    expect(await pending(reminder.id)).toEqual([]);
    expect((await api.request('PATCH', `/v1/reminders/${reminder.id}`, { token: bearer, body: { enabled: true } })).status).toBe(200);
    expect((await list()).map((o) => `${o.localDate}:${o.status}`)).toEqual([
      '2027-09-11:scheduled',
      '2027-09-12:skipped',
      '2027-09-13:scheduled',
    ]);
  });

  describe('actions', () => {
    let bearer: string;
    let reminderId: string;

    beforeAll(async () => {
      api.clock.set('2027-10-01T12:00:00Z');
      bearer = await user('actor', { timeZone: 'Europe/Madrid' });
      reminderId = (await create(bearer, { title: 'Walk', localTime: '18:00', recurrence: 'FREQ=DAILY' })).id;
    });
    const act = (date: string, action: string, body?: unknown, token = bearer) =>
      api.request('POST', `/v1/reminders/${reminderId}/occurrences/${date}/${action}`, { token, body });

    it('done before delivery: not delivered, and the chain moves to the next date', async () => {
      const done = await act('2027-10-01', 'done');
      expect(done.status).toBe(200);
      expect(done.body).toMatchObject({ localDate: '2027-10-01', status: 'done', actedAt: '2027-10-01T12:00:00.000Z' });
      expect((await act('2027-10-01', 'done')).body).toEqual(done.body);
      const [next] = await pending(reminderId);
      expect(next!.payload.localDate).toBe('2027-10-02');
      expect(await pushes('sim-actor')).toEqual([]);
    });

    it('snooze after delivery: delivered again once, at now + minutes, under the same collapse id', async () => {
      await runNext(reminderId); // 10-02 18:00 CEST
      api.clock.set('2027-10-02T16:05:00Z');
      expect((await act('2027-10-02', 'snooze', { minutes: 10 })).body).toMatchObject({
        status: 'snoozed',
        snoozedUntil: '2027-10-02T16:15:00.000Z',
      });
      // The same request again (a retried tap) replaces the first: still one re-delivery.
      api.clock.set('2027-10-02T16:06:00Z');
      expect((await act('2027-10-02', 'snooze', { minutes: 10 })).body).toMatchObject({
        status: 'snoozed',
        snoozedUntil: '2027-10-02T16:16:00.000Z',
      });
      const snoozes = (await pending(reminderId)).filter((j) => j.payload.snooze);
      expect(snoozes).toHaveLength(1);
      await runAt(snoozes[0]!, '2027-10-02T16:16:00Z');
      const sent = await pushes('sim-actor');
      expect(sent.map((p) => [p.occurrence, p.created_at.toISOString()])).toEqual([
        ['2027-10-02', '2027-10-02T16:00:00.000Z'],
        ['2027-10-02', '2027-10-02T16:16:00.000Z'],
      ]);
      expect(new Set(sent.map((p) => p.collapse_id))).toEqual(new Set([collapseIdFor(`reminder:${reminderId}`)]));
      // The next regular occurrence is unaffected.
      expect((await pending(reminderId)).map((j) => j.payload.localDate)).toEqual(['2027-10-03']);
    });

    it('skip: only before delivery (409 after); a skipped date ahead is never delivered', async () => {
      expect((await act('2027-10-02', 'skip')).status).toBe(409);
      expect((await act('2027-10-04', 'skip')).body).toMatchObject({ status: 'skipped', reason: 'user' });
      await runNext(reminderId); // 10-03
      expect((await pending(reminderId)).map((j) => j.payload.localDate)).toEqual(['2027-10-05']);
      const states = await occurrencesOf(bearer, reminderId, 'after=2027-10-01T00:00:00Z&count=5');
      expect(states.map((o) => [o.localDate, o.status, o.reason])).toEqual([
        ['2027-10-01', 'done', undefined],
        ['2027-10-02', 'snoozed', undefined],
        ['2027-10-03', 'sent', undefined],
        ['2027-10-04', 'skipped', 'user'],
        ['2027-10-05', 'scheduled', undefined],
      ]);
    });

    it("snoozing yesterday's notification after today's arrived re-delivers it (a snooze is late only by its own time)", async () => {
      // 10-02 was delivered yesterday and 10-03 is already out: a new snooze of 10-02 still re-delivers it.
      api.clock.set('2027-10-03T17:00:00Z');
      expect((await act('2027-10-02', 'snooze', { minutes: 5 })).status).toBe(200);
      const [snooze] = (await pending(reminderId)).filter((j) => j.payload.snooze);
      await runAt(snooze!, '2027-10-03T17:05:00Z');
      expect((await pushes('sim-actor')).filter((p) => p.created_at.toISOString() === '2027-10-03T17:05:00.000Z')).toHaveLength(1);
    });

    it("refuses a snooze that nothing would deliver (409): the reminder disabled, or the user's notifications off", async () => {
      // Found by the calendar simulation (seed 2989772833): a snooze of a disabled reminder was accepted and lapsed unseen.
      const other = await create(bearer, { title: 'Stretch', localTime: '07:00', recurrence: 'FREQ=DAILY' });
      await runNext(other.id); // 10-04 07:00 CEST, delivered
      const snooze = (token = bearer) =>
        api.request('POST', `/v1/reminders/${other.id}/occurrences/2027-10-04/snooze`, { token, body: { minutes: 10 } });
      expect((await api.request('PATCH', `/v1/reminders/${other.id}`, { token: bearer, body: { enabled: false } })).status).toBe(200);
      const refused = await snooze();
      expect(refused.status).toBe(409);
      expect(refused.body.detail).toMatch(/disabled/);
      expect((await api.request('PATCH', `/v1/reminders/${other.id}`, { token: bearer, body: { enabled: true } })).status).toBe(200);
      expect((await api.request('PATCH', '/v1/me', { token: bearer, body: { notificationsEnabled: false } })).status).toBe(200);
      expect((await snooze()).status).toBe(409);
      expect((await pending(other.id)).filter((j) => j.payload.snooze)).toEqual([]);
      expect((await api.request('PATCH', '/v1/me', { token: bearer, body: { notificationsEnabled: true } })).status).toBe(200);
      expect((await snooze()).status).toBe(200);
    });

    it('refuses what it cannot mean: a date the rule does not produce (400), another user (404), a bad snooze (400)', async () => {
      expect((await act('2027-13-01', 'done')).status).toBe(400);
      const weekly = await create(bearer, { title: 'Mondays', localTime: '09:00', recurrence: 'FREQ=WEEKLY;BYDAY=MO' });
      const tuesday = await api.request('POST', `/v1/reminders/${weekly.id}/occurrences/2027-10-05/done`, { token: bearer });
      expect(tuesday.status).toBe(400);
      expect(tuesday.body.errors[0].path).toBe('localDate');
      const stranger = await api.token('stranger');
      expect((await act('2027-10-05', 'done', undefined, stranger)).status).toBe(404);
      expect((await act('2027-10-03', 'snooze', { minutes: 0 })).status).toBe(400);
      expect((await act('2027-10-03', 'snooze', { minutes: 1441 })).status).toBe(400);
      expect((await act('2027-10-05', 'snooze', { minutes: 5 })).status).toBe(409);
    });
  });
});
