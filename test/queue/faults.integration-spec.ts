import pg from 'pg';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { enqueue, getJob, Worker, type JobHandler } from '../../libs/queue/src/index.js';
import { createTestDatabase, type TestDatabase } from '../support/database.js';
import { jobRow, memoryLogger, FixedClock } from './helpers.js';

// The worker's own pool, with a switch that makes chosen named statements
// fail as a lost connection does (no SQLSTATE): a database blip.
function blippingPool(url: string) {
  const pool = new pg.Pool({ connectionString: url, max: 4 });
  pool.on('error', () => undefined);
  const failures = new Map<string, number>();
  const original = pool.query.bind(pool) as (...args: unknown[]) => Promise<unknown>;
  (pool as unknown as { query: (...args: unknown[]) => Promise<unknown> }).query = (...args: unknown[]) => {
    const name = (args[0] as { name?: string } | null)?.name;
    const left = name ? [...failures.keys()].find((prefix) => name.startsWith(prefix)) : undefined;
    if (left !== undefined && failures.get(left)! > 0) {
      failures.set(left, failures.get(left)! - 1);
      return Promise.reject(new Error('Connection terminated unexpectedly'));
    }
    return original(...args);
  };
  return { pool, failNext: (statementPrefix: string, times: number) => failures.set(statementPrefix, times) };
}

describe('the queue under faults', () => {
  let db: TestDatabase;
  let blip: ReturnType<typeof blippingPool>;
  const clock = new FixedClock('2026-03-01T12:00:00.000Z');
  let handler: JobHandler;
  let runs: number;

  beforeAll(async () => {
    db = await createTestDatabase();
  });
  afterAll(async () => {
    await blip?.pool.end();
    await db.drop();
  });
  beforeEach(async () => {
    await db.pool.query('TRUNCATE jobs, job_runs');
    await blip?.pool.end();
    blip = blippingPool(db.url);
    clock.set('2026-03-01T12:00:00.000Z');
    runs = 0;
  });

  function makeWorker() {
    return new Worker({
      pool: blip.pool,
      workerId: 'w',
      clock,
      leaseSeconds: 60,
      housekeeping: false,
      listen: false,
      logger: memoryLogger(),
      handlers: { k: (job, ctx) => (runs++, handler(job, ctx)) },
    });
  }

  it('a completion written during a database blip of several seconds is retried until it lands: the job succeeds once', async () => {
    handler = async () => undefined;
    const { job } = await enqueue(db.pool, { kind: 'k' }, { now: clock.now() });
    // More failures than the old five tries a second apart (about 4 s) survived.
    blip.failNext('queue_complete_many', 6);
    expect(await makeWorker().runOnce()).toBe(1);
    expect(await jobRow(db.pool, job.id)).toMatchObject({ status: 'succeeded', attempts: 1 });
    expect(runs).toBe(1);
  }, 20_000);

  it('a failure written during a blip is retried: the last attempt ends dead with the real error, not "lease expired"', async () => {
    handler = async () => {
      throw new Error('provider down');
    };
    const { job } = await enqueue(db.pool, { kind: 'k', maxAttempts: 1 }, { now: clock.now() });
    blip.failNext('queue_mark_dead', 3);
    await makeWorker().runOnce();
    expect(await jobRow(db.pool, job.id)).toMatchObject({ status: 'dead', attempts: 1, last_error: 'Error: provider down' });
    expect((await getJob(db.pool, job.id))!.history.map((h) => [h.outcome, h.error])).toEqual([['dead', 'Error: provider down']]);
  });

  it('a retry written during a blip lands with its backoff', async () => {
    handler = async () => {
      throw new Error('timeout');
    };
    const { job } = await enqueue(db.pool, { kind: 'k', maxAttempts: 5 }, { now: clock.now() });
    blip.failNext('queue_retry', 2);
    await makeWorker().runOnce();
    const row = await jobRow(db.pool, job.id);
    expect(row).toMatchObject({ status: 'queued', attempts: 1, last_error: 'Error: timeout' });
    expect(row.run_at.getTime()).toBeGreaterThan(clock.now().getTime());
  });
});
