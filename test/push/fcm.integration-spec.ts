import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { collapseIdFor, FcmPushProvider, type FcmProviderOptions, type PushMessage } from '@nudge/push';
import { connectToFakeFcm, fakeFcmCredential, startFakeFcm, type FakeFcm, type FakeFcmAnswer } from './fakes/fake-fcm.js';

// The real firebase-admin `messaging().sendEach` against a local HTTP/2 server
// that speaks FCM HTTP v1. No request leaves the machine: the credential hands out
// a fixed token and the `connect` option opens the socket to the fake.
const now = new Date('2026-03-01T12:00:00Z');

let fake: FakeFcm;
const providers: FcmPushProvider[] = [];

function provider(overrides: Partial<FcmProviderOptions> = {}): FcmPushProvider {
  const created = new FcmPushProvider({
    credential: fakeFcmCredential(fake),
    projectId: fake.projectId,
    connect: connectToFakeFcm(fake),
    now: () => now,
    ...overrides,
  });
  providers.push(created);
  return created;
}

let tokenCounter = 0;
function token(): string {
  tokenCounter += 1;
  return `fcm-token-${tokenCounter}:APA91b${'x'.repeat(40)}`;
}

function message(pushToken: string, extra: Partial<PushMessage> = {}): PushMessage {
  return { token: pushToken, platform: 'android', title: 'Stretch', body: 'Two minutes', collapseId: 'nudge:42', ...extra };
}

beforeAll(async () => {
  fake = await startFakeFcm();
});

afterEach(async () => {
  await Promise.all(providers.splice(0).map((p) => p.close()));
});

afterAll(async () => {
  await fake.stop();
});

describe('FcmPushProvider against a fake FCM', () => {
  it('sends a v1 message with notification, collapse key, ttl, priority and string data', async () => {
    const device = token();
    const outcome = await provider().send(
      message(device, {
        data: { reminderId: 'r-1', count: 2 },
        expiresAt: new Date('2026-03-01T13:00:00Z'),
        collapseId: 'nudge:42:v3',
      }),
    );

    expect(outcome).toEqual({ kind: 'sent', providerMessageId: expect.stringMatching(/^projects\/nudge-test\/messages\//) });
    const [request] = fake.requestsFor(device);
    expect(request).toMatchObject({
      method: 'POST',
      path: '/v1/projects/nudge-test/messages:send',
      host: 'fcm.googleapis.com',
      authorization: `Bearer ${fake.accessToken}`,
    });
    expect(request!.body).toEqual({
      message: {
        token: device,
        notification: { title: 'Stretch', body: 'Two minutes' },
        android: {
          collapse_key: 'nudge:42:v3',
          priority: 'high',
          ttl: '3600s',
          notification: { tag: 'nudge:42:v3' },
        },
        data: { reminderId: 'r-1', count: '2' },
      },
    });
  });

  it('sends a reminder’s collapse id as collapse key and tag, and the action category as click action and data.category', async () => {
    const device = token();
    const collapseId = collapseIdFor('reminder:0b9e5c1a-7d7e-4c52-9a57-6a1f0f7f2c11');
    const outcome = await provider().send(
      message(device, { collapseId, actionCategory: 'NUDGE_REMINDER', data: { reminderId: '0b9e5c1a', occurrence: '2026-03-01' } }),
    );
    expect(outcome.kind).toBe('sent');
    expect(fake.requestsFor(device)[0]!.body.message).toEqual({
      token: device,
      notification: { title: 'Stretch', body: 'Two minutes' },
      android: {
        collapse_key: 'nudge:reminder:0b9e5c1a-7d7e-4c52-9a57-6a1f0f7f2c11',
        priority: 'high',
        notification: { tag: 'nudge:reminder:0b9e5c1a-7d7e-4c52-9a57-6a1f0f7f2c11', click_action: 'NUDGE_REMINDER' },
      },
      data: { reminderId: '0b9e5c1a', occurrence: '2026-03-01', category: 'NUDGE_REMINDER' },
    });
  });

  it('sends no click action and no data.category without an action category', async () => {
    const device = token();
    await provider().send(message(device));
    const sent = fake.requestsFor(device)[0]!.body.message!;
    expect(sent.android).toEqual({ collapse_key: 'nudge:42', priority: 'high', notification: { tag: 'nudge:42' } });
    expect(sent).not.toHaveProperty('data');
  });

  it('sends normal priority and no ttl when asked', async () => {
    const device = token();
    await provider().send(message(device, { priority: 'normal' }));
    const android = fake.requestsFor(device)[0]!.body.message!.android as Record<string, unknown>;
    expect(android.priority).toBe('normal');
    expect(android).not.toHaveProperty('ttl');
  });

  it('maps UNREGISTERED to invalid_token', async () => {
    const device = token();
    fake.answer(device, { status: 404, grpcStatus: 'NOT_FOUND', errorCode: 'UNREGISTERED', message: 'Requested entity was not found.' });
    expect(await provider().send(message(device))).toEqual({
      kind: 'invalid_token',
      reason: 'messaging/registration-token-not-registered: Requested entity was not found.',
    });
  });

  it('maps an INVALID_ARGUMENT about the token to invalid_token, and any other to permanent', async () => {
    const badToken = token();
    const badMessage = token();
    fake.answer(badToken, {
      status: 400,
      grpcStatus: 'INVALID_ARGUMENT',
      errorCode: 'INVALID_ARGUMENT',
      message: 'The registration token is not a valid FCM registration token',
    });
    fake.answer(badMessage, {
      status: 400,
      grpcStatus: 'INVALID_ARGUMENT',
      errorCode: 'INVALID_ARGUMENT',
      message: "Invalid value at 'message.android.ttl'",
    });
    const fcm = provider();
    expect(await fcm.send(message(badToken))).toMatchObject({ kind: 'invalid_token', reason: /^messaging\/invalid-argument/ });
    expect(await fcm.send(message(badMessage))).toMatchObject({ kind: 'permanent', reason: /message\.android\.ttl/ });
  });

  it('maps QUOTA_EXCEEDED to throttled (the pace slows down) with Retry-After, in one request', async () => {
    const device = token();
    fake.answer(device, {
      status: 429,
      grpcStatus: 'RESOURCE_EXHAUSTED',
      errorCode: 'QUOTA_EXCEEDED',
      message: 'Quota exceeded for quota metric',
      headers: { 'retry-after': '90' },
    });
    expect(await provider().send(message(device))).toEqual({
      kind: 'throttled',
      reason: 'messaging/message-rate-exceeded: Quota exceeded for quota metric',
      retryAfterSeconds: 90,
    });
    expect(fake.requestsFor(device)).toHaveLength(1);
  });

  it('maps UNAVAILABLE to transient in one request: firebase-admin does not sleep and retry inside send', async () => {
    const device = token();
    fake.answer(
      device,
      {
        status: 503,
        grpcStatus: 'UNAVAILABLE',
        errorCode: 'UNAVAILABLE',
        message: 'The service is unavailable',
        headers: { 'retry-after': '30' },
      },
      { status: 503, grpcStatus: 'UNAVAILABLE', errorCode: 'UNAVAILABLE' },
    );
    const started = Date.now();
    expect(await provider().send(message(device))).toEqual({
      kind: 'transient',
      reason: 'messaging/server-unavailable: The service is unavailable',
      retryAfterSeconds: 30,
    });
    expect(Date.now() - started).toBeLessThan(5000);
    expect(fake.requestsFor(device)).toHaveLength(1);
  });

  it('maps INTERNAL to transient, without Retry-After when none is given', async () => {
    const device = token();
    fake.answer(device, { status: 500, grpcStatus: 'INTERNAL', errorCode: 'INTERNAL', message: 'Internal error' });
    expect(await provider().send(message(device))).toEqual({ kind: 'transient', reason: 'messaging/internal-error: Internal error' });
    expect(fake.requestsFor(device)).toHaveLength(1);
  });

  it('maps a non-JSON 502 from a proxy to transient', async () => {
    const device = token();
    fake.answer(device, { status: 502, rawBody: '<html>Bad Gateway</html>' });
    expect(await provider().send(message(device))).toMatchObject({ kind: 'transient' });
  });

  it('maps SENDER_ID_MISMATCH and THIRD_PARTY_AUTH_ERROR to configuration_error', async () => {
    const mismatch = token();
    const thirdParty = token();
    fake.answer(mismatch, { status: 403, grpcStatus: 'PERMISSION_DENIED', errorCode: 'SENDER_ID_MISMATCH', message: 'SenderId mismatch' });
    fake.answer(thirdParty, {
      status: 401,
      grpcStatus: 'UNAUTHENTICATED',
      errorCode: 'THIRD_PARTY_AUTH_ERROR',
      message: 'Auth error from APNS or Web Push Service',
    });
    const fcm = provider();
    expect(await fcm.send(message(mismatch))).toEqual({
      kind: 'configuration_error',
      reason: 'messaging/mismatched-credential: SenderId mismatch',
    });
    expect(await fcm.send(message(thirdParty))).toMatchObject({ kind: 'configuration_error', reason: /third-party-auth-error/ });
  });

  it('maps a rejected access token to configuration_error', async () => {
    const device = token();
    const outcome = await provider({ credential: fakeFcmCredential({ accessToken: 'ya29.wrong' }) }).send(message(device));
    expect(outcome).toMatchObject({ kind: 'configuration_error' });
    expect(fake.requestsFor(device)[0]!.authorization).toBe('Bearer ya29.wrong');
  });

  it('classifies a failed OAuth token fetch: a revoked key is configuration, a network blip transient', async () => {
    const failing = (text: string) => ({
      getAccessToken: async () => {
        throw new Error(text);
      },
    });
    const revoked = await provider({ credential: failing('invalid_grant: Invalid JWT Signature.') }).send(message(token()));
    expect(revoked).toMatchObject({ kind: 'configuration_error', reason: /^app\/invalid-credential/ });
    const blip = await provider({ credential: failing('getaddrinfo EAI_AGAIN oauth2.googleapis.com') }).send(message(token()));
    expect(blip).toMatchObject({ kind: 'transient', reason: /^app\/invalid-credential/ });
  });

  it('maps any other error to permanent', async () => {
    const device = token();
    fake.answer(device, { status: 400, grpcStatus: 'FAILED_PRECONDITION', errorCode: 'UNSPECIFIED_ERROR', message: 'odd' });
    expect(await provider().send(message(device))).toMatchObject({ kind: 'permanent' });
  });

  it('answers transient when FCM cannot be reached', async () => {
    const outcome = await provider({ connect: connectToFakeFcm({ port: 1, ca: fake.ca }) }).send(message(token()));
    expect(outcome.kind).toBe('transient');
  });

  it('keeps Retry-After apart for concurrent sends', async () => {
    const fcm = provider();
    const devices = Array.from({ length: 12 }, () => token());
    devices.forEach((device, i) => {
      if (i % 3 === 0) fake.answer(device, { status: 429, errorCode: 'QUOTA_EXCEEDED', headers: { 'retry-after': String(10 + i) } });
    });
    const outcomes = await Promise.all(devices.map((device) => fcm.send(message(device))));
    outcomes.forEach((outcome, i) => {
      if (i % 3 === 0) expect(outcome).toMatchObject({ kind: 'throttled', retryAfterSeconds: 10 + i });
      else expect(outcome.kind).toBe('sent');
    });
  });

  it('answers transient after close', async () => {
    const fcm = provider();
    await fcm.close();
    await fcm.close();
    expect((await fcm.send(message(token()))).kind).toBe('transient');
  });
});

function v1Error(status: number, grpcStatus: string, errorCode: string, message: string, headers?: Record<string, string>): FakeFcmAnswer {
  return { status, grpcStatus, errorCode, message, ...(headers ? { headers } : {}) };
}

describe('FcmPushProvider.sendMany', () => {
  // One kind of answer per residue of the message's index: what FCM answers a batch of a real app's devices.
  const kinds = [
    { answer: undefined, outcome: { kind: 'sent', providerMessageId: expect.stringMatching(/^projects\/nudge-test\/messages\//) } },
    {
      answer: v1Error(404, 'NOT_FOUND', 'UNREGISTERED', 'Requested entity was not found.'),
      outcome: { kind: 'invalid_token', reason: 'messaging/registration-token-not-registered: Requested entity was not found.' },
    },
    {
      answer: v1Error(400, 'INVALID_ARGUMENT', 'INVALID_ARGUMENT', 'The registration token is not a valid FCM registration token'),
      outcome: { kind: 'invalid_token', reason: expect.stringMatching(/^messaging\/invalid-argument/) },
    },
    {
      answer: v1Error(429, 'RESOURCE_EXHAUSTED', 'QUOTA_EXCEEDED', 'Quota exceeded', { 'retry-after': '45' }),
      outcome: { kind: 'throttled', reason: 'messaging/message-rate-exceeded: Quota exceeded', retryAfterSeconds: 45 },
    },
    {
      answer: v1Error(503, 'UNAVAILABLE', 'UNAVAILABLE', 'The service is unavailable', { 'retry-after': '30' }),
      outcome: { kind: 'transient', reason: 'messaging/server-unavailable: The service is unavailable', retryAfterSeconds: 30 },
    },
    {
      answer: { status: 500, rawBody: '<html>Internal Server Error</html>' },
      outcome: { kind: 'transient', reason: expect.stringMatching(/^messaging\/internal-error/) },
    },
  ] as const;

  it('sends 300 messages over one HTTP/2 connection and answers each in order, without retrying a 503', async () => {
    const devices = Array.from({ length: 300 }, () => token());
    devices.forEach((device, i) => {
      const { answer } = kinds[i % kinds.length]!;
      // A second 503 waits behind the first: a retry inside firebase-admin would take it.
      if (answer?.status === 503) fake.answer(device, answer, answer);
      else if (answer) fake.answer(device, answer);
    });
    const connectionsBefore = fake.connections;

    const outcomes = await provider().sendMany(devices.map((device) => message(device)));

    expect(outcomes).toEqual(devices.map((_, i) => kinds[i % kinds.length]!.outcome));
    expect(fake.connections - connectionsBefore).toBe(1);
    const requests = devices.map((device) => fake.requestsFor(device));
    expect(requests.every((r) => r.length === 1)).toBe(true);
    expect(new Set(requests.map((r) => r[0]!.httpVersion))).toEqual(new Set(['2.0']));
    expect(requests[0]![0]).toMatchObject({ host: 'fcm.googleapis.com', authorization: `Bearer ${fake.accessToken}` });
  });

  it('answers permanent for a message that is not Android, and sends the rest', async () => {
    const [first, second] = [token(), token()];
    const outcomes = await provider().sendMany([message(first), message(token(), { platform: 'ios' }), message(second)]);
    expect(outcomes.map((o) => o.kind)).toEqual(['sent', 'permanent', 'sent']);
    expect(outcomes[1]).toEqual({ kind: 'permanent', reason: 'FCM provider does not deliver to ios' });
    expect([...fake.requestsFor(first), ...fake.requestsFor(second)]).toHaveLength(2);
  });

  it('sends more than 500 messages as batches of 500, one connection each', async () => {
    const devices = Array.from({ length: 501 }, () => token());
    const connectionsBefore = fake.connections;
    const outcomes = await provider().sendMany(devices.map((device) => message(device)));
    expect(outcomes.filter((o) => o.kind === 'sent')).toHaveLength(501);
    expect(fake.connections - connectionsBefore).toBe(2);
  });

  it('answers transient for every message when FCM refuses the connection, or has stopped', async () => {
    const refused = await provider({ connect: connectToFakeFcm({ port: 1, ca: fake.ca }) }).sendMany([message(token()), message(token())]);
    expect(refused.map((o) => o.kind)).toEqual(['transient', 'transient']);

    const stopped = await startFakeFcm();
    await stopped.stop();
    const outcomes = await provider({ connect: connectToFakeFcm(stopped) }).sendMany(Array.from({ length: 5 }, () => message(token())));
    expect(outcomes.map((o) => o.kind)).toEqual(Array(5).fill('transient'));
  });

  it('keeps the answers that came when FCM ends the session mid-batch (GOAWAY), and answers transient for the rest', async () => {
    const devices = Array.from({ length: 40 }, () => token());
    fake.answer(devices[20]!, { dropConnection: true });

    const outcomes = await provider().sendMany(devices.map((device) => message(device)));

    // The GOAWAY names the stream of message 19 as the last one FCM took: 0–19 were answered, 20–39 refused.
    expect(outcomes.slice(0, 20)).toEqual(Array(20).fill({ kind: 'sent', providerMessageId: expect.any(String) }));
    expect(outcomes.slice(20)).toEqual(Array(20).fill({ kind: 'transient', reason: expect.stringMatching(/REFUSED_STREAM/) }));
  });

  it('rejects with the signal’s reason when the job aborts, before or while FCM answers', async () => {
    const slow = await startFakeFcm({ latencyMs: 2_000 });
    try {
      const fcm = provider({ connect: connectToFakeFcm(slow), credential: fakeFcmCredential(slow), projectId: slow.projectId });
      const reason = new Error('job timed out');
      await expect(fcm.sendMany([message(token())], { signal: AbortSignal.abort(reason) })).rejects.toBe(reason);
      expect(slow.requests).toHaveLength(0);

      const controller = new AbortController();
      const sending = fcm.sendMany([message(token()), message(token())], { signal: controller.signal });
      setTimeout(() => controller.abort(reason), 50);
      await expect(sending).rejects.toBe(reason);
      expect(slow.requests).toHaveLength(0);
    } finally {
      await slow.stop();
    }
  });
});
