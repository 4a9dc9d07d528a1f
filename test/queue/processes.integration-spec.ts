import { spawn, type ChildProcess } from 'node:child_process';
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { enqueueMany } from '../../libs/queue/src/index.js';
import { createTestDatabase, type TestDatabase } from '../support/database.js';
import { waitFor } from './helpers.js';

// Real worker processes against one database: what several `npm run
// start:worker` do in production.
describe('worker processes', () => {
  let db: TestDatabase;
  let children: ChildProcess[] = [];

  beforeAll(async () => {
    db = await createTestDatabase();
    await db.pool.query(`
      CREATE TABLE job_events (
        id bigserial PRIMARY KEY, job_id bigint NOT NULL, worker text NOT NULL, attempt int NOT NULL,
        started_at timestamptz NOT NULL, ended_at timestamptz
      )`);
  });
  afterAll(async () => db.drop());
  beforeEach(async () => {
    await db.pool.query('TRUNCATE jobs, job_runs, job_events');
  });
  afterEach(async () => {
    for (const child of children) if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
    children = [];
  });

  function startWorker(env: Record<string, string>): {
    child: ChildProcess;
    ready: Promise<void>;
    exited: Promise<number | null>;
    stderr: () => string;
  } {
    const child = spawn(process.execPath, ['--import', 'tsx', 'test/queue/fixtures/worker-process.ts'], {
      env: { ...process.env, DATABASE_URL: db.url, ...env },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    children.push(child);
    let err = '';
    child.stderr!.on('data', (d) => (err += String(d)));
    const ready = new Promise<void>((resolve, reject) => {
      child.stdout!.on('data', (d) => {
        if (String(d).includes('ready')) resolve();
      });
      child.on('exit', (code) => reject(new Error(`worker exited (${code}) before ready: ${err}`)));
    });
    const exited = new Promise<number | null>((resolve) => child.on('exit', (code) => resolve(code)));
    return { child, ready, exited, stderr: () => err };
  }

  async function count(sql: string, params: unknown[] = []): Promise<number> {
    const { rows } = await db.pool.query<{ n: number }>(sql, params);
    return rows[0]!.n;
  }

  // Two runs of one job overlap when each starts before the other ends; a
  // run with no end (its process was killed) lasts until `openEnd`.
  async function overlaps(openEnd: Date): Promise<number> {
    return count(
      `SELECT count(*)::int AS n FROM job_events a JOIN job_events b ON a.job_id = b.job_id AND a.id < b.id
       WHERE a.started_at < coalesce(b.ended_at, $1) AND b.started_at < coalesce(a.ended_at, $1)`,
      [openEnd],
    );
  }

  it('three processes drain 10,000 jobs: each succeeds exactly once, never two runs at a time, nothing left', async () => {
    const workers = [1, 2, 3].map((i) =>
      startWorker({ WORKER_ID: `drain-${i}`, CONCURRENCY: '50', BATCH_SIZE: '100', HANDLER_MS: '2', RECORD: 'batch' }),
    );
    await Promise.all(workers.map((w) => w.ready));
    const specs = Array.from({ length: 10_000 }, (_, i) => ({ kind: 'work', payload: { i } }));
    for (let i = 0; i < specs.length; i += 2500) await enqueueMany(db.pool, specs.slice(i, i + 2500));

    await waitFor(
      async () => (await count(`SELECT count(*)::int AS n FROM jobs WHERE kind = 'work' AND status = 'succeeded'`)) === 10_000,
      90_000,
      200,
    );
    for (const w of workers) w.child.kill('SIGTERM');
    expect(await Promise.all(workers.map((w) => w.exited))).toEqual([0, 0, 0]);

    expect(await count(`SELECT count(*)::int AS n FROM jobs WHERE kind = 'work' AND (status <> 'succeeded' OR attempts <> 1)`)).toBe(0);
    expect(await count(`SELECT count(*)::int AS n FROM jobs WHERE status IN ('running', 'queued') AND kind = 'work'`)).toBe(0);
    // One recorded run per job, no more, no fewer.
    expect(await count(`SELECT count(*)::int AS n FROM job_events`)).toBe(10_000);
    expect(await count(`SELECT count(DISTINCT job_id)::int AS n FROM job_events`)).toBe(10_000);
    expect(await overlaps(new Date())).toBe(0);
    // The work really was shared.
    const { rows } = await db.pool.query<{ worker: string; n: number }>(
      `SELECT worker, count(*)::int AS n FROM job_events GROUP BY worker ORDER BY worker`,
    );
    expect(rows.map((r) => r.worker)).toEqual(['drain-1', 'drain-2', 'drain-3']);
    expect(await count(`SELECT count(*)::int AS n FROM job_runs`)).toBe(0);
  });

  it('kill -9 in the middle of a batch: its jobs come back after the lease and finish; at most two starts per job', async () => {
    const env = { CONCURRENCY: '10', BATCH_SIZE: '20', HANDLER_MS: '300', RECORD: 'sync', LEASE_SECONDS: '2', REAP_EVERY_SECONDS: '1' };
    const victim = startWorker({ ...env, WORKER_ID: 'victim' });
    await victim.ready;
    await enqueueMany(
      db.pool,
      Array.from({ length: 150 }, (_, i) => ({ kind: 'work', payload: { i } })),
    );
    await waitFor(async () => (await count(`SELECT count(*)::int AS n FROM job_events WHERE worker = 'victim'`)) >= 15, 30_000, 20);
    victim.child.kill('SIGKILL');
    await victim.exited;
    const killedAt = new Date();
    const survivor = startWorker({ ...env, WORKER_ID: 'survivor' });
    await survivor.ready;

    await waitFor(
      async () => (await count(`SELECT count(*)::int AS n FROM jobs WHERE kind = 'work' AND status = 'succeeded'`)) === 150,
      60_000,
      100,
    );
    survivor.child.kill('SIGTERM');
    expect(await survivor.exited).toBe(0);

    // The victim's unfinished runs were retried, by the survivor, after the kill.
    const unfinished = await count(`SELECT count(*)::int AS n FROM job_events WHERE worker = 'victim' AND ended_at IS NULL`);
    expect(unfinished).toBeGreaterThan(0);
    expect(
      await count(
        `SELECT count(*)::int AS n FROM job_events v WHERE v.worker = 'victim' AND v.ended_at IS NULL AND NOT EXISTS (
           SELECT 1 FROM job_events s WHERE s.job_id = v.job_id AND s.worker = 'survivor' AND s.ended_at IS NOT NULL AND s.started_at > $1)`,
        [killedAt],
      ),
    ).toBe(0);
    expect(
      await count(`SELECT coalesce(max(n), 0)::int AS n FROM (SELECT count(*) AS n FROM job_events GROUP BY job_id) t`),
    ).toBeLessThanOrEqual(2);
    expect(await count(`SELECT count(*)::int AS n FROM jobs WHERE kind = 'work' AND status <> 'succeeded'`)).toBe(0);
    expect(await count(`SELECT count(*)::int AS n FROM jobs WHERE status = 'running'`)).toBe(0);
    expect(
      await count(`SELECT count(*)::int AS n FROM job_runs WHERE outcome = 'lease_expired' AND worker = 'victim'`),
    ).toBeGreaterThanOrEqual(unfinished);
    expect(await overlaps(killedAt)).toBe(0);
  });

  it('SIGTERM during a batch: running handlers finish, unstarted jobs are released, nothing is stuck running', async () => {
    const w = startWorker({
      WORKER_ID: 'term',
      CONCURRENCY: '3',
      BATCH_SIZE: '6',
      HANDLER_MS: '1500',
      RECORD: 'sync',
      STOP_DEADLINE_MS: '10000',
    });
    await w.ready;
    await enqueueMany(
      db.pool,
      Array.from({ length: 20 }, (_, i) => ({ kind: 'work', payload: { i } })),
    );
    await waitFor(async () => (await count(`SELECT count(*)::int AS n FROM job_events`)) === 3, 20_000, 20);
    await waitFor(
      async () => (await count(`SELECT count(*)::int AS n FROM jobs WHERE status = 'running' AND kind = 'work'`)) >= 6,
      5_000,
      20,
    ); // 3 running, the rest claimed but waiting
    w.child.kill('SIGTERM');
    expect(await w.exited).toBe(0);

    expect(await count(`SELECT count(*)::int AS n FROM job_events WHERE ended_at IS NULL`)).toBe(0);
    expect(await count(`SELECT count(*)::int AS n FROM job_events`)).toBe(3);
    const { rows } = await db.pool.query<{ status: string; attempts: number; n: number }>(
      `SELECT status, attempts, count(*)::int AS n FROM jobs WHERE kind = 'work' GROUP BY 1, 2 ORDER BY 1`,
    );
    expect(rows).toEqual([
      { status: 'queued', attempts: 0, n: 17 },
      { status: 'succeeded', attempts: 1, n: 3 },
    ]);
    expect(await count(`SELECT count(*)::int AS n FROM jobs WHERE status = 'running'`)).toBe(0);
  });
});
