import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { FixedClock } from '@nudge/config';
import { EXPO_RECEIPTS } from '@nudge/push';
import { enqueue } from '@nudge/queue';
import { createTestDatabase, type TestDatabase } from '../support/database.js';
import { settledJob, startTestApi, type TestApi } from '../support/api-app.js';
import { startFakeExpo, type FakeExpo } from './fakes/fake-expo.js';

// An Expo app's user: an `expo` device, a daily reminder delivered through
// Expo's push API (a local fake) with a ticket, and the receipt read a
// quarter of an hour later saying the app was uninstalled — which
// deactivates the device. The whole app, a real worker, a real PostgreSQL.
const PHONE = 'ExponentPushToken[aaaaaaaaaaaaaaaaaaaaaa]';

describe('delivery to Expo apps through Expo push (local fake)', () => {
  let db: TestDatabase;
  let api: TestApi;
  let expo: FakeExpo;
  let bearer: string;

  beforeAll(async () => {
    [db, expo] = await Promise.all([createTestDatabase(), startFakeExpo({ accessToken: 'expo-secret-token' })]);
    api = await startTestApi({
      databaseUrl: db.url,
      clock: new FixedClock('2026-09-01T01:00:00Z'),
      env: { EXPO_ACCESS_TOKEN: 'expo-secret-token', EXPO_BASE_URL: expo.baseUrl },
      worker: { pollIntervalMs: 20 },
    });
    bearer = await api.token('expo-user');
    expect((await api.request('PUT', '/v1/me', { token: bearer, body: { timeZone: 'America/Chicago' } })).status).toBe(201);
  });
  afterAll(async () => {
    await api?.close();
    await Promise.all([db?.drop(), expo?.stop()]);
  });

  const settled = (jobId: string) => settledJob(db.pool, jobId);

  it('says at boot that Expo devices go through Expo, and never shows the access token', () => {
    expect(api.logs.text).toContain('Expo via Expo push');
    expect(api.logs.text).not.toContain('expo-secret-token');
  });

  it('refuses an expo device whose token is not an Expo push token', async () => {
    const res = await api.request('PUT', '/v1/me/devices/phone', { token: bearer, body: { platform: 'expo', pushToken: 'fcm-token-123' } });
    expect(res.status).toBe(400);
    expect(res.body.errors).toEqual([{ path: 'pushToken', message: expect.stringMatching(/ExponentPushToken/) }]);
    const ok = await api.request('PUT', '/v1/me/devices/phone', { token: bearer, body: { platform: 'expo', pushToken: PHONE } });
    expect(ok.status).toBe(201);
    expect(ok.body).toMatchObject({ platform: 'expo', pushToken: '…aaa]' });
  });

  it('a reminder goes to Expo with the ticket recorded; its receipt, read 15 minutes on, deactivates an uninstalled app', async () => {
    expo.script(PHONE, { receipt: { status: 'error', error: 'DeviceNotRegistered', message: 'not a registered push token' } });
    const created = await api.request('POST', '/v1/reminders', {
      token: bearer,
      body: { title: 'Feed the cat', localTime: '07:30', recurrence: 'FREQ=DAILY' },
    });
    expect(created.status).toBe(201);
    const {
      rows: [job],
    } = await db.pool.query(`SELECT job_id AS id FROM reminder_occurrences WHERE reminder_id = $1`, [created.body.id]);
    api.clock.set(created.body.nextOccurrence.at);
    expect((await settled(job.id)).status).toBe('succeeded');

    expect(expo.messagesTo(PHONE)).toEqual([
      expect.objectContaining({ to: PHONE, title: 'Feed the cat', categoryId: 'NUDGE_REMINDER', sound: 'default', priority: 'high' }),
    ]);
    const [ticket] = expo.ticketsOf(PHONE);
    const ledger = async () =>
      (await db.pool.query(`SELECT provider, status, provider_message_id, error FROM push_deliveries WHERE job_id = $1`, [job.id])).rows;
    expect(await ledger()).toEqual([{ provider: 'expo', status: 'sent', provider_message_id: ticket, error: null }]);

    // Too early: a receipt is asked for once the send is 15 minutes old.
    const early = await enqueue(db.pool, { kind: EXPO_RECEIPTS }, { now: api.clock.now() });
    expect((await settled(early.job.id)).status).toBe('succeeded');
    expect(expo.requests.filter((r) => r.path.endsWith('/getReceipts'))).toHaveLength(0);

    api.clock.advance(15 * 60_000);
    const late = await enqueue(db.pool, { kind: EXPO_RECEIPTS }, { now: api.clock.now() });
    expect((await settled(late.job.id)).status).toBe('succeeded');
    expect(expo.requests.filter((r) => r.path.endsWith('/getReceipts')).map((r) => r.body)).toEqual([{ ids: [ticket] }]);
    expect(await ledger()).toEqual([
      { provider: 'expo', status: 'invalid_token', provider_message_id: ticket, error: expect.stringMatching(/DeviceNotRegistered/) },
    ]);
    const devices = (await api.request('GET', '/v1/me/devices', { token: bearer })).body.devices;
    expect(devices).toEqual([
      expect.objectContaining({
        installationId: 'phone',
        active: false,
        deactivatedReason: expect.stringMatching(/^invalid_token: DeviceNotRegistered/),
      }),
    ]);

    // Announced like a 410 on the send path: the receipt's verdict, then the device going off, in one transaction.
    const { rows: events } = await db.pool.query(
      `SELECT type, data->>'provider' AS provider, data->>'installationId' AS installation, tx_id::text AS tx
         FROM events WHERE user_id = 'expo-user' ORDER BY seq`,
    );
    expect(events.map((e) => [e.type, e.provider, e.installation])).toEqual([
      ['delivery.sent', 'expo', 'phone'],
      ['delivery.invalid_token', 'expo', 'phone'],
      ['device.deactivated', null, 'phone'],
    ]);
    expect(events[1].tx).toBe(events[2].tx);

    // Read once: the next run does not ask again.
    const again = await enqueue(db.pool, { kind: EXPO_RECEIPTS }, { now: api.clock.now() });
    expect((await settled(again.job.id)).status).toBe('succeeded');
    expect(expo.requests.filter((r) => r.path.endsWith('/getReceipts'))).toHaveLength(1);
  });
});
