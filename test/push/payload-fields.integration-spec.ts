import https from 'node:https';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import webpush from 'web-push';
import { ApnsPushProvider, ExpoPushProvider, FcmPushProvider, type PushMessage, type PushOptions, WebPushProvider } from '@nudge/push';
import { generateApnsSigningKey, startFakeApns, type FakeApns } from './fakes/fake-apns.js';
import { startFakeExpo, type FakeExpo } from './fakes/fake-expo.js';
import { connectToFakeFcm, fakeFcmCredential, startFakeFcm, type FakeFcm } from './fakes/fake-fcm.js';
import { startFakeWebPush, type FakeWebPush } from './fakes/fake-web-push.js';

// Every push field through the real client of each platform (@parse/node-apn,
// firebase-admin, web-push, our Expo client) to the local fakes, which read
// what the services read: APNs headers, FCM's JSON, the decrypted Web Push
// payload, Expo's message.
const now = new Date('2026-03-01T12:00:00Z');
const IMAGE = 'https://cdn.example.com/plant.png';
const FIELDS: PushOptions = {
  sound: 'chime.caf',
  badge: 4,
  threadId: 'plants',
  imageUrl: IMAGE,
  androidChannelId: 'reminders',
  interruptionLevel: 'passive',
};
const signing = generateApnsSigningKey();
const vapid = webpush.generateVAPIDKeys();

let apnsFake: FakeApns;
let fcmFake: FakeFcm;
let webFake: FakeWebPush;
let expoFake: FakeExpo;
let apns: ApnsPushProvider;
let fcm: FcmPushProvider;
let web: WebPushProvider;
let expo: ExpoPushProvider;
let counter = 0;

const base = (token: string, platform: PushMessage['platform'], extra: Partial<PushMessage>): PushMessage => ({
  token,
  platform,
  title: 'Water',
  body: 'Ferns first',
  data: { url: 'app://plants' },
  collapseId: 'nudge:reminder:1',
  ...extra,
});

beforeAll(async () => {
  [apnsFake, fcmFake, webFake, expoFake] = await Promise.all([startFakeApns(signing), startFakeFcm(), startFakeWebPush(), startFakeExpo()]);
  apns = new ApnsPushProvider({
    key: signing.privateKey,
    keyId: signing.keyId,
    teamId: signing.teamId,
    topic: 'com.example.nudge',
    address: apnsFake.address,
    port: apnsFake.port,
    ca: apnsFake.ca,
    now: () => now,
  });
  fcm = new FcmPushProvider({
    credential: fakeFcmCredential(fcmFake),
    projectId: fcmFake.projectId,
    connect: connectToFakeFcm(fcmFake),
    now: () => now,
  });
  web = new WebPushProvider({
    vapidPublicKey: vapid.publicKey,
    vapidPrivateKey: vapid.privateKey,
    vapidSubject: 'mailto:ops@example.com',
    agent: new https.Agent({ ca: webFake.ca, keepAlive: true }),
    now: () => now,
  });
  expo = new ExpoPushProvider({ baseUrl: expoFake.baseUrl, now: () => now });
});
afterAll(async () => {
  await Promise.all([apns?.close(), fcm?.close(), web?.close(), expo?.close()]);
  await Promise.all([apnsFake?.stop(), fcmFake?.stop(), webFake?.stop(), expoFake?.stop()]);
});

async function viaApns(extra: Partial<PushMessage>) {
  const token = `${'cd'.repeat(28)}${(++counter).toString(16).padStart(8, '0')}`;
  const outcome = await apns.send(base(token, 'ios', extra));
  return { outcome, request: apnsFake.requestsFor(token)[0]! };
}
async function viaFcm(extra: Partial<PushMessage>) {
  const token = `fcm-fields-${++counter}:APA91b${'x'.repeat(40)}`;
  const outcome = await fcm.send(base(token, 'android', extra));
  return { outcome, message: fcmFake.requestsFor(token)[0]!.body.message! };
}
async function viaWeb(extra: Partial<PushMessage>) {
  const browser = webFake.browser();
  const outcome = await web.send(base(browser.token, 'web', extra));
  return { outcome, payload: webFake.requestsFor(browser)[0]!.payload };
}
async function viaExpo(extra: Partial<PushMessage>) {
  const token = `ExponentPushToken[fields-${++counter}-xxxxxxxx]`;
  const outcome = await expo.send(base(token, 'expo', extra));
  return { outcome, message: expoFake.messagesTo(token)[0]! };
}

describe('APNs', () => {
  it('an alert with sound, badge, thread-id, interruption-level and mutable-content with the image URL', async () => {
    const { outcome, request } = await viaApns(FIELDS);
    expect(outcome.kind).toBe('sent');
    expect(request.headers).toMatchObject({ 'apns-push-type': 'alert', 'apns-priority': '10' });
    expect(request.body).toEqual({
      aps: {
        alert: { title: 'Water', body: 'Ferns first' },
        sound: 'chime.caf',
        badge: 4,
        'thread-id': 'plants',
        'interruption-level': 'passive',
        'mutable-content': 1,
      },
      url: 'app://plants',
      imageUrl: IMAGE,
    });
  });

  it('no sound for sound null; time-sensitive from timeSensitive', async () => {
    const { request } = await viaApns({ sound: null, timeSensitive: true });
    expect(request.body).toEqual({
      aps: { alert: { title: 'Water', body: 'Ferns first' }, 'interruption-level': 'time-sensitive' },
      url: 'app://plants',
    });
  });

  it('a silent push goes as push type background at priority 5, content-available and the data only', async () => {
    const { outcome, request } = await viaApns({ ...FIELDS, silent: true });
    expect(outcome.kind).toBe('sent');
    expect(request.status).toBe(200);
    expect(request.headers).toMatchObject({ 'apns-push-type': 'background', 'apns-priority': '5' });
    expect(request.body).toEqual({ aps: { 'content-available': 1 }, url: 'app://plants' });
  });
});

describe('FCM', () => {
  it('sound, channel, thread tag, image and badge count in android.notification, the image in notification', async () => {
    const { outcome, message } = await viaFcm(FIELDS);
    expect(outcome.kind).toBe('sent');
    expect(message.notification).toEqual({ title: 'Water', body: 'Ferns first', image: IMAGE });
    expect(message.android).toEqual({
      collapse_key: 'nudge:reminder:1',
      priority: 'high',
      notification: { tag: 'plants', sound: 'chime.caf', channel_id: 'reminders', image: IMAGE, notification_count: 4 },
    });
  });

  it('a silent push is data-only at normal priority', async () => {
    const { outcome, message } = await viaFcm({ ...FIELDS, silent: true });
    expect(outcome.kind).toBe('sent');
    expect(message).not.toHaveProperty('notification');
    expect(message.android).toEqual({ collapse_key: 'nudge:reminder:1', priority: 'normal' });
    expect(message.data).toEqual({ url: 'app://plants' });
  });
});

describe('Web Push', () => {
  it('the service worker gets badge, image and the thread as tag', async () => {
    const { outcome, payload } = await viaWeb(FIELDS);
    expect(outcome.kind).toBe('sent');
    expect(payload).toEqual({
      title: 'Water',
      body: 'Ferns first',
      tag: 'plants',
      data: { url: 'app://plants' },
      badge: 4,
      image: IMAGE,
    });
  });

  it('a silent push says so', async () => {
    const { payload } = await viaWeb({ silent: true });
    expect(payload).toMatchObject({ silent: true, tag: 'nudge:reminder:1' });
  });
});

describe('Expo', () => {
  it('sound, badge, channelId, richContent.image and interruptionLevel', async () => {
    const { outcome, message } = await viaExpo(FIELDS);
    expect(outcome.kind).toBe('sent');
    expect(message).toMatchObject({
      title: 'Water',
      sound: 'chime.caf',
      badge: 4,
      channelId: 'reminders',
      richContent: { image: IMAGE },
      interruptionLevel: 'passive',
      priority: 'high',
    });
  });

  it('a silent push has _contentAvailable and no title, body, sound or badge', async () => {
    const { message } = await viaExpo({ ...FIELDS, silent: true });
    expect(message).toMatchObject({ _contentAvailable: true, priority: 'normal', data: { url: 'app://plants' } });
    for (const key of ['title', 'body', 'sound', 'badge', 'richContent']) expect(message).not.toHaveProperty(key);
  });
});
