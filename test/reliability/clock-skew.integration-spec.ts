import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { SEND_NOTIFICATION } from '@nudge/push';
import { enqueueMany, REAP_KIND } from '@nudge/queue';
import { createTestDatabase, type TestDatabase } from '../support/database.js';
import { findLibfaketime, type LibfaketimeLookup } from '../support/faketime.js';
import { type AppProcess, startApp, WORKER_MAIN } from './processes.js';

// Two built worker processes whose clocks differ by 45 s (issue 13 finding
// 7): one runs under libfaketime (FAKETIME="+45s", LD_PRELOAD into that
// process only; PostgreSQL and the other worker keep the real clock). With
// leases, the reaper's comparison and due checks on each host's own clock,
// the skewed worker would start jobs up to 45 s early and reap the other
// worker's healthy leases (a 15 s lease is "expired" 45 s early), so those
// jobs would run twice. On the database's clock neither happens.
//
// The database's clock at each handler's start: push_deliveries gets a
// column defaulting to clock_timestamp(), filled when the handler writes
// its `sending` row, before calling the provider (the app writes its own
// created_at from the process's clock, which is the skewed one's).

const SKEW = '+45s';
const LEASE_SECONDS = 15; // shorter than the skew; the reaper runs every 5 s
const SLOW = 24; // due now, 2 s each at the simulated provider (sim-slow-): leases held while the skewed worker reaps
const LATER = 16; // due 15 s from now by the database's clock
const DUE_IN_MS = 15_000;

describe('clock skew between worker hosts', () => {
  let db: TestDatabase;
  let faketime: LibfaketimeLookup;
  const workers: AppProcess[] = [];

  beforeAll(async () => {
    faketime = findLibfaketime();
    if (faketime.path === null) console.warn(`\nThe clock-skew test is skipped: ${faketime.reason}.\n`);
    db = await createTestDatabase();
  }, 15 * 60_000);
  afterAll(async () => {
    await Promise.all(workers.map((w) => w.kill('SIGKILL')));
    await db?.drop();
  });

  it(`a worker whose clock is ${SKEW} ahead starts no job before its run_at and reaps no healthy lease: every job runs once`, async (ctx) => {
    if (faketime.path === null) return ctx.skip(faketime.reason);
    const pool = db.pool;
    await pool.query(`ALTER TABLE push_deliveries ADD COLUMN db_started_at timestamptz NOT NULL DEFAULT clock_timestamp()`);
    const users = [...Array(SLOW + LATER).keys()].map((i) => `skew-${i}`);
    await pool.query(`INSERT INTO users (id, time_zone) SELECT unnest($1::text[]), 'UTC'`, [users]);
    await pool.query(
      `INSERT INTO devices (user_id, installation_id, platform, push_token)
       SELECT u, 'd0', 'android', CASE WHEN n <= $2 THEN 'sim-slow-' ELSE 'sim-ok-' END || u || '-7f3a'
       FROM unnest($1::text[]) WITH ORDINALITY AS t(u, n)`,
      [users, SLOW],
    );

    const env = {
      DATABASE_URL: db.url,
      SKIP_MIGRATIONS: '1',
      JOB_LEASE_SECONDS: String(LEASE_SECONDS),
      NOTIFICATION_CONCURRENCY: '2',
      WORKER_CONCURRENCY: '4',
    };
    const onTime = startApp(WORKER_MAIN, env);
    workers.push(onTime);
    const skewed = startApp(WORKER_MAIN, { ...env, LD_PRELOAD: faketime.path, FAKETIME: SKEW, FAKETIME_DONT_RESET: '1' });
    workers.push(skewed);
    await Promise.all([onTime.waitFor('Nudge worker started'), skewed.waitFor('Nudge worker started')]);
    const tag = (w: AppProcess) => `%:${w.child.pid}:%`;
    // The skew is real: the skewed process logs times 45 s ahead of the database's.
    const firstLine = JSON.parse(
      skewed
        .output()
        .split('\n')
        .find((l) => l.startsWith('{'))!,
    ) as { time: string };
    const { rows: dbNow } = await pool.query<{ ms: number }>(`SELECT (extract(epoch FROM now()) * 1000)::float8 AS ms`);
    expect(Date.parse(firstLine.time) - dbNow[0]!.ms).toBeGreaterThan(40_000);

    const payload = (userId: string) => ({ userId, title: 'Skew', body: null, data: null, timeSensitive: false });
    const dueAt = new Date(dbNow[0]!.ms + DUE_IN_MS);
    await enqueueMany(pool, [
      ...users.slice(0, SLOW).map((u) => ({ kind: SEND_NOTIFICATION, payload: payload(u), idempotencyKey: `notification:${u}` })),
      ...users
        .slice(SLOW)
        .map((u) => ({ kind: SEND_NOTIFICATION, payload: payload(u), idempotencyKey: `notification:${u}`, runAt: dueAt })),
    ]);

    const count = async (sql: string, params: unknown[] = []) => (await pool.query<{ n: number }>(sql, params)).rows[0]!.n;
    // Until every job has ended and the skewed worker's reaper has run (the reaper is a job that either worker may claim).
    const end = Date.now() + 120_000;
    for (;;) {
      const open = await count(`SELECT count(*)::int AS n FROM jobs WHERE kind = $1 AND status <> 'succeeded'`, [SEND_NOTIFICATION]);
      const reaps = await count(`SELECT count(*)::int AS n FROM jobs WHERE kind = $1 AND status = 'succeeded' AND locked_by LIKE $2`, [
        REAP_KIND,
        tag(skewed),
      ]);
      if (open === 0 && reaps > 0) break;
      if (Date.now() > end) {
        const { rows } = await pool.query(`SELECT id, kind, status, attempts, locked_by, last_error FROM jobs WHERE status <> 'succeeded'`);
        throw new Error(`not done (open ${open}, skewed reaps ${reaps}): ${JSON.stringify(rows)}\n${skewed.output().slice(-2000)}`);
      }
      await new Promise((r) => setTimeout(r, 200));
    }

    // Soft: each of these fails on its own when hosts decide by their own clocks.
    // No job started before its run_at by the database's clock.
    const early = await pool.query(
      `SELECT j.id, j.locked_by, j.run_at, d.db_started_at FROM jobs j JOIN push_deliveries d ON d.job_id = j.id
        WHERE d.db_started_at < j.run_at`,
    );
    expect.soft(early.rows).toEqual([]);
    // Every job ran once: one attempt, no history of a failed, reaped or interrupted attempt, one push per job.
    expect
      .soft(await count(`SELECT count(*)::int AS n FROM jobs WHERE kind = $1 AND attempts = 1`, [SEND_NOTIFICATION]))
      .toBe(SLOW + LATER);
    expect.soft((await pool.query(`SELECT job_id, outcome, worker FROM job_runs`)).rows).toEqual([]);
    expect.soft(await count(`SELECT count(*)::int AS n FROM push_deliveries WHERE status = 'sent' AND attempts = 1`)).toBe(SLOW + LATER);
    expect.soft(await count(`SELECT count(*)::int AS n FROM simulated_pushes`)).toBe(SLOW + LATER);
    expect.soft(await count(`SELECT count(DISTINCT push_token)::int AS n FROM simulated_pushes`)).toBe(SLOW + LATER);
    // Both workers ran notifications (the skewed one's reaper ran while the other held leases).
    for (const w of [onTime, skewed]) {
      expect
        .soft(await count(`SELECT count(*)::int AS n FROM jobs WHERE kind = $1 AND locked_by LIKE $2`, [SEND_NOTIFICATION, tag(w)]))
        .toBeGreaterThan(0);
    }
  }, 180_000);
});
