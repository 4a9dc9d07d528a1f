import https from 'node:https';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import webpush from 'web-push';
import { topicFor, WebPushProvider, type PushMessage } from '@nudge/push';
import { startFakeWebPush, type FakeBrowser, type FakeWebPush } from './fakes/fake-web-push.js';

// The real `web-push` client against a local push service that checks the
// VAPID signature and decrypts the payload with the browser's keys.
const now = new Date('2026-03-01T12:00:00Z');
const vapid = webpush.generateVAPIDKeys();

let fake: FakeWebPush;
let provider: WebPushProvider;

function message(browser: FakeBrowser, extra: Partial<PushMessage> = {}): PushMessage {
  return { token: browser.token, platform: 'web', title: 'Stretch', body: 'Two minutes', collapseId: 'nudge:42', ...extra };
}

beforeAll(async () => {
  fake = await startFakeWebPush();
  provider = new WebPushProvider({
    vapidPublicKey: vapid.publicKey,
    vapidPrivateKey: vapid.privateKey,
    vapidSubject: 'mailto:ops@example.com',
    agent: new https.Agent({ ca: fake.ca, keepAlive: true }),
    now: () => now,
  });
});
afterAll(async () => {
  await provider.close();
  await fake.stop();
});

describe('WebPushProvider against a local push service', () => {
  it('sends the payload encrypted for the browser, signed with VAPID, with TTL, urgency and topic', async () => {
    const browser = fake.browser();
    const outcome = await provider.send(
      message(browser, {
        data: { url: '/plants' },
        actionCategory: 'NUDGE_REMINDER',
        expiresAt: new Date('2026-03-01T13:00:00Z'),
        collapseId: 'nudge:reminder:7',
      }),
    );
    expect(outcome).toEqual({ kind: 'sent', providerMessageId: expect.stringMatching(/^https:\/\/localhost:\d+\/message\//) });
    const [request] = fake.requestsFor(browser);
    expect(fake.requestsFor(browser)).toHaveLength(1);
    // What the service worker gets from event.data.json().
    expect(request!.payload).toEqual({
      title: 'Stretch',
      body: 'Two minutes',
      tag: 'nudge:reminder:7',
      data: { url: '/plants' },
      category: 'NUDGE_REMINDER',
    });
    expect(request!.vapid).toMatchObject({ aud: fake.origin, sub: 'mailto:ops@example.com', publicKey: vapid.publicKey });
    expect(request!.headers).toMatchObject({
      'content-encoding': 'aes128gcm',
      ttl: '3600',
      urgency: 'high',
      topic: topicFor('nudge:reminder:7'),
    });
    expect(topicFor('nudge:reminder:7')).toMatch(/^[A-Za-z0-9_-]{32}$/);
  });

  it('pushes to one push service share one VAPID signature; another service gets its own, for its origin', async () => {
    const [first, second] = [fake.browser(), fake.browser()];
    const other = await startFakeWebPush();
    try {
      const elsewhere = other.browser();
      // The provider trusts the first fake's certificate; both fakes share it (one per test process).
      for (const browser of [first, second, elsewhere]) expect((await provider.send(message(browser))).kind).toBe('sent');
      const [a, b] = [fake.requestsFor(first)[0]!, fake.requestsFor(second)[0]!];
      const c = other.requestsFor(elsewhere)[0]!;
      expect(a.headers.authorization).toBe(b.headers.authorization);
      expect(a.vapid).toMatchObject({ aud: fake.origin, sub: 'mailto:ops@example.com' });
      expect(c.vapid).toMatchObject({ aud: other.origin, sub: 'mailto:ops@example.com' });
      expect(c.headers.authorization).not.toBe(a.headers.authorization);
      // Still encrypted for each browser's own keys.
      for (const request of [a, b, c]) expect(request.payload).toMatchObject({ title: 'Stretch', body: 'Two minutes' });
    } finally {
      await other.stop();
    }
  });

  it('a normal-priority message without an expiry goes with urgency normal and a day of TTL', async () => {
    const browser = fake.browser();
    expect((await provider.send(message(browser, { priority: 'normal', timeSensitive: true }))).kind).toBe('sent');
    const [request] = fake.requestsFor(browser);
    expect(request!.headers).toMatchObject({ urgency: 'normal', ttl: String(24 * 3600) });
    expect(request!.payload).toMatchObject({ timeSensitive: true });
  });

  it('a silent message goes with urgency normal, like FCM and Expo lower their priority for it', async () => {
    const browser = fake.browser();
    expect((await provider.send(message(browser, { silent: true }))).kind).toBe('sent');
    const [request] = fake.requestsFor(browser);
    expect(request!.headers).toMatchObject({ urgency: 'normal' });
  });

  it('classifies the push service’s answers', async () => {
    const cases: [number, Record<string, string> | undefined, object][] = [
      [410, undefined, { kind: 'invalid_token', reason: expect.stringMatching(/^410/) }],
      [404, undefined, { kind: 'invalid_token' }],
      [429, { 'retry-after': '120' }, { kind: 'throttled', retryAfterSeconds: 120 }],
      [503, undefined, { kind: 'transient' }],
      [403, undefined, { kind: 'configuration_error' }],
      [413, undefined, { kind: 'permanent' }],
      [400, undefined, { kind: 'permanent' }],
    ];
    for (const [status, headers, expected] of cases) {
      const browser = fake.browser();
      fake.answer(browser, { status, headers, body: `status ${status}` });
      expect(await provider.send(message(browser)), `HTTP ${status}`).toMatchObject(expected);
    }
  });

  it('an unreachable push service is transient; a stored token that is no subscription is invalid', async () => {
    const browser = fake.browser();
    const closed = JSON.stringify({ ...browser.subscription, endpoint: 'https://127.0.0.1:1/push/x' });
    expect(await provider.send({ ...message(browser), token: closed })).toMatchObject({ kind: 'transient' });
    expect(await provider.send({ ...message(browser), token: 'not-json' })).toMatchObject({ kind: 'invalid_token' });
  });

  it('refuses malformed VAPID keys when it is built, not at the first send', () => {
    expect(
      () => new WebPushProvider({ vapidPublicKey: 'short', vapidPrivateKey: vapid.privateKey, vapidSubject: 'mailto:a@b.c' }),
    ).toThrow();
  });
});
