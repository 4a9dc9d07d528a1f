import { randomBytes } from 'node:crypto';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Registry } from 'prom-client';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { FixedClock } from '@nudge/config';
import { EXPO_RECEIPTS } from '@nudge/push';
import { enqueue } from '@nudge/queue';
import { createTestDatabase, type TestDatabase } from '../support/database.js';
import { eventually, settledJob, startTestApi, type TestApi } from '../support/api-app.js';
import { generateApnsSigningKey, startFakeApns, type FakeApns } from './fakes/fake-apns.js';
import { startFakeExpo, type FakeExpo } from './fakes/fake-expo.js';

// An app's own APNs credentials, rotated without a restart: the whole app
// (API and worker in one process) with the real @parse/node-apn client against
// the local fake APNs. The app is first given a key Apple (the fake) rejects:
// APNs is marked failing for that app, on /v1/ops/apps and in the metrics, and
// its jobs wait without using an attempt or calling APNs again; a PUT of the
// right key clears the mark and the next run delivers with it.

const signing = generateApnsSigningKey();
const wrongKey = generateApnsSigningKey(signing.keyId, signing.teamId);
const IOS_TOKEN = 'cd'.repeat(32);
const ANDROID_TOKEN = 'sim-android-shop';

describe('per-app credentials, rotated without a restart', () => {
  let db: TestDatabase;
  let api: TestApi;
  let apns: FakeApns;
  let ops: string;

  beforeAll(async () => {
    [db, apns] = await Promise.all([createTestDatabase(), startFakeApns(signing)]);
    api = await startTestApi({
      databaseUrl: db.url,
      clock: new FixedClock('2026-09-01T12:00:00Z'),
      // No APNS_* in the environment: the default app's iOS pushes are simulated; the app brings its own.
      env: { NUDGE_SECRET_KEY: randomBytes(32).toString('hex') },
      worker: { pollIntervalMs: 20 },
      push: { apns: { address: apns.address, port: apns.port, ca: apns.ca } },
    });
    ops = await api.token('operator', ['ops']);
    const user = await api.token('shopper');
    expect((await api.request('PUT', '/v1/me', { token: user, body: { timeZone: 'UTC' } })).status).toBe(201);
    expect((await putKey(wrongKey.privateKey)).status).toBe(201);
    for (const [id, platform, pushToken] of [
      ['iphone', 'ios', IOS_TOKEN],
      ['pixel', 'android', ANDROID_TOKEN],
    ]) {
      const res = await api.request('PUT', `/v1/me/devices/${id}`, { token: user, body: { platform, pushToken, appId: 'shop' } });
      expect(res.status).toBe(201);
    }
  });
  afterAll(async () => {
    await api?.close();
    await Promise.all([db?.drop(), apns?.stop()]);
  });

  function putKey(key: string) {
    return api.request('PUT', '/v1/ops/apps/shop', {
      token: ops,
      body: { name: 'Shop', apns: { key, keyId: signing.keyId, teamId: signing.teamId, topic: 'com.example.shop' } },
    });
  }

  async function notify(key: string): Promise<string> {
    const res = await api.request('POST', '/v1/notifications', {
      token: ops,
      body: { userId: 'shopper', title: 'Your order shipped', idempotencyKey: key },
    });
    expect(res.status).toBe(202);
    return res.body.jobId;
  }

  const job = async (id: string) =>
    (await db.pool.query(`SELECT status, attempts, snoozes, run_at FROM jobs WHERE id = $1`, [id])).rows[0] as {
      status: string;
      attempts: number;
      snoozes: number;
      run_at: Date;
    };
  const snoozed = (id: string) =>
    eventually(async () => ((await job(id)).status === 'queued' && (await job(id)).snoozes > 0 ? job(id) : undefined), `job ${id} snoozed`);
  const failingGauge = () => api.app.get(Registry).getSingleMetricAsString('nudge_push_provider_failing');

  let firstJob: string;
  let secondJob: string;

  it('a rejected key marks APNs failing for the app, and the job waits without using an attempt', async () => {
    firstJob = await notify('order-1');
    const waiting = await snoozed(firstJob);
    expect(waiting.attempts).toBe(0);
    expect(waiting.run_at.toISOString()).toBe('2026-09-01T12:01:00.000Z');
    expect(apns.requestsFor(IOS_TOKEN)).toHaveLength(1);
    expect(apns.requestsFor(IOS_TOKEN)[0]!.jwtValid).toBe(false);

    // The app's Android device has no FCM credentials in the app: simulated, and recorded with its app.
    const simulated = await db.pool.query(`SELECT app_id, outcome FROM simulated_pushes WHERE push_token = $1`, [ANDROID_TOKEN]);
    expect(simulated.rows).toEqual([{ app_id: 'shop', outcome: 'sent' }]);

    const apps = await api.request('GET', '/v1/ops/apps', { token: ops });
    expect(apps.body.apps[0].failing).toEqual([
      {
        provider: 'apns',
        reason: expect.stringMatching(/^403 InvalidProviderToken/),
        since: '2026-09-01T12:00:00.000Z',
        checkedAt: '2026-09-01T12:00:00.000Z',
      },
    ]);
    expect(apps.body.defaultApp.failing).toEqual([]);
    expect(await failingGauge()).toContain('nudge_push_provider_failing{app="shop",provider="apns"} 1');
  });

  it("the app's next job waits too, without calling APNs", async () => {
    secondJob = await notify('order-2');
    expect((await snoozed(secondJob)).attempts).toBe(0);
    expect(apns.requestsFor(IOS_TOKEN)).toHaveLength(1);
  });

  it('a PUT of the right key clears the mark, and the next run delivers with it: no restart, no attempt burnt', async () => {
    const res = await putKey(signing.privateKey);
    expect(res.status).toBe(200);
    expect(res.body).toMatchObject({ version: 2, failing: [] });
    expect(await failingGauge()).not.toContain('app="shop"');

    api.clock.set('2026-09-01T12:01:00Z');
    for (const id of [firstJob, secondJob]) {
      const done = await eventually(async () => ((await job(id)).status === 'succeeded' ? job(id) : undefined), `job ${id}`);
      // The run that delivered is the only attempt counted.
      expect(done.attempts).toBe(1);
    }
    const sends = apns.requestsFor(IOS_TOKEN);
    expect(sends).toHaveLength(3);
    expect(sends.slice(1).map((r) => [r.jwtValid, r.status])).toEqual([
      [true, 200],
      [true, 200],
    ]);
    // The Android device had its push on the first run: not sent again.
    expect((await db.pool.query(`SELECT count(*)::int AS n FROM simulated_pushes WHERE push_token = $1`, [ANDROID_TOKEN])).rows[0].n).toBe(
      2,
    );
    const ledger = await db.pool.query(`SELECT provider, status FROM push_deliveries WHERE job_id = $1 ORDER BY provider`, [firstJob]);
    expect(ledger.rows).toEqual([
      { provider: 'apns', status: 'sent' },
      { provider: 'simulated', status: 'sent' },
    ]);
  });

  it('never logs a key', () => {
    for (const key of [signing.privateKey, wrongKey.privateKey]) expect(api.logs.text).not.toContain(key.split('\n')[1]!);
    expect(api.logs.text).not.toContain('PRIVATE KEY');
  });
});

// The default app (the environment's APNS_*) marked the same way: a reminder of
// one of its devices waits instead of burning attempts, and is tried again
// after the wait.
describe('the default app’s credentials rejected', () => {
  let db: TestDatabase;
  let api: TestApi;
  let apns: FakeApns;
  let folder: string;

  beforeAll(async () => {
    [db, apns] = await Promise.all([createTestDatabase(), startFakeApns(signing)]);
    folder = await mkdtemp(join(tmpdir(), 'nudge-default-app-'));
    const keyFile = join(folder, 'AuthKey.p8');
    await writeFile(keyFile, wrongKey.privateKey);
    api = await startTestApi({
      databaseUrl: db.url,
      clock: new FixedClock('2026-09-01T07:30:00Z'),
      env: { APNS_KEY_FILE: keyFile, APNS_KEY_ID: signing.keyId, APNS_TEAM_ID: signing.teamId, APNS_TOPIC: 'com.example.nudge' },
      worker: { pollIntervalMs: 20 },
      push: { apns: { address: apns.address, port: apns.port, ca: apns.ca } },
    });
  });
  afterAll(async () => {
    await api?.close();
    await Promise.all([db?.drop(), apns?.stop()]);
    await rm(folder, { recursive: true, force: true });
  });

  it('a reminder waits, /v1/ops/apps shows APNs failing for the default app, and the re-check calls APNs once more', async () => {
    const user = await api.token('early');
    expect((await api.request('PUT', '/v1/me', { token: user, body: { timeZone: 'UTC' } })).status).toBe(201);
    expect(
      (await api.request('PUT', '/v1/me/devices/iphone', { token: user, body: { platform: 'ios', pushToken: IOS_TOKEN } })).body.appId,
    ).toBe('default');
    const created = await api.request('POST', '/v1/reminders', { token: user, body: { title: 'Stretch', localTime: '08:00' } });
    expect(created.status).toBe(201);
    const {
      rows: [occurrence],
    } = await db.pool.query(`SELECT job_id::text AS id FROM reminder_occurrences WHERE reminder_id = $1`, [created.body.id]);
    const job = async () =>
      (await db.pool.query(`SELECT status, attempts, snoozes, run_at FROM jobs WHERE id = $1`, [occurrence.id])).rows[0];

    api.clock.set('2026-09-01T08:00:00Z');
    const waiting = await eventually(
      async () => ((await job()).snoozes === 1 && (await job()).status === 'queued' ? job() : undefined),
      'snooze',
    );
    expect(waiting).toMatchObject({ attempts: 0, run_at: new Date('2026-09-01T08:01:00Z') });
    expect(apns.requestsFor(IOS_TOKEN)).toHaveLength(1);
    // The occurrence is neither sent nor skipped: it waits.
    expect((await db.pool.query(`SELECT status FROM reminder_occurrences WHERE reminder_id = $1`, [created.body.id])).rows).toEqual([
      { status: 'scheduled' },
    ]);
    const ops = await api.token('operator', ['ops']);
    const apps = (await api.request('GET', '/v1/ops/apps', { token: ops })).body;
    expect(apps.defaultApp.failing).toEqual([expect.objectContaining({ provider: 'apns', since: '2026-09-01T08:00:00.000Z' })]);
    expect(await api.app.get(Registry).getSingleMetricAsString('nudge_push_provider_failing')).toContain(
      'nudge_push_provider_failing{app="default",provider="apns"} 1',
    );

    // After the wait one run tries APNs again; rejected again, it waits again, still without an attempt used.
    api.clock.set('2026-09-01T08:01:00Z');
    const again = await eventually(
      async () => ((await job()).snoozes === 2 && (await job()).status === 'queued' ? job() : undefined),
      'second snooze',
    );
    expect(again.attempts).toBe(0);
    expect(apns.requestsFor(IOS_TOKEN)).toHaveLength(2);
    const [mark] = (await db.pool.query(`SELECT since, checked_at FROM app_provider_failures WHERE app_id = 'default'`)).rows;
    expect(mark).toEqual({ since: new Date('2026-09-01T08:00:00Z'), checked_at: new Date('2026-09-01T08:01:00Z') });
  });
});

// An Expo app with "enhanced push security": its own access token is sent with
// its pushes and with the receipts request for its tickets, while the
// environment's Expo (on, without a token) serves the default app.
describe('an app’s Expo access token', () => {
  const PHONE = 'ExponentPushToken[bbbbbbbbbbbbbbbbbbbbbb]';
  let db: TestDatabase;
  let api: TestApi;
  let expo: FakeExpo;

  beforeAll(async () => {
    [db, expo] = await Promise.all([createTestDatabase(), startFakeExpo({ accessToken: 'rn-app-token' })]);
    api = await startTestApi({
      databaseUrl: db.url,
      clock: new FixedClock('2026-09-01T12:00:00Z'),
      env: { NUDGE_SECRET_KEY: randomBytes(32).toString('base64'), EXPO_PUSH_ENABLED: '1', EXPO_BASE_URL: expo.baseUrl },
      worker: { pollIntervalMs: 20 },
    });
  });
  afterAll(async () => {
    await api?.close();
    await Promise.all([db?.drop(), expo?.stop()]);
  });

  it('sends with the app’s token, and reads the receipts of its tickets with it', async () => {
    const ops = await api.token('operator', ['ops']);
    const put = await api.request('PUT', '/v1/ops/apps/rn-app', {
      token: ops,
      body: { name: 'RN', expo: { accessToken: 'rn-app-token' } },
    });
    expect(put.status).toBe(201);
    const user = await api.token('rn-user');
    expect((await api.request('PUT', '/v1/me', { token: user, body: { timeZone: 'UTC' } })).status).toBe(201);
    const device = await api.request('PUT', '/v1/me/devices/phone', {
      token: user,
      body: { platform: 'expo', pushToken: PHONE, appId: 'rn-app' },
    });
    expect(device.status).toBe(201);
    expo.script(PHONE, { receipt: { status: 'error', error: 'DeviceNotRegistered', message: 'not registered' } });

    const sent = await api.request('POST', '/v1/notifications', {
      token: ops,
      body: { userId: 'rn-user', title: 'Hello', idempotencyKey: 'rn-1' },
    });
    expect((await settledJob(db.pool, sent.body.jobId)).status).toBe('succeeded');
    expect(expo.messagesTo(PHONE)).toHaveLength(1);

    api.clock.advance(15 * 60_000);
    const receipts = await enqueue(db.pool, { kind: EXPO_RECEIPTS }, { now: api.clock.now() });
    expect((await settledJob(db.pool, receipts.job.id)).status).toBe('succeeded');
    const asked = expo.requests.filter((r) => r.path.endsWith('/getReceipts'));
    expect(asked.map((r) => r.authorization)).toEqual(['Bearer rn-app-token']);
    expect((await api.request('GET', '/v1/me/devices', { token: user })).body.devices[0]).toMatchObject({ active: false });
    expect(api.logs.text).not.toContain('rn-app-token');
  });
});

// Secrets sealed under one NUDGE_SECRET_KEY, a worker with another: the app's
// sends wait with the reason on /v1/ops/apps instead of failing, until the
// credentials are PUT again under the worker's key (docs/apps.md, rotation).
describe('a worker with another NUDGE_SECRET_KEY', () => {
  let db: TestDatabase;
  let before: TestApi;
  let worker: TestApi;

  beforeAll(async () => {
    db = await createTestDatabase();
    before = await startTestApi({ databaseUrl: db.url, env: { NUDGE_SECRET_KEY: randomBytes(32).toString('hex') } });
    worker = await startTestApi({
      databaseUrl: db.url,
      clock: new FixedClock('2026-09-01T12:00:00Z'),
      env: { NUDGE_SECRET_KEY: randomBytes(32).toString('hex') },
      worker: { pollIntervalMs: 20 },
    });
  });
  afterAll(async () => {
    await Promise.all([before?.close(), worker?.close()]);
    await db?.drop();
  });

  it('holds the app’s pushes and says why', async () => {
    const ops = await before.token('operator', ['ops']);
    const put = await before.request('PUT', '/v1/ops/apps/old', {
      token: ops,
      body: { name: 'Old', apns: { key: signing.privateKey, keyId: signing.keyId, teamId: signing.teamId, topic: 'com.example.old' } },
    });
    expect(put.status).toBe(201);
    const user = await worker.token('old-user');
    expect((await worker.request('PUT', '/v1/me', { token: user, body: { timeZone: 'UTC' } })).status).toBe(201);
    const body = { platform: 'ios', pushToken: IOS_TOKEN, appId: 'old' };
    expect((await worker.request('PUT', '/v1/me/devices/iphone', { token: user, body })).status).toBe(201);

    const sent = await worker.request('POST', '/v1/notifications', {
      token: ops,
      body: { userId: 'old-user', title: 'Hi', idempotencyKey: 'old-1' },
    });
    await eventually(async () => {
      const { rows } = await db.pool.query(`SELECT status, attempts, snoozes FROM jobs WHERE id = $1`, [sent.body.jobId]);
      return rows[0].status === 'queued' && rows[0].snoozes === 1 && rows[0].attempts === 0;
    }, 'the job to wait');
    const app = (await worker.request('GET', '/v1/ops/apps/old', { token: ops })).body;
    expect(app.failing).toEqual([expect.objectContaining({ provider: 'apns', reason: expect.stringMatching(/another NUDGE_SECRET_KEY/) })]);
  });
});
