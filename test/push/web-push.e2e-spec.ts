import https from 'node:https';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import webpush from 'web-push';
import { FixedClock } from '@nudge/config';
import { collapseIdFor } from '@nudge/push';
import { createTestDatabase, type TestDatabase } from '../support/database.js';
import { settledJob, startTestApi, type TestApi } from '../support/api-app.js';
import { startFakeWebPush, type FakeBrowser, type FakeWebPush } from './fakes/fake-web-push.js';

// A web app's user: the browser's subscription registered as a `web` device,
// a daily reminder delivered through the real web-push client to a local push
// service that decrypts it, and a 410 from the push service deactivating the
// subscription. The whole app, a real worker, a real PostgreSQL.
const vapid = webpush.generateVAPIDKeys();

describe('delivery to browsers through Web Push (local push service)', () => {
  let db: TestDatabase;
  let api: TestApi;
  let service: FakeWebPush;
  let bearer: string;
  let laptop: FakeBrowser;

  beforeAll(async () => {
    [db, service] = await Promise.all([createTestDatabase(), startFakeWebPush()]);
    api = await startTestApi({
      databaseUrl: db.url,
      clock: new FixedClock('2026-09-01T01:00:00Z'),
      env: { VAPID_PUBLIC_KEY: vapid.publicKey, VAPID_PRIVATE_KEY: vapid.privateKey, VAPID_SUBJECT: 'https://example.com/contact' },
      worker: { pollIntervalMs: 20 },
      push: { webPush: { agent: new https.Agent({ ca: service.ca, keepAlive: true }) } },
    });
    bearer = await api.token('browser-user');
    expect((await api.request('PUT', '/v1/me', { token: bearer, body: { timeZone: 'Europe/Berlin' } })).status).toBe(201);
    laptop = service.browser();
  });
  afterAll(async () => {
    await api?.close();
    await Promise.all([db?.drop(), service?.stop()]);
  });

  const settled = (jobId: string) => settledJob(db.pool, jobId);

  it('says at boot that web pushes go through Web Push', () => {
    expect(api.logs.text).toContain('web via Web Push');
  });

  it('refuses a web device whose pushToken is not a usable subscription, naming the field, and stores nothing', async () => {
    const bad: [unknown, RegExp][] = [
      ['not-json', /JSON/],
      [JSON.stringify({ endpoint: 'http://push.example/x', keys: laptop.subscription.keys }), /https/],
      [JSON.stringify({ endpoint: laptop.subscription.endpoint, keys: { p256dh: 'abc', auth: laptop.subscription.keys.auth } }), /p256dh/],
      [JSON.stringify({ endpoint: laptop.subscription.endpoint }), /keys/],
      [{ endpoint: 'http://push.example/x', keys: laptop.subscription.keys }, /https/],
    ];
    for (const [pushToken, message] of bad) {
      const res = await api.request('PUT', '/v1/me/devices/bad', { token: bearer, body: { platform: 'web', pushToken } });
      expect(res.status, String(pushToken)).toBe(400);
      expect(res.headers.get('content-type')).toMatch(/application\/problem\+json/);
      expect(res.body.errors).toEqual([{ path: 'pushToken', message: expect.stringMatching(message) }]);
    }
    expect((await db.pool.query(`SELECT count(*)::int AS n FROM devices`)).rows[0].n).toBe(0);
  });

  it('registers a subscription once, whatever the order of its keys, and shows it masked', async () => {
    const first = await api.request('PUT', '/v1/me/devices/laptop', { token: bearer, body: { platform: 'web', pushToken: laptop.token } });
    expect(first.status).toBe(201);
    expect(first.body).toMatchObject({ platform: 'web', pushToken: `…${laptop.id.slice(-4)}`, active: true });
    // The same subscription with the keys first and spaces: one device, not two.
    const respelled = `{ "keys": { "auth": "${laptop.subscription.keys.auth}", "p256dh": "${laptop.subscription.keys.p256dh}" }, "endpoint": "${laptop.subscription.endpoint}" }`;
    const again = await api.request('PUT', '/v1/me/devices/laptop-2', { token: bearer, body: { platform: 'web', pushToken: respelled } });
    expect(again.status).toBe(400); // whitespace is refused like in any token: JSON.stringify(subscription) has none
    const compact = JSON.stringify({ keys: laptop.subscription.keys, endpoint: laptop.subscription.endpoint });
    expect(
      (await api.request('PUT', '/v1/me/devices/laptop', { token: bearer, body: { platform: 'web', pushToken: compact } })).status,
    ).toBe(200);
    // The subscription object itself, as `pushSubscription.toJSON()` gives it: the same device.
    const object = await api.request('PUT', '/v1/me/devices/laptop', {
      token: bearer,
      body: { platform: 'web', pushToken: { ...laptop.subscription, expirationTime: null } },
    });
    expect(object.status).toBe(200);
    const { rows } = await db.pool.query(`SELECT push_token FROM devices`);
    expect(rows).toEqual([{ push_token: laptop.token }]);
  });

  it('a reminder reaches the browser encrypted, with its collapse tag and action category, and the ledger says webpush', async () => {
    const created = await api.request('POST', '/v1/reminders', {
      token: bearer,
      body: { title: 'Stand up', body: 'And stretch', localTime: '08:00', recurrence: 'FREQ=DAILY', data: { url: '/today' } },
    });
    expect(created.status).toBe(201);
    const {
      rows: [job],
    } = await db.pool.query(`SELECT job_id AS id FROM reminder_occurrences WHERE reminder_id = $1`, [created.body.id]);
    api.clock.set(created.body.nextOccurrence.at);
    expect((await settled(job.id)).status).toBe('succeeded');

    expect(service.requestsFor(laptop)).toHaveLength(1);
    const [request] = service.requestsFor(laptop);
    expect(request!.vapid).toMatchObject({ aud: service.origin, sub: 'https://example.com/contact', publicKey: vapid.publicKey });
    expect(request!.payload).toEqual({
      title: 'Stand up',
      body: 'And stretch',
      tag: collapseIdFor(`reminder:${created.body.id}`),
      // The app's data, and the keys the service worker needs for Done / Snooze / Skip.
      data: { url: '/today', reminderId: created.body.id, occurrence: '2026-09-01' },
      category: 'NUDGE_REMINDER',
    });
    const ledger = await db.pool.query(`SELECT platform, provider, status FROM push_deliveries WHERE job_id = $1`, [job.id]);
    expect(ledger.rows).toEqual([{ platform: 'web', provider: 'webpush', status: 'sent' }]);
  });

  it('a 410 Gone from the push service deactivates the subscription', async () => {
    service.answer(laptop, { status: 410, body: 'push subscription has unsubscribed or expired' });
    const res = await api.request('POST', '/v1/notifications', {
      token: await api.token('backend', ['ops']),
      body: { userId: 'browser-user', title: 'Your export is ready', idempotencyKey: 'export-1' },
    });
    expect(res.status).toBe(202);
    expect((await settled(res.body.jobId)).status).toBe('succeeded');
    const devices = (await api.request('GET', '/v1/me/devices', { token: bearer })).body.devices;
    expect(devices).toEqual([
      expect.objectContaining({ installationId: 'laptop', active: false, deactivatedReason: expect.stringMatching(/^invalid_token: 410/) }),
    ]);
  });
});
