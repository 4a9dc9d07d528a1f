import https from 'node:https';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import webpush from 'web-push';
import { FixedClock } from '@nudge/config';
import { createTestDatabase, type TestDatabase } from '../support/database.js';
import { settledJob, startTestApi, type TestApi } from '../support/api-app.js';
import { generateApnsSigningKey, startFakeApns, type FakeApns } from './fakes/fake-apns.js';
import { startFakeExpo, type FakeExpo } from './fakes/fake-expo.js';
import { apnsAndFcmSettings } from './fakes/apns-fcm-settings.js';
import { startFakeFcm, type FakeFcm } from './fakes/fake-fcm.js';
import { startFakeWebPush, type FakeBrowser, type FakeWebPush } from './fakes/fake-web-push.js';

// The push fields from the API to the phone: one user with an iPhone, an
// Android phone, a browser and an Expo app; reminders and notifications with
// sound, badge, thread, image, channel, interruption level, silent and TTL,
// delivered by a real worker through the real clients to the local fakes of
// APNs, FCM, a push service and Expo. And the 400s that store nothing.

const signing = generateApnsSigningKey();
const vapid = webpush.generateVAPIDKeys();
const IOS = 'ef'.repeat(32);
const ANDROID = 'fcm-fields-android-1';
const EXPO = 'ExponentPushToken[fieldsfieldsfields]';
const IMAGE = 'https://cdn.example.com/plant.png';
const FIELDS = {
  sound: 'chime.caf',
  badge: 2,
  threadId: 'plants',
  imageUrl: IMAGE,
  androidChannelId: 'reminders',
  interruptionLevel: 'passive',
};

describe('push fields end to end (APNs, FCM, Web Push and Expo fakes)', () => {
  let db: TestDatabase;
  let api: TestApi;
  let apns: FakeApns;
  let fcm: FakeFcm;
  let service: FakeWebPush;
  let expo: FakeExpo;
  let laptop: FakeBrowser;
  let folder: string;
  let bearer: string;
  let ops: string;

  beforeAll(async () => {
    [db, apns, fcm, service, expo] = await Promise.all([
      createTestDatabase(),
      startFakeApns(signing),
      startFakeFcm(),
      startFakeWebPush(),
      startFakeExpo(),
    ]);
    folder = await mkdtemp(join(tmpdir(), 'nudge-push-fields-'));
    const settings = await apnsAndFcmSettings(folder, signing, apns, fcm);
    api = await startTestApi({
      databaseUrl: db.url,
      clock: new FixedClock('2026-09-01T01:00:00Z'),
      env: {
        ...settings.env,
        VAPID_PUBLIC_KEY: vapid.publicKey,
        VAPID_PRIVATE_KEY: vapid.privateKey,
        VAPID_SUBJECT: 'https://example.com/contact',
        EXPO_PUSH_ENABLED: '1',
        EXPO_BASE_URL: expo.baseUrl,
      },
      worker: { pollIntervalMs: 20 },
      push: { ...settings.push, webPush: { agent: new https.Agent({ ca: service.ca, keepAlive: true }) } },
    });
    bearer = await api.token('fields');
    ops = await api.token('backend', ['ops']);
    laptop = service.browser();
    expect((await api.request('PUT', '/v1/me', { token: bearer, body: { timeZone: 'Europe/Lisbon' } })).status).toBe(201);
    for (const [id, platform, pushToken] of [
      ['iphone', 'ios', IOS],
      ['pixel', 'android', ANDROID],
      ['laptop', 'web', laptop.token],
      ['expo', 'expo', EXPO],
    ]) {
      expect((await api.request('PUT', `/v1/me/devices/${id}`, { token: bearer, body: { platform, pushToken } })).status).toBe(201);
    }
  });
  afterAll(async () => {
    await api?.close();
    await Promise.all([db?.drop(), apns?.stop(), fcm?.stop(), service?.stop(), expo?.stop()]);
    await rm(folder, { recursive: true, force: true });
  });

  const settled = (jobId: string) => settledJob(db.pool, jobId);
  const count = async (table: string) => (await db.pool.query(`SELECT count(*)::int AS n FROM ${table}`)).rows[0].n as number;

  it('a reminder with every field shows them and delivers them to each platform', async () => {
    const created = await api.request('POST', '/v1/reminders', {
      token: bearer,
      body: { title: 'Water the plants', body: 'Ferns first', localTime: '08:00', recurrence: 'FREQ=DAILY', ...FIELDS },
    });
    expect(created.status, JSON.stringify(created.body)).toBe(201);
    expect(created.body).toMatchObject({ ...FIELDS, silent: false, timeSensitive: false });
    const {
      rows: [job],
    } = await db.pool.query(`SELECT job_id AS id FROM reminder_occurrences WHERE reminder_id = $1`, [created.body.id]);
    api.clock.set(created.body.nextOccurrence.at);
    expect((await settled(job.id)).status).toBe('succeeded');

    const [ios] = apns.requestsFor(IOS);
    expect(ios!.headers).toMatchObject({ 'apns-push-type': 'alert', 'apns-priority': '10' });
    expect(ios!.body).toMatchObject({
      aps: {
        alert: { title: 'Water the plants', body: 'Ferns first' },
        sound: 'chime.caf',
        badge: 2,
        'thread-id': 'plants',
        'interruption-level': 'passive',
        'mutable-content': 1,
        category: 'NUDGE_REMINDER',
      },
      imageUrl: IMAGE,
    });
    const [android] = fcm.requestsFor(ANDROID);
    expect(android!.body.message).toMatchObject({
      notification: { title: 'Water the plants', image: IMAGE },
      android: {
        priority: 'high',
        notification: { tag: 'plants', sound: 'chime.caf', channel_id: 'reminders', image: IMAGE, notification_count: 2 },
      },
    });
    const [browser] = service.requestsFor(laptop);
    expect(browser!.payload).toMatchObject({ title: 'Water the plants', tag: 'plants', badge: 2, image: IMAGE });
    expect(expo.messagesTo(EXPO)[0]).toMatchObject({
      title: 'Water the plants',
      sound: 'chime.caf',
      badge: 2,
      channelId: 'reminders',
      richContent: { image: IMAGE },
      interruptionLevel: 'passive',
    });
    const ledger = await db.pool.query(`SELECT provider, status FROM push_deliveries WHERE job_id = $1 ORDER BY provider`, [job.id]);
    expect(ledger.rows.map((r) => `${r.provider}:${r.status}`)).toEqual(['apns:sent', 'expo:sent', 'fcm:sent', 'webpush:sent']);

    // interruptionLevel 'time-sensitive' is timeSensitive; sound null is no sound; null clears a field.
    const patched = await api.request('PATCH', `/v1/reminders/${created.body.id}`, {
      token: bearer,
      body: { interruptionLevel: 'time-sensitive', sound: null, threadId: null },
    });
    expect(patched.status, JSON.stringify(patched.body)).toBe(200);
    expect(patched.body).toMatchObject({ timeSensitive: true, interruptionLevel: 'time-sensitive', sound: null, threadId: null, badge: 2 });
    const back = await api.request('PATCH', `/v1/reminders/${created.body.id}`, { token: bearer, body: { timeSensitive: false } });
    expect(back.body).toMatchObject({ timeSensitive: false, interruptionLevel: 'active' });
  });

  it('a silent notification with a TTL: APNs background at priority 5, FCM data-only, Expo _contentAvailable, every TTL from the send', async () => {
    const res = await api.request('POST', '/v1/notifications', {
      token: ops,
      body: { userId: 'fields', title: 'sync', idempotencyKey: 'sync-1', silent: true, ttlSeconds: 60, data: { sync: 'inbox' } },
    });
    expect(res.status, JSON.stringify(res.body)).toBe(202);
    expect((await settled(res.body.jobId)).status).toBe('succeeded');
    const expiration = String(Math.floor(api.clock.now().getTime() / 1000) + 60);

    const ios = apns.requestsFor(IOS).at(-1)!;
    expect(ios.status).toBe(200);
    expect(ios.headers).toMatchObject({ 'apns-push-type': 'background', 'apns-priority': '5', 'apns-expiration': expiration });
    expect(ios.body).toEqual({ aps: { 'content-available': 1 }, sync: 'inbox' });
    const android = fcm.requestsFor(ANDROID).at(-1)!.body.message!;
    expect(android).not.toHaveProperty('notification');
    expect(android).toMatchObject({ android: { priority: 'normal', ttl: '60s' }, data: { sync: 'inbox' } });
    const browser = service.requestsFor(laptop).at(-1)!;
    expect(browser.payload).toMatchObject({ silent: true, data: { sync: 'inbox' } });
    expect(browser.headers.ttl).toBe('60');
    const phone = expo.messagesTo(EXPO).at(-1)!;
    expect(phone).toMatchObject({ _contentAvailable: true, priority: 'normal', ttl: 60, data: { sync: 'inbox' } });
    expect(phone).not.toHaveProperty('title');
  });

  it('a silent reminder wakes the apps with its data and shows nothing', async () => {
    const created = await api.request('POST', '/v1/reminders', {
      token: bearer,
      body: { title: 'Refresh the plan', localTime: '09:00', silent: true, badge: 5, data: { plan: 'today' } },
    });
    expect(created.status, JSON.stringify(created.body)).toBe(201);
    expect(created.body).toMatchObject({ silent: true, badge: 5 });
    const {
      rows: [job],
    } = await db.pool.query(`SELECT job_id AS id FROM reminder_occurrences WHERE reminder_id = $1`, [created.body.id]);
    api.clock.set(created.body.nextOccurrence.at);
    expect((await settled(job.id)).status).toBe('succeeded');
    const data = { plan: 'today', reminderId: created.body.id, occurrence: created.body.startDate };
    const ios = apns.requestsFor(IOS).at(-1)!;
    expect(ios.headers).toMatchObject({ 'apns-push-type': 'background', 'apns-priority': '5' });
    expect(ios.body).toEqual({ aps: { 'content-available': 1 }, ...data });
    const android = fcm.requestsFor(ANDROID).at(-1)!.body.message!;
    expect(android).not.toHaveProperty('notification');
    expect(android.data).toMatchObject({ ...data, category: 'NUDGE_REMINDER' });
    expect(service.requestsFor(laptop).at(-1)!.payload).toMatchObject({ silent: true, title: 'Refresh the plan', badge: 5, data });
    const phone = expo.messagesTo(EXPO).at(-1)!;
    expect(phone).toMatchObject({ _contentAvailable: true, data });
    for (const key of ['title', 'badge', 'sound']) expect(phone).not.toHaveProperty(key);
  });

  it('the same idempotencyKey with other push fields is a 409; with the same ones, the same job', async () => {
    const body = { userId: 'fields', title: 'Order shipped', idempotencyKey: 'order-77', badge: 1, threadId: 'orders' };
    const first = await api.request('POST', '/v1/notifications', { token: ops, body });
    expect(first.status).toBe(202);
    const again = await api.request('POST', '/v1/notifications', { token: ops, body });
    expect(again.body.jobId).toBe(first.body.jobId);
    const other = await api.request('POST', '/v1/notifications', { token: ops, body: { ...body, badge: 2 } });
    expect(other.status).toBe(409);
  });

  it('bad push fields are a 400 naming the field, and nothing is written', async () => {
    const reminders = await count('reminders');
    const jobs = await count('jobs');
    const bad: [Record<string, unknown>, string][] = [
      [{ sound: 'no spaces' }, 'sound'],
      [{ sound: 'x'.repeat(65) }, 'sound'],
      [{ badge: -1 }, 'badge'],
      [{ badge: 100_000 }, 'badge'],
      [{ badge: 1.5 }, 'badge'],
      [{ threadId: 't'.repeat(65) }, 'threadId'],
      [{ imageUrl: 'http://cdn.example.com/a.png' }, 'imageUrl'],
      [{ imageUrl: `https://cdn.example.com/${'a'.repeat(1010)}` }, 'imageUrl'],
      [{ androidChannelId: 'c'.repeat(65) }, 'androidChannelId'],
      [{ interruptionLevel: 'loud' }, 'interruptionLevel'],
      [{ interruptionLevel: 'passive', timeSensitive: true }, 'interruptionLevel'],
      [{ silent: 'yes' }, 'silent'],
    ];
    for (const [fields, path] of bad) {
      const reminder = await api.request('POST', '/v1/reminders', { token: bearer, body: { title: 'T', localTime: '09:00', ...fields } });
      expect(reminder.status, JSON.stringify(fields)).toBe(400);
      expect(reminder.headers.get('content-type')).toMatch(/application\/problem\+json/);
      expect(reminder.body.errors.map((e: { path: string }) => e.path)).toEqual([path]);
      const notification = await api.request('POST', '/v1/notifications', {
        token: ops,
        body: { userId: 'fields', title: 'T', idempotencyKey: `bad-${path}`, ...fields },
      });
      expect(notification.status, JSON.stringify(fields)).toBe(400);
      expect(notification.body.errors.map((e: { path: string }) => e.path)).toEqual([path]);
    }
    for (const ttlSeconds of [-1, 2_419_201, 1.5]) {
      const res = await api.request('POST', '/v1/notifications', {
        token: ops,
        body: { userId: 'fields', title: 'T', idempotencyKey: 'bad-ttl', ttlSeconds },
      });
      expect(res.status).toBe(400);
      expect(res.body.errors.map((e: { path: string }) => e.path)).toEqual(['ttlSeconds']);
    }
    expect(await count('reminders')).toBe(reminders);
    expect(await count('jobs')).toBe(jobs);
  });

  it('the image URL counts towards the size limit: a push that fits without it is a 400 with it', async () => {
    const body = { userId: 'fields', title: 'T', body: 'b'.repeat(2000), data: { blob: 'd'.repeat(1000) } };
    const jobs = await count('jobs');
    const over = await api.request('POST', '/v1/notifications', {
      token: ops,
      body: { ...body, idempotencyKey: 'big-1', imageUrl: `https://cdn.example.com/${'i'.repeat(990)}` },
    });
    expect(over.status).toBe(400);
    expect(over.body.errors).toEqual([{ path: 'body', message: expect.stringMatching(/over the \d+-byte limit/) }]);
    expect(await count('jobs')).toBe(jobs);
    const fits = await api.request('POST', '/v1/notifications', { token: ops, body: { ...body, idempotencyKey: 'big-2' } });
    expect(fits.status).toBe(202);
  });

  it('the OpenAPI document lists the push fields', async () => {
    const doc = (await api.request('GET', '/docs-json')).body;
    const schemas = doc.components.schemas;
    for (const name of ['CreateReminderDto', 'CreateNotificationDto']) {
      expect(Object.keys(schemas[name].properties), name).toEqual(
        expect.arrayContaining(['sound', 'badge', 'threadId', 'imageUrl', 'androidChannelId', 'interruptionLevel', 'silent']),
      );
    }
    expect(schemas.CreateNotificationDto.properties.ttlSeconds).toMatchObject({ minimum: 0, maximum: 2_419_200 });
    expect(schemas.CreateReminderDto.properties.interruptionLevel.enum).toEqual(['passive', 'active', 'time-sensitive']);
    expect(Object.keys(schemas.ReminderDto.properties)).toEqual(expect.arrayContaining(['sound', 'interruptionLevel', 'silent']));
  });
});
