import { Registry } from 'prom-client';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import {
  backoffSeconds,
  enqueue,
  getJob,
  PermanentJobError,
  QueueMetrics,
  retryJob,
  SnoozeJob,
  TransientJobError,
  Worker,
  type JobHandler,
} from '../../libs/queue/src/index.js';
import { createTestDatabase, type TestDatabase } from '../support/database.js';
import { jobRow, memoryLogger, FixedClock } from './helpers.js';

describe('failures, retries, snoozes', () => {
  let db: TestDatabase;
  const clock = new FixedClock('2026-03-01T12:00:00.000Z');
  const random = () => 0.25;
  let worker: Worker;
  let logger: ReturnType<typeof memoryLogger>;
  let registry: Registry;
  let handler: JobHandler;

  beforeAll(async () => {
    db = await createTestDatabase();
  });
  afterAll(async () => db.drop());
  beforeEach(async () => {
    await db.pool.query('TRUNCATE jobs, job_runs');
    clock.set('2026-03-01T12:00:00.000Z');
    logger = memoryLogger();
    registry = new Registry();
    worker = new Worker({
      pool: db.pool,
      clock,
      random,
      logger,
      metrics: new QueueMetrics({ registry }),
      housekeeping: false,
      listen: false,
      handlers: { flaky: (job, ctx) => handler(job, ctx) },
    });
  });

  it('an always-failing job takes exactly max_attempts attempts with growing jittered delays, then is dead; retryJob revives it', async () => {
    let calls = 0;
    handler = async () => {
      calls++;
      throw new Error(`provider down (${calls})`);
    };
    const { job } = await enqueue(db.pool, { kind: 'flaky', maxAttempts: 4, idempotencyKey: 'always-fails' }, { now: clock.now() });

    const gaps: number[] = [];
    for (let attempt = 1; attempt <= 4; attempt++) {
      expect(await worker.runOnce()).toBe(1);
      // Nothing else is due now: the job waits for its backoff.
      expect(await worker.runOnce()).toBe(0);
      const row = await jobRow(db.pool, job.id);
      expect(row.attempts).toBe(attempt);
      if (attempt < 4) {
        expect(row.status).toBe('queued');
        const gap = (row.run_at.getTime() - clock.now().getTime()) / 1000;
        expect(gap).toBe(backoffSeconds(attempt, random));
        // min(cap, 30·2^attempt)·(0.5 + 0.25·0.5)
        expect(gap).toBe(30 * 2 ** attempt * 0.625);
        gaps.push(gap);
        clock.set(row.run_at);
      } else {
        expect(row.status).toBe('dead');
        expect(row.last_error).toBe('Error: provider down (4)');
      }
    }
    expect(calls).toBe(4);
    expect(gaps).toEqual([37.5, 75, 150]);
    // Still dead much later: nobody picks it up.
    clock.advance(7 * 86_400_000);
    expect(await worker.runOnce()).toBe(0);

    const detail = await getJob(db.pool, job.id);
    expect(detail?.history.map((h) => [h.attempt, h.outcome])).toEqual([
      [1, 'failed'],
      [2, 'failed'],
      [3, 'failed'],
      [4, 'dead'],
    ]);
    expect(detail?.history[0]?.nextRunAt?.toISOString()).toBe('2026-03-01T12:00:37.500Z');
    expect(logger.lines.filter((l) => l.msg === 'job dead')).toHaveLength(1);
    expect(logger.lines.find((l) => l.msg === 'job dead')?.fields).toMatchObject({
      jobId: job.id,
      kind: 'flaky',
      attempt: 4,
      idempotencyKey: 'always-fails',
    });
    const metrics = await registry.getSingleMetricAsString('queue_jobs_failed_total');
    expect(metrics).toContain('queue_jobs_failed_total{kind="flaky",error_class="Error"} 4');

    expect(await retryJob(db.pool, job.id, clock.now())).toBe('retried');
    expect(await retryJob(db.pool, job.id, clock.now())).toBe('conflict');
    const revived = await jobRow(db.pool, job.id);
    expect(revived).toMatchObject({ status: 'queued', attempts: 0 });
    handler = async () => undefined;
    expect(await worker.runOnce()).toBe(1);
    expect(await jobRow(db.pool, job.id)).toMatchObject({ status: 'succeeded', attempts: 1 });
    expect((await getJob(db.pool, job.id))?.history.at(-1)).toMatchObject({ attempt: 1, outcome: 'succeeded' });
  });

  it('honours a Retry-After of 120 s exactly, without jitter', async () => {
    handler = async () => {
      throw new TransientJobError('429 from provider', { retryAfterSeconds: 120 });
    };
    const { job } = await enqueue(db.pool, { kind: 'flaky' }, { now: clock.now() });
    await worker.runOnce();
    const row = await jobRow(db.pool, job.id);
    expect(row.status).toBe('queued');
    expect(row.attempts).toBe(1);
    expect(row.run_at.toISOString()).toBe('2026-03-01T12:02:00.000Z');
    expect(row.last_error).toBe('TransientJobError: 429 from provider');
  });

  it('caps a huge Retry-After at the backoff cap (6 h) instead of writing an invalid date', async () => {
    handler = async () => {
      throw new TransientJobError('429 from provider', { retryAfterSeconds: 1e13 });
    };
    const { job } = await enqueue(db.pool, { kind: 'flaky' }, { now: clock.now() });
    await worker.runOnce();
    const row = await jobRow(db.pool, job.id);
    expect(row).toMatchObject({ status: 'queued', attempts: 1, last_error: 'TransientJobError: 429 from provider' });
    expect(row.run_at.toISOString()).toBe('2026-03-01T18:00:00.000Z');
  });

  it('a snooze puts the job back at the given time without using an attempt', async () => {
    let runs = 0;
    handler = async () => {
      runs++;
      if (runs <= 3) throw new SnoozeJob(new Date('2026-03-01T22:00:00.000Z'), 'quiet hours');
    };
    const { job } = await enqueue(db.pool, { kind: 'flaky', maxAttempts: 1 }, { now: clock.now() });
    for (let i = 0; i < 3; i++) {
      await worker.runOnce();
      const row = await jobRow(db.pool, job.id);
      expect(row).toMatchObject({ status: 'queued', attempts: 0 });
      expect(row.run_at.toISOString()).toBe('2026-03-01T22:00:00.000Z');
      clock.set('2026-03-01T22:00:00.000Z');
    }
    // maxAttempts 1, three snoozes: it still gets its one real attempt.
    await worker.runOnce();
    expect(await jobRow(db.pool, job.id)).toMatchObject({ status: 'succeeded', attempts: 1 });
    const detail = await getJob(db.pool, job.id);
    expect(detail?.history.map((h) => h.outcome)).toEqual(['snoozed', 'snoozed', 'snoozed', 'succeeded']);
    expect(detail?.history[0]?.error).toBe('quiet hours');
  });

  it('a snooze to the past waits the minimum delay, and a job snoozed more than maxInARow times in a row is dead with that reason', async () => {
    let runs = 0;
    handler = async () => {
      runs++;
      throw new SnoozeJob(new Date('2026-03-01T11:00:00.000Z'), 'clock confusion');
    };
    const w = new Worker({
      pool: db.pool,
      clock,
      random,
      logger,
      housekeeping: false,
      listen: false,
      snooze: { maxInARow: 3 },
      handlers: { flaky: (job, ctx) => handler(job, ctx) },
    });
    const { job } = await enqueue(db.pool, { kind: 'flaky', maxAttempts: 5 }, { now: clock.now() });
    for (let i = 1; i <= 3; i++) {
      expect(await w.runOnce()).toBe(1);
      // Not again at the poll rate: not before the minimum delay (5 s).
      expect(await w.runOnce()).toBe(0);
      const row = await jobRow(db.pool, job.id);
      expect(row).toMatchObject({ status: 'queued', attempts: 0 });
      expect(row.run_at.getTime() - clock.now().getTime()).toBe(5000);
      clock.advance(5000);
    }
    expect(await w.runOnce()).toBe(1);
    expect(runs).toBe(4);
    expect(await jobRow(db.pool, job.id)).toMatchObject({
      status: 'dead',
      attempts: 1,
      last_error: 'PermanentJobError: snoozed 4 times in a row without running to an end (last: clock confusion)',
    });
    const detail = await getJob(db.pool, job.id);
    expect(detail?.history.map((h) => h.outcome)).toEqual(['snoozed', 'snoozed', 'snoozed', 'dead']);
    // An operator's retry starts the count again.
    expect(await retryJob(db.pool, job.id, clock.now())).toBe('retried');
    await w.runOnce();
    expect(await jobRow(db.pool, job.id)).toMatchObject({ status: 'queued', attempts: 0 });
  });

  it('PermanentJobError makes the job dead at once', async () => {
    handler = async () => {
      throw new PermanentJobError('payload names a user that does not exist');
    };
    const { job } = await enqueue(db.pool, { kind: 'flaky', maxAttempts: 10 }, { now: clock.now() });
    await worker.runOnce();
    const row = await jobRow(db.pool, job.id);
    expect(row).toMatchObject({ status: 'dead', attempts: 1 });
    expect(row.last_error).toBe('PermanentJobError: payload names a user that does not exist');
  });

  it('a handler that throws synchronously or rejects with a non-Error is a transient failure', async () => {
    handler = (() => {
      throw 'not an error object';
    }) as unknown as JobHandler;
    const { job } = await enqueue(db.pool, { kind: 'flaky', maxAttempts: 3 }, { now: clock.now() });
    await worker.runOnce();
    expect(await jobRow(db.pool, job.id)).toMatchObject({ status: 'queued', attempts: 1, last_error: 'not an error object' });
  });

  it('runs higher priority (lower number) first, then by run_at', async () => {
    const order: string[] = [];
    handler = async (job) => {
      order.push((job.payload as { name: string }).name);
    };
    const now = clock.now();
    await enqueue(db.pool, { kind: 'flaky', payload: { name: 'late-normal' }, runAt: new Date(now.getTime() - 1000) }, { now });
    await enqueue(db.pool, { kind: 'flaky', payload: { name: 'early-normal' }, runAt: new Date(now.getTime() - 5000) }, { now });
    await enqueue(db.pool, { kind: 'flaky', payload: { name: 'urgent' }, priority: -1 }, { now });
    await enqueue(db.pool, { kind: 'flaky', payload: { name: 'future' }, runAt: new Date(now.getTime() + 1000) }, { now });
    await enqueue(db.pool, { kind: 'other', payload: { name: 'no handler here' } }, { now });
    const one = new Worker({
      pool: db.pool,
      clock,
      housekeeping: false,
      listen: false,
      concurrency: 1,
      batchSize: 1,
      handlers: { flaky: (job, ctx) => handler(job, ctx) },
    });
    while ((await one.runOnce()) > 0);
    expect(order).toEqual(['urgent', 'early-normal', 'late-normal']);
  });
});
