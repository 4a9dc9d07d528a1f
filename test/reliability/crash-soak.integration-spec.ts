import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Clock } from '@nudge/config';
import { collapseIdFor, NotificationsService } from '@nudge/push';
import { createTestDatabase, type TestDatabase } from '../support/database.js';
import { type AppProcess, startApp, WORKER_MAIN } from './processes.js';

// Crash soak (`npm run test:chaos`; CHAOS_NOTIFICATIONS=5000 for a long run).
// Three built worker processes deliver N event notifications (send_notification
// jobs, enqueued through NotificationsService.notify as POST /v1/notifications
// does) to users with 1–3 simulated devices, while one worker is killed with
// SIGKILL every few seconds and replaced.
//
// Failing devices: `sim-500-…` (transient) and `sim-429-…` (Retry-After 120 s)
// on a few users. Retries wait 30 s+ (backoff) or 120 s (Retry-After), longer
// than the soak, so once a second the test moves the run_at of queued
// send_notification jobs to now: their jobs then use up their 8 attempts and
// end `dead` — legitimately, and only they. Every other job must succeed.
//
// At the end: no job running or queued; every (job, healthy device) has one
// `sent` ledger row; no device showed two different pushes for one job (one
// collapse id per job and token, the job's own); the provider calls per
// (job, device) are reported (a kill between the send and the ledger write
// makes a second call, which the collapse id folds into one on the phone).

const N = Number(process.env.CHAOS_NOTIFICATIONS ?? 500);
const USERS = Math.max(20, Math.round(N / 5));
const KILL_EVERY_MS = Number(process.env.CHAOS_KILL_EVERY_MS ?? 2500);
const WORKERS = 3;

/** Devices of user i: 1–3, a few failing for good, some slow (so that kills land mid-send). */
function devicesOf(i: number): { installationId: string; platform: 'ios' | 'android'; token: string; failing: boolean }[] {
  return Array.from({ length: 1 + (i % 3) }, (_, d) => {
    let prefix = 'sim-ok-';
    if (d === 0 && i % 20 === 3) prefix = 'sim-500-';
    else if (d === 0 && i % 40 === 11) prefix = 'sim-429-';
    else if (d === i % 3 && i % 4 === 1) prefix = 'sim-slow-';
    return {
      installationId: `d${d}`,
      platform: d % 2 ? 'android' : 'ios',
      token: `${prefix}u${i}-d${d}-5e3a9c`,
      failing: prefix === 'sim-500-' || prefix === 'sim-429-',
    };
  });
}

describe('crash soak', () => {
  let db: TestDatabase;
  const workers: AppProcess[] = [];
  const retired: AppProcess[] = [];

  beforeAll(async () => {
    db = await createTestDatabase();
  });
  afterAll(async () => {
    await Promise.all(workers.map((w) => w.kill('SIGKILL')));
    await db?.drop();
  });

  it(
    `${N} notifications, ${WORKERS} worker processes, one SIGKILLed every ${KILL_EVERY_MS} ms: every job succeeds or is legitimately dead, each device shows each push once`,
    async () => {
      const pool = db.pool;
      // Users and devices, as PUT /v1/me and PUT /v1/me/devices leave them.
      const failingUsers = new Set<string>();
      for (let i = 0; i < USERS; i++) {
        await pool.query(`INSERT INTO users (id, time_zone) VALUES ($1, 'UTC')`, [`soak-${i}`]);
        for (const device of devicesOf(i)) {
          await pool.query(`INSERT INTO devices (user_id, installation_id, platform, push_token) VALUES ($1, $2, $3, $4)`, [
            `soak-${i}`,
            device.installationId,
            device.platform,
            device.token,
          ]);
          if (device.failing) failingUsers.add(`soak-${i}`);
        }
      }

      const env = { DATABASE_URL: db.url, SKIP_MIGRATIONS: '1', JOB_LEASE_SECONDS: '5', WORKER_CONCURRENCY: '8' };
      const spawnWorker = async () => {
        const worker = startApp(WORKER_MAIN, env);
        workers.push(worker);
        await worker.waitFor('Nudge worker started');
        return worker;
      };
      await Promise.all(Array.from({ length: WORKERS }, spawnWorker));

      const clock = { now: () => new Date() } as Clock;
      const notifications = new NotificationsService(pool, clock);
      const client = await pool.connect();
      try {
        await client.query('BEGIN');
        for (let k = 0; k < N; k++) {
          await notifications.notify(client, {
            userId: `soak-${k % USERS}`,
            title: `Event ${k}`,
            body: 'soak',
            idempotencyKey: `soak-${k}`,
          });
        }
        await client.query('COMMIT');
      } finally {
        client.release();
      }
      const started = Date.now();

      const unfinished = async () =>
        (
          await pool.query<{ n: number }>(
            `SELECT count(*)::int AS n FROM jobs WHERE kind = 'send_notification' AND status IN ('queued', 'running')`,
          )
        ).rows[0]!.n;
      let kills = 0;
      let killedMidJob = 0;
      const deadline = started + 60_000 + N * 120;
      let nextKill = Date.now() + KILL_EVERY_MS;
      for (;;) {
        // Retries are due at once (see the comment at the top).
        await pool.query(`UPDATE jobs SET run_at = now() WHERE kind = 'send_notification' AND status = 'queued' AND run_at > now()`);
        const left = await unfinished();
        if (left === 0) break;
        if (Date.now() > deadline) throw new Error(`${left} jobs unfinished after ${Date.now() - started} ms`);
        if (Date.now() >= nextKill) {
          const victim = workers.splice(kills % WORKERS, 1)[0]!;
          const pid = victim.child.pid;
          const { rows } = await pool.query<{ n: number }>(
            `SELECT count(*)::int AS n FROM jobs WHERE status = 'running' AND locked_by LIKE $1`,
            [`%:${pid}:%`],
          );
          killedMidJob += rows[0]!.n;
          await victim.kill('SIGKILL');
          retired.push(victim);
          kills++;
          await spawnWorker();
          nextKill = Date.now() + KILL_EVERY_MS;
        }
        await new Promise((r) => setTimeout(r, 200));
      }
      const elapsedMs = Date.now() - started;
      await Promise.all(workers.map((w) => w.kill('SIGTERM')));

      // Every job ended: succeeded, or dead for a user with a failing device.
      const { rows: outcomes } = await pool.query<{ user_id: string; status: string; n: number }>(
        `SELECT payload->>'userId' AS user_id, status, count(*)::int AS n FROM jobs WHERE kind = 'send_notification' GROUP BY 1, 2`,
      );
      const total = outcomes.reduce((sum, r) => sum + r.n, 0);
      expect(total).toBe(N);
      expect(outcomes.filter((r) => !['succeeded', 'dead'].includes(r.status))).toEqual([]);
      const wronglyDead = outcomes.filter((r) => r.status === 'dead' && !failingUsers.has(r.user_id));
      expect(wronglyDead).toEqual([]);
      const wronglySucceeded = outcomes.filter((r) => r.status === 'succeeded' && failingUsers.has(r.user_id));
      expect(wronglySucceeded).toEqual([]);
      expect((await pool.query(`SELECT id FROM jobs WHERE status = 'running'`)).rows).toEqual([]);

      // Every healthy device of every job: exactly one `sent` ledger row, and at least one send.
      const { rows: ledgerGaps } = await pool.query(
        `SELECT j.id, d.push_token FROM jobs j JOIN devices d ON d.user_id = j.payload->>'userId'
        WHERE j.kind = 'send_notification' AND d.push_token NOT LIKE 'sim-500-%' AND d.push_token NOT LIKE 'sim-429-%'
          AND NOT EXISTS (SELECT 1 FROM push_deliveries pd WHERE pd.job_id = j.id AND pd.device_id = d.id AND pd.status = 'sent')
        LIMIT 5`,
      );
      expect(ledgerGaps).toEqual([]);

      // What the phones saw: per (device, job) one collapse id, the notification's own (from its idempotency key); never a push for a job of another user.
      const { rows: sends } = await pool.query<{ job_id: string; push_token: string; collapse_id: string; calls: number; sent: number }>(
        `SELECT j.id::text AS job_id, s.push_token, s.collapse_id, count(*)::int AS calls, count(*) FILTER (WHERE s.outcome = 'sent')::int AS sent
         FROM simulated_pushes s
         LEFT JOIN jobs j ON j.kind = 'send_notification' AND s.collapse_id = 'nudge:' || j.idempotency_key
        GROUP BY 1, 2, 3`,
      );
      expect(sends.filter((s) => s.job_id === null)).toEqual([]);
      const keys = new Map(
        (
          await pool.query<{ id: string; key: string }>(
            `SELECT id::text, idempotency_key AS key FROM jobs WHERE kind = 'send_notification'`,
          )
        ).rows.map((r) => [r.id, r.key]),
      );
      for (const s of sends) expect(s.collapse_id).toBe(collapseIdFor(keys.get(s.job_id)!));
      const { rows: foreign } = await pool.query(
        `SELECT s.push_token, s.collapse_id FROM simulated_pushes s JOIN jobs j ON s.collapse_id = 'nudge:' || j.idempotency_key
        WHERE NOT EXISTS (SELECT 1 FROM devices d WHERE d.push_token = s.push_token AND d.user_id = j.payload->>'userId') LIMIT 5`,
      );
      expect(foreign).toEqual([]);
      const healthySends = sends.filter((s) => !/^sim-(500|429)-/.test(s.push_token));
      const histogram = (values: number[]) => values.reduce<Record<number, number>>((h, v) => ((h[v] = (h[v] ?? 0) + 1), h), {});
      const report = {
        notifications: N,
        users: USERS,
        failingUsers: failingUsers.size,
        elapsedMs,
        kills,
        jobsRunningAtKills: killedMidJob,
        jobs: Object.fromEntries(
          ['succeeded', 'dead'].map((status) => [status, outcomes.filter((r) => r.status === status).reduce((a, r) => a + r.n, 0)]),
        ),
        leaseExpiredRuns: (await pool.query<{ n: number }>(`SELECT count(*)::int AS n FROM job_runs WHERE outcome = 'lease_expired'`))
          .rows[0]!.n,
        providerCallsPerJobAndHealthyDevice: histogram(healthySends.map((s) => s.calls)),
        providerCallsPerJobAndFailingDevice: histogram(sends.filter((s) => /^sim-(500|429)-/.test(s.push_token)).map((s) => s.calls)),
      };
      console.log(`crash soak: ${JSON.stringify(report)}`);
      // Kills really happened while work was in flight, and their jobs came back through the reaper. (Not a count
      // derived from elapsedMs: each kill waits for its replacement to start, which on a loaded machine takes seconds.)
      expect(kills).toBeGreaterThan(0);
      expect(killedMidJob).toBeGreaterThan(0);
      expect(report.leaseExpiredRuns).toBeGreaterThan(0);
      // Push tokens never reach the workers' logs, whatever happened.
      for (const worker of [...retired, ...workers]) expect(worker.output()).not.toMatch(/sim-(ok|500|429|slow)-u\d+/);
    },
    120_000 + N * 200,
  );
});
