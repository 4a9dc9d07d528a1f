import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestDatabase, type TestDatabase } from '../support/database.js';
import { Registry } from 'prom-client';
import { collapseIdFor } from '@nudge/push';
import { ReminderSweep } from '@nudge/reminders';
import { eventually, startTestApi, type TestApi } from '../support/api-app.js';
import { makeUser } from '../factories/user.js';
import { simulatedPushesTo } from '../support/simulated-pushes.js';

// Reminders end to end: HTTP in, a real worker in the same process, a real
// PostgreSQL, the simulated push provider, and a pinned clock that the test
// moves to each due time.

interface JobView {
  id: string;
  status: string;
  run_at: Date;
  attempts: number;
  idempotency_key: string;
  payload: { localDate: string; at: string; version: number };
}

describe('reminders end to end', () => {
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

  const user = (id: string, profile: Record<string, unknown>, token = `sim-${id}-token-0001`) =>
    makeUser(api, id, profile, { phone: { platform: 'ios', pushToken: token } });

  async function jobsOf(reminderId: string): Promise<JobView[]> {
    const { rows } = await db.pool.query<JobView>(
      `SELECT j.id, j.status, j.run_at, j.attempts, j.idempotency_key, j.payload
         FROM reminder_jobs o JOIN jobs j ON j.id = o.job_id WHERE o.reminder_id = $1 ORDER BY j.id`,
      [reminderId],
    );
    return rows;
  }

  const queued = async (reminderId: string) => (await jobsOf(reminderId)).filter((j) => j.status === 'queued');

  const pushesTo = (token: string) => simulatedPushesTo<{ title: string; collapse_id: string }>(db.pool, token, 'title, collapse_id');

  /** Moves the clock to `at` and waits until the worker has finished the job. */
  async function runJobAt(job: JobView, at: Date | string): Promise<JobView> {
    api.clock.set(at);
    return eventually(async () => {
      const [row] = (await db.pool.query<JobView>(`SELECT * FROM jobs WHERE id = $1`, [job.id])).rows;
      return row && row.status !== 'running' && (row.status !== 'queued' || row.run_at.getTime() !== job.run_at.getTime())
        ? row
        : undefined;
    }, `job ${job.id} to run`);
  }

  describe.each([
    // zone, local time, transition day, the occurrence in UTC, the next day's occurrence in UTC
    ['America/New_York', '02:30', '2027-03-14', '2027-03-14T07:30:00.000Z', '2027-03-15T06:30:00.000Z'], // spring forward: 02:30 does not exist → 03:30 EDT
    ['America/New_York', '01:30', '2027-11-07', '2027-11-07T05:30:00.000Z', '2027-11-08T06:30:00.000Z'], // fall back: 01:30 twice → the first (EDT)
    ['Australia/Sydney', '02:30', '2027-10-03', '2027-10-02T16:30:00.000Z', '2027-10-03T15:30:00.000Z'], // spring forward (southern): → 03:30 AEDT
    ['Australia/Sydney', '02:30', '2027-04-04', '2027-04-03T15:30:00.000Z', '2027-04-04T16:30:00.000Z'], // fall back (southern): first 02:30 is AEDT
  ])('a daily reminder in %s at %s across %s', (zone, localTime, day, firstUtc, nextUtc) => {
    it('queues the right UTC instant, delivers once, and chains the next occurrence', async () => {
      const id = `dst-${zone.replace('/', '-')}-${day}`.toLowerCase();
      const token = `sim-${id}`;
      api.clock.set(`${day}T00:00:00Z`);
      api.clock.advance(-36 * 3600_000);
      const bearer = await user(id, { timeZone: zone }, token);
      const res = await api.request('POST', '/v1/reminders', {
        token: bearer,
        body: { title: `Wake ${id}`, localTime, recurrence: 'FREQ=DAILY', startDate: day },
      });
      expect(res.status).toBe(201);
      expect(res.body.nextOccurrence.at).toBe(firstUtc);

      const [job] = await queued(res.body.id);
      expect(job!.run_at.toISOString()).toBe(firstUtc);
      expect(job!.idempotency_key).toBe(`reminder:${res.body.id}:v1:${day}`);

      const done = await runJobAt(job!, firstUtc);
      expect(done.status).toBe('succeeded');
      // Every push of a reminder shares one collapse id: a newer occurrence replaces an older one on the phone.
      expect(await pushesTo(token)).toEqual([{ title: `Wake ${id}`, collapse_id: collapseIdFor(`reminder:${res.body.id}`) }]);
      const deliveries = await api.request('GET', `/v1/reminders/${res.body.id}/deliveries`, { token: bearer });
      const delivery = deliveries.body.deliveries.find((d: { jobId: string }) => d.jobId === job!.id);
      expect(delivery).toMatchObject({
        status: 'succeeded',
        devices: [{ installationId: 'phone', status: 'sent', provider: 'simulated' }],
      });
      // Instants in the API's one format (UTC, `Z`), as every other field has them.
      expect(delivery.devices[0].updatedAt).toMatch(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/);

      const next = await queued(res.body.id);
      expect(next).toHaveLength(1);
      expect(next[0]!.run_at.toISOString()).toBe(nextUtc);
    });
  });

  it('after an edit, only the new version delivers; after a delete, nothing does', async () => {
    api.clock.set('2027-05-03T12:00:00Z');
    const bearer = await user('editor', { timeZone: 'Europe/Berlin' }, 'sim-editor');
    const created = await api.request('POST', '/v1/reminders', {
      token: bearer,
      body: { title: 'v1', localTime: '08:00', recurrence: 'FREQ=DAILY' },
    });
    const [oldJob] = await queued(created.body.id);
    expect(oldJob!.run_at.toISOString()).toBe('2027-05-04T06:00:00.000Z');

    const edited = await api.request('PATCH', `/v1/reminders/${created.body.id}`, {
      token: bearer,
      body: { title: 'v2', localTime: '09:15' },
    });
    expect(edited.status).toBe(200);
    expect(edited.body).toMatchObject({
      version: 2,
      title: 'v2',
      nextOccurrence: { at: '2027-05-04T07:15:00.000Z', local: '2027-05-04T09:15:00.000+02:00' },
    });
    const jobs = await jobsOf(created.body.id);
    expect(jobs.find((j) => j.id === oldJob!.id)!.status).toBe('cancelled');
    const [newJob] = await queued(created.body.id);
    expect(newJob!.idempotency_key).toBe(`reminder:${created.body.id}:v2:2027-05-04`);

    // The old instant passes: nothing. The new one: v2 arrives, once.
    api.clock.set('2027-05-04T06:00:00Z');
    await new Promise((r) => setTimeout(r, 200));
    expect(await pushesTo('sim-editor')).toEqual([]);
    await runJobAt(newJob!, '2027-05-04T07:15:00Z');
    expect((await pushesTo('sim-editor')).map((p) => p.title)).toEqual(['v2']);

    const [following] = await queued(created.body.id);
    expect((await api.request('DELETE', `/v1/reminders/${created.body.id}`, { token: bearer })).status).toBe(204);
    expect((await db.pool.query(`SELECT status FROM jobs WHERE id = $1`, [following!.id])).rows[0].status).toBe('cancelled');
    api.clock.set('2027-05-05T07:15:00Z');
    await new Promise((r) => setTimeout(r, 200));
    expect(await pushesTo('sim-editor')).toHaveLength(1);
  });

  it('moves reminders that follow the user when a device reports a new zone (travel), but not pinned ones', async () => {
    api.clock.set('2027-06-01T12:00:00Z');
    const bearer = await user('traveller', { timeZone: 'America/New_York' }, 'sim-traveller');
    const follows = await api.request('POST', '/v1/reminders', {
      token: bearer,
      body: { title: 'follows', localTime: '08:00', recurrence: 'FREQ=DAILY' },
    });
    const pinned = await api.request('POST', '/v1/reminders', {
      token: bearer,
      body: { title: 'pinned', localTime: '08:00', timeZone: 'America/New_York', recurrence: 'FREQ=DAILY' },
    });
    expect(follows.body.nextOccurrence.at).toBe('2027-06-02T12:00:00.000Z');

    const moved = await api.request('PUT', '/v1/me/devices/phone', {
      token: bearer,
      body: { platform: 'ios', pushToken: 'sim-traveller', timeZone: 'Europe/London' },
    });
    expect(moved.status).toBe(200);
    const after = await api.request('GET', `/v1/reminders/${follows.body.id}`, { token: bearer });
    expect(after.body).toMatchObject({
      version: 2,
      timeZone: 'Europe/London',
      followsUserTimeZone: true,
      nextOccurrence: { at: '2027-06-02T07:00:00.000Z' },
    });
    expect((await queued(follows.body.id)).map((j) => j.run_at.toISOString())).toEqual(['2027-06-02T07:00:00.000Z']);
    const stay = await api.request('GET', `/v1/reminders/${pinned.body.id}`, { token: bearer });
    expect(stay.body).toMatchObject({ version: 1, timeZone: 'America/New_York', nextOccurrence: { at: '2027-06-02T12:00:00.000Z' } });
  });

  it('waits out quiet hours, then delivers once without using an attempt', async () => {
    api.clock.set('2027-07-01T12:00:00Z');
    const bearer = await user('sleeper', { timeZone: 'Europe/Paris' }, 'sim-sleeper');
    const created = await api.request('POST', '/v1/reminders', {
      token: bearer,
      body: { title: 'early', localTime: '06:00', recurrence: 'FREQ=DAILY' },
    });
    const [job] = await queued(created.body.id);
    expect(job!.run_at.toISOString()).toBe('2027-07-02T04:00:00.000Z');
    // Quiet hours that the plan did not see (written behind the API's back): checked again when the job runs.
    await db.pool.query(`UPDATE users SET quiet_hours_start = '22:00', quiet_hours_end = '07:00' WHERE id = 'sleeper'`);

    const snoozed = await runJobAt(job!, '2027-07-02T04:00:00Z');
    expect(snoozed.status).toBe('queued');
    expect(snoozed.run_at.toISOString()).toBe('2027-07-02T05:00:00.000Z');
    expect(await pushesTo('sim-sleeper')).toEqual([]);

    const done = await runJobAt(snoozed, '2027-07-02T05:00:00Z');
    expect(done.status).toBe('succeeded');
    expect(await pushesTo('sim-sleeper')).toHaveLength(1);
    // The next occurrence is scheduled at the end of quiet hours straight away.
    expect((await queued(created.body.id))[0]!.run_at.toISOString()).toBe('2027-07-03T05:00:00.000Z');

    // Quiet hours changed through the API re-plan the pending occurrence at once: lifted, it runs at 06:00 again.
    await api.request('PATCH', '/v1/me', { token: bearer, body: { quietHours: null } });
    expect((await queued(created.body.id)).map((j) => j.run_at.toISOString())).toEqual(['2027-07-03T04:00:00.000Z']);
  });

  it('after a 10-hour worker outage sends no burst: stale occurrences are skipped and the chain continues', async () => {
    api.clock.set('2027-08-01T12:00:00Z');
    const bearer = await user('outage', { timeZone: 'UTC' }, 'sim-outage');
    const created = await api.request('POST', '/v1/reminders', {
      token: bearer,
      body: { title: 'daily', localTime: '08:00', recurrence: 'FREQ=DAILY' },
    });
    const [job] = await queued(created.body.id);
    const done = await runJobAt(job!, '2027-08-02T18:00:00Z');
    expect(done.status).toBe('succeeded');
    expect(await pushesTo('sim-outage')).toEqual([]);
    const ledger = (await db.pool.query(`SELECT status, skip_reason FROM push_deliveries WHERE job_id = $1`, [job!.id])).rows;
    expect(ledger).toEqual([{ status: 'skipped', skip_reason: 'stale' }]);
    expect((await queued(created.body.id)).map((j) => j.run_at.toISOString())).toEqual(['2027-08-03T08:00:00.000Z']);
  });

  it('the sweep re-enqueues an enabled reminder whose chain broke, and counts it', async () => {
    api.clock.set('2027-08-10T12:00:00Z');
    const bearer = await user('broken', { timeZone: 'Europe/Madrid' }, 'sim-broken');
    const created = await api.request('POST', '/v1/reminders', {
      token: bearer,
      body: { title: 'chain', localTime: '10:00', recurrence: 'FREQ=DAILY' },
    });
    const disabled = await api.request('POST', '/v1/reminders', {
      token: bearer,
      body: { title: 'off', localTime: '10:00', recurrence: 'FREQ=DAILY', enabled: false },
    });
    const [job] = await queued(created.body.id);
    // An operator cancels the pending job by mistake: the chain is broken.
    await db.pool.query(`UPDATE jobs SET status = 'cancelled' WHERE id = $1`, [job!.id]);
    expect(await queued(created.body.id)).toEqual([]);

    const sweep = api.app.get(ReminderSweep);
    expect(await sweep.sweep()).toBe(1);
    expect(await sweep.sweep()).toBe(0);
    const repaired = await queued(created.body.id);
    expect(repaired.map((j) => [j.run_at.toISOString(), j.payload.version])).toEqual([['2027-08-11T08:00:00.000Z', 2]]);
    expect(await queued(disabled.body.id)).toEqual([]);
    const metrics = await api.app.get(Registry).metrics();
    expect(metrics).toMatch(/nudge_reminder_sweep_repaired_total \d+/);
  });

  it('makes one reminder and one job for the same Idempotency-Key twice, and 409 for another body', async () => {
    api.clock.set('2027-09-01T12:00:00Z');
    const bearer = await user('idem', { timeZone: 'Asia/Kolkata' });
    const body = { title: 'once', localTime: '09:00', recurrence: 'FREQ=WEEKLY;BYDAY=MO' };
    const headers = { 'idempotency-key': 'create-once-1' };
    const [first, second] = await Promise.all([
      api.request('POST', '/v1/reminders', { token: bearer, body, headers }),
      api.request('POST', '/v1/reminders', { token: bearer, body, headers }),
    ]);
    expect([first.status, second.status]).toEqual([201, 201]);
    expect(second.body).toEqual(first.body);
    expect((await db.pool.query(`SELECT count(*)::int AS n FROM reminders WHERE user_id = 'idem'`)).rows[0].n).toBe(1);
    expect(await jobsOf(first.body.id)).toHaveLength(1);
    const other = await api.request('POST', '/v1/reminders', { token: bearer, body: { ...body, title: 'twice' }, headers });
    expect(other.status).toBe(409);
  });

  it('reads a reminder back exactly as it was created, every field (GET is one statement of its own)', async () => {
    api.clock.set('2027-08-01T12:00:00Z');
    const bearer = await user('reader', { timeZone: 'Europe/Berlin' });
    const created = await api.request('POST', '/v1/reminders', {
      token: bearer,
      body: {
        title: { en: 'Stretch', de: 'Dehnen' },
        body: { en: 'Five minutes', de: 'Fünf Minuten' },
        defaultLocale: 'en',
        localTime: '07:30',
        recurrence: 'FREQ=WEEKLY;BYDAY=MO,WE',
        startDate: '2027-08-02',
        category: 'health',
        timeSensitive: true,
        data: { screen: 'stretch', steps: [1, 2] },
        sound: 'chime.caf',
        badge: 3,
        threadId: 'health',
        androidChannelId: 'reminders',
        silent: false,
      },
    });
    expect(created.status).toBe(201);
    const read = await api.request('GET', `/v1/reminders/${created.body.id}`, { token: bearer });
    expect(read.status).toBe(200);
    expect(read.body).toEqual(created.body);
    expect(read.body).toMatchObject({
      timeZone: 'Europe/Berlin',
      followsUserTimeZone: true,
      nextOccurrence: { at: '2027-08-02T05:30:00.000Z', local: '2027-08-02T07:30:00.000+02:00' },
      interruptionLevel: 'time-sensitive',
    });
    const done = await api.request('POST', '/v1/reminders', {
      token: bearer,
      body: { title: 'Once', localTime: '15:00', startDate: '2027-08-01' },
    });
    expect(done.status).toBe(201);
    expect((await api.request('GET', `/v1/reminders/${done.body.id}`, { token: bearer })).body.nextOccurrence).toMatchObject({
      at: '2027-08-01T13:00:00.000Z',
    });
    await api.request('PATCH', `/v1/reminders/${done.body.id}`, { token: bearer, body: { enabled: false } });
    expect((await api.request('GET', `/v1/reminders/${done.body.id}`, { token: bearer })).body.nextOccurrence).toBeNull();
    for (const id of ['not-a-uuid', '00000000-0000-4000-8000-000000000000']) {
      const missing = await api.request('GET', `/v1/reminders/${id}`, { token: bearer });
      expect(missing.status).toBe(404);
      expect(missing.headers.get('content-type')).toMatch(/application\/problem\+json/);
      expect(missing.body).toMatchObject({ status: 404, title: 'Not Found' });
    }
  });

  it('lists with a cursor, and keeps other users out with 404', async () => {
    api.clock.set('2027-10-01T12:00:00Z');
    const bearer = await user('lister', { timeZone: 'Europe/London' });
    for (let i = 0; i < 5; i++) {
      api.clock.advance(1000);
      await api.request('POST', '/v1/reminders', { token: bearer, body: { title: `r${i}`, localTime: '08:00', recurrence: 'FREQ=DAILY' } });
    }
    const page1 = await api.request('GET', '/v1/reminders?limit=3', { token: bearer });
    const page2 = await api.request('GET', `/v1/reminders?limit=3&cursor=${page1.body.nextCursor}`, { token: bearer });
    expect([...page1.body.items, ...page2.body.items].map((r: { title: string }) => r.title)).toEqual(['r0', 'r1', 'r2', 'r3', 'r4']);
    expect(page2.body.nextCursor).toBeNull();

    const other = await user('other', { timeZone: 'Europe/London' });
    const id = page1.body.items[0].id;
    for (const [method, path] of [
      ['GET', `/v1/reminders/${id}`],
      ['PATCH', `/v1/reminders/${id}`],
      ['DELETE', `/v1/reminders/${id}`],
      ['GET', `/v1/reminders/${id}/occurrences`],
      ['GET', `/v1/reminders/${id}/deliveries`],
    ] as const) {
      const res = await api.request(method, path, { token: other, body: method === 'PATCH' ? { title: 'mine' } : undefined });
      expect(res.status, `${method} ${path}`).toBe(404);
    }
    expect((await api.request('GET', `/v1/reminders/${id}`, { token: bearer })).body.title).toBe('r0');
  });

  it('lists occurrences by the scheduling code, strictly after `after`', async () => {
    api.clock.set('2026-12-15T12:00:00Z');
    const bearer = await api.token('lister');
    const created = await api.request('POST', '/v1/reminders', {
      token: bearer,
      body: {
        title: 'monthly',
        localTime: '07:45',
        timeZone: 'America/Chicago',
        recurrence: 'FREQ=MONTHLY;BYDAY=MO;BYSETPOS=1;COUNT=3',
        startDate: '2027-01-01',
      },
    });
    const res = await api.request('GET', `/v1/reminders/${created.body.id}/occurrences?count=5&after=2026-12-31T00:00:00Z`, {
      token: bearer,
    });
    expect(res.status).toBe(200);
    expect(res.body.occurrences).toEqual([
      { localDate: '2027-01-04', at: '2027-01-04T13:45:00.000Z', local: '2027-01-04T07:45:00.000-06:00', status: 'scheduled' },
      { localDate: '2027-02-01', at: '2027-02-01T13:45:00.000Z', local: '2027-02-01T07:45:00.000-06:00', status: 'scheduled' },
      { localDate: '2027-03-01', at: '2027-03-01T13:45:00.000Z', local: '2027-03-01T07:45:00.000-06:00', status: 'scheduled' },
    ]);
  });

  it.each([
    ['title', { title: '' }],
    ['localTime', { localTime: '24:00' }],
    ['localTime', { localTime: '8:00' }],
    ['timeZone', { timeZone: 'EST' }],
    ['recurrence', { recurrence: 'FREQ=HOURLY' }],
    ['recurrence', { recurrence: 'DTSTART:20270101T000000Z;FREQ=DAILY' }],
    ['recurrence', { recurrence: 'FREQ=DAILY;COUNT=0' }],
    ['recurrence', { recurrence: 'FREQ=DAILY;BYHOUR=8' }],
    ['startDate', { startDate: '2027-02-30' }],
    ['data', { data: 'not an object' }],
    ['enabled', { enabled: 'yes' }],
  ])('refuses a bad %s with a 400 naming it, and writes nothing', async (field, change) => {
    const bearer = await api.token('lister');
    const before = (
      await db.pool.query(`SELECT (SELECT count(*) FROM reminders) + (SELECT count(*) FROM jobs WHERE kind = 'send_reminder') AS n`)
    ).rows[0].n;
    const res = await api.request('POST', '/v1/reminders', {
      token: bearer,
      body: { title: 'ok', localTime: '08:00', recurrence: 'FREQ=DAILY', ...change },
    });
    expect(res.status).toBe(400);
    expect(res.headers.get('content-type')).toMatch(/problem\+json/);
    expect(res.body.errors.map((e: { path: string }) => e.path)).toContain(field);
    const after = (
      await db.pool.query(`SELECT (SELECT count(*) FROM reminders) + (SELECT count(*) FROM jobs WHERE kind = 'send_reminder') AS n`)
    ).rows[0].n;
    expect(after).toBe(before);
  });
});
