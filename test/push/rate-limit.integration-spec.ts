import { spawn, type ChildProcess } from 'node:child_process';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { FixedClock } from '@nudge/config';
import { SEND_NOTIFICATION, type SendNotificationPayload } from '@nudge/push';
import { enqueueMany } from '@nudge/queue';
import { createTestDatabase, type TestDatabase } from '../support/database.js';
import { eventually, startTestApi, type TestApi } from '../support/api-app.js';

// NOTIFICATIONS_PER_USER_PER_HOUR: a user gets at most that many event pushes
// in a rolling hour; one more is skipped (rate_limited) when its job runs.
// First two real worker processes race for one user's notifications (each
// push takes 2 s at the simulated provider, so many are in flight at once),
// then the window and time-sensitive pushes on a pinned clock.

const T0 = new Date('2026-05-04T10:00:00Z');

describe('the hourly cap on event pushes', () => {
  let db: TestDatabase;
  const apis: TestApi[] = [];
  const children: ChildProcess[] = [];

  beforeAll(async () => {
    db = await createTestDatabase();
  });
  afterAll(async () => {
    for (const child of children) if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
    for (const api of apis) await api.close();
    await db?.drop();
  });

  const ran = new Map<string, number>();

  function startWorker(id: string, cap: number): Promise<void> {
    const child = spawn(process.execPath, ['--import', 'tsx', 'test/push/fixtures/capped-notification-worker.ts'], {
      env: { ...process.env, DATABASE_URL: db.url, NOW: T0.toISOString(), CAP: String(cap), WORKER_ID: id },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    children.push(child);
    let stderr = '';
    child.stderr!.on('data', (d) => (stderr += String(d)));
    return new Promise((resolve, reject) => {
      child.stdout!.on('data', (d) => {
        const text = String(d);
        ran.set(id, (ran.get(id) ?? 0) + (text.match(/^ran \d+$/gm)?.length ?? 0));
        if (text.includes('ready')) resolve();
      });
      child.on('exit', (code) => reject(new Error(`worker ${id} exited (${code}) before ready: ${stderr}`)));
    });
  }

  async function userWithDevice(api: TestApi, id: string, pushToken: string): Promise<void> {
    const bearer = await api.token(id);
    expect((await api.request('PUT', '/v1/me', { token: bearer, body: { timeZone: 'UTC' } })).status).toBe(201);
    expect((await api.request('PUT', '/v1/me/devices/phone', { token: bearer, body: { platform: 'ios', pushToken } })).status).toBe(201);
  }

  async function notify(api: TestApi, userId: string, key: string, extra: Record<string, unknown> = {}): Promise<string> {
    const res = await api.request('POST', '/v1/notifications', {
      token: await api.token('backend', ['ops']),
      body: { userId, title: key, idempotencyKey: key, ...extra },
    });
    expect(res.status, JSON.stringify(res.body)).toBe(202);
    return res.body.jobId;
  }

  const outcomes = async (jobIds: string[]) =>
    (
      await db.pool.query<{ id: string; status: string; skip_reason: string | null }>(
        `SELECT job_id::text AS id, status, skip_reason FROM push_deliveries WHERE job_id = ANY($1::bigint[]) ORDER BY job_id`,
        [jobIds],
      )
    ).rows;

  it('sends exactly the cap when two worker processes race for one user, and skips the rest as rate_limited', async () => {
    const api = await startTestApi({ databaseUrl: db.url, clock: new FixedClock(T0) });
    apis.push(api);
    await userWithDevice(api, 'racer', 'sim-slow-racer');
    await Promise.all([startWorker('race-a', 5), startWorker('race-b', 5)]);
    // All at once (one commit), so both processes claim some the moment they appear.
    const queued = await enqueueMany(
      db.pool,
      Array.from({ length: 16 }, (_, i) => ({
        kind: SEND_NOTIFICATION,
        payload: { userId: 'racer', title: `race-${i}`, body: null, data: null, timeSensitive: false } satisfies SendNotificationPayload,
        idempotencyKey: `notification:race-${i}`,
      })),
      { now: T0 },
    );
    const jobs = queued.map((q) => q.job.id);

    await eventually(
      async () => {
        const { rows } = await db.pool.query<{ n: number }>(
          `SELECT count(*)::int AS n FROM jobs WHERE id = ANY($1::bigint[]) AND status = 'succeeded'`,
          [jobs],
        );
        return rows[0]!.n === jobs.length;
      },
      'every job to finish',
      30_000,
    );
    const { rows: pushes } = await db.pool.query(`SELECT title FROM simulated_pushes WHERE push_token = 'sim-slow-racer'`);
    expect(pushes).toHaveLength(5);
    const ledger = await outcomes(jobs);
    expect(ledger.filter((r) => r.status === 'sent')).toHaveLength(5);
    expect(ledger.filter((r) => r.status === 'skipped' && r.skip_reason === 'rate_limited')).toHaveLength(11);
    expect(ledger).toHaveLength(16);
    // Both processes took part.
    expect(ran.get('race-a')! + ran.get('race-b')!).toBe(16);
    expect(ran.get('race-a')).toBeGreaterThan(0);
    expect(ran.get('race-b')).toBeGreaterThan(0);
  }, 60_000);

  it('counts a rolling hour; time-sensitive pushes count but are not held back; a category turned off is skipped first', async () => {
    const api = await startTestApi({
      databaseUrl: db.url,
      clock: new FixedClock('2026-05-05T09:59:00Z'),
      env: { NOTIFICATIONS_PER_USER_PER_HOUR: '2' },
      worker: { pollIntervalMs: 20 },
    });
    apis.push(api);
    await userWithDevice(api, 'roller', 'sim-roller');
    const sentTitles = async () =>
      (await db.pool.query(`SELECT title FROM simulated_pushes WHERE push_token = 'sim-roller' ORDER BY id`)).rows.map((r) => r.title);
    // The user's own reminders are neither counted nor capped.
    const own = await api.request('POST', '/v1/reminders', {
      token: await api.token('roller'),
      body: { title: 'own', localTime: '10:00' },
    });
    expect(own.status, JSON.stringify(own.body)).toBe(201);
    api.clock.set('2026-05-05T10:00:00Z');
    await eventually(async () => (await sentTitles()).includes('own'), 'the reminder');
    const done = async (jobId: string) => {
      await eventually(async () => {
        const { rows } = await db.pool.query(`SELECT status FROM jobs WHERE id = $1`, [jobId]);
        return rows[0]?.status === 'succeeded';
      }, `job ${jobId}`);
      return (await outcomes([jobId])).map((r) => r.skip_reason ?? r.status);
    };

    expect(await done(await notify(api, 'roller', 'roll-1'))).toEqual(['sent']);
    expect(await done(await notify(api, 'roller', 'roll-2'))).toEqual(['sent']);
    expect(await done(await notify(api, 'roller', 'roll-3'))).toEqual(['rate_limited']);
    api.clock.set('2026-05-05T10:30:00Z');
    // Over the cap, a time-sensitive push still goes out, and counts.
    expect(await done(await notify(api, 'roller', 'roll-urgent', { timeSensitive: true }))).toEqual(['sent']);
    // Precedence: a category turned off says so, whatever the cap.
    const bearer = await api.token('roller');
    await api.request('PUT', '/v1/me/preferences/promo', { token: bearer, body: { enabled: false } });
    expect(await done(await notify(api, 'roller', 'roll-promo', { category: 'promo' }))).toEqual(['category_disabled']);

    // An hour after the first two, they no longer count; the time-sensitive one (10:30) still does.
    api.clock.set('2026-05-05T11:00:01Z');
    expect(await done(await notify(api, 'roller', 'roll-4'))).toEqual(['sent']);
    expect(await done(await notify(api, 'roller', 'roll-5'))).toEqual(['rate_limited']);
    // A category that does not allow time-sensitive pushes makes them ordinary ones: capped like the rest.
    await api.request('PUT', '/v1/me/preferences/alerts', { token: bearer, body: { enabled: true, allowTimeSensitive: false } });
    expect(await done(await notify(api, 'roller', 'roll-alert', { category: 'alerts', timeSensitive: true }))).toEqual(['rate_limited']);
    expect(await sentTitles()).toEqual(['own', 'roll-1', 'roll-2', 'roll-urgent', 'roll-4']);
  });
});
