import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import {
  enqueueMany,
  PermanentJobError,
  SnoozeJob,
  TransientJobError,
  Worker,
  type BatchContext,
  type BatchJobHandler,
  type ClaimedJob,
} from '../../libs/queue/src/index.js';
import { createTestDatabase, type TestDatabase } from '../support/database.js';
import { jobRow, memoryLogger, FixedClock, statusCounts } from './helpers.js';

// registerBatch: one handler call for several jobs of a kind, each job ending
// on its own (completed in one transaction with the handler's writes, failed,
// snoozed, buried, or simply succeeded), as the reminder pipeline uses it.
describe('batch handlers', () => {
  let db: TestDatabase;
  const clock = new FixedClock('2026-03-01T12:00:00.000Z');
  let logger: ReturnType<typeof memoryLogger>;
  let handler: BatchJobHandler<{ n: number }>;
  let calls: number[][];

  const makeWorker = (maxBatch: number, extra: Partial<ConstructorParameters<typeof Worker>[0]> = {}) =>
    new Worker({
      pool: db.pool,
      clock,
      random: () => 0.5,
      logger,
      housekeeping: false,
      listen: false,
      batchSize: 50,
      ...extra,
    }).registerBatch(
      'batchy',
      (jobs, ctx) => {
        calls.push(jobs.map((j) => j.payload.n));
        return handler(jobs, ctx);
      },
      { maxBatch },
    );

  const add = async (count: number, kind = 'batchy') => {
    const results = await enqueueMany(
      db.pool,
      Array.from({ length: count }, (_, n) => ({ kind, payload: { n }, maxAttempts: 3 })),
      { now: clock.now() },
    );
    return results.map((r) => r.job.id);
  };

  beforeAll(async () => {
    db = await createTestDatabase();
    await db.pool.query('CREATE TABLE batch_effects (n integer PRIMARY KEY)');
  });
  afterAll(async () => db.drop());
  beforeEach(async () => {
    await db.pool.query('TRUNCATE jobs, job_runs, batch_effects');
    clock.set('2026-03-01T12:00:00.000Z');
    logger = memoryLogger();
    calls = [];
  });

  it('hands over at most maxBatch jobs of its kind per call, beside single handlers of other kinds', async () => {
    await add(7);
    await add(2, 'single');
    const singles: number[] = [];
    handler = async () => undefined;
    const worker = makeWorker(3).register('single', async (job) => void singles.push(job.payload.n));
    expect(await worker.runOnce()).toBe(9);
    expect(calls.map((c) => c.length)).toEqual([3, 3, 1]);
    expect(calls.flat().sort()).toEqual([0, 1, 2, 3, 4, 5, 6]);
    expect(singles.sort()).toEqual([0, 1]);
    expect(await statusCounts(db.pool)).toEqual({ succeeded: 9 });
  });

  it('ends each job on its own: completed with the handler writes, retried, snoozed, buried, or succeeded', async () => {
    const ids = await add(6);
    const later = new Date('2026-03-01T22:00:00.000Z');
    handler = async (jobs, ctx) => {
      const [a, b, retry, snooze, bury, plain] = jobs as ClaimedJob<{ n: number }>[];
      ctx.fail(retry!, new TransientJobError('provider busy', { retryAfterSeconds: 120 }));
      ctx.fail(snooze!, new SnoozeJob(later, 'quiet hours'));
      ctx.fail(bury!, new PermanentJobError('bad payload'));
      void plain;
      const held = await ctx.completeWith([a!, b!], async (tx, heldJobs) => {
        await tx.query('INSERT INTO batch_effects SELECT unnest($1::int[])', [heldJobs.map((j) => j.payload.n)]);
      });
      expect(held.map((j) => j.id)).toEqual([a!.id, b!.id]);
    };
    await makeWorker(10).runOnce();

    const rows = await Promise.all(ids.map((id) => jobRow(db.pool, id)));
    expect(rows.map((r) => r.status)).toEqual(['succeeded', 'succeeded', 'queued', 'queued', 'dead', 'succeeded']);
    expect(rows[2]!.run_at.toISOString()).toBe('2026-03-01T12:02:00.000Z');
    expect(rows[2]!.attempts).toBe(1);
    expect(rows[3]!.run_at.toISOString()).toBe(later.toISOString());
    expect(rows[3]!.attempts).toBe(0);
    expect(rows[4]!.last_error).toContain('bad payload');
    const effects = await db.pool.query<{ n: number }>('SELECT n FROM batch_effects ORDER BY n');
    expect(effects.rows.map((r) => r.n)).toEqual([0, 1]);
    const runs = await db.pool.query<{ job_id: string; outcome: string }>('SELECT job_id, outcome FROM job_runs ORDER BY job_id');
    expect(runs.rows.map((r) => [r.job_id, r.outcome])).toEqual([
      [ids[2], 'failed'],
      [ids[3], 'snoozed'],
      [ids[4], 'dead'],
    ]);
  });

  it('a handler that rejects fails every job it had not ended, and keeps what completeWith committed', async () => {
    const ids = await add(3);
    handler = async (jobs, ctx) => {
      await ctx.completeWith([jobs[0]!], async (tx) => void (await tx.query('INSERT INTO batch_effects VALUES (0)')));
      throw new Error('provider exploded');
    };
    await makeWorker(10).runOnce();
    const rows = await Promise.all(ids.map((id) => jobRow(db.pool, id)));
    expect(rows.map((r) => r.status)).toEqual(['succeeded', 'queued', 'queued']);
    expect(rows[1]!.last_error).toBe('Error: provider exploded');
    expect((await db.pool.query('SELECT n FROM batch_effects')).rows).toEqual([{ n: 0 }]);
  });

  it('when fn throws nothing commits: the jobs stay the handler’s, and fail with its error', async () => {
    const ids = await add(2);
    handler = async (jobs, ctx) => {
      await ctx.completeWith(jobs, async (tx) => {
        await tx.query('INSERT INTO batch_effects VALUES (0), (1)');
        throw new Error('constraint broke');
      });
    };
    await makeWorker(10).runOnce();
    const rows = await Promise.all(ids.map((id) => jobRow(db.pool, id)));
    expect(rows.map((r) => [r.status, r.last_error])).toEqual([
      ['queued', 'Error: constraint broke'],
      ['queued', 'Error: constraint broke'],
    ]);
    expect((await db.pool.query('SELECT n FROM batch_effects')).rows).toEqual([]);
  });

  it('a job whose lease was taken over is left out of completeWith: fn never sees it and its row is not touched', async () => {
    const ids = await add(3);
    handler = async (jobs, ctx) => {
      // The reaper gave job 1 to another worker meanwhile.
      await db.pool.query(`UPDATE jobs SET locked_by = 'someone-else' WHERE id = $1`, [jobs[1]!.id]);
      const held = await ctx.completeWith(jobs, async (tx, heldJobs) => {
        await tx.query('INSERT INTO batch_effects SELECT unnest($1::int[])', [heldJobs.map((j) => j.payload.n)]);
      });
      expect(held.map((j) => j.payload.n)).toEqual([0, 2]);
    };
    await makeWorker(10).runOnce();
    const rows = await Promise.all(ids.map((id) => jobRow(db.pool, id)));
    expect(rows.map((r) => [r.status, r.locked_by])).toEqual([
      ['succeeded', expect.any(String)],
      ['running', 'someone-else'],
      ['succeeded', expect.any(String)],
    ]);
    expect((await db.pool.query('SELECT n FROM batch_effects ORDER BY n')).rows).toEqual([{ n: 0 }, { n: 2 }]);
    expect(logger.lines.some((l) => l.msg?.includes('lease lost') && l.fields.jobId === ids[1])).toBe(true);
  });

  it('assertLease: throws once the open jobs went a lease without a renewal (a job ended before does not count); every job is left as it was', async () => {
    const ids = await add(3);
    const seen: string[] = [];
    handler = async (jobs, ctx) => {
      ctx.assertLease();
      seen.push('held');
      ctx.fail(jobs[0]!, new TransientJobError('provider busy'));
      clock.advance(60_000); // the lease (the worker's default, 60 s) with no renewal sent: frozen, or cut off
      try {
        ctx.assertLease();
        seen.push('held after the lease');
      } catch (error) {
        seen.push((error as Error).name);
        throw error;
      }
    };
    await makeWorker(10).runOnce();
    expect(seen).toEqual(['held', 'LeaseLostError']);
    // Not ours to write: the two open jobs stay running for the reaper; the one failed before is ended as asked.
    const rows = await Promise.all(ids.map((id) => jobRow(db.pool, id)));
    expect(rows.map((r) => r.status)).toEqual(['queued', 'running', 'running']);
    expect(logger.lines.filter((l) => l.msg?.startsWith('job lease lost')).map((l) => l.fields.jobId)).toEqual([ids[1], ids[2]]);
  });

  it('assertLease: a job lost on its own (the heartbeat heard so) does not stop the rest of the batch', async () => {
    const ids = await add(3);
    const worker = makeWorker(10);
    const seen: string[] = [];
    handler = async (jobs, ctx) => {
      await db.pool.query(`UPDATE jobs SET locked_by = 'someone-else' WHERE id = $1`, [jobs[1]!.id]);
      clock.advance(30_000);
      await worker.extendLeases(); // job 1 is lost; the others are held until 90 s
      clock.advance(40_000); // job 1's last renewal is 70 s old, the others' 40 s
      ctx.assertLease();
      seen.push('held');
      await ctx.completeWith([jobs[0]!, jobs[2]!], async () => undefined);
    };
    await worker.runOnce();
    expect(seen).toEqual(['held']);
    const rows = await Promise.all(ids.map((id) => jobRow(db.pool, id)));
    expect(rows.map((r) => [r.status, r.locked_by === 'someone-else'])).toEqual([
      ['succeeded', false],
      ['running', true],
      ['succeeded', false],
    ]);
  });

  it('refuses a job that is not of the batch, or one ended twice', async () => {
    await add(2);
    const errors: string[] = [];
    handler = async (jobs, ctx: BatchContext<{ n: number }>) => {
      const stranger = { ...jobs[0]! };
      await ctx.completeWith([stranger], async () => undefined).catch((e: Error) => errors.push(e.message));
      ctx.fail(jobs[0]!, new Error('first'));
      try {
        ctx.fail(jobs[0]!, new Error('second'));
      } catch (e) {
        errors.push((e as Error).message);
      }
      await ctx.completeWith([jobs[0]!], async () => undefined).catch((e: Error) => errors.push(e.message));
    };
    await makeWorker(10).runOnce();
    expect(errors).toEqual([
      expect.stringMatching(/not one of this batch/),
      expect.stringMatching(/already completed or failed/),
      expect.stringMatching(/already completed or failed/),
    ]);
    expect(await statusCounts(db.pool)).toEqual({ queued: 1, succeeded: 1 });
  });

  it('a started worker keeps batches large under load and stops cleanly', async () => {
    await add(400);
    handler = async (jobs, ctx) => {
      await ctx.completeWith(jobs, async (tx, held) => {
        await tx.query('INSERT INTO batch_effects SELECT unnest($1::int[])', [held.map((j) => j.payload.n)]);
      });
    };
    const worker = makeWorker(40, { concurrency: 80, batchSize: 100 });
    await worker.start();
    const deadline = Date.now() + 20_000;
    while ((await statusCounts(db.pool)).succeeded !== 400 && Date.now() < deadline) await new Promise((r) => setTimeout(r, 50));
    await worker.stop();
    expect((await db.pool.query('SELECT count(*)::int AS n FROM batch_effects')).rows[0].n).toBe(400);
    expect(await statusCounts(db.pool)).toEqual({ succeeded: 400 });
    expect(calls.flat().length).toBe(400);
    // No job was handed out twice, and most calls were full batches.
    expect(new Set(calls.flat()).size).toBe(400);
    expect(calls.filter((c) => c.length === 40).length).toBeGreaterThanOrEqual(5);
  });
});
