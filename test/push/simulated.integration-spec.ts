import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createPushProviders, SimulatedPushProvider, type PushMessage } from '@nudge/push';
import { createTestDatabase, type TestDatabase } from '../support/database.js';

let db: TestDatabase;
let provider: SimulatedPushProvider;

beforeAll(async () => {
  db = await createTestDatabase();
  provider = new SimulatedPushProvider(db.pool, { slowDelayMs: 150 });
});

afterAll(async () => {
  await provider.close();
  await db.drop();
});

function message(token: string, extra: Partial<PushMessage> = {}): PushMessage {
  return { token, platform: 'ios', title: 'Stretch', body: 'Two minutes', collapseId: 'nudge:7', ...extra };
}

async function rowsFor(token: string) {
  const { rows } = await db.pool.query(
    `SELECT platform, push_token, collapse_id, title, body, data, outcome, provider_message_id, created_at
       FROM simulated_pushes WHERE push_token = $1 ORDER BY id`,
    [token],
  );
  return rows;
}

describe('SimulatedPushProvider', () => {
  it('sends any ordinary token and records exactly what the phone would get', async () => {
    const outcome = await provider.send(
      message('device-token-1', { platform: 'android', data: { reminderId: 'r-1', n: 2 }, collapseId: 'nudge:7:v2' }),
    );
    expect(outcome).toEqual({ kind: 'sent', providerMessageId: expect.stringMatching(/^sim-[0-9a-f-]{36}$/) });
    expect(await rowsFor('device-token-1')).toEqual([
      {
        platform: 'android',
        push_token: 'device-token-1',
        collapse_id: 'nudge:7:v2',
        title: 'Stretch',
        body: 'Two minutes',
        data: { reminderId: 'r-1', n: 2 },
        outcome: 'sent',
        provider_message_id: outcome.kind === 'sent' ? outcome.providerMessageId : null,
        created_at: expect.any(Date),
      },
    ]);
  });

  it('records the action category as data.category, on either platform', async () => {
    await provider.sendMany([
      message('category-ios', { data: { reminderId: 'r-1' }, actionCategory: 'NUDGE_REMINDER' }),
      message('category-android', { platform: 'android', actionCategory: 'NUDGE_REMINDER' }),
    ]);
    expect(await rowsFor('category-ios')).toMatchObject([{ data: { reminderId: 'r-1', category: 'NUDGE_REMINDER' }, outcome: 'sent' }]);
    expect(await rowsFor('category-android')).toMatchObject([{ data: { category: 'NUDGE_REMINDER' }, outcome: 'sent' }]);
  });

  it('answers sim-invalid- tokens with invalid_token', async () => {
    expect(await provider.send(message('sim-invalid-abc'))).toMatchObject({ kind: 'invalid_token' });
    expect(await rowsFor('sim-invalid-abc')).toMatchObject([{ outcome: 'invalid_token', provider_message_id: null }]);
  });

  it('answers sim-429- tokens as rate limited with Retry-After 120 s', async () => {
    expect(await provider.send(message('sim-429-abc'))).toEqual({
      kind: 'transient',
      reason: 'simulated: 429 TooManyRequests',
      retryAfterSeconds: 120,
    });
    expect(await rowsFor('sim-429-abc')).toMatchObject([{ outcome: 'transient' }]);
  });

  it('never answers sim-hang- tokens: the call ends only when its signal aborts, and nothing is recorded', async () => {
    const controller = new AbortController();
    let settled = false;
    const call = provider.send(message('sim-hang-abc'), { signal: controller.signal }).finally(() => (settled = true));
    await new Promise((r) => setTimeout(r, 200));
    expect(settled).toBe(false);
    const reason = new Error('timed out');
    controller.abort(reason);
    await expect(call).rejects.toBe(reason);
    expect(await rowsFor('sim-hang-abc')).toEqual([]);
  });

  it('hangAll (SIMULATED_PUSH_HANG=1): every call hangs, deaf to its signal', async () => {
    const wedged = new SimulatedPushProvider(db.pool, { hangAll: true });
    const controller = new AbortController();
    let settled = false;
    void wedged.send(message('wedged-ordinary'), { signal: controller.signal }).finally(() => (settled = true));
    controller.abort(new Error('timed out'));
    await new Promise((r) => setTimeout(r, 200));
    expect(settled).toBe(false);
    expect(await rowsFor('wedged-ordinary')).toEqual([]);
  });

  it('answers sim-500- tokens with a transient failure and no Retry-After', async () => {
    const outcome = await provider.send(message('sim-500-abc'));
    expect(outcome).toEqual({ kind: 'transient', reason: 'simulated: 500 InternalServerError' });
    expect(await rowsFor('sim-500-abc')).toMatchObject([{ outcome: 'transient' }]);
  });

  it('answers sim-slow- tokens after the delay, then as sent', async () => {
    const started = performance.now();
    const outcome = await provider.send(message('sim-slow-abc', { body: undefined, data: undefined }));
    expect(performance.now() - started).toBeGreaterThanOrEqual(140);
    expect(outcome.kind).toBe('sent');
    expect(await rowsFor('sim-slow-abc')).toMatchObject([{ outcome: 'sent', body: null, data: null }]);
  });

  it('records every attempt, so repeated sends show up as repeated rows', async () => {
    await provider.send(message('sim-500-repeat'));
    await provider.send(message('sim-500-repeat'));
    expect(await rowsFor('sim-500-repeat')).toHaveLength(2);
  });

  it('is what both platforms get without credentials', async () => {
    const providers = createPushProviders({}, { db: db.pool });
    expect(providers.choice).toEqual({ ios: 'simulated', android: 'simulated', web: 'simulated', expo: 'simulated' });
    await providers.forPlatform('android').send(message('registry-token', { platform: 'android' }));
    expect(await rowsFor('registry-token')).toMatchObject([{ platform: 'android', outcome: 'sent' }]);
    // A browser without VAPID keys: the sim-… prefixes work for web devices too.
    await providers.forPlatform('web').send(message('sim-invalid-web', { platform: 'web' }));
    expect(await rowsFor('sim-invalid-web')).toMatchObject([{ platform: 'web', outcome: 'invalid_token' }]);
    await providers.close();
  });
});

describe('push_deliveries', () => {
  it('keeps one row per (job, device) and at most one device-less row per job', async () => {
    const device = '6f1d2c3b-0000-4000-8000-000000000001';
    await db.pool.query(
      `INSERT INTO push_deliveries (job_id, device_id, user_id, platform, provider, status, collapse_id, attempts)
       VALUES (1, $1, 'u1', 'ios', 'apns', 'sending', 'nudge:1', 1)`,
      [device],
    );
    await expect(
      db.pool.query(`INSERT INTO push_deliveries (job_id, device_id, user_id, status) VALUES (1, $1, 'u1', 'sending')`, [device]),
    ).rejects.toThrow(/push_deliveries_job_device_key/);
    await db.pool.query(
      `INSERT INTO push_deliveries (job_id, device_id, user_id, status, skip_reason) VALUES (2, NULL, 'u1', 'skipped', 'no_device')`,
    );
    await expect(
      db.pool.query(
        `INSERT INTO push_deliveries (job_id, device_id, user_id, status, skip_reason) VALUES (2, NULL, 'u1', 'skipped', 'no_device')`,
      ),
    ).rejects.toThrow(/push_deliveries_job_no_device_key/);
  });

  it('accepts only the statuses of the contract and needs a reason to skip', async () => {
    await expect(
      db.pool.query(`INSERT INTO push_deliveries (job_id, device_id, user_id, status) VALUES (3, NULL, 'u1', 'delivered')`),
    ).rejects.toThrow(/check constraint/);
    await expect(
      db.pool.query(`INSERT INTO push_deliveries (job_id, device_id, user_id, status) VALUES (3, NULL, 'u1', 'skipped')`),
    ).rejects.toThrow(/check constraint/);
  });

  it('needs no job or device to exist: history outlives both', async () => {
    await db.pool.query(
      `INSERT INTO push_deliveries (job_id, device_id, user_id, platform, provider, status, provider_message_id)
       VALUES (999999, gen_random_uuid(), 'gone-user', 'android', 'fcm', 'sent', 'projects/p/messages/1')`,
    );
    const { rows } = await db.pool.query(`SELECT count(*)::int AS n FROM push_deliveries WHERE user_id = 'gone-user'`);
    expect(rows[0].n).toBe(1);
  });
});
