import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestDatabase, type TestDatabase } from '../support/database.js';
import { eventually, startTestApi, type TestApi } from '../support/api-app.js';
import {
  ALICE_PHONE_TOKEN,
  ALICE_TABLET_TOKEN,
  buildOpsUserWeek,
  OPS_USER_WEEK_WORKER,
  type OpsUserWeek,
  WEEK_END,
} from '../factories/ops-user-week.js';

interface Entry {
  kind: string;
  at: string;
  title: string | null;
  reminderId: string | null;
  localDate: string | null;
  status: string;
  reason: string | null;
  earliestAt: string | null;
  jobs: { id: string; purpose: string; status: string | null; attempts: number | null; lastError: string | null }[];
  deliveries: { installationId: string | null; pushToken: string | null; provider: string | null; status: string; reason: string | null }[];
}

// "Why didn't Alice get her 8 AM reminder?" answered by the ops API alone,
// on a week made by the real API and worker (test/factories/ops-user-week.ts).
describe('ops: a user, delivery health and what is coming', () => {
  let db: TestDatabase;
  let api: TestApi;
  let week: OpsUserWeek;

  beforeAll(async () => {
    db = await createTestDatabase();
    api = await startTestApi({ databaseUrl: db.url, worker: OPS_USER_WEEK_WORKER });
    week = await buildOpsUserWeek(api, db);
  }, 120_000);
  afterAll(async () => {
    await api?.close();
    await db?.drop();
  });

  const get = (path: string, token = week.ops) => api.request('GET', path, { token });

  it('shows the profile, the devices with masked tokens and why one was deactivated, and the reminders with their next occurrence', async () => {
    const res = await get('/v1/ops/users/alice');
    expect(res.status).toBe(200);
    expect(res.body.profile).toMatchObject({
      userId: 'alice',
      timeZone: 'Europe/Berlin',
      quietHours: { start: '22:00', end: '07:00' },
      notificationsEnabled: false,
    });
    const devices = Object.fromEntries(res.body.devices.map((d: { installationId: string }) => [d.installationId, d]));
    expect(devices.phone).toMatchObject({
      platform: 'ios',
      active: true,
      pushToken: '…7a1b',
      deactivatedReason: null,
      appVersion: '3.2.1',
    });
    expect(devices.tablet).toMatchObject({
      platform: 'android',
      active: false,
      pushToken: '…3c4d',
      deactivatedAt: '2027-03-01T07:00:00.000Z',
    });
    expect(devices.tablet.deactivatedReason).toMatch(/^invalid_token: simulated: token is not registered/);
    const reminders = Object.fromEntries(res.body.reminders.map((r: { title: string }) => [r.title, r]));
    expect(reminders['Morning pill'].nextOccurrence.at).toBe('2027-03-05T07:00:00.000Z');
    expect(reminders['Evening stretch'].nextOccurrence.at).toBe('2027-03-04T22:00:00.000Z');
    // Tokens never leave unmasked, in any part of the answer.
    const text = JSON.stringify(res.body);
    expect(text).not.toContain(ALICE_PHONE_TOKEN);
    expect(text).not.toContain(ALICE_TABLET_TOKEN);
    expect(text).not.toContain('alice-phone-token');
  });

  it("tells what became of every occurrence and notification of the week, and why, with each device's outcome", async () => {
    const res = await get('/v1/ops/users/alice');
    const items: Entry[] = res.body.timeline.items;
    const name = (e: Entry) => (e.kind === 'notification' ? `notification ${e.title}` : `${e.title} ${e.localDate}`);
    expect(items.map((e) => [name(e), e.status, e.reason])).toEqual([
      ['Morning pill 2027-03-04', 'skipped', 'disabled'],
      ['Evening stretch 2027-03-03', 'skipped', 'disabled'],
      ['notification Your order shipped', 'sent', null],
      ['Morning pill 2027-03-03', 'done', null],
      ['Evening stretch 2027-03-02', 'skipped', 'stale'],
      ['Morning pill 2027-03-02', 'sent', null],
      ['Evening stretch 2027-03-01', 'sent', null],
      ['Morning pill 2027-03-01', 'sent', null],
    ]);
    expect(res.body.timeline.nextCursor).toBeNull();
    // Nothing after now: tomorrow's pill is in the reminders, not the history.
    expect(items.every((e) => e.at <= WEEK_END)).toBe(true);

    const first = items[7]!;
    expect(first.jobs).toEqual([expect.objectContaining({ purpose: 'regular', status: 'succeeded', attempts: 1 })]);
    const byDevice = first.deliveries.map((d) => [d.installationId, d.pushToken, d.provider, d.status, d.reason]).sort();
    expect(byDevice).toEqual([
      ['phone', '…7a1b', 'simulated', 'sent', null],
      ['tablet', '…3c4d', 'simulated', 'invalid_token', 'simulated: token is not registered'],
    ]);
    // The quiet hours moved the 23:00 stretch to 07:00 the next morning.
    expect(items[6]).toMatchObject({ at: '2027-03-01T22:00:00.000Z', earliestAt: '2027-03-02T06:00:00.000Z' });
    expect(items[6]!.deliveries.map((d) => [d.installationId, d.status])).toEqual([['phone', 'sent']]);
    // Done in advance: no job ever delivered it.
    expect(items[3]!.deliveries).toEqual([]);
    expect(items[2]!.deliveries.map((d) => [d.installationId, d.status])).toEqual([['phone', 'sent']]);
    expect(items[2]!.jobs[0]).toMatchObject({ id: week.notificationJob, purpose: 'notification', status: 'succeeded' });
    expect(items[0]!.deliveries.map((d) => [d.installationId, d.status, d.reason])).toEqual([['phone', 'skipped', 'disabled']]);
  });

  it('shows a failing delivery with the provider answer and the retry that waits', async () => {
    const res = await get('/v1/ops/users/bob');
    expect(res.status).toBe(200);
    const [entry] = res.body.timeline.items as Entry[];
    expect(entry).toMatchObject({ title: 'Stand-up', localDate: '2027-03-04', status: 'scheduled' });
    expect(entry!.jobs[0]).toMatchObject({ status: 'queued', attempts: 1 });
    expect(entry!.jobs[0]!.lastError).toMatch(/500 InternalServerError/);
    expect(entry!.deliveries.map((d) => [d.status, d.reason, d.pushToken])).toEqual([
      ['failed', 'transient: simulated: 500 InternalServerError', '…n-88'],
    ]);
  });

  it('says when a reminder found no device to send to', async () => {
    const res = await get('/v1/ops/users/frank');
    expect(res.body.devices).toEqual([]);
    const items = res.body.timeline.items as Entry[];
    expect(items.map((e) => [e.title, e.localDate, e.status, e.reason])).toEqual([
      ['Water the plants', '2027-03-01', 'skipped', 'no_device'],
    ]);
    expect(items[0]!.deliveries).toEqual([
      expect.objectContaining({ installationId: null, pushToken: null, deviceRemoved: false, status: 'skipped', reason: 'no_device' }),
    ]);
  });

  it('pages the timeline with a cursor: the pages add up to the whole, in order, without repeats', async () => {
    const whole = (await get('/v1/ops/users/alice/timeline?limit=200')).body.items as Entry[];
    expect(whole).toHaveLength(8);
    const seen: Entry[] = [];
    let cursor: string | null = null;
    let pages = 0;
    do {
      const res = await get(`/v1/ops/users/alice/timeline?limit=3${cursor ? `&cursor=${encodeURIComponent(cursor)}` : ''}`);
      expect(res.status).toBe(200);
      expect(res.body.items.length).toBeLessThanOrEqual(3);
      seen.push(...res.body.items);
      cursor = res.body.nextCursor;
      pages++;
    } while (cursor && pages < 10);
    expect(pages).toBe(3);
    expect(seen).toEqual(whole);
  });

  it('answers bad input with problem+json: unknown user 404, bad cursor or limit 400', async () => {
    for (const path of ['/v1/ops/users/nobody', '/v1/ops/users/nobody/timeline']) {
      const res = await get(path);
      expect(res.status, path).toBe(404);
      expect(res.headers.get('content-type')).toMatch(/^application\/problem\+json/);
      expect(res.body.detail).toBe('The user was not found.');
    }
    for (const query of [
      'cursor=nope',
      `cursor=${Buffer.from('[1,"x","y"]').toString('base64url')}`,
      'limit=0',
      'limit=201',
      'limit=abc',
    ]) {
      const res = await get(`/v1/ops/users/alice/timeline?${query}`);
      expect(res.status, query).toBe(400);
      expect(res.body.status).toBe(400);
    }
    expect((await get(`/v1/ops/users/${'x'.repeat(129)}`)).status).toBe(400);
  });

  it('refuses every new route without a token (401) and with a user token (403)', async () => {
    const user = await api.token('alice');
    for (const path of ['/v1/ops/users/alice', '/v1/ops/users/alice/timeline', '/v1/ops/delivery-health', '/v1/ops/upcoming']) {
      const anonymous = await api.request('GET', path);
      expect(anonymous.status, path).toBe(401);
      const refused = await get(path, user);
      expect(refused.status, path).toBe(403);
      expect(JSON.stringify(refused.body)).not.toContain('…7a1b');
    }
  });

  it('shows the last hour of sends per provider and the answers seen most, as the ledger has them', async () => {
    const res = await get('/v1/ops/delivery-health');
    expect(res.status).toBe(200);
    const { rows } = await db.pool.query<{ status: string; n: number }>(
      `SELECT status, count(*)::int AS n FROM push_deliveries
        WHERE provider = 'simulated' AND created_at >= $1 AND created_at < $2 GROUP BY status`,
      [res.body.from, res.body.to],
    );
    const counts = Object.fromEntries(rows.map((r) => [r.status, r.n]));
    // carol's phone sent, her old tablet rejected, bob's phone failed: all in the last hour.
    expect(counts).toEqual({ sent: 1, invalid_token: 1, failed: 1 });
    expect(res.body.providers).toEqual([{ provider: 'simulated', sent: 1, failed: 1, invalidToken: 1, failureRatio: 0.3333 }]);
    expect(res.body.from).toBe('2027-03-04T10:31:00.000Z');
    expect(res.body.lastHourByMinute).toEqual([
      { minute: '2027-03-04T11:20:00.000Z', provider: 'simulated', sent: 1, failed: 0, invalidToken: 1 },
      { minute: '2027-03-04T11:30:00.000Z', provider: 'simulated', sent: 0, failed: 1, invalidToken: 0 },
    ]);
    expect(res.body.topAnswers).toEqual([
      { provider: 'simulated', status: 'failed', answer: 'transient: simulated: 500 InternalServerError', count: 1 },
      { provider: 'simulated', status: 'invalid_token', answer: 'simulated: token is not registered', count: 1 },
    ]);
  });

  it('shows the jobs coming due per minute over the next 24 hours, with the 08:00 herd as the peak', async () => {
    const res = await get('/v1/ops/upcoming');
    expect(res.status).toBe(200);
    expect(res.body).toMatchObject({ from: WEEK_END, to: '2027-03-05T11:30:00.000Z' });
    const { rows } = await db.pool.query<{ minute: Date; n: number }>(
      `SELECT date_trunc('minute', run_at) AS minute, count(*)::int AS n FROM jobs
        WHERE status = 'queued' AND kind = 'send_reminder' AND run_at >= $1 AND run_at < $2 GROUP BY 1 ORDER BY 1`,
      [res.body.from, res.body.to],
    );
    const reminders = res.body.byMinute.filter((m: { kind: string }) => m.kind === 'send_reminder');
    expect(reminders.map((m: { minute: string; due: number }) => [m.minute, m.due])).toEqual(
      rows.map((r) => [r.minute.toISOString(), r.n]),
    );
    // carol's twenty habits and alice's pill at 08:00 Berlin.
    expect(res.body.peaks[0]).toEqual({ minute: '2027-03-05T07:00:00.000Z', kind: 'send_reminder', due: 21 });
    expect(res.body.kinds).toEqual(expect.arrayContaining([{ kind: 'send_reminder', due: rows.reduce((s, r) => s + r.n, 0) }]));
  });

  it('counts every send in nudge_push_sends_total by provider and outcome', async () => {
    const text = await (await fetch(`${api.baseUrl}/metrics`)).text();
    const value = (outcome: string) =>
      Number(text.match(new RegExp(`^nudge_push_sends_total\\{provider="simulated",outcome="${outcome}"\\} (\\d+)`, 'm'))?.[1]);
    const { rows } = await db.pool.query<{ status: string; n: number }>(
      `SELECT status, count(*)::int AS n FROM push_deliveries WHERE provider = 'simulated' GROUP BY status`,
    );
    const ledger = Object.fromEntries(rows.map((r) => [r.status, r.n]));
    // One provider answer per row here: no send was retried.
    expect(value('sent')).toBe(ledger.sent);
    expect(value('invalid_token')).toBe(ledger.invalid_token);
    expect(value('failed')).toBe(ledger.failed);
    expect(text).toMatch(/^nudge_push_sends_total\{provider="apns",outcome="failed"\} 0$/m);
  });

  // Last: it moves the clock past the week, and runs bob's retry with it.
  it('walks entries of the same instant one by one without losing or repeating any', async () => {
    const dora = await api.token('dora');
    expect((await api.request('PUT', '/v1/me', { token: dora, body: { timeZone: 'UTC' } })).status).toBe(201);
    const device = { platform: 'ios', pushToken: 'sim-dora-phone-token-42' };
    expect((await api.request('PUT', '/v1/me/devices/phone', { token: dora, body: device })).status).toBe(201);
    for (const title of ['Alpha', 'Beta']) {
      const body = { title, localTime: '12:00', recurrence: 'FREQ=DAILY' };
      expect((await api.request('POST', '/v1/reminders', { token: dora, body })).status).toBe(201);
    }
    // One notification before, then both reminders and a notification all at 12:00:00.000 on the pinned clock.
    api.clock.set('2027-03-04T11:45:00Z');
    const earlier = { userId: 'dora', title: 'Earlier', idempotencyKey: 'tie-0' };
    expect((await api.request('POST', '/v1/notifications', { token: week.ops, body: earlier })).status).toBe(202);
    // Sent and its job finished before the clock moves: a 15-minute jump while the send is under way lapses its
    // lease (the worker then sends nothing and leaves the job to a reaper whose schedule the pinned clock never reaches).
    await eventually(async () => {
      const { rows } = await db.pool.query<{ sent: number; running: number }>(
        `SELECT (SELECT count(*) FROM push_deliveries WHERE user_id = 'dora' AND status = 'sent')::int AS sent,
                (SELECT count(*) FROM jobs WHERE status = 'running')::int AS running`,
      );
      return rows[0]!.sent === 1 && rows[0]!.running === 0;
    }, "dora's first push");
    api.clock.set('2027-03-04T12:00:00Z');
    const note = { userId: 'dora', title: 'Same instant', idempotencyKey: 'tie-1' };
    expect((await api.request('POST', '/v1/notifications', { token: week.ops, body: note })).status).toBe(202);
    await eventually(async () => {
      const { rows } = await db.pool.query<{ n: number }>(
        `SELECT count(*)::int AS n FROM push_deliveries WHERE user_id = 'dora' AND status = 'sent'`,
      );
      return rows[0]!.n === 4;
    }, "dora's four pushes");
    // A push is recorded sent before its job's completion is written: wait for that too, so that no page sees the job change.
    await eventually(async () => {
      const { rows } = await db.pool.query<{ n: number }>(`SELECT count(*)::int AS n FROM jobs WHERE status = 'running'`);
      return rows[0]!.n === 0;
    }, 'their jobs to finish');

    const whole = (await get('/v1/ops/users/dora/timeline')).body.items as Entry[];
    expect(whole.map((e) => [e.kind, e.at])).toEqual([
      ['occurrence', '2027-03-04T12:00:00.000Z'],
      ['occurrence', '2027-03-04T12:00:00.000Z'],
      ['notification', '2027-03-04T12:00:00.000Z'],
      ['notification', '2027-03-04T11:45:00.000Z'],
    ]);
    const seen: Entry[] = [];
    let cursor: string | null = null;
    for (let page = 0; page < 8; page++) {
      const res = await get(`/v1/ops/users/dora/timeline?limit=1${cursor ? `&cursor=${encodeURIComponent(cursor)}` : ''}`);
      seen.push(...res.body.items);
      cursor = res.body.nextCursor;
      if (!cursor) break;
    }
    expect(seen).toEqual(whole);
  });
});
