import type pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { pruneFinishedJobs } from '../../libs/queue/src/index.js';
import { SUCCEEDED_SINCE } from '../../libs/queue/src/ops-sql.js';
import * as SQL from '../../libs/queue/src/sql.js';
import { completeAt } from '../support/completions.js';
import { createTestDatabase, type TestDatabase } from '../support/database.js';

// EXPLAIN of a statement as a prepared statement's generic plan (what a worker runs after a few claims), rolled back.
async function explainGeneric(pool: pg.Pool, text: string, values: unknown[], options = 'ANALYZE'): Promise<string> {
  const client = await pool.connect();
  try {
    await client.query('BEGIN');
    await client.query('SET LOCAL plan_cache_mode = force_generic_plan');
    await client.query(`PREPARE hot AS ${text}`);
    const literals = values.map((v) =>
      v === null
        ? 'NULL'
        : Array.isArray(v)
          ? `'{${v.join(',')}}'`
          : v instanceof Date
            ? `'${v.toISOString()}'`
            : typeof v === 'number'
              ? String(v)
              : `'${v}'`,
    );
    const { rows } = await client.query(`EXPLAIN (${options}) EXECUTE hot(${literals.join(', ')})`);
    return rows.map((r: Record<string, string>) => r['QUERY PLAN']).join('\n');
  } finally {
    await client.query('ROLLBACK');
    await client.query('DEALLOCATE ALL'); // PREPARE outlives the transaction
    client.release();
  }
}

// The hot statements are prepared, so after a few runs Postgres may switch to
// a generic plan built from statistics, which for a queue are always stale
// (taken while nothing was running, say). These plans must still touch only
// the rows of the batch: no table scans, no walk of a whole partial index per
// row. A regression here showed up as a 10× drop in throughput.
describe('query plans of the hot path', () => {
  let db: TestDatabase;
  const now = new Date('2026-03-01T12:00:00Z');
  let runningIds: string[] = [];
  let runningTokens: string[] = [];

  beforeAll(async () => {
    db = await createTestDatabase();
    // The plans are checked against statistics taken before jobs started running; the table's eager
    // autovacuum could re-analyze in the middle of the file and make the result depend on timing.
    await db.pool.query('ALTER TABLE jobs SET (autovacuum_enabled = false)');
    await db.pool.query(
      `INSERT INTO jobs (kind, run_at) SELECT 'k', $1::timestamptz + g * interval '1 second' FROM generate_series(1, 40000) g`,
      [now],
    );
    await db.pool.query(
      `INSERT INTO jobs (kind, run_at) SELECT 'k', $1::timestamptz - g * interval '1 ms' FROM generate_series(1, 2000) g`,
      [now],
    );
    await db.pool.query(
      `INSERT INTO jobs (kind, run_at, status, finished_at) SELECT 'k', $1::timestamptz - interval '1 day', 'succeeded', $1 FROM generate_series(1, 40000) g`,
      [now],
    );
    // Statistics say nothing runs; then 2,000 jobs start running.
    await db.pool.query('VACUUM ANALYZE jobs');
    await db.pool.query(
      `INSERT INTO jobs (kind, run_at, status, locked_by, attempts, locked_until, lease_token)
       SELECT 'k', $1, 'running', 'w', 1, $1, nextval('jobs_lease_token_seq') FROM generate_series(1, 2000) g`,
      [now],
    );
    const { rows } = await db.pool.query<{ id: string; lease_token: string }>(
      `SELECT id, lease_token FROM jobs WHERE status = 'running' ORDER BY id DESC LIMIT 500`,
    );
    runningIds = rows.map((r) => r.id);
    runningTokens = rows.map((r) => r.lease_token);
  }, 60_000);
  afterAll(async () => db.drop());

  const genericPlan = (text: string, values: unknown[]) => explainGeneric(db.pool, text, values);

  function expectBatchSized(plan: string) {
    expect(plan).not.toMatch(/Seq Scan on jobs/);
    const removed = [...plan.matchAll(/Rows Removed by (?:Join )?Filter: (\d+)/g)].map((m) => Number(m[1]));
    for (const n of removed) expect(n).toBeLessThanOrEqual(1);
  }

  const tokens = () => runningTokens;
  const later = new Date(now.getTime() + 60_000);
  const leaseMs = 60_000;

  // A test clock passes its instant; the system clock passes NULL (the database's now()).
  describe.each([
    ['a test clock', now],
    ['the database clock', null],
  ] as const)('on %s', (_clock, at) => {
    it('claim probes the claim index per kind and the primary key', async () => {
      const plan = await genericPlan(SQL.CLAIM.text, [at, ['k'], 500, leaseMs, 'w2', 250]);
      expect(plan).toMatch(/Index Scan using jobs_claim_idx/);
      expectBatchSized(plan);
    });

    it.each([
      ['complete', SQL.COMPLETE_MANY, () => [runningIds, tokens(), at, 'w']],
      ['heartbeat', SQL.EXTEND_LEASES, () => [runningIds, tokens(), at, 'w', leaseMs]],
      ['release', SQL.RELEASE_MANY, () => [runningIds, tokens(), at, 'w']],
      ['start', SQL.START_MANY, () => [runningIds, tokens(), at, 'w']],
      ['lease check', SQL.LEASE_CHECK, () => [runningIds, tokens(), 'w']],
    ] as const)('%s touches only the rows of its batch', async (_name, statement, values) => {
      const plan = await genericPlan(statement.text, values() as unknown[]);
      expectBatchSized(plan);
      expect(plan).toMatch(/rows=500/);
    });

    it.each([
      ['retry', SQL.RETRY, () => [runningIds[0], 'w', runningTokens[0], at, 30_000, 'err', at, 'failed']],
      ['dead', SQL.DEAD, () => [runningIds[0], 'w', runningTokens[0], at, 'err', at]],
      ['snooze', SQL.SNOOZE, () => [runningIds[0], 'w', runningTokens[0], at, later, 'quiet', at, 5000]],
    ] as const)('%s of one job is a probe', async (_name, statement, values) => {
      expectBatchSized(await genericPlan(statement.text, values() as unknown[]));
    });
  });
});

// Issue 13 finding 4: a claim reads the rows it can take, not the rows it
// cannot. 100,000 due jobs of a kind no running worker handles, and 300,000
// reminders scheduled for later (an idle poll on PostgreSQL 15–17 walked them
// all: a range on run_at under a leading priority is no index bound there).
// Judged by the buffers the claim touches and the rows its scans return.
describe('the claim with rows it cannot take', () => {
  let db: TestDatabase;
  let dbNow: Date;
  const READY = 20;

  beforeAll(async () => {
    db = await createTestDatabase();
    await db.pool.query('ALTER TABLE jobs SET (autovacuum_enabled = false)');
    dbNow = (await db.pool.query<{ now: Date }>('SELECT now()')).rows[0]!.now;
    await db.pool.query(
      `INSERT INTO jobs (kind, run_at) SELECT 'orphan', $1::timestamptz - g * interval '1 ms' FROM generate_series(1, 100000) g`,
      [dbNow],
    );
    await db.pool.query(
      `INSERT INTO jobs (kind, run_at) SELECT 'send_reminder', $1::timestamptz + interval '1 hour' + g * interval '1 second'
       FROM generate_series(1, 300000) g`,
      [dbNow],
    );
    await db.pool.query(
      `INSERT INTO jobs (kind, run_at, priority) SELECT 'k', $1::timestamptz - g * interval '1 second', g % 3 FROM generate_series(1, ${READY}) g`,
      [dbNow],
    );
    await db.pool.query('VACUUM ANALYZE jobs');
  }, 120_000);
  afterAll(async () => db.drop());

  /**
   * Rows the claim returned, and the buffers (hit + read) of its `picked`
   * step: finding and locking the jobs it takes. Writing them (the UPDATE,
   * index entries per row) is left out: that follows the rows claimed.
   */
  async function claim(at: Date | null, kinds: string[]): Promise<{ plan: string; claimed: number; buffers: number }> {
    const plan = await explainGeneric(db.pool, SQL.CLAIM.text, [at, kinds, 500, 60_000, 'w', 500], 'ANALYZE, BUFFERS');
    const claimed = Number(/Update on jobs[^\n]*actual [^\n]*rows=([\d.]+)/.exec(plan)?.[1] ?? NaN);
    const picked = plan.slice(plan.indexOf('CTE picked'));
    const line = /Buffers: ([^\n]*)/.exec(picked)?.[1] ?? '';
    const buffers = [...line.matchAll(/(?:hit|read)=(\d+)/g)].reduce((sum, m) => sum + Number(m[1]), 0);
    return { plan, claimed, buffers };
  }

  describe.each([
    ['a test clock', (): Date | null => dbNow],
    ['the database clock', (): Date | null => null],
  ] as const)('on %s', (_clock, at) => {
    it('takes the ready jobs of its kinds without reading the 100,000 of a kind it does not handle or the 300,000 scheduled', async () => {
      const { plan, claimed, buffers } = await claim(at(), ['k', 'send_reminder', 'queue.reap']);
      expect(claimed, plan).toBe(READY);
      expect(plan).not.toMatch(/Seq Scan on jobs/);
      // The rows fetched are the ready ones (a few index probes each), not a walk past the others.
      expect(buffers, plan).toBeLessThan(150);
    });

    it('an idle poll (nothing due, 300,000 scheduled) reads a handful of pages', async () => {
      const { plan, claimed, buffers } = await claim(at(), ['send_reminder']);
      expect(claimed, plan).toBe(0);
      expect(buffers, plan).toBeLessThan(50);
    });
  });
});

// The live herd of a million reminders (issue 17 part 3) stalled at half way:
// every claim of the lanes of the other kinds (the sweep, Expo receipts, each
// with one job due) walked the half million due reminders ahead of their job
// in jobs_runnable_idx (priority, run_at), filtering on kind, 2.7 s a probe,
// and the send_reminder lane waited behind them. A probe must read its kind's
// rows only, however many due rows of other kinds share its priority.
describe('the claim of a rare kind behind a herd of another kind at the same priority', () => {
  let db: TestDatabase;
  let dbNow: Date;

  beforeAll(async () => {
    db = await createTestDatabase();
    await db.pool.query('ALTER TABLE jobs SET (autovacuum_enabled = false)');
    dbNow = (await db.pool.query<{ now: Date }>('SELECT now()')).rows[0]!.now;
    // The herd: due over the last ten minutes, and tomorrow's occurrences of the same kind.
    await db.pool.query(
      `INSERT INTO jobs (kind, run_at) SELECT 'send_reminder', $1::timestamptz - interval '10 minutes' + g * interval '2 ms'
       FROM generate_series(1, 200000) g`,
      [dbNow],
    );
    await db.pool.query(
      `INSERT INTO jobs (kind, run_at) SELECT 'send_reminder', $1::timestamptz + interval '1 day' + g * interval '2 ms'
       FROM generate_series(1, 200000) g`,
      [dbNow],
    );
    // The other lanes' jobs: one due a second ago (behind the whole herd in run_at order), one due later.
    await db.pool.query(`INSERT INTO jobs (kind, run_at) VALUES ('reminder_sweep', $1::timestamptz - interval '1 second')`, [dbNow]);
    await db.pool.query(`INSERT INTO jobs (kind, run_at) VALUES ('expo_receipts', $1::timestamptz + interval '5 minutes')`, [dbNow]);
    await db.pool.query('VACUUM ANALYZE jobs');
  }, 120_000);
  afterAll(async () => db.drop());

  it.each([
    ['a test clock', (): Date | null => dbNow],
    ['the database clock', (): Date | null => null],
  ] as const)('on %s: takes the one due job reading a handful of pages', async (_clock, at) => {
    const plan = await explainGeneric(
      db.pool,
      SQL.CLAIM.text,
      [at(), ['reminder_sweep', 'expo_receipts'], 100, 60_000, 'w', 100],
      'ANALYZE, BUFFERS',
    );
    const claimed = Number(/Update on jobs[^\n]*actual [^\n]*rows=([\d.]+)/.exec(plan)?.[1] ?? NaN);
    expect(claimed, plan).toBe(1);
    const removed = [...plan.matchAll(/Rows Removed by Filter: (\d+)/g)].map((m) => Number(m[1]));
    for (const n of removed) expect(n, plan).toBeLessThanOrEqual(2);
    const picked = plan.slice(plan.indexOf('CTE picked'));
    const line = /Buffers: ([^\n]*)/.exec(picked)?.[1] ?? '';
    const buffers = [...line.matchAll(/(?:hit|read)=(\d+)/g)].reduce((sum, m) => sum + Number(m[1]), 0);
    expect(buffers, plan).toBeLessThan(50);
  });

  it('the herd kind itself is claimed in run_at order from its due rows', async () => {
    const plan = await explainGeneric(db.pool, SQL.CLAIM.text, [null, ['send_reminder'], 100, 60_000, 'w', 100], 'ANALYZE, BUFFERS');
    expect(Number(/Update on jobs[^\n]*actual [^\n]*rows=([\d.]+)/.exec(plan)?.[1] ?? NaN), plan).toBe(100);
    expect(plan).not.toMatch(/Seq Scan on jobs/);
  });
});

// History at scale: "succeeded in the last hour" (GET /v1/ops/queue) reads
// the completions' counts, not the hour's finished jobs (a morning herd's
// successes, or an outage's dead and cancelled jobs); the pruner reads the old
// finished jobs it deletes, not the young ones it keeps.
describe('finished jobs: the last hour and the pruner', () => {
  let db: TestDatabase;
  let dbNow: Date;
  const day = 86_400_000;

  beforeAll(async () => {
    db = await createTestDatabase();
    await db.pool.query('ALTER TABLE jobs SET (autovacuum_enabled = false)');
    dbNow = (await db.pool.query<{ now: Date }>('SELECT now()')).rows[0]!.now;
    const finished = (status: string, n: number, agoMs: number) =>
      db.pool.query(
        `INSERT INTO jobs (kind, status, attempts, finished_at) SELECT 'k', $1, 1, $3::timestamptz - g * interval '1 ms' FROM generate_series(1, $2) g`,
        [status, n, new Date(dbNow.getTime() - agoMs)],
      );
    await finished('dead', 20_000, 600_000);
    await finished('cancelled', 5_000, 600_000);
    // The hour's successes as workers leave them: 20,050 jobs completed by 21
    // flushes (batches of 1,000 and one of 50), ten minutes ago.
    const queued = await db.pool.query<{ id: string }>(`INSERT INTO jobs (kind) SELECT 'k' FROM generate_series(1, 20050) RETURNING id`);
    const ids = queued.rows.map((r) => String(r.id));
    for (let i = 0; i < ids.length; i += 1000) await completeAt(db.pool, ids.slice(i, i + 1000), new Date(dbNow.getTime() - 600_000));
    await finished('succeeded', 5_000, 20 * day);
    await finished('cancelled', 1_000, 20 * day);
    await finished('dead', 3_000, 40 * day);
    await db.pool.query('VACUUM ANALYZE jobs');
  }, 60_000);
  afterAll(async () => db.drop());

  it('counts the successes of the last hour from a row per flush, not a row per success', async () => {
    const since = new Date(dbNow.getTime() - 3_600_000);
    const plan = await explainGeneric(db.pool, SUCCEEDED_SINCE, [since], 'ANALYZE, BUFFERS');
    expect(plan).not.toMatch(/ on jobs/);
    expect(Number(/on job_success_counts[^\n]*actual [^\n]*rows=([\d.]+)/.exec(plan)?.[1] ?? NaN), plan).toBe(21);
    const { rows } = await db.pool.query<{ kind: string; succeeded: number }>(SUCCEEDED_SINCE, [since]);
    expect(rows).toEqual([{ kind: 'k', succeeded: 20_050 }]);
  });

  it('prunes through the finished indexes, past none of the young jobs it keeps', async () => {
    const cutoff = new Date(dbNow.getTime() - 14 * day);
    const deadCutoff = new Date(dbNow.getTime() - 30 * day);
    const plan = await explainGeneric(db.pool, SQL.PRUNE.text, [cutoff, 1000, deadCutoff]);
    expect(plan).toMatch(/Index Scan (using|on) jobs_succeeded_idx/);
    expect(plan).toMatch(/Index Scan (using|on) jobs_ended_idx/);
    expect(plan).not.toMatch(/Seq Scan on jobs|Sort/);
    expect(plan).not.toMatch(/Rows Removed by Filter: [1-9]/);

    expect(await pruneFinishedJobs(db.pool, cutoff, { deadOlderThan: deadCutoff, batchSize: 1000 })).toBe(9_000);
    const { rows } = await db.pool.query<{ status: string; n: number }>(
      `SELECT status, count(*)::int AS n FROM jobs GROUP BY status ORDER BY status`,
    );
    expect(rows).toEqual([
      { status: 'cancelled', n: 5_000 },
      { status: 'dead', n: 20_000 },
      { status: 'succeeded', n: 20_050 },
    ]);
  });
});
