import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ExpoPushProvider, isExpoPushToken, type PushMessage } from '@nudge/push';
import { startFakeExpo, type FakeExpo } from './fakes/fake-expo.js';

// Our Expo client against a local stand-in for exp.host's push API.
const now = new Date('2026-03-01T12:00:00Z');
let fake: FakeExpo;
let provider: ExpoPushProvider;
let counter = 0;

const token = () => `ExponentPushToken[test-${++counter}-xxxxxxxxxxxx]`;
function message(to: string, extra: Partial<PushMessage> = {}): PushMessage {
  return { token: to, platform: 'expo', title: 'Stretch', body: 'Two minutes', collapseId: 'nudge:42', ...extra };
}

beforeAll(async () => {
  fake = await startFakeExpo({ accessToken: 'expo-access-token' });
  provider = new ExpoPushProvider({ baseUrl: fake.baseUrl, accessToken: 'expo-access-token', now: () => now });
});
afterAll(async () => {
  await provider.close();
  await fake.stop();
});

describe('ExpoPushProvider against a fake Expo push API', () => {
  it('sends the message Expo expects, with the access token, and returns the ticket id', async () => {
    const to = token();
    const outcome = await provider.send(
      message(to, {
        data: { url: 'app://plants' },
        actionCategory: 'NUDGE_REMINDER',
        expiresAt: new Date('2026-03-01T13:00:00Z'),
        timeSensitive: true,
      }),
    );
    expect(outcome).toEqual({ kind: 'sent', providerMessageId: fake.ticketsOf(to)[0] });
    expect(fake.messagesTo(to)).toEqual([
      {
        to,
        title: 'Stretch',
        body: 'Two minutes',
        data: { url: 'app://plants' },
        sound: 'default',
        priority: 'high',
        ttl: 3600,
        collapseId: 'nudge:42',
        categoryId: 'NUDGE_REMINDER',
        interruptionLevel: 'time-sensitive',
      },
    ]);
    expect(fake.requests.at(-1)!.authorization).toBe('Bearer expo-access-token');
  });

  it('sends 150 messages as two requests (Expo takes 100 at most), outcomes in order', async () => {
    const tokens = Array.from({ length: 150 }, token);
    fake.script(tokens[7]!, { ticket: { status: 'error', error: 'DeviceNotRegistered' } });
    const before = fake.requests.length;
    const outcomes = await provider.sendMany(tokens.map((t) => message(t)));
    expect(fake.requests.length - before).toBe(2);
    expect(outcomes).toHaveLength(150);
    expect(outcomes[7]).toMatchObject({ kind: 'invalid_token', reason: expect.stringMatching(/DeviceNotRegistered/) });
    expect(outcomes.filter((o) => o.kind === 'sent')).toHaveLength(149);
    expect(outcomes[149]).toEqual({ kind: 'sent', providerMessageId: fake.ticketsOf(tokens[149]!)[0] });
  });

  it('classifies ticket errors and request failures', async () => {
    const rate = token();
    fake.script(rate, { ticket: { status: 'error', error: 'MessageRateExceeded' } });
    expect(await provider.send(message(rate))).toMatchObject({ kind: 'transient' });
    const big = token();
    fake.script(big, { ticket: { status: 'error', error: 'MessageTooBig' } });
    expect(await provider.send(message(big))).toMatchObject({ kind: 'permanent' });
    const creds = token();
    fake.script(creds, { ticket: { status: 'error', error: 'InvalidCredentials' } });
    expect(await provider.send(message(creds))).toMatchObject({ kind: 'configuration_error' });

    fake.failNext({ status: 429, headers: { 'retry-after': '30' }, errors: [{ code: 'RATE_LIMIT_EXCEEDED', message: 'slow down' }] });
    expect(await provider.send(message(token()))).toEqual({
      kind: 'throttled',
      reason: '429 RATE_LIMIT_EXCEEDED slow down',
      retryAfterSeconds: 30,
    });
    fake.failNext({ status: 503 });
    expect(await provider.send(message(token()))).toMatchObject({ kind: 'transient' });
    fake.failNext({ status: 400, errors: [{ code: 'VALIDATION_ERROR', message: 'bad' }] });
    expect(await provider.send(message(token()))).toMatchObject({ kind: 'permanent', reason: '400 VALIDATION_ERROR bad' });

    const wrongKey = new ExpoPushProvider({ baseUrl: fake.baseUrl, accessToken: 'stale-token' });
    expect(await wrongKey.send(message(token()))).toMatchObject({ kind: 'configuration_error', reason: expect.stringMatching(/^401/) });
    const nowhere = new ExpoPushProvider({ baseUrl: 'http://127.0.0.1:1' });
    expect(await nowhere.send(message(token()))).toMatchObject({ kind: 'transient', reason: expect.stringMatching(/unreachable/) });
  });

  it('stops when the job’s signal aborts, with the signal’s reason', async () => {
    const controller = new AbortController();
    controller.abort(new Error('job timed out'));
    await expect(provider.send(message(token()), { signal: controller.signal })).rejects.toThrow('job timed out');
  });

  it('reads receipts by ticket id', async () => {
    const gone = token();
    fake.script(gone, { receipt: { status: 'error', error: 'DeviceNotRegistered' } });
    const fine = token();
    await provider.sendMany([message(gone), message(fine)]);
    const [goneTicket] = fake.ticketsOf(gone);
    const [fineTicket] = fake.ticketsOf(fine);
    expect(await provider.receipts([goneTicket!, fineTicket!, 'unknown-id'])).toEqual({
      [goneTicket!]: { status: 'error', message: 'DeviceNotRegistered', details: { error: 'DeviceNotRegistered' } },
      [fineTicket!]: { status: 'ok' },
    });
  });

  it('knows an Expo push token when it sees one', () => {
    expect(isExpoPushToken('ExponentPushToken[xxxxxxxxxxxxxxxxxxxxxx]')).toBe(true);
    expect(isExpoPushToken('ExpoPushToken[xxxxxxxxxxxxxxxxxxxxxx]')).toBe(true);
    expect(isExpoPushToken('xxxxxxxxxxxxxxxxxxxxxx')).toBe(false);
    expect(isExpoPushToken('ExponentPushToken[]')).toBe(false);
  });
});
