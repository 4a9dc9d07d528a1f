import { chmodSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { freePort, migrateUnderLock, startEmbeddedPostgres, type EmbeddedDatabase } from '@nudge/database';
import { signToken } from '../../apps/api/src/auth/jwt.js';
import { API_MAIN, type AppProcess, errorLines, startApp, waitForHttp, WORKER_MAIN } from './processes.js';

// PostgreSQL stops and starts again (same data, same port) while an API and
// two workers — the built apps, as separate processes — are busy. None of them
// is restarted. Every enqueue the API acknowledged is there afterwards and is
// delivered; /health/ready shows the outage and the recovery; requests during
// the outage get 503, never 500.

const SECRET = 'restart-test-secret-long-enough-for-hs256';
const USERS = 20;
const PHASE_MS = Number(process.env.RESTART_PHASE_MS ?? 3000);

describe('database restart', () => {
  let folder: string;
  let port: number;
  let server: EmbeddedDatabase | undefined;
  let url: string;
  let pool: pg.Pool;
  const apps: AppProcess[] = [];

  const startPostgres = async () => {
    server = await startEmbeddedPostgres({ dataDir: join(folder, 'data'), persistent: true, port });
  };

  beforeAll(async () => {
    folder = mkdtempSync(join(tmpdir(), 'nudge-restart-pg-'));
    chmodSync(folder, 0o755);
    port = await freePort();
    await startPostgres();
    const admin = new pg.Client({ connectionString: server!.url });
    await admin.connect();
    await admin.query('CREATE DATABASE nudge_restart');
    await admin.end();
    url = server!.url.replace(/\/postgres$/, '/nudge_restart');
    await migrateUnderLock(url);
    pool = new pg.Pool({ connectionString: url, max: 3 });
    pool.on('error', () => undefined);
  }, 120_000);

  afterAll(async () => {
    await Promise.all(apps.map((app) => app.kill('SIGKILL')));
    await pool?.end().catch(() => undefined);
    await server?.stop();
    if (folder) rmSync(folder, { recursive: true, force: true });
  });

  it('API and workers ride out a PostgreSQL restart: nothing acknowledged is lost, health reports it, no 500', async () => {
    const apiPort = await freePort();
    const common = {
      DATABASE_URL: url,
      SKIP_MIGRATIONS: '1',
      AUTH_JWT_SECRET: SECRET,
      RATE_LIMIT_PER_MINUTE: '0',
      RATE_LIMIT_PER_IP_PER_MINUTE: '0',
    };
    const api = startApp(API_MAIN, { ...common, ROLE: 'api', PORT: String(apiPort) });
    const workers = [1, 2].map(() => startApp(WORKER_MAIN, { ...common, JOB_LEASE_SECONDS: '5', WORKER_CONCURRENCY: '20' }));
    apps.push(api, ...workers);
    const base = `http://127.0.0.1:${apiPort}`;
    await waitForHttp(`${base}/health/ready`, 200);
    await Promise.all(workers.map((w) => w.waitFor('Nudge worker started')));

    const ops = await signToken(SECRET, { userId: 'backend', scopes: ['ops'] });
    const userTokens = await Promise.all(Array.from({ length: USERS }, (_, i) => signToken(SECRET, { userId: `u${i}` })));
    const call = (path: string, method: string, token: string, body?: unknown) =>
      fetch(base + path, {
        method,
        headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
        body: body === undefined ? undefined : JSON.stringify(body),
        signal: AbortSignal.timeout(15_000),
      });
    for (const [i, token] of userTokens.entries()) {
      expect((await call('/v1/me', 'PUT', token, { timeZone: 'UTC' })).status).toBe(201);
      for (let d = 0; d <= i % 2; d++) {
        expect(
          (await call(`/v1/me/devices/d${d}`, 'PUT', token, { platform: d ? 'android' : 'ios', pushToken: `sim-restart-${i}-${d}` }))
            .status,
        ).toBe(201);
      }
    }

    // Load: event notifications from a backend, reminders from users, a readiness probe.
    const acked = new Map<string, string>(); // idempotencyKey → jobId
    const reminders: string[] = [];
    const statuses: Record<string, number> = {};
    const health: number[] = [];
    const count = (status: number | string) => (statuses[status] = (statuses[status] ?? 0) + 1);
    let running = true;
    const loops = [
      (async () => {
        for (let i = 0; running; i++) {
          const key = `restart-${i}`;
          try {
            const res = await call('/v1/notifications', 'POST', ops, { userId: `u${i % USERS}`, title: `event ${i}`, idempotencyKey: key });
            count(res.status);
            if (res.status === 202) acked.set(key, ((await res.json()) as { jobId: string }).jobId);
            else await res.text();
          } catch (error) {
            count(`fetch: ${(error as Error).name}`);
          }
          await new Promise((r) => setTimeout(r, 5));
        }
      })(),
      (async () => {
        for (let i = 0; running; i++) {
          try {
            const res = await call('/v1/reminders', 'POST', userTokens[i % USERS]!, {
              title: `r${i}`,
              localTime: '23:59',
              recurrence: 'FREQ=DAILY',
            });
            count(res.status);
            if (res.status === 201) reminders.push(((await res.json()) as { id: string }).id);
            else await res.text();
          } catch (error) {
            count(`fetch: ${(error as Error).name}`);
          }
          await new Promise((r) => setTimeout(r, 20));
        }
      })(),
      (async () => {
        while (running) {
          try {
            const res = await fetch(`${base}/health/ready`, { signal: AbortSignal.timeout(5000) });
            await res.text();
            if (health.at(-1) !== res.status) health.push(res.status);
          } catch {
            if (health.at(-1) !== 0) health.push(0);
          }
          await new Promise((r) => setTimeout(r, 50));
        }
      })(),
    ];

    await new Promise((r) => setTimeout(r, PHASE_MS));
    const beforeStop = acked.size;
    await server!.stop();
    server = undefined;
    const stoppedAt = Date.now();
    while (!health.includes(503) && Date.now() - stoppedAt < 15_000) await new Promise((r) => setTimeout(r, 50));
    await new Promise((r) => setTimeout(r, PHASE_MS));
    const duringOutage = acked.size;
    await startPostgres();
    const restartedAt = Date.now();
    while (health.at(-1) !== 200 && Date.now() - restartedAt < 30_000) await new Promise((r) => setTimeout(r, 50));
    const recoveredMs = Date.now() - restartedAt;
    await new Promise((r) => setTimeout(r, PHASE_MS));
    running = false;
    await Promise.all(loops);
    const afterRestart = acked.size - duringOutage;

    console.log(
      JSON.stringify({ statuses, health, acknowledged: acked.size, beforeStop, afterRestart, reminders: reminders.length, recoveredMs }),
    );
    // The probe saw the outage and the recovery, in that order.
    expect(health[0]).toBe(200);
    expect(health).toContain(503);
    expect(health.at(-1)).toBe(200);
    expect(health.indexOf(503)).toBeLessThan(health.lastIndexOf(200));
    // Work was accepted before and after the restart; refusals were 503s, never 500s.
    expect(beforeStop).toBeGreaterThan(10);
    expect(afterRestart).toBeGreaterThan(10);
    expect(Object.keys(statuses).sort()).toEqual(expect.arrayContaining(['201', '202', '503']));
    expect(
      Object.keys(statuses).filter((s) => !['201', '202', '503'].includes(s)),
      api
        .output()
        .split('\n')
        .filter((line) => /"status":5\d\d|"level":50/.test(line) && !/"status":503/.test(line))
        .slice(-5)
        .join('\n'),
    ).toEqual([]);
    // Nobody was restarted.
    for (const app of apps) expect(app.alive(), app.output().slice(-2000)).toBe(true);

    // Every acknowledged enqueue exists, with its own job.
    const { rows: jobs } = await pool.query<{ id: string; key: string }>(
      `SELECT id::text, substring(idempotency_key from 14) AS key FROM jobs WHERE kind = 'send_notification'`,
    );
    const byKey = new Map(jobs.map((j) => [j.key, j.id]));
    const missing = [...acked].filter(([key, jobId]) => byKey.get(key) !== jobId);
    expect(missing).toEqual([]);
    const { rows: found } = await pool.query<{ n: number }>(`SELECT count(*)::int AS n FROM reminders WHERE id = ANY($1::uuid[])`, [
      reminders,
    ]);
    expect(found[0]!.n).toBe(reminders.length);
    // Each acknowledged reminder has its pending occurrence job.
    const { rows: pending } = await pool.query<{ n: number }>(
      `SELECT count(DISTINCT o.reminder_id)::int AS n FROM reminder_occurrences o JOIN jobs j ON j.id = o.job_id
        WHERE o.reminder_id = ANY($1::uuid[]) AND j.status = 'queued'`,
      [reminders],
    );
    expect(pending[0]!.n).toBe(reminders.length);

    // And the workers deliver all of it: every job succeeds, every device gets its push once.
    const deadline = Date.now() + 90_000;
    for (;;) {
      const { rows } = await pool.query<{ n: number }>(
        `SELECT count(*)::int AS n FROM jobs WHERE kind = 'send_notification' AND status <> 'succeeded'`,
      );
      if (rows[0]!.n === 0) break;
      if (Date.now() > deadline) {
        const { rows: left } = await pool.query(
          `SELECT status, count(*)::int AS n, min(last_error) AS err FROM jobs WHERE kind = 'send_notification' AND status <> 'succeeded' GROUP BY 1`,
        );
        throw new Error(`jobs not finished: ${JSON.stringify(left)}`);
      }
      await new Promise((r) => setTimeout(r, 250));
    }
    const { rows: undelivered } = await pool.query<{ n: number }>(
      `SELECT count(*)::int AS n FROM jobs j JOIN devices d ON d.user_id = j.payload->>'userId'
        WHERE j.kind = 'send_notification'
          AND NOT EXISTS (SELECT 1 FROM push_deliveries pd WHERE pd.job_id = j.id AND pd.device_id = d.id AND pd.status = 'sent')`,
    );
    expect(undelivered[0]!.n).toBe(0);
    const { rows: shown } = await pool.query<{ n: number }>(
      `SELECT count(*)::int AS n FROM (SELECT push_token FROM simulated_pushes GROUP BY push_token, collapse_id HAVING count(DISTINCT collapse_id) > 1) t`,
    );
    expect(shown[0]!.n).toBe(0);

    // The workers' LISTEN connections came back on their own.
    const listenDeadline = Date.now() + 15_000;
    for (;;) {
      const { rows } = await pool.query<{ n: number }>(
        `SELECT count(*)::int AS n FROM pg_stat_activity WHERE application_name = 'queue-listener' AND datname = 'nudge_restart'`,
      );
      if (rows[0]!.n === workers.length) break;
      if (Date.now() > listenDeadline) throw new Error(`${rows[0]!.n} of ${workers.length} listeners reconnected`);
      await new Promise((r) => setTimeout(r, 200));
    }
    // No crash, no stack trace: only the expected outage warnings and errors.
    for (const app of apps) {
      const unexpected = errorLines(app.output()).filter(
        (line) =>
          !/ECONNREFUSED|terminat|connection|Connection|shutting down|starting up|claim failed|could not|failed|57P0|database unavailable/.test(
            line,
          ),
      );
      expect(unexpected, unexpected.slice(0, 5).join('\n')).toEqual([]);
    }
  }, 240_000);
});
