import { Registry } from 'prom-client';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { FixedClock } from '@nudge/config';
import {
  createPushProviders,
  deliveryOutcomeError,
  ensurePace,
  newPace,
  PushDelivery,
  PushMetrics,
  PushPacer,
  type PushProviders,
  readPace,
  take,
  takeFromPace,
  throttle,
  throttlePace,
} from '@nudge/push';
import { SnoozeJob } from '@nudge/queue';
import { createTestDatabase, type TestDatabase } from '../support/database.js';
import { connectToFakeFcm, fakeFcmCredential, startFakeFcm, type FakeFcm } from './fakes/fake-fcm.js';

// The shared pace in one process: the SQL of pace.repository.ts against the
// pure steps of pace.ts, and PushDelivery with the real firebase-admin client
// against the fake FCM (a 429 is throttled, not failed; the in-job wait
// honours the job's signal). Across worker processes: pacing-workers.

const T0 = new Date('2026-06-01T08:00:00Z');
const at = (seconds: number) => new Date(T0.getTime() + seconds * 1000);

describe('push pacing', () => {
  let db: TestDatabase;
  let fake: FakeFcm;
  let providers: PushProviders;
  const clock = new FixedClock(T0);

  beforeAll(async () => {
    db = await createTestDatabase();
    fake = await startFakeFcm();
    providers = createPushProviders(
      { fcm: { serviceAccountFile: 'never-read.json' } },
      {
        db: db.pool,
        fcm: { credential: fakeFcmCredential(fake), projectId: fake.projectId, connect: connectToFakeFcm(fake), now: () => clock.now() },
      },
    );
  });
  afterAll(async () => {
    await providers?.close();
    await fake?.stop();
    await db?.drop();
  });

  it('runs the same bucket steps in SQL as pace.ts', async () => {
    const key = { provider: 'expo', appId: 'sql-check' } as const;
    await ensurePace(db.pool, key, 40);
    // The row starts full at its creation (the database's clock): line the model up with it.
    const created = (await readPace(db.pool, key))!;
    expect(created).toMatchObject({ maxRate: 40, rate: 40, tokens: 4, throttles: 0, throttledAt: null });
    await db.pool.query(`UPDATE push_pace SET refreshed_at = $3, window_started_at = $3 WHERE provider = $1 AND app_id = $2`, [
      key.provider,
      key.appId,
      T0,
    ]);
    let model = newPace(40, T0.getTime());

    const steps: (['take', number, number] | ['throttle', number, number, number | null])[] = [
      ['take', 0, 10],
      ['take', 0.01, 100],
      ['take', 0.5, 3],
      ['take', 1.2, 30],
      ['throttle', 1.3, 5, null],
      ['throttle', 1.6, 2, null],
      ['take', 2.5, 20],
      ['throttle', 4, 1, 3],
      ['take', 5, 10],
      ['take', 6.5, 10],
      ['take', 40, 200],
    ];
    for (const step of steps) {
      if (step[0] === 'take') {
        const [, seconds, wanted] = step;
        const expected = take(model, wanted, at(seconds).getTime());
        model = expected.state;
        const grant = await takeFromPace(db.pool, key, wanted, at(seconds));
        expect(grant, `take ${wanted} at ${seconds}s`).toEqual({
          ...expected.grant,
          available: expect.closeTo(expected.grant.available, 6),
          at: expect.closeTo(expected.grant.at, 0),
          leadMs: expect.closeTo(expected.grant.leadMs, 3),
          resumeLeadMs: expect.closeTo(expected.grant.resumeLeadMs, 0),
        });
      } else {
        const [, seconds, n, retryAfter] = step;
        model = throttle(model, at(seconds).getTime(), n, retryAfter);
        const after = await throttlePace(db.pool, key, n, retryAfter, at(seconds));
        expect(after!.rate, `throttle at ${seconds}s`).toBeCloseTo(model.rate!, 6);
      }
      const row = (await readPace(db.pool, key))!;
      for (const field of ['rate', 'tokens', 'windowSent', 'observedRate'] as const) {
        expect(row[field], `${field} after ${step.join(' ')}`).toBeCloseTo(model[field]!, 6);
      }
      // Instants as epoch milliseconds: to the millisecond.
      for (const field of ['refreshedAt', 'windowStartedAt'] as const) {
        expect(row[field], `${field} after ${step.join(' ')}`).toBeCloseTo(model[field], 0);
      }
      if (model.queueUntil === null) expect(row.queueUntil).toBeNull();
      else expect(row.queueUntil, `queueUntil after ${step.join(' ')}`).toBeCloseTo(model.queueUntil, 0);
      expect(row.throttles).toBe(model.throttles);
    }
  });

  async function deviceOf(userId: string, token: string): Promise<void> {
    await db.pool.query(`INSERT INTO users (id, time_zone) VALUES ($1, 'UTC')`, [userId]);
    await db.pool.query(`INSERT INTO devices (user_id, installation_id, platform, push_token) VALUES ($1, 'phone', 'android', $2)`, [
      userId,
      token,
    ]);
  }

  const ledgerOf = async (jobId: string) =>
    (await db.pool.query(`SELECT status, error, attempts FROM push_deliveries WHERE job_id = $1`, [jobId])).rows;

  it('an FCM quota 429 is throttled: the shared rate halves, the row stays to be sent again, no failure, the job snoozes', async () => {
    const token = `fcm-quota:APA91b${'q'.repeat(40)}`;
    await deviceOf('quota-user', token);
    const registry = new Registry();
    const metrics = new PushMetrics(registry);
    const pacer = new PushPacer(db.pool, { limits: { fcm: 100 }, metrics });
    const delivery = new PushDelivery(db.pool, providers, clock, metrics, pacer);
    fake.answer(token, { status: 429, errorCode: 'QUOTA_EXCEEDED', message: 'Quota exceeded', headers: { 'retry-after': '30' } });

    const summary = await delivery.deliver({ jobId: '901', userId: 'quota-user', title: 'Quota' });
    expect(summary).toMatchObject({ sent: 0, retryable: [], deferred: 1 });
    expect(summary.resumeAt!.getTime()).toBeGreaterThanOrEqual(at(30).getTime());
    // The job is put back, not failed: SnoozeJob gives its attempt back.
    const unfinished = deliveryOutcomeError(summary);
    expect(unfinished).toBeInstanceOf(SnoozeJob);
    expect((unfinished as SnoozeJob).until).toEqual(summary.resumeAt);
    expect(await ledgerOf('901')).toEqual([
      { status: 'sending', error: expect.stringMatching(/^throttled: messaging\/message-rate-exceeded/), attempts: 1 },
    ]);
    expect((await db.pool.query(`SELECT type FROM events WHERE type LIKE 'delivery.%'`)).rows).toEqual([]);
    const pace = (await readPace(db.pool, { provider: 'fcm', appId: 'default' }))!;
    expect(pace).toMatchObject({ maxRate: 100, rate: 50, throttles: 1 });
    // Metrics: a throttled answer, not a failure; the shared rate as this process saw it.
    const text = await registry.metrics();
    expect(text).toMatch(/^nudge_push_sends_total\{provider="fcm",outcome="throttled"\} 1$/m);
    expect(text).toMatch(/^nudge_push_sends_total\{provider="fcm",outcome="failed"\} 0$/m);
    expect(text).toMatch(/^nudge_push_pace_rate\{provider="fcm",app="default"\} 50$/m);

    // Within the Retry-After, the next run does not call FCM at all.
    const before = fake.requestsFor(token).length;
    expect(await delivery.deliver({ jobId: '901', userId: 'quota-user', title: 'Quota' })).toMatchObject({ sent: 0, deferred: 1 });
    expect(fake.requestsFor(token)).toHaveLength(before);

    // Once it is over, the same row is sent.
    await db.pool.query(`UPDATE push_pace SET refreshed_at = clock_timestamp() - interval '1 second' WHERE provider = 'fcm'`);
    expect(await delivery.deliver({ jobId: '901', userId: 'quota-user', title: 'Quota' })).toMatchObject({ sent: 1, deferred: 0 });
    expect(await ledgerOf('901')).toEqual([{ status: 'sent', error: null, attempts: 2 }]);
  });

  it('waits for its turn inside the job, and stops waiting when the job is aborted', async () => {
    const tokens = ['a', 'b', 'c'].map((c) => `fcm-slow-${c}:APA91b${c.repeat(40)}`);
    await db.pool.query(`INSERT INTO users (id, time_zone) VALUES ('slow-user', 'UTC')`);
    await db.pool.query(
      `INSERT INTO devices (user_id, installation_id, platform, push_token) SELECT 'slow-user', t, 'android', t FROM unnest($1::text[]) t`,
      [tokens],
    );
    // One a second for this app: a burst of one, then one each second; all three fit in the in-job wait of 2 s.
    await db.pool.query(`DELETE FROM push_pace`);
    const delivery = new PushDelivery(db.pool, providers, clock, undefined, new PushPacer(db.pool, { limits: { fcm: 1 } }));
    const controller = new AbortController();
    const reason = new Error('job timed out');
    setTimeout(() => controller.abort(reason), 300);
    await expect(delivery.deliver({ jobId: '902', userId: 'slow-user', title: 'Slow' }, { signal: controller.signal })).rejects.toBe(
      reason,
    );
    // One went at once and is recorded sent, so the retry does not send it twice; the two that waited were never
    // sent, and their rows are sent again by the retry.
    const sentTo = tokens.filter((t) => fake.requestsFor(t).length > 0);
    expect(sentTo).toHaveLength(1);
    expect((await ledgerOf('902')).map((r) => r.status).sort()).toEqual(['sending', 'sending', 'sent']);
    const retried = await delivery.deliver({ jobId: '902', userId: 'slow-user', title: 'Slow' });
    expect(retried.sent + retried.deferred).toBe(3);
    expect(fake.requestsFor(sentTo[0]!)).toHaveLength(1);
  });
});
