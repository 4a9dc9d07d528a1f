import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Clock } from '@nudge/config';
import { NotificationsService } from '@nudge/push';
import { createTestDatabase, type TestDatabase } from '../support/database.js';
import { type AppProcess, startApp, WORKER_MAIN } from './processes.js';

// A wedged worker (issue 13 finding 1), with real processes as in the crash
// soak: two built worker processes, one of which runs with
// SIMULATED_PUSH_HANG=1, so every provider call it makes hangs for good, deaf
// to its signal (a call that cannot be interrupted). The wedged worker starts
// first and takes jobs; then the healthy one starts. Each job the wedged one
// started times out (SEND_NOTIFICATION_TIMEOUT_SECONDS=1), is given up after
// the grace (1 s), its lease lapses (JOB_LEASE_SECONDS=5) and a reaper (any
// worker's: reapers have a slot of their own) returns it; the wedged worker's
// notification slots stay stuck, so it claims no more and gives back what it
// had buffered. Every job must end, delivered once, by the healthy worker.

const N = 40;
const LEASE_SECONDS = 5;
const TIMEOUT_SECONDS = 1;
const GRACE_SECONDS = 1;
const REAP_EVERY_SECONDS = 5; // the worker's default: a third of the lease, at least 5 s

describe('wedged worker', () => {
  let db: TestDatabase;
  const workers: AppProcess[] = [];

  beforeAll(async () => {
    db = await createTestDatabase();
  });
  afterAll(async () => {
    await Promise.all(workers.map((w) => w.kill('SIGKILL')));
    await db?.drop();
  });

  it(`${N} notifications, two workers, one whose every provider call hangs: every job ends within timeout + grace + lease (+ a reaper period), delivered once, by the healthy worker`, async () => {
    const pool = db.pool;
    for (let i = 0; i < N; i++) {
      await pool.query(`INSERT INTO users (id, time_zone) VALUES ($1, 'UTC')`, [`wedge-${i}`]);
      await pool.query(`INSERT INTO devices (user_id, installation_id, platform, push_token) VALUES ($1, 'd0', $2, $3)`, [
        `wedge-${i}`,
        i % 2 ? 'android' : 'ios',
        `sim-ok-wedge-${i}-7f3a`,
      ]);
    }
    const env = {
      DATABASE_URL: db.url,
      SKIP_MIGRATIONS: '1',
      JOB_LEASE_SECONDS: String(LEASE_SECONDS),
      SEND_NOTIFICATION_TIMEOUT_SECONDS: String(TIMEOUT_SECONDS),
      JOB_TIMEOUT_GRACE_SECONDS: String(GRACE_SECONDS),
      NOTIFICATION_CONCURRENCY: '2',
      WORKER_CONCURRENCY: '4',
    };
    const wedged = startApp(WORKER_MAIN, { ...env, SIMULATED_PUSH_HANG: '1' });
    workers.push(wedged);
    await wedged.waitFor('Nudge worker started');

    const clock = { now: () => new Date() } as Clock;
    const notifications = new NotificationsService(pool, clock);
    for (let k = 0; k < N; k++) {
      await notifications.notify(pool, { userId: `wedge-${k}`, title: `Event ${k}`, idempotencyKey: `wedge-${k}` });
    }
    const wedgedTag = `%:${wedged.child.pid}:%`;
    const count = async (sql: string, params: unknown[] = []) => (await pool.query<{ n: number }>(sql, params)).rows[0]!.n;
    // The wedged worker has taken jobs (and started them) before the healthy one exists.
    const deadline = Date.now() + 20_000;
    while ((await count(`SELECT count(*)::int AS n FROM push_deliveries WHERE status = 'sending'`)) < 2) {
      if (Date.now() > deadline) throw new Error(`the wedged worker started no job:\n${wedged.output().slice(-2000)}`);
      await new Promise((r) => setTimeout(r, 50));
    }

    const healthy = startApp(WORKER_MAIN, env);
    workers.push(healthy);
    await healthy.waitFor('Nudge worker started');
    const bound = (TIMEOUT_SECONDS + GRACE_SECONDS + LEASE_SECONDS + REAP_EVERY_SECONDS) * 1000;
    const end = Date.now() + bound + 30_000;
    while ((await count(`SELECT count(*)::int AS n FROM jobs WHERE kind = 'send_notification' AND status <> 'succeeded'`)) > 0) {
      if (Date.now() > end) {
        const { rows } = await pool.query(
          `SELECT id, status, attempts, locked_by, last_error FROM jobs WHERE kind = 'send_notification' AND status <> 'succeeded'`,
        );
        throw new Error(`jobs unfinished: ${JSON.stringify(rows)}\n${wedged.output().slice(-2000)}`);
      }
      await new Promise((r) => setTimeout(r, 100));
    }

    // Every job succeeded, and the successful attempt was the healthy worker's.
    const { rows: jobs } = await pool.query<{ id: string; locked_by: string; attempts: number; took_ms: number }>(
      `SELECT id::text, locked_by, attempts, extract(epoch FROM finished_at - created_at) * 1000 AS took_ms
         FROM jobs WHERE kind = 'send_notification' ORDER BY id`,
    );
    expect(jobs).toHaveLength(N);
    expect(jobs.filter((j) => !j.locked_by.includes(`:${healthy.child.pid}:`))).toEqual([]);

    // The wedged worker did take jobs: each ran once there, timed out, was given up and came back through the reaper.
    const givenUp = await pool.query<{ job_id: string }>(
      `SELECT job_id::text FROM job_runs WHERE outcome = 'lease_expired' AND worker LIKE $1`,
      [wedgedTag],
    );
    expect(givenUp.rows.length).toBeGreaterThanOrEqual(2);
    expect(givenUp.rows.length).toBeLessThanOrEqual(2); // its two notification slots, stuck for good: it claimed no more
    expect(wedged.output()).toContain('job handler ignored its timeout');
    expect(await count(`SELECT count(*)::int AS n FROM job_runs WHERE worker LIKE $1 AND outcome <> 'lease_expired'`, [wedgedTag])).toBe(0);
    // …and they still ended within the bound from their creation (timeout + grace + lease + a reaper period, plus slack for two cores).
    const slow = jobs.filter((j) => givenUp.rows.some((r) => r.job_id === j.id) && j.took_ms > bound + 10_000);
    expect(slow).toEqual([]);

    // Nothing delivered twice: one ledger row per job, sent, and one provider call per (job, device).
    expect(await count(`SELECT count(*)::int AS n FROM push_deliveries WHERE status = 'sent'`)).toBe(N);
    expect(await count(`SELECT count(*)::int AS n FROM push_deliveries WHERE status <> 'sent'`)).toBe(0);
    expect(await count(`SELECT count(*)::int AS n FROM simulated_pushes`)).toBe(N);
    expect(await count(`SELECT count(*)::int AS n FROM (SELECT DISTINCT collapse_id, push_token FROM simulated_pushes) t`)).toBe(N);

    // The wedged worker is alive, still wedged: its two hung handlers hold their slots.
    expect(wedged.alive()).toBe(true);
  }, 120_000);
});
