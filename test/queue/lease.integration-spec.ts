import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import {
  enqueue,
  enqueueMany,
  getJob,
  LeaseLostError,
  reapExpiredJobs,
  retryJob,
  Worker,
  type JobContext,
} from '../../libs/queue/src/index.js';
import { createTestDatabase, type TestDatabase } from '../support/database.js';
import { deferred, jobRow, memoryLogger, FixedClock, statusCounts, waitFor } from './helpers.js';

describe('leases, the reaper and completeWith', () => {
  let db: TestDatabase;
  const clock = new FixedClock('2026-03-01T12:00:00.000Z');

  beforeAll(async () => {
    db = await createTestDatabase();
    await db.pool.query('CREATE TABLE side_effects (job_id bigint, note text)');
  });
  afterAll(async () => db.drop());
  beforeEach(async () => {
    await db.pool.query('TRUNCATE jobs, job_runs, side_effects');
    clock.set('2026-03-01T12:00:00.000Z');
  });

  function makeWorker(workerId: string, handler: (ctx: JobContext, id: string) => Promise<void>, extra = {}) {
    return new Worker({
      pool: db.pool,
      workerId,
      clock,
      leaseSeconds: 30,
      housekeeping: false,
      listen: false,
      logger: memoryLogger(),
      handlers: { slow: (job, ctx) => handler(ctx, job.id) },
      ...extra,
    });
  }

  /** Past worker-a's lease: the reaper gives the job back, and worker-b takes it and finishes it (side effect 'b'). */
  async function reapAndFinishOnB(jobId: string) {
    const reaped = await reapExpiredJobs(db.pool, clock.now());
    expect(reaped).toMatchObject([{ id: jobId, status: 'queued', worker: 'worker-a' }]);
    const b = makeWorker('worker-b', async (_ctx, id) => {
      await db.pool.query(`INSERT INTO side_effects VALUES ($1, 'b')`, [id]);
    });
    expect(await b.runOnce()).toBe(1);
  }

  it("a worker whose lease was reaped cannot overwrite the new holder's result", async () => {
    const { job } = await enqueue(db.pool, { kind: 'slow', maxAttempts: 5 }, { now: clock.now() });
    const releaseA = deferred();
    const startedA = deferred();
    const a = makeWorker('worker-a', async () => {
      startedA.resolve();
      await releaseA.promise;
    });
    const runA = a.runOnce();
    await startedA.promise;

    // A stalls past its lease; the reaper gives the job back; B takes and finishes it.
    clock.advance(31_000);
    await reapAndFinishOnB(job.id);
    expect(await jobRow(db.pool, job.id)).toMatchObject({ status: 'succeeded', attempts: 2, locked_by: 'worker-b' });

    // A wakes up and "succeeds": its compare-and-set matches nothing.
    releaseA.resolve();
    await runA;
    expect(await jobRow(db.pool, job.id)).toMatchObject({ status: 'succeeded', attempts: 2, locked_by: 'worker-b' });
    const history = (await getJob(db.pool, job.id))!.history;
    expect(history.map((h) => [h.attempt, h.outcome, h.worker])).toEqual([
      [1, 'lease_expired', 'worker-a'],
      [2, 'succeeded', 'worker-b'],
    ]);
  });

  it("a reaped worker's failure does not touch the job the new holder is running", async () => {
    const { job } = await enqueue(db.pool, { kind: 'slow', maxAttempts: 5 }, { now: clock.now() });
    const failA = deferred();
    const startedA = deferred();
    const a = makeWorker('worker-a', async () => {
      startedA.resolve();
      await failA.promise;
      throw new Error('A gives up late');
    });
    const runA = a.runOnce();
    await startedA.promise;
    clock.advance(31_000);
    await reapExpiredJobs(db.pool, clock.now());

    const holdB = deferred();
    const startedB = deferred();
    const b = makeWorker('worker-b', async () => {
      startedB.resolve();
      await holdB.promise;
    });
    const runB = b.runOnce();
    await startedB.promise;
    failA.resolve();
    await runA;
    // Still B's, still running, attempt 2, no error from A.
    expect(await jobRow(db.pool, job.id)).toMatchObject({ status: 'running', attempts: 2, locked_by: 'worker-b' });
    holdB.resolve();
    await runB;
    expect(await jobRow(db.pool, job.id)).toMatchObject({ status: 'succeeded', attempts: 2, locked_by: 'worker-b' });
  });

  it('a stale run cannot end a later run of the same worker after an operator retry reset the attempts', async () => {
    const { job } = await enqueue(db.pool, { kind: 'slow', maxAttempts: 1 }, { now: clock.now() });
    const failA = deferred();
    const startedA = deferred();
    const a = makeWorker('worker-a', async () => {
      startedA.resolve();
      await failA.promise;
      throw new Error('the stale run gives up late');
    });
    const runA = a.runOnce();
    await startedA.promise;
    // The run stalls past its lease: dead (its only attempt); an operator retries it (attempts back to 0).
    clock.advance(31_000);
    expect(await reapExpiredJobs(db.pool, clock.now())).toMatchObject([{ id: job.id, status: 'dead' }]);
    expect(await retryJob(db.pool, job.id, clock.now())).toBe('retried');

    // The same worker (same id) runs it again: (id, worker, attempt 1) once more.
    const holdB = deferred();
    const startedB = deferred();
    const b = makeWorker('worker-a', async () => {
      startedB.resolve();
      await holdB.promise;
    });
    const runB = b.runOnce();
    await startedB.promise;
    failA.resolve();
    await runA;
    expect(await jobRow(db.pool, job.id)).toMatchObject({
      status: 'running',
      attempts: 1,
      last_error: expect.stringMatching(/^lease expired/),
    });
    holdB.resolve();
    await runB;
    expect(await jobRow(db.pool, job.id)).toMatchObject({ status: 'succeeded', attempts: 1 });
  });

  it("heartbeats extend the lease; a lost lease aborts the handler's signal", async () => {
    const { job } = await enqueue(db.pool, { kind: 'slow' }, { now: clock.now() });
    const started = deferred<JobContext>();
    const finish = deferred();
    const a = makeWorker('worker-a', async (ctx) => {
      started.resolve(ctx);
      await finish.promise;
    });
    const run = a.runOnce();
    const ctx = await started.promise;

    clock.advance(20_000);
    await a.extendLeases();
    clock.advance(20_000); // 40 s after the claim, 20 s after the heartbeat
    expect(await reapExpiredJobs(db.pool, clock.now())).toEqual([]);
    expect(ctx.signal.aborted).toBe(false);

    clock.advance(31_000);
    expect(await reapExpiredJobs(db.pool, clock.now())).toHaveLength(1);
    await a.extendLeases();
    expect(ctx.signal.aborted).toBe(true);
    expect(ctx.signal.reason).toBeInstanceOf(LeaseLostError);
    finish.resolve();
    await run;
    expect(await jobRow(db.pool, job.id)).toMatchObject({ status: 'queued', attempts: 1 });
  });

  it('assertLease: a handler that stalled a lease without a renewal learns it by its own clock, before its heartbeat says so', async () => {
    const { job } = await enqueue(db.pool, { kind: 'slow', maxAttempts: 5 }, { now: clock.now() });
    const started = deferred();
    const resume = deferred();
    const logger = memoryLogger();
    const checks: string[] = [];
    const a = makeWorker(
      'worker-a',
      async (ctx, id) => {
        ctx.assertLease(); // just claimed: held
        checks.push('held at start');
        started.resolve();
        await resume.promise;
        ctx.assertLease(); // throws: the effect below must not happen
        await db.pool.query(`INSERT INTO side_effects VALUES ($1, 'a')`, [id]);
      },
      { logger },
    );
    const run = a.runOnce();
    await started.promise;

    // A renewal sent keeps it held: 29 s after the heartbeat is still within the lease.
    clock.advance(20_000);
    await a.extendLeases();
    clock.advance(29_000);
    // Frozen (or cut off from the database: every renewal failing) past the lease: no renewal sent for over 30 s.
    clock.advance(1_001);
    await reapAndFinishOnB(job.id);

    resume.resolve();
    await run;
    expect(checks).toEqual(['held at start']);
    expect((await db.pool.query(`SELECT note FROM side_effects`)).rows).toEqual([{ note: 'b' }]);
    expect(await jobRow(db.pool, job.id)).toMatchObject({ status: 'succeeded', attempts: 2, locked_by: 'worker-b' });
    // Said once, where it was found; A wrote nothing of the job (its history: the reaper's row, then B's).
    expect(logger.lines.filter((l) => l.msg?.startsWith('job lease lost')).map((l) => l.fields.where)).toEqual(['handler']);
    expect((await getJob(db.pool, job.id))!.history.map((h) => [h.outcome, h.worker])).toEqual([
      ['lease_expired', 'worker-a'],
      ['succeeded', 'worker-b'],
    ]);
  });

  it('the reaper returns expired jobs, buries those out of attempts, and counts them', async () => {
    const jobs = await enqueueMany(
      db.pool,
      [
        { kind: 'slow', maxAttempts: 3 },
        { kind: 'slow', maxAttempts: 1 },
        { kind: 'slow', maxAttempts: 3 },
      ],
      { now: clock.now() },
    );
    // Claimed by a worker that then vanishes (never finishes, never heartbeats).
    const never = new Promise<void>(() => undefined);
    const ghost = makeWorker('ghost', () => never, { batchSize: 2 });
    void ghost.runOnce(2);
    await waitFor(async () => (await statusCounts(db.pool)).running === 2);
    clock.advance(29_000);
    expect(await reapExpiredJobs(db.pool, clock.now())).toEqual([]);
    clock.advance(2_000);
    const reaped = await reapExpiredJobs(db.pool, clock.now(), { batchSize: 1 });
    expect(reaped.map((r) => [r.id, r.status]).sort()).toEqual(
      [
        [jobs[0]!.job.id, 'queued'],
        [jobs[1]!.job.id, 'dead'],
      ].sort(),
    );
    expect(await jobRow(db.pool, jobs[1]!.job.id)).toMatchObject({
      status: 'dead',
      last_error: 'lease expired: worker ghost stopped renewing it',
    });
    expect(await statusCounts(db.pool)).toEqual({ queued: 2, dead: 1 });
  });

  it('jobs a killed worker had claimed but not started use no attempt: maxAttempts 1 is not dead after the crash', async () => {
    const jobs = await enqueueMany(
      db.pool,
      [
        { kind: 'slow', maxAttempts: 1 },
        { kind: 'slow', maxAttempts: 1 },
        { kind: 'slow', maxAttempts: 1 },
      ],
      { now: clock.now() },
    );
    // One slot, a batch of three: one runs (and hangs), two wait in the buffer; then the process dies.
    const ghost = makeWorker('ghost', () => new Promise<void>(() => undefined), { concurrency: 1, batchSize: 3 });
    void ghost.runOnce(3);
    await waitFor(async () => (await statusCounts(db.pool)).running === 3);
    clock.advance(31_000);
    const reaped = await reapExpiredJobs(db.pool, clock.now());
    expect(reaped.map((r) => r.status).sort()).toEqual(['dead', 'queued', 'queued']);
    const { rows } = await db.pool.query<{ status: string; attempts: number; n: number }>(
      `SELECT status, attempts, count(*)::int AS n FROM jobs GROUP BY 1, 2 ORDER BY 1`,
    );
    // The one that ran used its attempt; the buffered ones did not, and have no history.
    expect(rows).toEqual([
      { status: 'dead', attempts: 1, n: 1 },
      { status: 'queued', attempts: 0, n: 2 },
    ]);
    const histories = await Promise.all(jobs.map((j) => getJob(db.pool, j.job.id)));
    expect(histories.map((h) => h!.history.length).sort()).toEqual([0, 0, 1]);

    // Another worker, one slot, a batch of two: the buffered job's attempt counts when it starts.
    const seen: number[] = [];
    const b = makeWorker(
      'worker-b',
      async (_ctx, id) => {
        seen.push((await jobRow(db.pool, id)).attempts);
      },
      { concurrency: 1, batchSize: 2 },
    );
    expect(await b.runOnce(2)).toBe(2);
    expect(seen).toEqual([1, 1]);
    expect(await statusCounts(db.pool)).toEqual({ dead: 1, succeeded: 2 });
  });

  it("completeWith: the handler's writes and the completion commit together", async () => {
    const { job } = await enqueue(db.pool, { kind: 'slow' }, { now: clock.now() });
    const w = makeWorker('worker-a', async (ctx, id) => {
      await ctx.completeWith(async (tx) => {
        await tx.query(`INSERT INTO side_effects VALUES ($1, 'next occurrence')`, [id]);
        // Inside the transaction the job is already succeeded.
        const { rows } = await tx.query('SELECT status FROM jobs WHERE id = $1', [id]);
        expect(rows[0].status).toBe('succeeded');
        // And nobody outside sees either yet.
        const outside = await db.pool.query('SELECT count(*)::int AS n FROM side_effects');
        expect(outside.rows[0].n).toBe(0);
      });
    });
    await w.runOnce();
    expect(await jobRow(db.pool, job.id)).toMatchObject({ status: 'succeeded', attempts: 1 });
    expect((await db.pool.query('SELECT note FROM side_effects')).rows).toEqual([{ note: 'next occurrence' }]);
  });

  it('completeWith: fn failing rolls back its writes and the job is retried', async () => {
    const { job } = await enqueue(db.pool, { kind: 'slow', maxAttempts: 3 }, { now: clock.now() });
    const w = makeWorker('worker-a', async (ctx, id) => {
      await ctx.completeWith(async (tx) => {
        await tx.query(`INSERT INTO side_effects VALUES ($1, 'half done')`, [id]);
        throw new Error('constraint violated');
      });
    });
    await w.runOnce();
    expect(await jobRow(db.pool, job.id)).toMatchObject({ status: 'queued', attempts: 1, last_error: 'Error: constraint violated' });
    expect((await db.pool.query('SELECT count(*)::int AS n FROM side_effects')).rows[0].n).toBe(0);
  });

  it('completeWith whose fn throws, and a handler that then resolves: the job fails with that error, it does not succeed', async () => {
    const { job } = await enqueue(db.pool, { kind: 'slow', maxAttempts: 3 }, { now: clock.now() });
    const w = makeWorker('worker-a', async (ctx, id) => {
      // The handler swallows the rejection (or forgot to await it) and resolves.
      await ctx
        .completeWith(async (tx) => {
          await tx.query(`INSERT INTO side_effects VALUES ($1, 'half done')`, [id]);
          throw new Error('next occurrence could not be written');
        })
        .catch(() => undefined);
    });
    await w.runOnce();
    expect(await jobRow(db.pool, job.id)).toMatchObject({
      status: 'queued',
      attempts: 1,
      last_error: 'Error: next occurrence could not be written',
    });
    expect((await db.pool.query('SELECT count(*)::int AS n FROM side_effects')).rows[0].n).toBe(0);
  });

  it('completeWith after the lease was lost: nothing of fn commits and the new holder keeps the job', async () => {
    const { job } = await enqueue(db.pool, { kind: 'slow', maxAttempts: 3 }, { now: clock.now() });
    const proceed = deferred();
    const started = deferred();
    let outcome: unknown = null;
    const a = makeWorker('worker-a', async (ctx, id) => {
      started.resolve();
      await proceed.promise;
      try {
        await ctx.completeWith(async (tx) => {
          await tx.query(`INSERT INTO side_effects VALUES ($1, 'from the stale worker')`, [id]);
        });
      } catch (error) {
        outcome = error;
        throw error;
      }
    });
    const run = a.runOnce();
    await started.promise;
    clock.advance(31_000);
    await reapExpiredJobs(db.pool, clock.now());
    const hold = deferred();
    const startedB = deferred();
    const b = makeWorker('worker-b', async () => {
      startedB.resolve();
      await hold.promise;
    });
    const runB = b.runOnce();
    await startedB.promise;

    proceed.resolve();
    await run;
    expect(outcome).toBeInstanceOf(LeaseLostError);
    expect((await db.pool.query('SELECT count(*)::int AS n FROM side_effects')).rows[0].n).toBe(0);
    expect(await jobRow(db.pool, job.id)).toMatchObject({ status: 'running', attempts: 2, locked_by: 'worker-b' });
    hold.resolve();
    await runB;
    expect(await jobRow(db.pool, job.id)).toMatchObject({ status: 'succeeded', locked_by: 'worker-b' });
  });

  it('stop() during a batch: running handlers finish, unstarted jobs go back unconsumed, nothing stays running', async () => {
    const jobs = await enqueueMany(
      db.pool,
      Array.from({ length: 20 }, () => ({ kind: 'slow' })),
      { now: clock.now() },
    );
    const started: string[] = [];
    const gate = deferred();
    const w = makeWorker(
      'worker-a',
      async (_ctx, id) => {
        started.push(id);
        await gate.promise;
        await db.pool.query(`INSERT INTO side_effects VALUES ($1, 'done')`, [id]);
      },
      { concurrency: 4, batchSize: 10, pollIntervalMs: 50 },
    );
    await w.start();
    await waitFor(() => started.length === 4);
    await waitFor(() => w.heldCount === 10); // 4 running + 6 buffered (the next claim waits for half a batch of room)
    const stopping = w.stop({ deadlineMs: 10_000 });
    await new Promise((r) => setTimeout(r, 100));
    gate.resolve();
    await stopping;

    expect(started).toHaveLength(4);
    const counts = await statusCounts(db.pool);
    expect(counts).toEqual({ succeeded: 4, queued: 16 });
    const { rows } = await db.pool.query<{ attempts: number; n: number }>(
      `SELECT attempts, count(*)::int AS n FROM jobs WHERE status = 'queued' GROUP BY attempts`,
    );
    expect(rows).toEqual([{ attempts: 0, n: 16 }]);
    expect((await db.pool.query('SELECT count(*)::int AS n FROM side_effects')).rows[0].n).toBe(4);
    expect(jobs).toHaveLength(20);
  });

  it('stop() past its deadline aborts handlers and puts their jobs back as interrupted', async () => {
    const { job } = await enqueue(db.pool, { kind: 'slow', maxAttempts: 5 }, { now: clock.now() });
    const started = deferred<JobContext>();
    const w = makeWorker(
      'worker-a',
      async (ctx) => {
        started.resolve(ctx);
        await new Promise<void>(() => undefined); // ignores its signal
      },
      { pollIntervalMs: 50 },
    );
    await w.start();
    const ctx = await started.promise;
    await w.stop({ deadlineMs: 200 });
    expect(ctx.signal.aborted).toBe(true);
    expect(await jobRow(db.pool, job.id)).toMatchObject({ status: 'queued', attempts: 1 });
    expect((await getJob(db.pool, job.id))!.history.map((h) => h.outcome)).toEqual(['interrupted']);
  });
});
