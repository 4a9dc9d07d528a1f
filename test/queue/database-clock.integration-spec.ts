import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { backoffSeconds, enqueue, PermanentJobError, SnoozeJob, Worker, type JobHandler } from '../../libs/queue/src/index.js';
import { createTestDatabase, type TestDatabase } from '../support/database.js';

// A worker given no clock (production) acts at the database's now(): the
// instants it writes come from the statement that writes them, and delays
// travel as lengths added there. The skew itself is tested with two
// processes (test/reliability/clock-skew); here, that each row's times
// agree with each other, and that history keeps the start the row had.
describe('a worker on the database clock', () => {
  let db: TestDatabase;
  let worker: Worker;
  let handler: JobHandler;
  let seen: { locked_at: Date; locked_until: Date; db_now: Date } | undefined;
  const LEASE_SECONDS = 60;

  beforeAll(async () => {
    db = await createTestDatabase();
  });
  afterAll(async () => db.drop());
  beforeEach(async () => {
    await db.pool.query('TRUNCATE jobs, job_runs');
    seen = undefined;
    worker = new Worker({
      pool: db.pool,
      random: () => 0,
      leaseSeconds: LEASE_SECONDS,
      snooze: { minDelaySeconds: 7 },
      housekeeping: false,
      listen: false,
      handlers: {
        k: async (job, ctx) => {
          const { rows } = await db.pool.query<NonNullable<typeof seen>>(
            'SELECT locked_at, locked_until, now() AS db_now FROM jobs WHERE id = $1',
            [job.id],
          );
          seen = rows[0];
          await handler(job, ctx);
        },
      },
    });
  });

  async function runOne(): Promise<{ run_at: Date; finished_at: Date | null; run: Record<string, Date | string | null> | undefined }> {
    await enqueue(db.pool, { kind: 'k' });
    expect(await worker.runOnce()).toBe(1);
    const { rows } = await db.pool.query<{ run_at: Date; finished_at: Date | null }>('SELECT run_at, finished_at FROM jobs');
    const runs = await db.pool.query<Record<string, Date | string | null>>(
      'SELECT started_at, finished_at, next_run_at, outcome FROM job_runs',
    );
    return { ...rows[0]!, run: runs.rows[0] };
  }

  it('claims with a lease of exactly leaseSeconds from its start; finishes after it', async () => {
    handler = async () => undefined;
    const { finished_at } = await runOne();
    expect(seen!.locked_until.getTime() - seen!.locked_at.getTime()).toBe(LEASE_SECONDS * 1000);
    expect(seen!.locked_at.getTime()).toBeLessThanOrEqual(seen!.db_now.getTime());
    expect(finished_at!.getTime()).toBeGreaterThanOrEqual(seen!.db_now.getTime());
  });

  it('a retry is due its backoff after the failure was written, and its history keeps the start the row had', async () => {
    handler = async () => {
      throw new Error('provider down');
    };
    const { run_at, run } = await runOne();
    expect(run).toMatchObject({ outcome: 'failed', started_at: seen!.locked_at, next_run_at: run_at });
    expect(run_at.getTime() - (run!.finished_at as Date).getTime()).toBe(backoffSeconds(1, () => 0) * 1000);
  });

  it('a snooze to the past waits the minimum delay from when it was written; a snooze to the future keeps its instant', async () => {
    handler = async () => {
      throw new SnoozeJob(new Date('2000-01-01T00:00:00Z'), 'quiet hours');
    };
    const past = await runOne();
    expect(past.run).toMatchObject({ outcome: 'snoozed', started_at: seen!.locked_at });
    expect(past.run_at.getTime() - (past.run!.finished_at as Date).getTime()).toBe(7000);

    await db.pool.query('TRUNCATE jobs, job_runs');
    const until = new Date(Date.now() + 3_600_000);
    handler = async () => {
      throw new SnoozeJob(until, 'quiet hours');
    };
    expect((await runOne()).run_at).toEqual(until);
  });

  it('a dead job is finished when the burial was written, its history starting at its start', async () => {
    handler = async () => {
      throw new PermanentJobError('bad payload');
    };
    const { finished_at, run } = await runOne();
    expect(run).toMatchObject({ outcome: 'dead', started_at: seen!.locked_at, finished_at });
  });
});
