import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { enqueue, enqueueMany, Worker } from '../../libs/queue/src/index.js';
import { createTestDatabase, type TestDatabase } from '../support/database.js';
import { memoryLogger, FixedClock, statusCounts, waitFor } from './helpers.js';

// Issue 13 finding 5: a herd of one kind must not delay every other kind of
// the same priority. A kind with slots of its own (`concurrency`) is claimed,
// buffered and run apart from the others.
describe('slots of its own per kind', () => {
  let db: TestDatabase;
  const clock = new FixedClock('2026-03-01T12:00:00.000Z');
  let worker: Worker | null = null;

  beforeAll(async () => {
    db = await createTestDatabase();
  });
  afterAll(async () => db.drop());
  beforeEach(async () => {
    await db.pool.query('TRUNCATE jobs, job_runs');
    clock.set('2026-03-01T12:00:00.000Z');
  });
  afterEach(async () => {
    await worker?.stop({ deadlineMs: 2000 });
    worker = null;
  });

  it('a send_notification enqueued behind a herd of 300 reminders starts within one batch of reminder starts, not after the herd', async () => {
    const concurrency = 4;
    const batchSize = 8;
    await enqueueMany(
      db.pool,
      Array.from({ length: 300 }, (_, i) => ({ kind: 'send_reminder', payload: { i } })),
      { now: clock.now() },
    );
    const starts: string[] = [];
    worker = new Worker({
      pool: db.pool,
      workerId: 'w',
      clock,
      concurrency,
      batchSize,
      pollIntervalMs: 50,
      housekeeping: false,
      logger: memoryLogger(),
    });
    worker.register('send_reminder', async () => {
      starts.push('reminder');
      await new Promise((r) => setTimeout(r, 100)); // a slow provider
    });
    worker.register('send_notification', async () => void starts.push('notification'), { concurrency: 2 });
    await worker.start();
    await waitFor(() => starts.length >= concurrency);

    const before = starts.length;
    // Same priority, due now, enqueued after the whole herd.
    await enqueue(db.pool, { kind: 'send_notification' }, { now: clock.now() });
    await waitFor(() => starts.includes('notification'), 60_000);
    const remindersMeanwhile = starts.indexOf('notification') - before;
    // At most the reminders already claimed (their slots and one batch of buffer) start first.
    expect(remindersMeanwhile).toBeLessThanOrEqual(concurrency + batchSize);
    expect((await statusCounts(db.pool)).queued).toBeGreaterThan(200); // the herd is far from done
  });

  it('a kind with slots of its own never runs more than its concurrency at once, and does not take the shared slots', async () => {
    await enqueueMany(
      db.pool,
      [...Array.from({ length: 20 }, () => ({ kind: 'narrow' })), ...Array.from({ length: 20 }, () => ({ kind: 'wide' }))],
      { now: clock.now() },
    );
    const running = { narrow: 0, wide: 0 };
    const peak = { narrow: 0, wide: 0 };
    const handler = (kind: 'narrow' | 'wide') => async () => {
      running[kind]++;
      peak[kind] = Math.max(peak[kind], running[kind]);
      await new Promise((r) => setTimeout(r, 20));
      running[kind]--;
    };
    worker = new Worker({
      pool: db.pool,
      workerId: 'w',
      clock,
      concurrency: 5,
      batchSize: 10,
      pollIntervalMs: 20,
      housekeeping: false,
      logger: memoryLogger(),
    });
    worker.register('narrow', handler('narrow'), { concurrency: 2, batchSize: 3 });
    worker.register('wide', handler('wide'));
    await worker.start();
    await waitFor(async () => (await statusCounts(db.pool)).succeeded === 40, 30_000);
    expect(peak.narrow).toBe(2);
    expect(peak.wide).toBe(5);
  });
});
