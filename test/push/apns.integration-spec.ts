import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { ApnsPushProvider, collapseIdFor, type ApnsProviderOptions, type PushMessage } from '@nudge/push';
import { describeJwt, generateApnsSigningKey, startFakeApns, type FakeApns } from './fakes/fake-apns.js';

// The real @parse/node-apn client against a local HTTP/2 server that checks
// what Apple checks. Tokens are distinct per test so scripts never leak.
const TOPIC = 'com.example.nudge';
const signing = generateApnsSigningKey();
const now = new Date('2026-03-01T12:00:00Z');

let fake: FakeApns;
let keyFolder: string;
const providers: ApnsPushProvider[] = [];

function provider(overrides: Partial<ApnsProviderOptions> = {}): ApnsPushProvider {
  const created = new ApnsPushProvider({
    key: signing.privateKey,
    keyId: signing.keyId,
    teamId: signing.teamId,
    topic: TOPIC,
    address: fake.address,
    port: fake.port,
    ca: fake.ca,
    now: () => now,
    ...overrides,
  });
  providers.push(created);
  return created;
}

let tokenCounter = 0;
function token(): string {
  tokenCounter += 1;
  return `${'ab'.repeat(28)}${tokenCounter.toString(16).padStart(8, '0')}`;
}

function message(pushToken: string, extra: Partial<PushMessage> = {}): PushMessage {
  return { token: pushToken, platform: 'ios', title: 'Stretch', body: 'Two minutes', collapseId: 'nudge:42', ...extra };
}

beforeAll(async () => {
  fake = await startFakeApns(signing);
  keyFolder = await mkdtemp(join(tmpdir(), 'nudge-apns-key-'));
});

afterEach(async () => {
  await Promise.all(providers.splice(0).map((p) => p.close()));
});

afterAll(async () => {
  await fake.stop();
  await rm(keyFolder, { recursive: true, force: true });
});

describe('ApnsPushProvider against a fake APNs', () => {
  it('sends a signed alert with topic, push type, collapse id, expiration and priority', async () => {
    const keyFile = join(keyFolder, 'AuthKey.p8');
    await writeFile(keyFile, signing.privateKey);
    const apns = provider({ key: undefined, keyFile });
    const device = token();
    const expiresAt = new Date('2026-03-01T18:00:00Z');

    const outcome = await apns.send(message(device, { data: { reminderId: 'r-1', count: 2 }, expiresAt, collapseId: 'nudge:42:v3' }));

    const [request] = fake.requestsFor(device);
    expect(outcome).toEqual({ kind: 'sent', providerMessageId: request!.headers['apns-id'] });
    expect(request!.path).toBe(`/3/device/${device}`);
    expect(request!.jwtValid).toBe(true);
    expect(describeJwt(request!.jwt!)).toMatchObject({ kid: signing.keyId, iss: signing.teamId });
    expect(request!.headers).toMatchObject({
      'apns-topic': TOPIC,
      'apns-push-type': 'alert',
      'apns-collapse-id': 'nudge:42:v3',
      'apns-expiration': String(expiresAt.getTime() / 1000),
      'apns-priority': '10',
    });
    expect(request!.body).toEqual({
      aps: { alert: { title: 'Stretch', body: 'Two minutes' }, sound: 'default' },
      reminderId: 'r-1',
      count: 2,
    });
  });

  it('sends a reminder’s collapse id and action category as APNs sees them', async () => {
    const device = token();
    const collapseId = collapseIdFor('reminder:0b9e5c1a-7d7e-4c52-9a57-6a1f0f7f2c11');
    const outcome = await provider().send(
      message(device, { collapseId, actionCategory: 'NUDGE_REMINDER', data: { reminderId: '0b9e5c1a', category: 'app-data' } }),
    );
    expect(outcome.kind).toBe('sent');
    const [request] = fake.requestsFor(device);
    expect(request!.headers['apns-collapse-id']).toBe('nudge:reminder:0b9e5c1a-7d7e-4c52-9a57-6a1f0f7f2c11');
    // On iOS the category is Apple's aps.category; the app's own data stays beside aps as it was.
    expect(request!.body).toEqual({
      aps: { alert: { title: 'Stretch', body: 'Two minutes' }, sound: 'default', category: 'NUDGE_REMINDER' },
      reminderId: '0b9e5c1a',
      category: 'app-data',
    });
  });

  it('sends a hashed collapse id for a long notification key, within Apple’s 64 bytes', async () => {
    const device = token();
    const collapseId = collapseIdFor(`notification:${'order-shipped-'.repeat(30)}`);
    expect((await provider().send(message(device, { collapseId }))).kind).toBe('sent');
    const header = fake.requestsFor(device)[0]!.headers['apns-collapse-id'] as string;
    expect(header).toBe(collapseId);
    expect(Buffer.byteLength(header)).toBeLessThanOrEqual(64);
  });

  it('uses priority 5 for normal pushes, omits expiration when none is given, marks time-sensitive', async () => {
    const device = token();
    expect((await provider().send(message(device, { priority: 'normal', timeSensitive: true }))).kind).toBe('sent');
    const [request] = fake.requestsFor(device);
    expect(request!.headers['apns-priority']).toBe('5');
    expect(request!.headers).not.toHaveProperty('apns-expiration');
    expect(request!.body).toMatchObject({ aps: { 'interruption-level': 'time-sensitive' } });
  });

  it('maps 410 Unregistered to invalid_token, keeping the timestamp', async () => {
    const device = token();
    fake.answer(device, { status: 410, reason: 'Unregistered', timestamp: 1_767_225_600_000 });
    expect(await provider().send(message(device))).toEqual({
      kind: 'invalid_token',
      reason: '410 Unregistered',
      invalidSince: new Date(1_767_225_600_000),
    });
  });

  it('maps 410 ExpiredToken and 400 BadDeviceToken to invalid_token', async () => {
    const expired = token();
    const bad = token();
    fake.answer(expired, { status: 410, reason: 'ExpiredToken' });
    fake.answer(bad, { status: 400, reason: 'BadDeviceToken' });
    const apns = provider();
    expect(await apns.send(message(expired))).toEqual({ kind: 'invalid_token', reason: '410 ExpiredToken' });
    expect(await apns.send(message(bad))).toEqual({ kind: 'invalid_token', reason: '400 BadDeviceToken' });
  });

  it('answers invalid_token for a token that is not hex, without a request', async () => {
    const before = fake.requests.length;
    expect((await provider().send(message('sim-not-hex'))).kind).toBe('invalid_token');
    expect(fake.requests.length).toBe(before);
  });

  it('maps 429 TooManyRequests to throttled (the pace slows down) with Retry-After, in one request', async () => {
    const device = token();
    fake.answer(device, { status: 429, reason: 'TooManyRequests', headers: { 'retry-after': '120' } });
    expect(await provider().send(message(device))).toEqual({
      kind: 'throttled',
      reason: '429 TooManyRequests',
      retryAfterSeconds: 120,
    });
    // The library would retry at once; the queue backs off instead.
    expect(fake.requestsFor(device)).toHaveLength(1);
  });

  it('maps 5xx to transient in one request, with an HTTP-date Retry-After', async () => {
    const unavailable = token();
    const internal = token();
    fake.answer(unavailable, {
      status: 503,
      reason: 'ServiceUnavailable',
      headers: { 'retry-after': 'Sun, 01 Mar 2026 12:05:00 GMT' },
    });
    fake.answer(internal, { status: 500, reason: 'InternalServerError' });
    const apns = provider();
    expect(await apns.send(message(unavailable))).toEqual({
      kind: 'transient',
      reason: '503 ServiceUnavailable',
      retryAfterSeconds: 300,
    });
    const outcome = await apns.send(message(internal));
    expect(outcome).toMatchObject({ kind: 'transient', reason: expect.stringMatching(/^500 /) });
    expect(outcome).not.toHaveProperty('retryAfterSeconds');
    expect(fake.requestsFor(unavailable)).toHaveLength(1);
    expect(fake.requestsFor(internal)).toHaveLength(1);
    // The library drops the session after a 500; the next send reconnects.
    expect((await apns.send(message(token()))).kind).toBe('sent');
  });

  it('on 403 ExpiredProviderToken signs a new JWT and retries once', async () => {
    const device = token();
    fake.answer(device, { status: 403, reason: 'ExpiredProviderToken' });
    expect((await provider().send(message(device))).kind).toBe('sent');
    const [first, second] = fake.requestsFor(device);
    expect(fake.requestsFor(device)).toHaveLength(2);
    expect(second!.jwtValid).toBe(true);
    expect(second!.jwt).not.toBe(first!.jwt);
  });

  it('gives up as transient when the fresh JWT is refused too', async () => {
    const device = token();
    fake.answer(device, { status: 403, reason: 'ExpiredProviderToken' }, { status: 403, reason: 'ExpiredProviderToken' });
    expect(await provider().send(message(device))).toMatchObject({ kind: 'transient', reason: /ExpiredProviderToken/ });
    expect(fake.requestsFor(device)).toHaveLength(2);
  });

  it('on 403 InvalidProviderToken answers configuration_error (holding further sends is PushDelivery’s, per app)', async () => {
    const wrongKey = generateApnsSigningKey(signing.keyId, signing.teamId);
    const apns = provider({ key: wrongKey.privateKey });
    const first = token();
    const second = token();

    expect(await apns.send(message(first))).toMatchObject({
      kind: 'configuration_error',
      reason: expect.stringMatching(/^403 InvalidProviderToken/),
    });
    expect(fake.requestsFor(first)).toHaveLength(1);
    expect(fake.requestsFor(first)[0]!.jwtValid).toBe(false);

    // The provider itself calls again: holding sends is per app, in PushDelivery (test/push/app-credentials.e2e-spec.ts).
    expect((await apns.send(message(second))).kind).toBe('configuration_error');
    expect(fake.requestsFor(second)).toHaveLength(1);
  });

  it('flags a wrong team id the same way', async () => {
    const device = token();
    const outcome = await provider({ teamId: 'OTHERTEAM1' }).send(message(device));
    expect(outcome.kind).toBe('configuration_error');
    expect(fake.requestsFor(device)[0]!.jwtValid).toBe(false);
  });

  it('maps other 400s to permanent', async () => {
    const apns = provider();
    for (const reason of ['BadTopic', 'BadCollapseId', 'DeviceTokenNotForTopic']) {
      const device = token();
      fake.answer(device, { status: 400, reason });
      expect(await apns.send(message(device))).toEqual({ kind: 'permanent', reason: `400 ${reason}` });
    }
    const large = token();
    fake.answer(large, { status: 413, reason: 'PayloadTooLarge' });
    expect(await apns.send(message(large))).toEqual({ kind: 'permanent', reason: '413 PayloadTooLarge' });
  });

  it('refuses a payload over 4 KiB or a collapse id over 64 bytes before sending', async () => {
    const apns = provider();
    const device = token();
    expect(await apns.send(message(device, { body: 'x'.repeat(4100) }))).toMatchObject({
      kind: 'permanent',
      reason: /^PayloadTooLarge/,
    });
    expect(await apns.send(message(device, { collapseId: 'c'.repeat(65) }))).toMatchObject({ kind: 'permanent' });
    expect(fake.requestsFor(device)).toHaveLength(0);
  });

  it('answers transient when APNs does not answer in time', async () => {
    const device = token();
    fake.answer(device, { delayMs: 1500 });
    const outcome = await provider({ requestTimeoutMs: 300 }).send(message(device));
    expect(outcome).toMatchObject({ kind: 'transient', reason: /timeout/ });
  });

  it('answers transient when the server cannot be reached', async () => {
    const outcome = await provider({ port: 1 }).send(message(token()));
    expect(outcome.kind).toBe('transient');
  });

  it('sends concurrently over one connection and closes cleanly', async () => {
    const apns = provider();
    const devices = Array.from({ length: 20 }, () => token());
    devices.slice(0, 5).forEach((device) => fake.answer(device, { status: 410, reason: 'Unregistered' }));
    const outcomes = await Promise.all(devices.map((device) => apns.send(message(device))));
    expect(outcomes.filter((o) => o.kind === 'invalid_token')).toHaveLength(5);
    expect(outcomes.filter((o) => o.kind === 'sent')).toHaveLength(15);
    await apns.close();
    await apns.close();
    expect((await apns.send(message(token()))).kind).toBe('transient');
  });
});
