import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import {
  enqueue,
  enqueueMany,
  getJob,
  JobTimeoutError,
  PermanentJobError,
  reapExpiredJobs,
  Worker,
  type JobContext,
  type WorkerOptions,
} from '../../libs/queue/src/index.js';
import { createTestDatabase, type TestDatabase } from '../support/database.js';
import { deferred, jobRow, memoryLogger, FixedClock, statusCounts, waitFor } from './helpers.js';

// Issue 13 finding 1: a handler that never settles must not hold its job,
// its slot's buffer or the worker's housekeeping for ever.
describe('execution timeouts', () => {
  let db: TestDatabase;
  const clock = new FixedClock('2026-03-01T12:00:00.000Z');
  let started: Worker[] = [];
  const never = () => new Promise<void>(() => undefined);

  beforeAll(async () => {
    db = await createTestDatabase();
  });
  afterAll(async () => db.drop());
  beforeEach(async () => {
    await db.pool.query('TRUNCATE jobs, job_runs');
    clock.set('2026-03-01T12:00:00.000Z');
  });
  afterEach(async () => {
    await Promise.all(started.map((w) => w.stop({ deadlineMs: 100 })));
    started = [];
  });

  function makeWorker(workerId: string, options: Partial<WorkerOptions> = {}) {
    return new Worker({
      pool: db.pool,
      workerId,
      clock,
      leaseSeconds: 30,
      timeoutGraceMs: 5000,
      housekeeping: false,
      listen: false,
      pollIntervalMs: 50,
      logger: memoryLogger(),
      ...options,
    });
  }

  it("a handler past its kind's timeout has its signal aborted; the attempt fails transiently (backoff, attempt used) even if the handler then throws a permanent error", async () => {
    const { job } = await enqueue(db.pool, { kind: 'slow', maxAttempts: 5 }, { now: clock.now() });
    const running = deferred<JobContext>();
    const w = makeWorker('w');
    w.register(
      'slow',
      async (_job, ctx) => {
        running.resolve(ctx);
        await new Promise<void>((resolve) => ctx.signal.addEventListener('abort', () => resolve()));
        throw new PermanentJobError('provider call aborted');
      },
      { timeoutMs: 1000 },
    );
    const run = w.runOnce();
    const ctx = await running.promise;
    clock.advance(999);
    w.checkTimeouts();
    expect(ctx.signal.aborted).toBe(false);
    clock.advance(1);
    w.checkTimeouts();
    expect(ctx.signal.aborted).toBe(true);
    expect(ctx.signal.reason).toBeInstanceOf(JobTimeoutError);
    await run;

    const row = await jobRow(db.pool, job.id);
    expect(row).toMatchObject({ status: 'queued', attempts: 1, locked_by: null });
    expect(row.last_error).toMatch(/^JobTimeoutError: handler did not finish within its timeout of 1000 ms \(cause: PermanentJobError/);
    expect(row.run_at.getTime()).toBeGreaterThanOrEqual(clock.now().getTime() + 15_000); // backoff: 30 s × (0.5…1)
    expect((await getJob(db.pool, job.id))!.history.map((h) => h.outcome)).toEqual(['failed']);
  });

  it("a batch handler's signal is aborted at its kind's timeout and every job of the batch fails transiently", async () => {
    const jobs = await enqueueMany(db.pool, [{ kind: 'herd' }, { kind: 'herd' }], { now: clock.now() });
    const running = deferred();
    const w = makeWorker('w');
    w.registerBatch(
      'herd',
      async (_jobs, ctx) => {
        running.resolve();
        await new Promise<void>((resolve) => ctx.signal.addEventListener('abort', () => resolve()));
        throw ctx.signal.reason;
      },
      { maxBatch: 10, timeoutMs: 500 },
    );
    const run = w.runOnce();
    await running.promise;
    clock.advance(500);
    w.checkTimeouts();
    await run;
    for (const { job } of jobs) {
      expect(await jobRow(db.pool, job.id)).toMatchObject({
        status: 'queued',
        attempts: 1,
        last_error: 'JobTimeoutError: handler did not finish within its timeout of 500 ms',
      });
    }
  });

  it('a handler that ignores its signal: after timeout + grace its lease is no longer renewed, the reaper returns the job and another worker runs it', async () => {
    const { job } = await enqueue(db.pool, { kind: 'hang', maxAttempts: 5 }, { now: clock.now() });
    const running = deferred();
    const a = makeWorker('worker-a');
    a.register('hang', () => (running.resolve(), never()), { timeoutMs: 1000 });
    const runA = a.runOnce();
    await running.promise;

    clock.advance(1000);
    a.checkTimeouts(); // signal aborted; ignored
    clock.advance(4999);
    a.checkTimeouts();
    expect(a.heldCount).toBe(1); // still in its grace period
    clock.advance(1);
    a.checkTimeouts(); // given up
    await runA; // the worker holds no job any more, though the handler never returns
    expect(a.heldCount).toBe(0);

    // Heartbeats no longer renew it: at claim + lease (12:00:30) it has lapsed.
    clock.set('2026-03-01T12:00:29.000Z');
    await a.extendLeases();
    expect(await reapExpiredJobs(db.pool, clock.now())).toEqual([]);
    clock.set('2026-03-01T12:00:30.001Z');
    await a.extendLeases();
    expect(await reapExpiredJobs(db.pool, clock.now())).toMatchObject([{ id: job.id, status: 'queued', worker: 'worker-a' }]);

    const b = makeWorker('worker-b');
    b.register('hang', async () => undefined, { timeoutMs: 1000 });
    expect(await b.runOnce()).toBe(1);
    expect(await jobRow(db.pool, job.id)).toMatchObject({ status: 'succeeded', attempts: 2, locked_by: 'worker-b' });
    expect((await getJob(db.pool, job.id))!.history.map((h) => [h.outcome, h.worker])).toEqual([
      ['lease_expired', 'worker-a'],
      ['succeeded', 'worker-b'],
    ]);
  });

  it('a lane whose slots are all held by hung handlers claims no more and gives its buffered jobs back for other workers', async () => {
    const jobs = await enqueueMany(
      db.pool,
      Array.from({ length: 4 }, (_, i) => ({ kind: 'hang', payload: { i } })),
      { now: clock.now() },
    );
    let hung = 0;
    const release = deferred();
    const a = makeWorker('worker-a', { concurrency: 1, batchSize: 3 });
    a.register('hang', () => (hung++, release.promise), { timeoutMs: 1000 });
    started.push(a);
    await a.start();
    await waitFor(() => a.heldCount === 4 && hung === 1); // one running, three buffered behind it
    clock.advance(1000);
    await new Promise((r) => setTimeout(r, 300)); // timed out, in its grace period: the buffered jobs still wait for the slot
    expect(a.heldCount).toBe(4);
    clock.advance(5000); // grace over: the one slot is stuck
    await waitFor(async () => (await statusCounts(db.pool)).queued === 3);
    expect(a.heldCount).toBe(0);
    await new Promise((r) => setTimeout(r, 300)); // several polls: A claims nothing while its only slot is stuck
    expect(await statusCounts(db.pool)).toEqual({ queued: 3, running: 1 });
    expect(hung).toBe(1);
    const { rows } = await db.pool.query<{ attempts: number; n: number }>(
      `SELECT attempts, count(*)::int AS n FROM jobs WHERE status = 'queued' GROUP BY attempts`,
    );
    expect(rows).toEqual([{ attempts: 0, n: 3 }]); // given back as they were

    const b = makeWorker('worker-b', { concurrency: 5 });
    b.register('hang', async () => undefined);
    expect(await b.runOnce()).toBe(3);
    expect(await statusCounts(db.pool)).toEqual({ succeeded: 3, running: 1 });

    // The hung handler returns at last: its slot is free again, its outcome is not written (the job was given up).
    release.resolve();
    await enqueue(db.pool, { kind: 'hang', payload: { later: true } }, { now: clock.now() });
    await waitFor(() => hung === 2);
    expect(jobs).toHaveLength(4);
  });

  it('a worker whose every job slot is held by a hung handler still runs the reaper: housekeeping has slots of its own', async () => {
    await enqueue(db.pool, { kind: 'hang' }, { now: clock.now() });
    // A job of a crashed worker whose lease runs out at 12:00:01.5 (after the first reaper run).
    const { rows } = await db.pool.query<{ id: string }>(
      `INSERT INTO jobs (kind, status, attempts, locked_by, locked_at, locked_until, run_at, lease_token)
       VALUES ('orphan', 'running', 1, 'crashed', $1, $2, $1, nextval('jobs_lease_token_seq')) RETURNING id`,
      [new Date('2026-03-01T11:59:00Z'), new Date('2026-03-01T12:00:01.500Z')],
    );
    const running = deferred();
    const w = makeWorker('w', { concurrency: 1, housekeeping: { reapEverySeconds: 1, pruneEverySeconds: 3600 } });
    w.register('hang', () => (running.resolve(), never()));
    started.push(w);
    await w.start();
    await running.promise; // the only job slot is taken for good
    clock.set('2026-03-01T12:00:02.000Z'); // the next reaper period
    await waitFor(async () => (await jobRow(db.pool, rows[0]!.id)).status === 'queued', 10_000);
    expect(await jobRow(db.pool, rows[0]!.id)).toMatchObject({
      status: 'queued',
      last_error: 'lease expired: worker crashed stopped renewing it',
    });
  });
});
