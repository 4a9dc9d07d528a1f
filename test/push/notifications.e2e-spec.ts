import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DataSource } from 'typeorm';
import { FixedClock } from '@nudge/config';
import { withTransaction } from '@nudge/database';
import { collapseIdFor, NotificationsService } from '@nudge/push';
import { createTestDatabase, type TestDatabase } from '../support/database.js';
import { eventually, startTestApi, type TestApi } from '../support/api-app.js';
import { alternatingDevices, makeUser } from '../factories/user.js';
import { simulatedPushesTo } from '../support/simulated-pushes.js';

// Event notifications and every simulated-provider path end to end: HTTP in,
// the real worker in the same process, a real PostgreSQL, the simulated
// provider, and a pinned clock. Every clock move stays within one UTC day, so
// the daily token_cleanup (scheduled at boot for the day) does not run again
// and remove the deactivated devices this file asserts on.

interface JobRow {
  id: string;
  status: string;
  run_at: Date;
  attempts: number;
  max_attempts: number;
  last_error: string | null;
  payload: Record<string, unknown>;
}

const START = '2026-03-02T00:10:00Z';

describe('push delivery end to end', () => {
  let db: TestDatabase;
  let api: TestApi;
  let ops: string;

  beforeAll(async () => {
    db = await createTestDatabase();
    api = await startTestApi({ databaseUrl: db.url, clock: new FixedClock(START), worker: { pollIntervalMs: 20 } });
    ops = await api.token('backend', ['ops']);
  });
  afterAll(async () => {
    await api?.close();
    await db?.drop();
  });

  const user = (id: string, tokens: string[], profile: Record<string, unknown> = { timeZone: 'UTC' }) =>
    makeUser(api, id, profile, alternatingDevices(id, tokens));

  let keys = 0;
  async function notify(body: Record<string, unknown>): Promise<string> {
    const res = await api.request('POST', '/v1/notifications', {
      token: ops,
      body: { title: 'Hello', idempotencyKey: `event-${++keys}`, ...body },
    });
    expect(res.status, JSON.stringify(res.body)).toBe(202);
    return res.body.jobId;
  }

  const jobRow = async (id: string) => (await db.pool.query<JobRow>(`SELECT * FROM jobs WHERE id = $1`, [id])).rows[0]!;

  /** Waits until the worker has run the job once more than `before` shows (a retry, a snooze or the end). */
  async function ran(id: string, before?: JobRow): Promise<JobRow> {
    return eventually(async () => {
      const row = await jobRow(id);
      if (row.status === 'running') return undefined;
      if (!before) return row.status !== 'queued' || row.attempts > 0 || row.run_at.getTime() > api.clock.now().getTime() ? row : undefined;
      return row.status !== 'queued' || row.attempts !== before.attempts || row.run_at.getTime() !== before.run_at.getTime()
        ? row
        : undefined;
    }, `job ${id} to run`);
  }

  /** Moves the clock to the job's run_at and waits for that run. */
  async function retry(row: JobRow): Promise<JobRow> {
    api.clock.set(row.run_at);
    return ran(row.id, row);
  }

  const pushesTo = (token: string) =>
    simulatedPushesTo<{ collapse_id: string; title: string; outcome: string }>(db.pool, token, 'collapse_id, title, outcome');

  const ledger = async (jobId: string) =>
    (
      await db.pool.query<{ status: string; skip_reason: string | null; error: string | null; token: string | null }>(
        `SELECT pd.status, pd.skip_reason, pd.error, d.push_token AS token
         FROM push_deliveries pd LEFT JOIN devices d ON d.id = pd.device_id WHERE pd.job_id = $1 ORDER BY d.push_token`,
        [jobId],
      )
    ).rows;

  it('says at boot that both platforms use the simulated provider', () => {
    expect(api.logs.text).toContain(
      'push: iOS simulated (APNS_KEY_FILE, APNS_KEY_ID, APNS_TEAM_ID, APNS_TOPIC not set); Android simulated (FCM_SERVICE_ACCOUNT_FILE not set)',
    );
  });

  describe('POST /v1/notifications', () => {
    it('queues a send_notification job (202) that delivers the push with its deep-link data, collapsing on its key', async () => {
      await user('n-basic', ['sim-n-basic']);
      const jobId = await notify({
        userId: 'n-basic',
        title: 'Shipped',
        body: 'Thursday',
        data: { url: 'app://orders/7' },
        idempotencyKey: 'order-7-shipped',
      });
      expect((await ran(jobId)).status).toBe('succeeded');
      const [push] = await pushesTo('sim-n-basic');
      // The idempotency key, not the job, names the push: `notification:<key>`.
      expect(push).toEqual({ collapse_id: collapseIdFor('notification:order-7-shipped'), title: 'Shipped', outcome: 'sent' });
      expect(push!.collapse_id).not.toBe(collapseIdFor(jobId));
      const { rows: ledgerIds } = await db.pool.query(`SELECT collapse_id FROM push_deliveries WHERE job_id = $1`, [jobId]);
      expect(ledgerIds).toEqual([{ collapse_id: 'nudge:notification:order-7-shipped' }]);
      const { rows } = await db.pool.query(`SELECT body, data FROM simulated_pushes WHERE push_token = 'sim-n-basic'`);
      expect(rows[0]).toEqual({ body: 'Thursday', data: { url: 'app://orders/7' } });
      expect(await ledger(jobId)).toEqual([{ status: 'sent', skip_reason: null, error: null, token: 'sim-n-basic' }]);
    });

    it('makes one job for the same idempotencyKey, even sent twice at once, and 409 for another body with it', async () => {
      await user('n-idem', ['sim-n-idem']);
      const body = { userId: 'n-idem', title: 'Once', idempotencyKey: 'order-1-shipped' };
      const [a, b] = await Promise.all([
        api.request('POST', '/v1/notifications', { token: ops, body }),
        api.request('POST', '/v1/notifications', { token: ops, body }),
      ]);
      expect([a.status, b.status]).toEqual([202, 202]);
      expect(b.body.jobId).toBe(a.body.jobId);
      await ran(a.body.jobId);
      const again = await api.request('POST', '/v1/notifications', { token: ops, body });
      expect(again).toMatchObject({ status: 202, body: { jobId: a.body.jobId } });
      const { rows } = await db.pool.query(`SELECT count(*)::int AS n FROM jobs WHERE idempotency_key = 'notification:order-1-shipped'`);
      expect(rows[0].n).toBe(1);
      expect(await pushesTo('sim-n-idem')).toHaveLength(1);
      const other = await api.request('POST', '/v1/notifications', { token: ops, body: { ...body, title: 'Twice' } });
      expect(other.status).toBe(409);
    });

    it.each([
      ['idempotencyKey', { userId: 'x', title: 't' }],
      ['userId', { title: 't', idempotencyKey: 'k-user' }],
      ['title', { userId: 'x', title: '', idempotencyKey: 'k-title' }],
      ['timeSensitive', { userId: 'x', title: 't', idempotencyKey: 'k-ts', timeSensitive: 'yes' }],
      ['data', { userId: 'x', title: 't', idempotencyKey: 'k-data', data: { blob: 'x'.repeat(4100) } }],
      ['body', { userId: 'x', title: 't', idempotencyKey: 'k-body', body: '€'.repeat(1500) }],
    ])('refuses a bad or oversized %s with a 400 naming it, and queues nothing', async (field, body) => {
      const count = async () => (await db.pool.query(`SELECT count(*)::int AS n FROM jobs WHERE kind = 'send_notification'`)).rows[0].n;
      const before = await count();
      const res = await api.request('POST', '/v1/notifications', { token: ops, body });
      expect(res.status).toBe(400);
      expect(res.headers.get('content-type')).toMatch(/problem\+json/);
      expect([...new Set(res.body.errors.map((e: { path: string }) => e.path))]).toEqual([field]);
      if (field === 'data' || field === 'body') expect(res.body.errors[0].message).toMatch(/over the 4096-byte limit/);
      expect(await count()).toBe(before);
    });

    it('is for ops tokens only: 403 for a user token, 401 without one', async () => {
      const body = { userId: 'x', title: 't', idempotencyKey: 'k-auth' };
      expect((await api.request('POST', '/v1/notifications', { token: await api.token('x'), body })).status).toBe(403);
      expect((await api.request('POST', '/v1/notifications', { body })).status).toBe(401);
    });

    it('accepts an unknown user (202): the job records skipped, no_device', async () => {
      const jobId = await notify({ userId: 'nobody-here' });
      expect((await ran(jobId)).status).toBe('succeeded');
      const { rows } = await db.pool.query(`SELECT user_id, device_id, status, skip_reason FROM push_deliveries WHERE job_id = $1`, [
        jobId,
      ]);
      expect(rows).toEqual([{ user_id: 'nobody-here', device_id: null, status: 'skipped', skip_reason: 'no_device' }]);
    });

    it('skips a user who turned notifications off (disabled), time sensitive or not', async () => {
      await user('n-off', ['sim-n-off'], { timeZone: 'UTC', notificationsEnabled: false });
      for (const timeSensitive of [false, true]) {
        const jobId = await notify({ userId: 'n-off', timeSensitive });
        expect((await ran(jobId)).status).toBe('succeeded');
        expect(await ledger(jobId)).toEqual([{ status: 'skipped', skip_reason: 'disabled', error: null, token: 'sim-n-off' }]);
      }
      expect(await pushesTo('sim-n-off')).toEqual([]);
    });
  });

  describe('NotificationsService.notify in the caller’s transaction', () => {
    it('commits or rolls back with a pg transaction and with a TypeORM EntityManager', async () => {
      const service = api.app.get(NotificationsService);
      const input = (key: string) => ({ userId: 'n-tx', title: 'Domain event', idempotencyKey: key });
      const exists = async (key: string) =>
        (await db.pool.query(`SELECT 1 FROM jobs WHERE idempotency_key = $1`, [`notification:${key}`])).rowCount === 1;

      await withTransaction(db.pool, (tx) => service.notify(tx, input('tx-pg-commit')));
      await expect(
        withTransaction(db.pool, async (tx) => {
          await service.notify(tx, input('tx-pg-rollback'));
          throw new Error('the domain change failed');
        }),
      ).rejects.toThrow('the domain change failed');

      const dataSource = api.app.get(DataSource);
      await dataSource.transaction((manager) => service.notify(manager, input('tx-orm-commit')));
      await expect(
        dataSource.transaction(async (manager) => {
          await service.notify(manager, input('tx-orm-rollback'));
          throw new Error('rolled back');
        }),
      ).rejects.toThrow('rolled back');

      expect(await Promise.all(['tx-pg-commit', 'tx-pg-rollback', 'tx-orm-commit', 'tx-orm-rollback'].map(exists))).toEqual([
        true,
        false,
        true,
        false,
      ]);
    });
  });

  describe('the simulated provider paths, through the queue', () => {
    it('sim-invalid-: deactivates the device, and later notifications skip it', async () => {
      const bearer = await user('n-invalid', ['sim-invalid-n1', 'sim-n-invalid-ok']);
      const first = await notify({ userId: 'n-invalid' });
      expect((await ran(first)).status).toBe('succeeded');
      expect(await ledger(first)).toEqual([
        { status: 'invalid_token', skip_reason: null, error: 'simulated: token is not registered', token: 'sim-invalid-n1' },
        { status: 'sent', skip_reason: null, error: null, token: 'sim-n-invalid-ok' },
      ]);
      const devices = (await api.request('GET', '/v1/me/devices', { token: bearer })).body.devices;
      expect(devices.find((d: { installationId: string }) => d.installationId === 'n-invalid-0')).toMatchObject({
        active: false,
        deactivatedReason: 'invalid_token: simulated: token is not registered',
      });

      const second = await notify({ userId: 'n-invalid', title: 'Again' });
      expect((await ran(second)).status).toBe('succeeded');
      expect((await pushesTo('sim-invalid-n1')).map((p) => p.title)).toEqual(['Hello']);
      expect((await pushesTo('sim-n-invalid-ok')).map((p) => p.title)).toEqual(['Hello', 'Again']);
      expect(await ledger(second)).toEqual([{ status: 'sent', skip_reason: null, error: null, token: 'sim-n-invalid-ok' }]);
    });

    it('sim-429-: retries exactly after the provider’s Retry-After (120 s), without another attempt’s backoff', async () => {
      await user('n-429', ['sim-429-n1']);
      const now = api.clock.now();
      const jobId = await notify({ userId: 'n-429' });
      const row = await ran(jobId);
      expect(row).toMatchObject({ status: 'queued', attempts: 1 });
      expect(row.run_at.toISOString()).toBe(new Date(now.getTime() + 120_000).toISOString());
      expect(row.last_error).toContain('simulated: 429 TooManyRequests');
      expect(await ledger(jobId)).toEqual([
        { status: 'failed', skip_reason: null, error: 'transient: simulated: 429 TooManyRequests', token: 'sim-429-n1' },
      ]);
    });

    it('sim-500-: backs off, and the job is dead after max_attempts with the provider’s error kept', async () => {
      await user('n-500', ['sim-500-n1']);
      const jobId = await notify({ userId: 'n-500' });
      let row = await ran(jobId);
      expect(row).toMatchObject({ status: 'queued', attempts: 1 });
      // 30 s·2^attempts, jittered down by at most half: 30 s to 60 s after the first attempt.
      const delay = row.run_at.getTime() - api.clock.now().getTime();
      expect(delay).toBeGreaterThanOrEqual(30_000);
      expect(delay).toBeLessThanOrEqual(60_000);
      expect(row.last_error).toContain('simulated: 500 InternalServerError');

      while (row.status === 'queued') row = await retry(row);
      expect(row).toMatchObject({ status: 'dead', attempts: row.max_attempts });
      expect(row.last_error).toContain('simulated: 500 InternalServerError');
      expect(await pushesTo('sim-500-n1')).toHaveLength(row.max_attempts);
      const detail = await api.request('GET', `/v1/ops/jobs/${jobId}`, { token: ops });
      expect(detail.body.history.at(-1)).toMatchObject({ outcome: 'dead', error: expect.stringContaining('simulated: 500') });
    });

    it('a user with five devices, one failing: four are sent exactly once, the fifth is retried alone', async () => {
      const tokens = ['sim-five-1', 'sim-five-2', 'sim-500-five-3', 'sim-five-4', 'sim-five-5'];
      await user('n-five', tokens);
      const jobId = await notify({ userId: 'n-five', idempotencyKey: 'five-devices' });
      const first = await ran(jobId);
      expect(first).toMatchObject({ status: 'queued', attempts: 1 });
      const second = await retry(first);
      expect(second).toMatchObject({ status: 'queued', attempts: 2 });

      const { rows } = await db.pool.query<{ push_token: string; n: number; collapse_ids: string[] }>(
        `SELECT push_token, count(*)::int AS n, array_agg(DISTINCT collapse_id) AS collapse_ids
           FROM simulated_pushes WHERE push_token = ANY($1) GROUP BY push_token ORDER BY push_token`,
        [tokens],
      );
      // Every push of the notification, retries included, carries the collapse id of its key.
      const key = [collapseIdFor('notification:five-devices')];
      expect(rows).toEqual([
        { push_token: 'sim-500-five-3', n: 2, collapse_ids: key },
        { push_token: 'sim-five-1', n: 1, collapse_ids: key },
        { push_token: 'sim-five-2', n: 1, collapse_ids: key },
        { push_token: 'sim-five-4', n: 1, collapse_ids: key },
        { push_token: 'sim-five-5', n: 1, collapse_ids: key },
      ]);
      expect((await ledger(jobId)).map((l) => `${l.token}:${l.status}`)).toEqual([
        'sim-500-five-3:failed',
        'sim-five-1:sent',
        'sim-five-2:sent',
        'sim-five-4:sent',
        'sim-five-5:sent',
      ]);
    });

    it('sim-slow-: waits for the slow answer (2 s), then records it sent', async () => {
      await user('n-slow', ['sim-slow-n1']);
      const started = performance.now();
      const jobId = await notify({ userId: 'n-slow' });
      expect((await ran(jobId)).status).toBe('succeeded');
      expect(performance.now() - started).toBeGreaterThanOrEqual(1_900);
      expect(await ledger(jobId)).toEqual([{ status: 'sent', skip_reason: null, error: null, token: 'sim-slow-n1' }]);
    });

    it('sim-hang-: at SEND_NOTIFICATION_TIMEOUT_SECONDS (30 s) the provider call is aborted and the job retries with backoff; nothing was sent', async () => {
      await user('n-hang', ['sim-hang-n1']);
      const jobId = await notify({ userId: 'n-hang' });
      // The ledger's `sending` row is written by the running handler, after its start (and timeout) were set on the
      // clock below; the job's `running` status alone is set at claim, before the handler may have started.
      await eventually(async () => ((await ledger(jobId)).some((r) => r.status === 'sending') ? true : undefined), 'the provider call');
      const startedAt = api.clock.now().getTime();
      api.clock.set(new Date(startedAt + 30_000)); // the worker checks its timeouts against the injected clock
      const row = await ran(jobId);
      expect(row).toMatchObject({ status: 'queued', attempts: 1 });
      expect(row.last_error).toMatch(/^JobTimeoutError: handler did not finish within its timeout of 30000 ms/);
      expect(row.run_at.getTime()).toBeGreaterThanOrEqual(startedAt + 30_000 + 15_000); // backoff, not at once
      expect(await ledger(jobId)).toEqual([{ status: 'sending', skip_reason: null, error: null, token: 'sim-hang-n1' }]);
      expect((await db.pool.query(`SELECT count(*)::int AS n FROM simulated_pushes WHERE push_token = 'sim-hang-n1'`)).rows[0].n).toBe(0);
    });
  });

  describe('payload rules for reminders', () => {
    it('refuses a reminder whose push would exceed 4 KiB, on create and on update, naming the field; nothing is written', async () => {
      const bearer = await user('r-size', ['sim-r-size']);
      const reminder = { title: 'Stretch', localTime: '08:00', recurrence: 'FREQ=DAILY' };
      const count = async () =>
        (
          await db.pool.query(
            `SELECT (SELECT count(*) FROM reminders WHERE user_id = 'r-size') + (SELECT count(*) FROM jobs WHERE kind = 'send_reminder')::int AS n`,
          )
        ).rows[0].n;
      const before = await count();
      const tooBig = await api.request('POST', '/v1/reminders', { token: bearer, body: { ...reminder, data: { note: 'x'.repeat(4000) } } });
      expect(tooBig.status).toBe(400);
      expect(tooBig.body.errors).toEqual([{ path: 'data', message: expect.stringMatching(/over the 4096-byte limit/) }]);
      expect(await count()).toBe(before);

      const created = await api.request('POST', '/v1/reminders', {
        token: bearer,
        body: { ...reminder, data: { deepLink: 'app://stretch' } },
      });
      expect(created.status).toBe(201);
      const patched = await api.request('PATCH', `/v1/reminders/${created.body.id}`, {
        token: bearer,
        body: { body: '€'.repeat(1000), data: { note: 'y'.repeat(1000) } },
      });
      expect(patched.status).toBe(400);
      expect(patched.body.errors.map((e: { path: string }) => e.path)).toEqual(['body']);
      const after = await api.request('GET', `/v1/reminders/${created.body.id}`, { token: bearer });
      expect(after.body).toMatchObject({ title: 'Stretch', body: null, version: 1, data: { deepLink: 'app://stretch' } });
    });
  });

  describe('quiet hours', () => {
    // Last in the file: it moves the clock to the end of the quiet hours.
    it('defer a notification until they end, unless it is time sensitive', async () => {
      // 00:10 UTC is 01:10 in Berlin: inside 22:00–07:00, which ends at 06:00 UTC.
      await user('n-quiet', ['sim-n-quiet'], { timeZone: 'Europe/Berlin', quietHours: { start: '22:00', end: '07:00' } });
      api.clock.set('2026-03-02T03:00:00Z');
      const normal = await notify({ userId: 'n-quiet', title: 'Later' });
      const urgent = await notify({ userId: 'n-quiet', title: 'Now', timeSensitive: true });
      expect((await ran(urgent)).status).toBe('succeeded');
      const snoozed = await ran(normal);
      expect(snoozed).toMatchObject({ status: 'queued', attempts: 0 });
      expect(snoozed.run_at.toISOString()).toBe('2026-03-02T06:00:00.000Z');
      expect((await pushesTo('sim-n-quiet')).map((p) => p.title)).toEqual(['Now']);

      expect((await retry(snoozed)).status).toBe('succeeded');
      expect((await pushesTo('sim-n-quiet')).map((p) => p.title)).toEqual(['Now', 'Later']);
    });
  });
});
