import { spawn } from 'node:child_process';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { FixedClock } from '@nudge/config';
import { collapseIdFor } from '@nudge/push';
import { createTestDatabase, type TestDatabase } from '../support/database.js';
import { eventually, startTestApi, type TestApi } from '../support/api-app.js';

// A worker process is killed (SIGKILL) after the provider accepted a push and
// before the ledger row left `sending` (see fixtures/crash-after-send.ts). Its
// lease expires, the reaper of a healthy worker returns the job, and the retry
// sends to that device again — with the same collapse id, so the phone shows
// the push once. (That devices already `sent` are not sent again is in
// notifications.e2e-spec.ts, the five-device case.)

const T0 = new Date('2026-04-01T09:00:00Z');

describe('a crash between send and ledger update', () => {
  let db: TestDatabase;
  const apis: TestApi[] = [];

  beforeAll(async () => {
    db = await createTestDatabase();
  });
  afterAll(async () => {
    for (const api of apis) await api.close();
    await db?.drop();
  });

  function crashingWorker(): Promise<{ code: number | null; signal: NodeJS.Signals | null; stderr: string }> {
    const child = spawn(process.execPath, ['--import', 'tsx', 'test/push/fixtures/crash-after-send.ts'], {
      env: { ...process.env, DATABASE_URL: db.url, NOW: T0.toISOString() },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let stderr = '';
    child.stderr!.on('data', (d) => (stderr += String(d)));
    return new Promise((resolve) => child.on('exit', (code, signal) => resolve({ code, signal, stderr })));
  }

  it('retries the unconfirmed device with the same collapse id, so the phone shows one push', async () => {
    // No worker in this process yet: only the crashing one may take the job.
    const api = await startTestApi({ databaseUrl: db.url, clock: new FixedClock(T0) });
    apis.push(api);
    const bearer = await api.token('crash');
    expect((await api.request('PUT', '/v1/me', { token: bearer, body: { timeZone: 'UTC' } })).status).toBe(201);
    expect(
      (await api.request('PUT', '/v1/me/devices/phone', { token: bearer, body: { platform: 'ios', pushToken: 'sim-crash-phone' } })).status,
    ).toBe(201);
    const res = await api.request('POST', '/v1/notifications', {
      token: await api.token('backend', ['ops']),
      body: { userId: 'crash', title: 'Exactly once', idempotencyKey: 'crash-1' },
    });
    expect(res.status).toBe(202);
    const jobId: string = res.body.jobId;

    const exit = await crashingWorker();
    expect(exit.signal, exit.stderr).toBe('SIGKILL');
    const pushes = async () =>
      (await db.pool.query(`SELECT collapse_id, outcome FROM simulated_pushes WHERE push_token = 'sim-crash-phone' ORDER BY id`)).rows;
    // The push went out; the ledger never heard back; the job is still held by the dead worker.
    // The collapse id of the notification's idempotency key.
    expect(await pushes()).toEqual([{ collapse_id: collapseIdFor('notification:crash-1'), outcome: 'sent' }]);
    const ledgerRow = async () => (await db.pool.query(`SELECT status, attempts FROM push_deliveries WHERE job_id = $1`, [jobId])).rows;
    expect(await ledgerRow()).toEqual([{ status: 'sending', attempts: 1 }]);
    expect((await db.pool.query(`SELECT status, locked_by FROM jobs WHERE id = $1`, [jobId])).rows[0]).toEqual({
      status: 'running',
      locked_by: 'crashing-worker',
    });
    await api.close();
    apis.pop();

    // A healthy worker, after the 30 s lease: its reaper returns the job and it runs again.
    const healthy = await startTestApi({
      databaseUrl: db.url,
      clock: new FixedClock(new Date(T0.getTime() + 60_000)),
      worker: { pollIntervalMs: 20 },
    });
    apis.push(healthy);
    const job = await eventually(async () => {
      const { rows } = await db.pool.query(`SELECT status, attempts FROM jobs WHERE id = $1`, [jobId]);
      return rows[0]?.status === 'succeeded' ? rows[0] : undefined;
    }, 'the retried job');
    expect(job.attempts).toBe(2);
    const history = await healthy.request('GET', `/v1/ops/jobs/${jobId}`, { token: await healthy.token('backend', ['ops']) });
    expect(history.body.history.map((h: { outcome: string }) => h.outcome)).toEqual(['lease_expired', 'succeeded']);

    // Sent again (a crash cannot tell whether the first send arrived), with the same collapse id.
    const sent = await pushes();
    expect(sent).toHaveLength(2);
    expect(new Set(sent.map((p) => p.collapse_id)).size).toBe(1);
    expect(await ledgerRow()).toEqual([{ status: 'sent', attempts: 2 }]);
  });
});
