import pg from 'pg';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { enqueue, getJob, PermanentJobError, Worker, type JobContext, type JobHandler } from '../../libs/queue/src/index.js';
import { createTestDatabase, type TestDatabase } from '../support/database.js';
import { deferred, jobRow, memoryLogger, FixedClock, waitFor } from './helpers.js';

// Issue 13 finding 9: the shutdown deadline is a real bound, and what stop()
// writes after it is right.
describe('shutdown', () => {
  let db: TestDatabase;
  const clock = new FixedClock('2026-03-01T12:00:00.000Z');
  const pools: pg.Pool[] = [];

  beforeAll(async () => {
    db = await createTestDatabase();
  });
  afterAll(async () => {
    await Promise.all(pools.map((p) => p.end().catch(() => undefined)));
    await db.drop();
  });
  beforeEach(async () => {
    await db.pool.query('TRUNCATE jobs, job_runs');
    clock.set('2026-03-01T12:00:00.000Z');
  });

  // A pool on which chosen named statements, once switched on, never answer: an unresponsive database.
  function hangingPool() {
    const pool = new pg.Pool({ connectionString: db.url, max: 6 });
    pool.on('error', () => undefined);
    pools.push(pool);
    const hanging = new Set<string>();
    let hung = 0;
    const original = pool.query.bind(pool) as (...args: unknown[]) => Promise<unknown>;
    (pool as unknown as { query: (...args: unknown[]) => Promise<unknown> }).query = (...args: unknown[]) => {
      const name = (args[0] as { name?: string } | null)?.name;
      if (name && [...hanging].some((prefix) => name.startsWith(prefix))) {
        hung++;
        return new Promise(() => undefined);
      }
      return original(...args);
    };
    return { pool, hang: (prefix: string) => hanging.add(prefix), hung: () => hung };
  }

  function makeWorker(pool: pg.Pool, handler: JobHandler) {
    return new Worker({
      pool,
      workerId: 'w',
      clock,
      leaseSeconds: 30,
      pollIntervalMs: 20,
      housekeeping: false,
      listen: false,
      logger: memoryLogger(),
      handlers: { k: handler },
    });
  }

  /** stop() resolves (true) or is still waiting after `ms` (false). */
  async function stops(worker: Worker, deadlineMs: number, ms = 10_000): Promise<boolean> {
    return Promise.race([worker.stop({ deadlineMs }).then(() => true), new Promise<boolean>((r) => setTimeout(() => r(false), ms))]);
  }

  it('stop() resolves although a claim never returns (an unresponsive database)', async () => {
    const { pool, hang, hung } = hangingPool();
    const w = makeWorker(pool, async () => undefined);
    await w.start();
    hang('queue_claim');
    await waitFor(() => hung() > 0); // the claim loop waits on a claim that will never answer
    expect(await stops(w, 300)).toBe(true);
  });

  it('stop() resolves although the completion write never returns; the job is left to the reaper (still running, lease intact)', async () => {
    const { job } = await enqueue(db.pool, { kind: 'k' }, { now: clock.now() });
    const { pool, hang, hung } = hangingPool();
    hang('queue_complete_many');
    const w = makeWorker(pool, async () => undefined);
    await w.start();
    await waitFor(() => hung() > 0);
    expect(await stops(w, 300)).toBe(true);
    expect(await jobRow(db.pool, job.id)).toMatchObject({ status: 'running', locked_by: 'w' });
  });

  it('a handler still running after the deadline: put back as interrupted, but not due before its lease would have lapsed', async () => {
    const { job } = await enqueue(db.pool, { kind: 'k', maxAttempts: 5 }, { now: clock.now() });
    const started = deferred();
    const w = makeWorker(db.pool, () => (started.resolve(), new Promise<void>(() => undefined))); // deaf to its signal
    await w.start();
    await started.promise;
    await w.stop({ deadlineMs: 200 });
    const row = await jobRow(db.pool, job.id);
    expect(row).toMatchObject({ status: 'queued', attempts: 1, last_error: expect.stringMatching(/^ShutdownError/) });
    expect(row.run_at.toISOString()).toBe('2026-03-01T12:00:30.000Z'); // claimed at 12:00:00 with a 30 s lease
    expect((await getJob(db.pool, job.id))!.history.map((h) => h.outcome)).toEqual(['interrupted']);
  });

  it('a handler that stops at its abort is put back due at once', async () => {
    const { job } = await enqueue(db.pool, { kind: 'k', maxAttempts: 5 }, { now: clock.now() });
    const started = deferred<JobContext>();
    const w = makeWorker(db.pool, async (_job, ctx) => {
      started.resolve(ctx);
      await new Promise<void>((_resolve, reject) => ctx.signal.addEventListener('abort', () => reject(ctx.signal.reason as Error)));
    });
    await w.start();
    await started.promise;
    await w.stop({ deadlineMs: 200 });
    const row = await jobRow(db.pool, job.id);
    expect(row).toMatchObject({ status: 'queued', attempts: 1 });
    expect(row.run_at.toISOString()).toBe('2026-03-01T12:00:00.000Z');
  });

  it('a permanent error thrown after the deadline stays permanent: the job is dead, not interrupted', async () => {
    const { job } = await enqueue(db.pool, { kind: 'k', maxAttempts: 5 }, { now: clock.now() });
    const started = deferred();
    const w = makeWorker(db.pool, async (_job, ctx) => {
      started.resolve();
      await new Promise<void>((resolve) => ctx.signal.addEventListener('abort', () => resolve()));
      throw new PermanentJobError('the payload names a user who no longer exists');
    });
    await w.start();
    await started.promise;
    await w.stop({ deadlineMs: 200 });
    expect(await jobRow(db.pool, job.id)).toMatchObject({
      status: 'dead',
      last_error: 'PermanentJobError: the payload names a user who no longer exists',
    });
    expect((await getJob(db.pool, job.id))!.history.map((h) => h.outcome)).toEqual(['dead']);
  });
});
