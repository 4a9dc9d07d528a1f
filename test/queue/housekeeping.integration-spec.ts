import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { enqueueMany, pruneFinishedJobs, recurringKey, scheduleRecurringJobs, Worker } from '../../libs/queue/src/index.js';
import { createTestDatabase, type TestDatabase } from '../support/database.js';
import { FixedClock, statusCounts, waitFor } from './helpers.js';

describe('housekeeping through the queue', () => {
  let db: TestDatabase;
  const clock = new FixedClock('2026-03-01T12:00:07.000Z');

  beforeAll(async () => {
    db = await createTestDatabase();
  });
  afterAll(async () => db.drop());
  beforeEach(async () => {
    await db.pool.query('TRUNCATE jobs, job_runs');
    clock.set('2026-03-01T12:00:07.000Z');
  });

  it('a recurring job: any number of schedulers in one period create one job, the next period another', async () => {
    const defs = [{ kind: 'token_cleanup', everySeconds: 60 }];
    const results = await Promise.all(Array.from({ length: 8 }, () => scheduleRecurringJobs(db.pool, defs, clock.now())));
    expect(results.flat().filter((r) => r.created)).toHaveLength(1);
    const ids = new Set(results.flat().map((r) => r.job.id));
    expect(ids.size).toBe(1);
    const job = results[0]![0]!.job;
    expect(job.idempotencyKey).toBe('system:token_cleanup:2026-03-01T12:00:00.000Z');
    expect(job.runAt.toISOString()).toBe('2026-03-01T12:00:00.000Z');

    clock.advance(30_000); // same period
    expect((await scheduleRecurringJobs(db.pool, defs, clock.now()))[0]!.created).toBe(false);
    clock.advance(30_000); // 12:01:07, next period
    expect((await scheduleRecurringJobs(db.pool, defs, clock.now()))[0]!.created).toBe(true);
    expect(await statusCounts(db.pool)).toEqual({ queued: 2 });
  });

  it('two started workers declaring the same recurring job run each period once', async () => {
    const runs: string[] = [];
    const make = (id: string) =>
      new Worker({
        pool: db.pool,
        workerId: id,
        clock,
        housekeeping: false,
        pollIntervalMs: 50,
        recurring: [{ kind: 'sweep', everySeconds: 300 }],
        handlers: { sweep: async (job) => void runs.push(`${id}:${job.idempotencyKey}`) },
      });
    const a = make('a');
    const b = make('b');
    await Promise.all([a.start(), b.start()]);
    await waitFor(async () => (await statusCounts(db.pool)).succeeded === 1);
    await new Promise((r) => setTimeout(r, 300));
    await Promise.all([a.stop(), b.stop()]);
    expect(runs).toHaveLength(1);
    expect(runs[0]).toMatch(/^[ab]:system:sweep:2026-03-01T12:00:00.000Z$/);
    expect(await statusCounts(db.pool)).toEqual({ succeeded: 1 });
  });

  it('the built-in reaper and pruner are recurring jobs of the worker', async () => {
    const w = new Worker({ pool: db.pool, workerId: 'hk', clock, pollIntervalMs: 50, leaseSeconds: 30 });
    await w.start();
    await waitFor(async () => (await statusCounts(db.pool)).succeeded === 2);
    await w.stop();
    const { rows } = await db.pool.query(`SELECT kind, idempotency_key, status FROM jobs ORDER BY kind`);
    expect(rows).toEqual([
      { kind: 'queue.prune', idempotency_key: recurringKey('queue.prune', new Date('2026-03-01T12:00:00.000Z')), status: 'succeeded' },
      { kind: 'queue.reap', idempotency_key: recurringKey('queue.reap', new Date('2026-03-01T12:00:00.000Z')), status: 'succeeded' },
    ]);
  });

  it('pruning deletes only finished jobs older than the retention, with their history, in batches', async () => {
    const now = clock.now();
    const day = 86_400_000;
    const jobs = await enqueueMany(
      db.pool,
      Array.from({ length: 12 }, (_, i) => ({ kind: 'k', idempotencyKey: `p-${i}` })),
      { now },
    );
    const id = (i: number) => jobs[i]!.job.id;
    const set = (i: number, status: string, finishedDaysAgo: number | null) =>
      db.pool.query(`UPDATE jobs SET status = $2, finished_at = $3 WHERE id = $1`, [
        id(i),
        status,
        finishedDaysAgo === null ? null : new Date(now.getTime() - finishedDaysAgo * day),
      ]);
    // Old and finished: go.
    await set(0, 'succeeded', 20);
    await set(1, 'dead', 15);
    await set(2, 'cancelled', 30);
    await set(3, 'succeeded', 14.01);
    await set(4, 'succeeded', 14.5);
    // Young finished, or not finished however old: stay.
    await set(5, 'succeeded', 13.9);
    await set(6, 'dead', 1);
    await db.pool.query(`UPDATE jobs SET created_at = $2, run_at = $2 WHERE id = $1`, [id(7), new Date(now.getTime() - 60 * day)]);
    await db.pool.query(`UPDATE jobs SET status = 'running', locked_until = $2, locked_by = 'w', attempts = 1 WHERE id = $1`, [
      id(8),
      new Date(now.getTime() + 30_000),
    ]);
    await db.pool.query(
      `INSERT INTO job_runs (job_id, kind, attempt, finished_at, outcome) VALUES ($1, 'k', 1, $3, 'failed'), ($2, 'k', 1, $3, 'failed')`,
      [id(1), id(6), new Date(now.getTime() - 16 * day)],
    );

    const deleted = await pruneFinishedJobs(db.pool, new Date(now.getTime() - 14 * day), { batchSize: 2 });
    expect(deleted).toBe(5);
    const { rows } = await db.pool.query<{ idempotency_key: string }>(`SELECT idempotency_key FROM jobs ORDER BY id`);
    expect(rows.map((r) => r.idempotency_key)).toEqual(['p-5', 'p-6', 'p-7', 'p-8', 'p-9', 'p-10', 'p-11']);
    const runs = await db.pool.query<{ job_id: string }>(`SELECT job_id FROM job_runs`);
    expect(runs.rows.map((r) => r.job_id)).toEqual([id(6)]);
    // A pruned key can be used again.
    const again = await enqueueMany(
      db.pool,
      [
        { kind: 'k', idempotencyKey: 'p-0' },
        { kind: 'k', idempotencyKey: 'p-5' },
      ],
      { now },
    );
    expect(again.map((r) => r.created)).toEqual([true, false]);
  });

  it('dead jobs are kept for deadRetentionDays (default 30), other finished jobs for retentionDays', async () => {
    const now = clock.now();
    const day = 86_400_000;
    const jobs = await enqueueMany(
      db.pool,
      Array.from({ length: 5 }, (_, i) => ({ kind: 'k', idempotencyKey: `d-${i}` })),
      { now },
    );
    const set = (i: number, status: string, daysAgo: number) =>
      db.pool.query(`UPDATE jobs SET status = $2, finished_at = $3 WHERE id = $1`, [
        jobs[i]!.job.id,
        status,
        new Date(now.getTime() - daysAgo * day),
      ]);
    await set(0, 'succeeded', 15);
    await set(1, 'cancelled', 15);
    await set(2, 'dead', 15);
    await set(3, 'dead', 29);
    await set(4, 'dead', 31);
    // The worker's own prune job, with the default retentions (14 and 30 days).
    await enqueueMany(db.pool, [{ kind: 'queue.prune', idempotencyKey: 'prune-now' }], { now });
    const w = new Worker({ pool: db.pool, workerId: 'hk', clock, listen: false, housekeeping: { retentionDays: 14 } });
    expect(await w.runOnce()).toBe(1);
    const { rows } = await db.pool.query<{ idempotency_key: string }>(`SELECT idempotency_key FROM jobs ORDER BY id`);
    expect(rows.map((r) => r.idempotency_key)).toEqual(['d-2', 'd-3', 'prune-now']);
  });
});
