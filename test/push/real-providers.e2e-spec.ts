import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { FixedClock } from '@nudge/config';
import { collapseIdFor } from '@nudge/push';
import { createTestDatabase, type TestDatabase } from '../support/database.js';
import { eventually, settledJob, startTestApi, type TestApi } from '../support/api-app.js';
import { generateApnsSigningKey, startFakeApns, type FakeApns } from './fakes/fake-apns.js';
import { apnsAndFcmSettings } from './fakes/apns-fcm-settings.js';
import { startFakeFcm, type FakeFcm } from './fakes/fake-fcm.js';

// The whole app configured with APNs and FCM credentials (as the environment
// gives them), the real @parse/node-apn and firebase-admin clients pointed at
// the local fakes through PushModule's overrides, a real worker and a real
// PostgreSQL: one user with an iPhone and an Android phone.

const signing = generateApnsSigningKey();
const IOS_TOKEN = 'ab'.repeat(32);
const ANDROID_TOKEN = 'fcm-android-token-1';

describe('delivery through APNs and FCM (local fakes)', () => {
  let db: TestDatabase;
  let api: TestApi;
  let apns: FakeApns;
  let fcm: FakeFcm;
  let folder: string;
  let bearer: string;

  beforeAll(async () => {
    [db, apns, fcm] = await Promise.all([createTestDatabase(), startFakeApns(signing), startFakeFcm()]);
    folder = await mkdtemp(join(tmpdir(), 'nudge-push-e2e-'));
    const settings = await apnsAndFcmSettings(folder, signing, apns, fcm);
    api = await startTestApi({
      databaseUrl: db.url,
      // 08:00 in Lisbon is 07:00 UTC the same day: no clock move crosses midnight, so the daily
      // token_cleanup does not run again and remove the devices deactivated below.
      clock: new FixedClock('2026-09-01T01:00:00Z'),
      env: settings.env,
      worker: { pollIntervalMs: 20 },
      push: settings.push,
    });
    bearer = await api.token('both');
    expect((await api.request('PUT', '/v1/me', { token: bearer, body: { timeZone: 'Europe/Lisbon' } })).status).toBe(201);
    for (const [id, platform, pushToken] of [
      ['iphone', 'ios', IOS_TOKEN],
      ['pixel', 'android', ANDROID_TOKEN],
    ]) {
      expect((await api.request('PUT', `/v1/me/devices/${id}`, { token: bearer, body: { platform, pushToken } })).status).toBe(201);
    }
  });
  afterAll(async () => {
    await api?.close();
    await Promise.all([db?.drop(), apns?.stop(), fcm?.stop()]);
    await rm(folder, { recursive: true, force: true });
  });

  const ledger = async (jobId: string) =>
    (await db.pool.query(`SELECT platform, provider, status FROM push_deliveries WHERE job_id = $1 ORDER BY platform`, [jobId])).rows;

  const settled = (jobId: string) => settledJob(db.pool, jobId);

  it('says at boot that it uses APNs and FCM', () => {
    expect(api.logs.text).toContain('push: iOS via APNs (sandbox); Android via FCM');
  });

  it('a reminder reaches both services, with the reminder’s collapse id, its action category and the deep-link data', async () => {
    const created = await api.request('POST', '/v1/reminders', {
      token: bearer,
      body: {
        title: 'Water the plants',
        body: 'The ferns first',
        localTime: '08:00',
        recurrence: 'FREQ=DAILY',
        data: { url: 'app://plants' },
      },
    });
    expect(created.status).toBe(201);
    const {
      rows: [job],
    } = await db.pool.query(`SELECT j.id FROM reminder_occurrences o JOIN jobs j ON j.id = o.job_id WHERE o.reminder_id = $1`, [
      created.body.id,
    ]);
    api.clock.set(created.body.nextOccurrence.at);
    expect((await settled(job.id)).status).toBe('succeeded');

    const [ios] = apns.requestsFor(IOS_TOKEN);
    expect(apns.requestsFor(IOS_TOKEN)).toHaveLength(1);
    expect(ios!.jwtValid).toBe(true);
    // Every occurrence, retry and snooze of the reminder shares one collapse id: a newer push replaces an older one.
    const collapseId = collapseIdFor(`reminder:${created.body.id}`);
    expect(ios!.headers['apns-collapse-id']).toBe(collapseId);
    expect(ios!.body).toMatchObject({
      aps: { alert: { title: 'Water the plants', body: 'The ferns first' }, category: 'NUDGE_REMINDER' },
      url: 'app://plants',
    });

    const [android] = fcm.requestsFor(ANDROID_TOKEN);
    expect(fcm.requestsFor(ANDROID_TOKEN)).toHaveLength(1);
    expect(android!.body.message).toMatchObject({
      token: ANDROID_TOKEN,
      notification: { title: 'Water the plants', body: 'The ferns first' },
      data: { url: 'app://plants', category: 'NUDGE_REMINDER' },
      android: { collapse_key: collapseId, notification: { tag: collapseId, click_action: 'NUDGE_REMINDER' } },
    });
    expect(await ledger(job.id)).toEqual([
      { platform: 'android', provider: 'fcm', status: 'sent' },
      { platform: 'ios', provider: 'apns', status: 'sent' },
    ]);
  });

  it('APNs 429 with Retry-After puts the job back for that long without using an attempt; the FCM device is not sent twice', async () => {
    apns.answer(IOS_TOKEN, { status: 429, reason: 'TooManyRequests', headers: { 'retry-after': '300' } });
    const before = fcm.requestsFor(ANDROID_TOKEN).length;
    const now = api.clock.now();
    const res = await api.request('POST', '/v1/notifications', {
      token: await api.token('backend', ['ops']),
      body: { userId: 'both', title: 'Order shipped', idempotencyKey: 'order-9' },
    });
    expect(res.status).toBe(202);
    // A 429 throttles the APNs pace (docs/pacing.md): the job snoozes, its attempt given back.
    await eventually(async () => {
      const { rows } = await db.pool.query(`SELECT 1 FROM job_runs WHERE job_id = $1 AND outcome = 'snoozed'`, [res.body.jobId]);
      return rows.length > 0;
    }, 'the snooze');
    const { rows: jobRows } = await db.pool.query(`SELECT status, attempts, run_at FROM jobs WHERE id = $1`, [res.body.jobId]);
    const first = jobRows[0] as { status: string; attempts: number; run_at: Date };
    expect(first).toMatchObject({ status: 'queued', attempts: 0 });
    // The Retry-After, then the turn of one send at the halved pace (at least one a second).
    expect(first.run_at.getTime() - now.getTime()).toBeGreaterThanOrEqual(300_000);
    expect(first.run_at.getTime() - now.getTime()).toBeLessThanOrEqual(302_000);
    expect(await ledger(res.body.jobId)).toEqual([
      { platform: 'android', provider: 'fcm', status: 'sent' },
      { platform: 'ios', provider: 'apns', status: 'sending' },
    ]);

    // The pace runs on the database's clock, on which the pinned clock's jump is not 300 s: end the Retry-After by hand.
    await db.pool.query(`UPDATE push_pace SET refreshed_at = clock_timestamp() WHERE provider = 'apns'`);
    api.clock.set(first.run_at);
    await eventually(async () => (await settled(res.body.jobId)).status === 'succeeded', 'the retry');
    expect(fcm.requestsFor(ANDROID_TOKEN).length - before).toBe(1);
    const sends = apns.requestsFor(IOS_TOKEN).slice(-2);
    expect(sends.map((r) => r.status)).toEqual([429, 200]);
    // Both attempts carry the collapse id of the notification's idempotency key.
    expect(new Set(sends.map((r) => r.headers['apns-collapse-id']))).toEqual(new Set([collapseIdFor('notification:order-9')]));
    expect(fcm.requestsFor(ANDROID_TOKEN).at(-1)!.body.message).toMatchObject({
      android: { collapse_key: 'nudge:notification:order-9', notification: { tag: 'nudge:notification:order-9' } },
    });
  });

  it('an APNs 410 Unregistered and an FCM UNREGISTERED deactivate those devices', async () => {
    apns.answer(IOS_TOKEN, { status: 410, reason: 'Unregistered', timestamp: Date.parse('2026-08-31T00:00:00Z') });
    fcm.answer(ANDROID_TOKEN, {
      status: 404,
      grpcStatus: 'NOT_FOUND',
      errorCode: 'UNREGISTERED',
      message: 'Requested entity was not found.',
    });
    const res = await api.request('POST', '/v1/notifications', {
      token: await api.token('backend', ['ops']),
      body: { userId: 'both', title: 'Gone', idempotencyKey: 'gone-1' },
    });
    expect((await settled(res.body.jobId)).status).toBe('succeeded');
    const devices = (await api.request('GET', '/v1/me/devices', { token: bearer })).body.devices;
    const states = devices.map((d: { installationId: string; active: boolean; deactivatedReason: string }) => [
      d.installationId,
      d.active,
      d.deactivatedReason,
    ]);
    expect(states.sort()).toEqual([
      ['iphone', false, expect.stringMatching(/^invalid_token: .*Unregistered/)],
      ['pixel', false, expect.stringMatching(/^invalid_token: /)],
    ]);
    expect(await ledger(res.body.jobId)).toEqual([
      { platform: 'android', provider: 'fcm', status: 'invalid_token' },
      { platform: 'ios', provider: 'apns', status: 'invalid_token' },
    ]);
  });
});
