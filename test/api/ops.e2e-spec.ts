import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { enqueue, Worker } from '@nudge/queue';
import { NUDGE_JOB_KINDS } from '../../apps/api/src/ops/job-kinds.js';
import { createTestDatabase, type TestDatabase } from '../support/database.js';
import { startTestApi, type TestApi } from '../support/api-app.js';

// The ops API over HTTP, with no worker running so that job states stay where the test puts them.
describe('ops API', () => {
  let db: TestDatabase;
  let api: TestApi;
  let ops: string;
  let dead: string;
  let queued: string;

  beforeAll(async () => {
    db = await createTestDatabase();
    api = await startTestApi({ databaseUrl: db.url });
    ops = await api.token('admin', ['ops']);
    const now = api.clock.now();
    // enqueue<string>: fixture jobs of real kinds with made-up payloads, for the queue views (they are not run as such).
    dead = (
      await enqueue<string>(db.pool, {
        kind: 'send_notification',
        payload: { title: 'hi', pushToken: 'secret-token-value' },
        idempotencyKey: 'ops-dead',
        runAt: now,
      })
    ).job.id;
    queued = (
      await enqueue<string>(db.pool, {
        kind: 'send_reminder',
        payload: { reminderId: 'r' },
        idempotencyKey: 'ops-queued',
        runAt: new Date(now.getTime() - 90_000),
      })
    ).job.id;
    await enqueue<string>(db.pool, {
      kind: 'send_reminder',
      payload: {},
      idempotencyKey: 'ops-later',
      runAt: new Date(now.getTime() + 3_600_000),
    });
    await db.pool.query(
      `UPDATE jobs SET status = 'dead', attempts = max_attempts, last_error = 'provider said no', finished_at = $2 WHERE id = $1`,
      [dead, now],
    );
  });
  afterAll(async () => {
    await api?.close();
    await db?.drop();
  });

  it('shows per-kind depth, scheduled, dead and the oldest ready age', async () => {
    const res = await api.request('GET', '/v1/ops/queue', { token: ops });
    expect(res.status).toBe(200);
    const byKind = Object.fromEntries(res.body.kinds.map((k: { kind: string }) => [k.kind, k]));
    expect(byKind.send_reminder).toMatchObject({ ready: 1, scheduled: 1, running: 0, dead: 0, oldestReadyAgeSeconds: 90 });
    expect(byKind.send_notification).toMatchObject({ ready: 0, dead: 1 });
  });

  it('lists jobs by status and kind, and shows one with its payload masked', async () => {
    const list = await api.request('GET', '/v1/ops/jobs?status=dead', { token: ops });
    expect(list.body.items.map((j: { id: string }) => j.id)).toEqual([dead]);
    const job = await api.request('GET', `/v1/ops/jobs/${dead}`, { token: ops });
    expect(job.body).toMatchObject({
      id: dead,
      status: 'dead',
      lastError: 'provider said no',
      payload: { title: 'hi', pushToken: '[masked]' },
    });
    expect(JSON.stringify(job.body)).not.toContain('secret-token-value');
    expect((await api.request('GET', '/v1/ops/jobs?status=nope', { token: ops })).status).toBe(400);
    expect((await api.request('GET', '/v1/ops/jobs/abc', { token: ops })).status).toBe(400);
    expect((await api.request('GET', '/v1/ops/jobs/999999', { token: ops })).status).toBe(404);
  });

  it('retries a dead job (attempts reset) and refuses to retry a queued one with 409', async () => {
    const retried = await api.request('POST', `/v1/ops/jobs/${dead}/retry`, { token: ops });
    expect(retried.status).toBe(200);
    expect(retried.body).toMatchObject({ status: 'queued', attempts: 0 });
    const { rows } = await db.pool.query(`SELECT status, attempts FROM jobs WHERE id = $1`, [dead]);
    expect(rows[0]).toEqual({ status: 'queued', attempts: 0 });
    const again = await api.request('POST', `/v1/ops/jobs/${dead}/retry`, { token: ops });
    expect(again.status).toBe(409);
    expect(again.body.title).toBe('Conflict');
  });

  it('cancels a queued job, and then cannot cancel it again', async () => {
    expect((await api.request('POST', `/v1/ops/jobs/${queued}/cancel`, { token: ops })).body.status).toBe('cancelled');
    expect((await api.request('POST', `/v1/ops/jobs/${queued}/cancel`, { token: ops })).status).toBe(409);
  });

  it('pauses and resumes a kind: stored, shown as paused in the queue stats', async () => {
    const paused = await api.request('POST', '/v1/ops/kinds/send_reminder/pause', { token: ops });
    expect(paused.status).toBe(200);
    expect(paused.body).toEqual({ kind: 'send_reminder', paused: true });
    expect((await api.request('POST', '/v1/ops/kinds/send_reminder/pause', { token: ops })).status).toBe(200);
    expect((await db.pool.query(`SELECT kind FROM job_kind_pauses`)).rows).toEqual([{ kind: 'send_reminder' }]);
    const stats = await api.request('GET', '/v1/ops/queue', { token: ops });
    const byKind = Object.fromEntries(stats.body.kinds.map((k: { kind: string }) => [k.kind, k]));
    expect(byKind.send_reminder.paused).toBe(true);
    expect(byKind.send_notification.paused).toBe(false);

    const resumed = await api.request('POST', '/v1/ops/kinds/send_reminder/resume', { token: ops });
    expect(resumed.body).toEqual({ kind: 'send_reminder', paused: false });
    expect((await db.pool.query(`SELECT count(*)::int AS n FROM job_kind_pauses`)).rows[0].n).toBe(0);
    expect((await api.request('POST', '/v1/ops/kinds/not%20a%20kind/pause', { token: ops })).status).toBe(400);
  });

  it('a kind no worker handles (a typo) is a 404 naming the kinds, and pauses nothing', async () => {
    const typo = await api.request('POST', '/v1/ops/kinds/send_notificaton/pause', { token: ops });
    expect(typo.status).toBe(404);
    expect(typo.body.detail).toContain('"send_notificaton"');
    expect(typo.body.detail).toContain('send_notification');
    expect((await db.pool.query(`SELECT count(*)::int AS n FROM job_kind_pauses`)).rows[0].n).toBe(0);
    expect((await api.request('POST', '/v1/ops/kinds/send_notificaton/resume', { token: ops })).status).toBe(404);
    // A pause of another kind, written before this check (or by SQL), can still be undone.
    await db.pool.query(`INSERT INTO job_kind_pauses (kind, paused_at) VALUES ('legacy_kind', now())`);
    expect((await api.request('POST', '/v1/ops/kinds/legacy_kind/resume', { token: ops })).body).toEqual({
      kind: 'legacy_kind',
      paused: false,
    });
    expect((await db.pool.query(`SELECT count(*)::int AS n FROM job_kind_pauses`)).rows[0].n).toBe(0);
  });

  it("the pausable kinds are exactly the kinds Nudge's worker handles", async () => {
    const own = await createTestDatabase(); // its worker claims nothing of this file's jobs
    const withWorker = await startTestApi({ databaseUrl: own.url, worker: {} });
    try {
      expect(withWorker.app.get(Worker).handledKinds()).toEqual([...NUDGE_JOB_KINDS].sort());
    } finally {
      await withWorker.close();
      await own.drop();
    }
  });

  it('retries every dead job of a kind at once', async () => {
    const now = api.clock.now();
    const ids: string[] = [];
    for (let i = 0; i < 3; i++) {
      ids.push((await enqueue(db.pool, { kind: 'bulk_kind', payload: {}, idempotencyKey: `ops-bulk-${i}`, runAt: now })).job.id);
    }
    await db.pool.query(`UPDATE jobs SET status = 'dead', attempts = max_attempts, finished_at = $2 WHERE id = ANY($1::bigint[])`, [
      ids.slice(0, 2),
      now,
    ]);
    const res = await api.request('POST', '/v1/ops/jobs/retry', { token: ops, body: { kind: 'bulk_kind', status: 'dead' } });
    expect(res.status).toBe(200);
    expect(res.body).toEqual({ retried: 2 });
    const { rows } = await db.pool.query(`SELECT status, attempts FROM jobs WHERE kind = 'bulk_kind' ORDER BY id`);
    expect(rows).toEqual([
      { status: 'queued', attempts: 0 },
      { status: 'queued', attempts: 0 },
      { status: 'queued', attempts: 0 },
    ]);
    expect((await api.request('POST', '/v1/ops/jobs/retry', { token: ops, body: { kind: 'bulk_kind', status: 'dead' } })).body).toEqual({
      retried: 0,
    });
    expect((await api.request('POST', '/v1/ops/jobs/retry', { token: ops, body: { kind: 'bulk_kind', status: 'queued' } })).status).toBe(
      400,
    );
    expect((await api.request('POST', '/v1/ops/jobs/retry', { token: ops, body: { status: 'dead' } })).status).toBe(400);
  });

  it('refuses user tokens (403) and no token (401)', async () => {
    const user = await api.token('alice');
    for (const path of ['/v1/ops/queue', '/v1/ops/jobs', `/v1/ops/jobs/${dead}`]) {
      expect((await api.request('GET', path, { token: user })).status).toBe(403);
      expect((await api.request('GET', path)).status).toBe(401);
    }
    expect((await api.request('POST', `/v1/ops/jobs/${dead}/retry`, { token: user })).status).toBe(403);
    for (const path of ['/v1/ops/kinds/send_reminder/pause', '/v1/ops/kinds/send_reminder/resume', '/v1/ops/jobs/retry']) {
      expect((await api.request('POST', path, { token: user, body: { kind: 'send_reminder', status: 'dead' } })).status).toBe(403);
      expect((await api.request('POST', path)).status).toBe(401);
    }
  });
});
