import { afterAll, beforeAll, beforeEach, describe, expect, it, vi } from 'vitest';
import {
  enqueueMany,
  foldDeadCounts,
  PermanentJobError,
  pruneFinishedJobs,
  QUEUE_SCHEMA,
  queueGauges,
  reapExpiredJobs,
  retryDeadJobs,
  retryJob,
  TransientJobError,
  Worker,
} from '../../libs/queue/src/index.js';
import { createTestDatabase, type TestDatabase } from '../support/database.js';
import { FixedClock } from './helpers.js';

// The dead-jobs gauge reads per-kind counts that triggers keep, instead of
// counting the dead jobs at every scrape. These tests make and unmake dead
// jobs through every path there is and compare the gauge with a count of the
// rows themselves, before and after the changes are folded.
describe('dead-job counts kept by triggers', () => {
  let db: TestDatabase;
  const clock = new FixedClock('2026-03-01T12:00:00.000Z');
  const now = () => clock.now();

  beforeAll(async () => {
    db = await createTestDatabase();
  });
  afterAll(async () => db.drop());
  beforeEach(async () => {
    await db.pool.query('TRUNCATE jobs, job_runs');
  });

  // vi.waitFor retries the VACUUM until the table's pages are gone (at most 10 s).
  async function vacuumUntilEmpty(table: string): Promise<void> {
    await vi.waitFor(
      async () => {
        await db.pool.query(`VACUUM ${table}`);
        const { rows } = await db.pool.query<{ pages: number }>(
          `SELECT (pg_relation_size($1) / current_setting('block_size')::integer)::integer AS pages`,
          [table],
        );
        expect(rows[0]!.pages).toBeLessThanOrEqual(1);
      },
      { timeout: 10_000, interval: 200 },
    );
  }

  async function gaugeDead(): Promise<Record<string, number>> {
    const rows = await queueGauges(db.pool, now());
    const dead: Record<string, number> = {};
    for (const r of rows) if (Number(r.dead) !== 0) dead[r.kind] = (dead[r.kind] ?? 0) + Number(r.dead);
    return dead;
  }

  async function rowsDead(): Promise<Record<string, number>> {
    const { rows } = await db.pool.query<{ kind: string; n: number }>(
      `SELECT kind, count(*)::integer AS n FROM jobs WHERE status = 'dead' GROUP BY kind`,
    );
    return Object.fromEntries(rows.map((r) => [r.kind, r.n]));
  }

  /** The gauge equals the rows, before a fold and after it. */
  async function expectGaugeMatchesRows(expected: Record<string, number>): Promise<void> {
    expect(await rowsDead()).toEqual(expected);
    expect(await gaugeDead()).toEqual(expected);
    await foldDeadCounts(db.pool);
    expect(await gaugeDead()).toEqual(expected);
    const { rows } = await db.pool.query<{ n: number }>('SELECT count(*)::integer AS n FROM job_dead_changes');
    expect(rows[0]!.n).toBe(0);
  }

  function worker(handlers: ConstructorParameters<typeof Worker>[0]['handlers']): Worker {
    return new Worker({ pool: db.pool, clock, housekeeping: false, listen: false, handlers });
  }

  it('counts what the worker makes dead: a permanent error, the last attempt of a transient one', async () => {
    await enqueueMany(
      db.pool,
      [{ kind: 'bad' }, { kind: 'bad' }, { kind: 'flaky', maxAttempts: 1 }, { kind: 'flaky', maxAttempts: 2 }, { kind: 'ok' }],
      {
        now: now(),
      },
    );
    await worker({
      bad: async () => {
        throw new PermanentJobError('no such device');
      },
      flaky: async () => {
        throw new TransientJobError('try later');
      },
      ok: async () => undefined,
    }).runOnce();
    // The flaky job with a second attempt left is queued again, not dead.
    await expectGaugeMatchesRows({ bad: 2, flaky: 1 });
  });

  it('counts the reaper making a job dead, an operator retrying one or all, and the pruner deleting them', async () => {
    const jobs = await enqueueMany(db.pool, [{ kind: 'a', maxAttempts: 1 }, { kind: 'a' }, { kind: 'a' }, { kind: 'b' }, { kind: 'b' }], {
      now: now(),
    });
    const [lapsed, a1, a2, b1, b2] = jobs.map((j) => j.job.id);
    // A job on its last attempt whose lease lapsed: the reaper makes it dead.
    await db.pool.query(
      `UPDATE jobs SET status = 'running', attempts = 1, locked_at = $2, locked_by = 'gone', locked_until = $2, lease_token = 1 WHERE id = $1`,
      [lapsed, new Date(now().getTime() - 60_000)],
    );
    await db.pool.query(`UPDATE jobs SET status = 'dead', finished_at = $2, last_error = 'boom' WHERE id = ANY($1::bigint[])`, [
      [a1, a2, b1, b2],
      new Date(now().getTime() - 40 * 86_400_000),
    ]);
    const reaped = await reapExpiredJobs(db.pool, now());
    expect(reaped.map((r) => [r.id, r.status])).toEqual([[lapsed, 'dead']]);
    await expectGaugeMatchesRows({ a: 3, b: 2 });

    expect(await retryJob(db.pool, a1!, now())).toBe('retried');
    await expectGaugeMatchesRows({ a: 2, b: 2 });

    expect(await retryDeadJobs(db.pool, 'b', now())).toBe(2);
    await expectGaugeMatchesRows({ a: 2 });

    // a2 finished 40 days ago (past the dead retention), `lapsed` just now.
    const cutoff = new Date(now().getTime() - 14 * 86_400_000);
    const deadCutoff = new Date(now().getTime() - 30 * 86_400_000);
    expect(await pruneFinishedJobs(db.pool, cutoff, { deadOlderThan: deadCutoff })).toBe(1);
    await expectGaugeMatchesRows({ a: 1 });
  });

  it('counts what an operator types by hand: an UPDATE of status or kind, a DELETE, a TRUNCATE', async () => {
    await enqueueMany(db.pool, [{ kind: 'x' }, { kind: 'x' }, { kind: 'x' }, { kind: 'y' }], { now: now() });
    await db.pool.query(`UPDATE jobs SET status = 'dead' WHERE kind = 'x'`);
    await expectGaugeMatchesRows({ x: 3 });
    // An update that keeps a dead job dead changes nothing; one that renames its kind moves it.
    await db.pool.query(`UPDATE jobs SET status = 'dead', last_error = 'again' WHERE kind = 'x'`);
    await db.pool.query(`UPDATE jobs SET kind = 'z' WHERE id = (SELECT min(id) FROM jobs WHERE kind = 'x')`);
    await expectGaugeMatchesRows({ x: 2, z: 1 });
    await db.pool.query(`DELETE FROM jobs WHERE kind = 'x' AND id = (SELECT min(id) FROM jobs WHERE kind = 'x')`);
    await db.pool.query(`INSERT INTO jobs (kind, status, finished_at) VALUES ('y', 'dead', now())`);
    await expectGaugeMatchesRows({ x: 1, y: 1, z: 1 });
    // A rolled-back change leaves no trace.
    const client = await db.pool.connect();
    await client.query('BEGIN');
    await client.query(`UPDATE jobs SET status = 'dead' WHERE status <> 'dead'`);
    await client.query('ROLLBACK');
    client.release();
    await expectGaugeMatchesRows({ x: 1, y: 1, z: 1 });
    await db.pool.query('TRUNCATE jobs, job_runs');
    await expectGaugeMatchesRows({});
  });

  it('stays exact under concurrent changes and folds (several connections at once)', async () => {
    const specs = Array.from({ length: 400 }, (_, i) => ({ kind: i % 2 ? 'odd' : 'even' }));
    const ids = (await enqueueMany(db.pool, specs, { now: now() })).map((j) => j.job.id);
    // Eight writers each make their share dead one row a statement and retry every third one,
    // while two folders fold as they go.
    let writing = true;
    const writers = Array.from({ length: 8 }, async (_, w) => {
      for (let i = w; i < ids.length; i += 8) {
        await db.pool.query(`UPDATE jobs SET status = 'dead', finished_at = now() WHERE id = $1`, [ids[i]]);
        if (i % 3 === 0) await retryJob(db.pool, ids[i]!, now());
      }
    });
    const folders = Array.from({ length: 2 }, async () => {
      while (writing) await foldDeadCounts(db.pool, { batchSize: 7 });
    });
    await Promise.all(writers);
    writing = false;
    await Promise.all(folders);
    const expected = { even: 0, odd: 0 };
    for (let i = 0; i < ids.length; i++) if (i % 3 !== 0) expected[i % 2 ? 'odd' : 'even'] += 1;
    await expectGaugeMatchesRows(expected);
  });

  it('a database migrated with dead jobs already kept starts from their count', async () => {
    await enqueueMany(db.pool, [{ kind: 'p' }, { kind: 'p' }, { kind: 'q' }, { kind: 'r' }], { now: now() });
    await QUEUE_SCHEMA.deadCounts.down(db.pool);
    await db.pool.query(`UPDATE jobs SET status = 'dead' WHERE kind IN ('p', 'q')`);
    await QUEUE_SCHEMA.deadCounts.up(db.pool);
    await expectGaugeMatchesRows({ p: 2, q: 1 });
  });

  it("the gauges' statement reads no dead job: its cost does not grow with the dead jobs kept", async () => {
    await db.pool.query(`INSERT INTO jobs (kind, status, finished_at) SELECT 'heap', 'dead', now() FROM generate_series(1, 20000)`);
    await foldDeadCounts(db.pool);
    // The fold leaves 20,000 deleted change rows; autovacuum (tuned to follow
    // the table closely) removes them and truncates the empty pages. A VACUUM
    // cannot remove them while another backend's snapshot still sees them (an
    // autovacuum ANALYZE of the 20,000 new jobs, say), so vacuum until the
    // pages are gone, as autovacuum would on its next round.
    await vacuumUntilEmpty('job_dead_changes');
    await db.pool.query('ANALYZE jobs');
    expect(await gaugeDead()).toEqual({ heap: 20000 });
    const client = await db.pool.connect();
    try {
      await client.query('BEGIN; SET LOCAL enable_seqscan = off');
      const { GAUGES } = await import('../../libs/queue/src/ops-sql.js');
      const plan = await client.query(`EXPLAIN (ANALYZE, BUFFERS, FORMAT JSON) ${GAUGES}`, [now()]);
      await client.query('ROLLBACK');
      const text = JSON.stringify(plan.rows[0]);
      expect(text).not.toContain('jobs_dead_idx');
      // The whole statement touches a handful of pages, not the 20,000 dead rows' index.
      const root = (plan.rows[0] as { 'QUERY PLAN': Array<{ Plan: { 'Shared Hit Blocks': number; 'Shared Read Blocks': number } }> })[
        'QUERY PLAN'
      ][0]!.Plan;
      expect(root['Shared Hit Blocks'] + root['Shared Read Blocks']).toBeLessThan(40);
    } finally {
      client.release();
    }
  });
});
