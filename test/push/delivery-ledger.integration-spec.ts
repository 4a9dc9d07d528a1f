import { Registry } from 'prom-client';
import { afterAll, beforeAll, beforeEach, describe, expect, it, vi } from 'vitest';
import {
  collapseIdFor,
  createPushProviders,
  PushDelivery,
  PushMetrics,
  type DeliveryRequest,
  type PushOutcome,
  type PushProvider,
  type PushProviders,
} from '@nudge/push';
import { createTestDatabase, type TestDatabase } from '../support/database.js';
import type { QueryExecutor } from '@nudge/queue';

// PushDelivery.deliverMany: many jobs through the ledger at once, each job
// summarised on its own, in a fixed number of statements.
describe('PushDelivery.deliverMany', () => {
  let db: TestDatabase;
  let statements: string[];
  let delivery: PushDelivery;
  const now = new Date('2026-03-01T08:00:00.000Z');

  const request = (jobId: string, userId: string): DeliveryRequest => ({
    jobId,
    userId,
    title: 'Stretch',
    body: 'Two minutes',
    data: { n: jobId },
  });
  const ledger = async () =>
    (
      await db.pool.query(
        `SELECT pd.job_id::text AS job, d.push_token AS token, pd.status, pd.attempts, pd.skip_reason AS skip
           FROM push_deliveries pd LEFT JOIN devices d ON d.id = pd.device_id ORDER BY pd.job_id, d.push_token`,
      )
    ).rows;

  beforeAll(async () => {
    db = await createTestDatabase();
  });
  afterAll(async () => db.drop());
  beforeEach(async () => {
    await db.pool.query('TRUNCATE users, devices, push_deliveries, simulated_pushes CASCADE');
    await db.pool.query(`INSERT INTO users (id, time_zone) SELECT 'u' || i, 'UTC' FROM generate_series(1, 5) AS i`);
    await db.pool.query(
      `INSERT INTO devices (user_id, installation_id, platform, push_token, active) VALUES
         ('u1', 'a', 'ios', 'tok-1a', true), ('u1', 'b', 'android', 'sim-invalid-1b', true),
         ('u2', 'a', 'android', 'sim-429-2a', true),
         ('u4', 'a', 'ios', 'tok-4a', true),
         ('u5', 'a', 'ios', 'tok-5a', false)`,
    );
    // Job 4 reached its device on an earlier attempt.
    await db.pool.query(
      `INSERT INTO push_deliveries (job_id, device_id, user_id, platform, provider, status, attempts)
       SELECT 4, id, user_id, platform, 'simulated', 'sent', 1 FROM devices WHERE push_token = 'tok-4a'`,
    );
    statements = [];
    const counting: QueryExecutor = {
      query: (sql, params) => {
        statements.push(sql);
        return db.pool.query(sql, params as unknown[]);
      },
    };
    const providers = createPushProviders({}, { db: counting });
    delivery = new PushDelivery(counting, providers, { now: () => now });
  });

  it('summarises each job on its own and writes the ledger, the simulated pushes and the dead token', async () => {
    const summaries = await delivery.deliverMany([
      request('1', 'u1'),
      request('2', 'u2'),
      request('3', 'u3'),
      request('4', 'u4'),
      request('5', 'u5'),
    ]);
    expect(summaries).toEqual([
      { sent: 1, invalidTokens: 1, permanentFailures: 0, retryable: [], deferred: 0, noDevice: false },
      {
        sent: 0,
        invalidTokens: 0,
        permanentFailures: 0,
        retryable: [{ deviceId: expect.any(String), reason: 'simulated: 429 TooManyRequests' }],
        retryAfterSeconds: 120,
        deferred: 0,
        noDevice: false,
      },
      { sent: 0, invalidTokens: 0, permanentFailures: 0, retryable: [], deferred: 0, noDevice: true },
      { sent: 1, invalidTokens: 0, permanentFailures: 0, retryable: [], deferred: 0, noDevice: false },
      { sent: 0, invalidTokens: 0, permanentFailures: 0, retryable: [], deferred: 0, noDevice: true },
    ]);
    expect(await ledger()).toEqual([
      { job: '1', token: 'sim-invalid-1b', status: 'invalid_token', attempts: 1, skip: null },
      { job: '1', token: 'tok-1a', status: 'sent', attempts: 1, skip: null },
      { job: '2', token: 'sim-429-2a', status: 'failed', attempts: 1, skip: null },
      { job: '3', token: null, status: 'skipped', attempts: 0, skip: 'no_device' },
      { job: '4', token: 'tok-4a', status: 'sent', attempts: 1, skip: null },
      { job: '5', token: null, status: 'skipped', attempts: 0, skip: 'no_device' },
    ]);
    const simulated = await db.pool.query(`SELECT push_token, collapse_id, data FROM simulated_pushes ORDER BY push_token`);
    expect(simulated.rows).toEqual([
      { push_token: 'sim-429-2a', collapse_id: expect.stringMatching(/2/), data: { n: '2' } },
      { push_token: 'sim-invalid-1b', collapse_id: expect.stringMatching(/1/), data: { n: '1' } },
      { push_token: 'tok-1a', collapse_id: expect.stringMatching(/1/), data: { n: '1' } },
    ]);
    const dead = await db.pool.query(`SELECT push_token, active, deactivated_reason FROM devices WHERE NOT active ORDER BY push_token`);
    expect(dead.rows).toEqual([
      { push_token: 'sim-invalid-1b', active: false, deactivated_reason: 'invalid_token: simulated: token is not registered' },
      { push_token: 'tok-5a', active: false, deactivated_reason: null },
    ]);

    // The retry of job 2 sends only what was not reached, and counts the attempt.
    const [again] = await delivery.deliverMany([request('2', 'u2')]);
    expect(again!.retryable).toHaveLength(1);
    expect((await ledger()).find((r) => r.job === '2')).toMatchObject({ status: 'failed', attempts: 2 });
  });

  it('gives jobs with the same collapse key one collapse id, in the ledger and on the phone; others keep their job’s', async () => {
    const reminder = (jobId: string): DeliveryRequest => ({
      ...request(jobId, 'u1'),
      collapseKey: 'reminder:r-7',
      actionCategory: 'NUDGE_REMINDER',
    });
    // Two occurrences of one reminder: the second in a later call, as a later occurrence (or a retry or snooze) comes.
    await delivery.deliverMany([reminder('11'), request('12', 'u4')]);
    await delivery.deliver(reminder('13'));

    const shared = collapseIdFor('reminder:r-7');
    const { rows: ledgerRows } = await db.pool.query(
      `SELECT pd.job_id::text AS job, d.push_token AS token, pd.collapse_id
         FROM push_deliveries pd JOIN devices d ON d.id = pd.device_id WHERE pd.job_id IN (11, 12, 13) ORDER BY pd.job_id, d.push_token`,
    );
    expect(ledgerRows).toEqual([
      { job: '11', token: 'sim-invalid-1b', collapse_id: shared },
      { job: '11', token: 'tok-1a', collapse_id: shared },
      { job: '12', token: 'tok-4a', collapse_id: collapseIdFor('12') },
      { job: '13', token: 'tok-1a', collapse_id: shared },
    ]);
    // What the phone got: one collapse id for both occurrences, and the action category beside the app's data.
    const { rows: pushes } = await db.pool.query(`SELECT push_token, collapse_id, data FROM simulated_pushes ORDER BY id`);
    expect(pushes.filter((p) => p.push_token === 'tok-1a')).toEqual([
      { push_token: 'tok-1a', collapse_id: shared, data: { n: '11', category: 'NUDGE_REMINDER' } },
      { push_token: 'tok-1a', collapse_id: shared, data: { n: '13', category: 'NUDGE_REMINDER' } },
    ]);
    expect(pushes.find((p) => p.push_token === 'tok-4a')).toEqual({
      push_token: 'tok-4a',
      collapse_id: collapseIdFor('12'),
      data: { n: '12' },
    });
  });

  it('sends a retry with the collapse id of its key, and the ledger keeps that id', async () => {
    // A row left `sending` under another collapse id (a crash mid-send, say, before the key existed).
    await db.pool.query(
      `INSERT INTO push_deliveries (job_id, device_id, user_id, platform, provider, status, attempts, collapse_id)
       SELECT 21, id, user_id, platform, 'simulated', 'sending', 1, 'nudge:21' FROM devices WHERE push_token = 'tok-4a'`,
    );
    await delivery.deliver({ ...request('21', 'u4'), collapseKey: 'notification:order-21' });
    const { rows } = await db.pool.query(`SELECT status, attempts, collapse_id FROM push_deliveries WHERE job_id = 21`);
    expect(rows).toEqual([{ status: 'sent', attempts: 2, collapse_id: collapseIdFor('notification:order-21') }]);
    expect((await db.pool.query(`SELECT collapse_id FROM simulated_pushes`)).rows).toEqual([
      { collapse_id: 'nudge:notification:order-21' },
    ]);
  });

  it('makes no provider call when beforeSend throws (the job’s lease lapsed): the rows stay `sending` for whoever holds the job now', async () => {
    const lapsed = new Error('lease of job 31 was lost');
    let checks = 0;
    const beforeSend = () => {
      checks++;
      throw lapsed;
    };
    await expect(delivery.deliverMany([request('31', 'u1'), request('32', 'u4')], { beforeSend })).rejects.toBe(lapsed);
    expect(checks).toBeGreaterThan(0);
    expect((await db.pool.query(`SELECT count(*)::int AS n FROM simulated_pushes`)).rows[0].n).toBe(0);
    expect((await ledger()).filter((r) => r.job === '31' || r.job === '32')).toEqual([
      { job: '31', token: 'sim-invalid-1b', status: 'sending', attempts: 1, skip: null },
      { job: '31', token: 'tok-1a', status: 'sending', attempts: 1, skip: null },
      { job: '32', token: 'tok-4a', status: 'sending', attempts: 1, skip: null },
    ]);

    // The worker that holds the job now sends them, once each.
    await delivery.deliverMany([request('31', 'u1'), request('32', 'u4')], { beforeSend: () => checks++ });
    expect((await db.pool.query(`SELECT push_token FROM simulated_pushes ORDER BY push_token`)).rows.map((r) => r.push_token)).toEqual([
      'sim-invalid-1b',
      'tok-1a',
      'tok-4a',
    ]);
  });

  it('records the devices a call reached when another call is aborted: the retry sends only to the others', async () => {
    // iOS through a provider whose call answers only when it is told to (a slow or paced call), Android simulated.
    const simulated = createPushProviders({}, { db: db.pool });
    let answerIos: (() => void) | undefined;
    const slowIos: PushProvider = {
      name: 'apns',
      send: (_message, options) =>
        new Promise<PushOutcome>((resolve, reject) => {
          answerIos = () => resolve({ kind: 'sent', providerMessageId: 'apns-1' });
          options?.signal?.addEventListener('abort', () => reject(options.signal!.reason as Error), { once: true });
        }),
      close: async () => undefined,
    };
    const mixed: PushProviders = { ...simulated, ios: slowIos, forPlatform: (p) => (p === 'ios' ? slowIos : simulated.forPlatform(p)) };
    const registry = new Registry();
    const twoPlatforms = new PushDelivery(db.pool, mixed, { now: () => now }, new PushMetrics(registry));
    // u1 has an iPhone (tok-1a) and an Android phone (sim-invalid-1b, swapped here for a working token).
    await db.pool.query(`UPDATE devices SET push_token = 'tok-1b' WHERE push_token = 'sim-invalid-1b'`);

    const timeout = new AbortController();
    const first = twoPlatforms.deliverMany([request('41', 'u1')], { signal: timeout.signal });
    await vi.waitFor(async () =>
      expect((await db.pool.query(`SELECT push_token FROM simulated_pushes`)).rows).toEqual([{ push_token: 'tok-1b' }]),
    );
    const timedOut = new Error('handler did not finish within its timeout');
    timeout.abort(timedOut);
    await expect(first).rejects.toBe(timedOut);
    answerIos = undefined;
    expect((await ledger()).filter((r) => r.job === '41')).toEqual([
      { job: '41', token: 'tok-1a', status: 'sending', attempts: 1, skip: null },
      { job: '41', token: 'tok-1b', status: 'sent', attempts: 1, skip: null },
    ]);
    // The send that answered is counted, though its batch failed.
    expect(await registry.metrics()).toMatch(/^nudge_push_sends_total\{provider="simulated",outcome="sent"\} 1$/m);

    // The retry: the iPhone gets it, the Android phone is not sent it a second time.
    const retry = twoPlatforms.deliverMany([request('41', 'u1')]);
    await vi.waitFor(() => expect(answerIos).toBeDefined());
    answerIos!();
    expect(await retry).toMatchObject([{ sent: 2, retryable: [] }]);
    expect((await db.pool.query(`SELECT push_token FROM simulated_pushes`)).rows).toEqual([{ push_token: 'tok-1b' }]);
    expect((await ledger()).filter((r) => r.job === '41').map((r) => [r.token, r.status, r.attempts])).toEqual([
      ['tok-1a', 'sent', 2],
      ['tok-1b', 'sent', 1],
    ]);
  });

  it('costs the same statements for forty jobs as for one', async () => {
    await db.pool.query(`INSERT INTO users (id, time_zone) SELECT 'm' || i, 'UTC' FROM generate_series(1, 40) AS i`);
    await db.pool.query(
      `INSERT INTO devices (user_id, installation_id, platform, push_token)
       SELECT 'm' || i, 'p' || d, CASE WHEN d = 1 THEN 'ios' ELSE 'android' END, 'tok-m' || i || '-' || d
         FROM generate_series(1, 40) AS i CROSS JOIN generate_series(1, 2) AS d`,
    );
    await delivery.deliverMany([request('100', 'm1')]);
    const forOne = statements.length;
    statements = [];
    const summaries = await delivery.deliverMany(Array.from({ length: 40 }, (_, i) => request(String(200 + i), `m${i + 1}`)));
    expect(summaries.every((s) => s.sent === 2)).toBe(true);
    expect(statements.length).toBe(forOne);
    expect((await db.pool.query(`SELECT count(*)::int AS n FROM simulated_pushes`)).rows[0].n).toBe(82);
  });

  it('records skips for many jobs at once: a row per active device, or one device-less row', async () => {
    await delivery.recordSkippedMany([
      { jobId: '7', userId: 'u1', reason: 'stale' },
      { jobId: '8', userId: 'u3', reason: 'disabled' },
    ]);
    // Recording again changes nothing.
    await delivery.recordSkipped('7', 'u1', 'stale');
    expect((await ledger()).filter((r) => r.job === '7' || r.job === '8')).toEqual([
      { job: '7', token: 'sim-invalid-1b', status: 'skipped', attempts: 0, skip: 'stale' },
      { job: '7', token: 'tok-1a', status: 'skipped', attempts: 0, skip: 'stale' },
      { job: '8', token: null, status: 'skipped', attempts: 0, skip: 'disabled' },
    ]);
  });
});
