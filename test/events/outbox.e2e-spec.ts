import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { withTransaction } from '@nudge/database';
import { skipScheduled, upsertOccurrences } from '../../libs/reminders/src/occurrences.repository.js';
import { createTestDatabase, type TestDatabase } from '../support/database.js';
import { eventually, startTestApi, type TestApi } from '../support/api-app.js';
import { makeUser } from '../factories/user.js';

// The outbox: each announced state change writes its event in the change's own
// transaction. Proven two ways: the event row and the changed row carry the
// same transaction id (PostgreSQL's xmin of the row against the event's
// tx_id), and a change whose event cannot be written does not happen either
// (nor does an event whose change rolls back).

interface EventRow {
  type: string;
  user_id: string | null;
  data: Record<string, any>;
  xid: string;
}

describe('events outbox', () => {
  let db: TestDatabase;
  let api: TestApi;
  let ops: string;

  beforeAll(async () => {
    db = await createTestDatabase();
    api = await startTestApi({ databaseUrl: db.url, worker: { pollIntervalMs: 20 } });
    ops = await api.token('backend', ['ops']);
  });
  afterAll(async () => {
    await api?.close();
    await db?.drop();
  });

  // The 32-bit xid of the transaction, as xmin shows it on the rows it wrote.
  const events = async (where = 'true', params: unknown[] = []): Promise<EventRow[]> =>
    (
      await db.pool.query<EventRow>(
        `SELECT type, user_id, data, (tx_id::text::numeric % 4294967296)::text AS xid FROM events WHERE ${where} ORDER BY seq`,
        params,
      )
    ).rows;

  const user = (id: string, profile: Record<string, unknown>, devices: Record<string, string>) =>
    makeUser(
      api,
      id,
      profile,
      Object.fromEntries(Object.entries(devices).map(([installation, pushToken]) => [installation, { platform: 'ios', pushToken }])),
    );

  async function notify(userId: string, key: string): Promise<string> {
    const res = await api.request('POST', '/v1/notifications', { token: ops, body: { userId, title: 'Hi', idempotencyKey: key } });
    expect(res.status).toBe(202);
    return res.body.jobId;
  }

  const jobSettled = (jobId: string) =>
    eventually(async () => {
      const { rows } = await db.pool.query(`SELECT status, attempts FROM jobs WHERE id = $1`, [jobId]);
      return rows[0] && rows[0].status !== 'running' && rows[0].attempts > 0 ? rows[0] : undefined;
    }, `job ${jobId} to run`);

  it('announces each delivery outcome and the device it deactivates, in the ledger update’s transaction', async () => {
    await user('ann', { timeZone: 'UTC' }, { ok: 'tok-ann', dead: 'sim-invalid-ann', flaky: 'sim-500-ann' });
    const jobId = await notify('ann', 'ann-1');
    await jobSettled(jobId);

    const ledger = (
      await db.pool.query(
        `SELECT d.installation_id, pd.status, pd.xmin::text AS xid FROM push_deliveries pd JOIN devices d ON d.id = pd.device_id
          WHERE pd.job_id = $1 ORDER BY d.installation_id`,
        [jobId],
      )
    ).rows;
    expect(ledger.map((r) => [r.installation_id, r.status])).toEqual([
      ['dead', 'invalid_token'],
      ['flaky', 'failed'],
      ['ok', 'sent'],
    ]);
    const ledgerXid = ledger[0].xid;
    expect(new Set(ledger.map((r) => r.xid)).size).toBe(1);
    const [device] = (await db.pool.query(`SELECT active, xmin::text AS xid FROM devices WHERE installation_id = 'dead'`)).rows;
    expect(device).toEqual({ active: false, xid: ledgerXid });

    const announced = await events(`data->>'userId' = 'ann'`);
    expect(announced.map((e) => [e.type, e.data.installationId])).toEqual(
      expect.arrayContaining([
        ['delivery.sent', 'ok'],
        ['delivery.invalid_token', 'dead'],
        ['delivery.failed', 'flaky'],
        ['device.deactivated', 'dead'],
      ]),
    );
    expect(announced).toHaveLength(4);
    for (const event of announced) {
      expect(event.xid).toBe(ledgerXid);
      expect(event.user_id).toBe('ann');
      if (event.type.startsWith('delivery.')) expect(event.data).toMatchObject({ jobId, platform: 'ios', provider: 'simulated' });
    }
    expect(announced.find((e) => e.type === 'delivery.failed')!.data).toMatchObject({
      retryable: true,
      error: expect.stringContaining('500'),
    });
    expect(announced.find((e) => e.type === 'device.deactivated')!.data.reason).toMatch(/^invalid_token: /);
  });

  it('announces a skipped notification with its reason', async () => {
    await user('quiet', { timeZone: 'UTC', notificationsEnabled: false }, { ok: 'tok-quiet' });
    const jobId = await notify('quiet', 'quiet-1');
    await jobSettled(jobId);
    const [ledger] = (await db.pool.query(`SELECT skip_reason, xmin::text AS xid FROM push_deliveries WHERE job_id = $1`, [jobId])).rows;
    expect(ledger.skip_reason).toBe('disabled');
    const announced = await events(`type = 'notification.skipped'`);
    expect(announced).toEqual([
      { type: 'notification.skipped', user_id: 'quiet', data: { jobId, userId: 'quiet', reason: 'disabled' }, xid: ledger.xid },
    ]);
  });

  it('writes nothing of a delivery whose event cannot be written: the ledger stays unconfirmed and the job retries', async () => {
    await user('strict', { timeZone: 'UTC' }, { ok: 'tok-strict' });
    await db.pool.query(`ALTER TABLE events ADD CONSTRAINT refuse_sent CHECK (type <> 'delivery.sent') NOT VALID`);
    try {
      const jobId = await notify('strict', 'strict-1');
      const job = await jobSettled(jobId);
      expect(job).toMatchObject({ status: 'queued', attempts: 1 });
      // The push went out, but its outcome, like its event, rolled back: `sending`, sent again by the retry.
      expect((await db.pool.query(`SELECT status FROM push_deliveries WHERE job_id = $1`, [jobId])).rows).toEqual([{ status: 'sending' }]);
      expect(await events(`data->>'jobId' = $1`, [jobId])).toEqual([]);
    } finally {
      await db.pool.query(`ALTER TABLE events DROP CONSTRAINT refuse_sent`);
    }
  });

  describe('occurrences', () => {
    let bearer: string;
    let reminderId: string;
    const act = (date: string, action: string, body?: unknown) =>
      api.request('POST', `/v1/reminders/${reminderId}/occurrences/${date}/${action}`, { token: bearer, body });
    const occurrenceXid = async (date: string) =>
      (
        await db.pool.query(`SELECT xmin::text AS xid FROM reminder_occurrences WHERE reminder_id = $1 AND local_date = $2`, [
          reminderId,
          date,
        ])
      ).rows[0]?.xid;

    beforeAll(async () => {
      api.clock.set('2027-10-01T12:00:00Z');
      bearer = await user('occ', { timeZone: 'UTC' }, { phone: 'tok-occ' });
      const res = await api.request('POST', '/v1/reminders', {
        token: bearer,
        body: { title: 'Walk', localTime: '18:00', recurrence: 'FREQ=DAILY' },
      });
      expect(res.status).toBe(201);
      reminderId = res.body.id;
    });

    it('done, skip and snooze are announced in the action’s transaction', async () => {
      expect((await act('2027-10-01', 'done')).status).toBe(200);
      expect((await act('2027-10-03', 'skip')).status).toBe(200);
      // 10-02 is delivered by the worker, then snoozed.
      api.clock.set('2027-10-02T18:00:00Z');
      await eventually(
        async () =>
          (
            await db.pool.query(
              `SELECT 1 FROM reminder_occurrences WHERE reminder_id = $1 AND local_date = '2027-10-02' AND status = 'sent'`,
              [reminderId],
            )
          ).rowCount,
        'the occurrence of 10-02 to be sent',
      );
      api.clock.set('2027-10-02T18:05:00Z');
      expect((await act('2027-10-02', 'snooze', { minutes: 10 })).status).toBe(200);

      const announced = await events(`type LIKE 'occurrence.%' AND data->>'reminderId' = $1`, [reminderId]);
      expect(announced.map((e) => [e.type, e.data.localDate, e.data.reason ?? e.data.snoozedUntil ?? null])).toEqual([
        ['occurrence.done', '2027-10-01', null],
        ['occurrence.skipped', '2027-10-03', 'user'],
        ['occurrence.snoozed', '2027-10-02', '2027-10-02T18:15:00.000Z'],
      ]);
      for (const event of announced) {
        expect(event.user_id).toBe('occ');
        expect(event.xid).toBe(await occurrenceXid(event.data.localDate));
      }
    });

    it('announces the skip the worker settles (stale, after an outage) in the settlement’s transaction', async () => {
      api.clock.set('2027-11-01T12:00:00Z');
      const late = await user('late', { timeZone: 'UTC' }, { phone: 'tok-late' });
      const res = await api.request('POST', '/v1/reminders', {
        token: late,
        body: { title: 'Pills', localTime: '13:00', recurrence: 'FREQ=DAILY', startDate: '2027-11-01' },
      });
      expect(res.status).toBe(201);
      const id = res.body.id;
      // The workers come back 8 hours after 13:00: more than 6 hours late, the occurrence is skipped, not sent.
      api.clock.set('2027-11-01T21:00:00Z');
      const [row] = await eventually(async () => {
        const { rows } = await db.pool.query(
          `SELECT status, reason, xmin::text AS xid FROM reminder_occurrences WHERE reminder_id = $1 AND local_date = '2027-11-01' AND status <> 'scheduled'`,
          [id],
        );
        return rows.length > 0 ? rows : undefined;
      }, 'the stale occurrence to settle');
      expect(row).toMatchObject({ status: 'skipped', reason: 'stale' });
      expect(await events(`type = 'occurrence.skipped' AND data->>'reminderId' = $1`, [id])).toEqual([
        {
          type: 'occurrence.skipped',
          user_id: 'late',
          data: { reminderId: id, userId: 'late', localDate: '2027-11-01', dueAt: '2027-11-01T13:00:00.000Z', reason: 'stale' },
          xid: row.xid,
        },
      ]);
    });

    it('announces every skip the worker or a re-plan writes, whatever its reason, and none that rolls back', async () => {
      const now = new Date('2027-10-05T00:00:00Z');
      const stale = {
        reminderId,
        localDate: '2027-09-20',
        status: 'skipped' as const,
        reason: 'stale' as const,
        dueAt: new Date('2027-09-20T18:00:00Z'),
        earliestAt: new Date('2027-09-20T18:00:00Z'),
        jobId: null,
        version: 1,
        timeZone: 'UTC',
      };
      const scheduled = { ...stale, localDate: '2027-09-21', status: 'scheduled' as const, reason: null };
      // Rolled back: neither the rows nor their events remain.
      await expect(
        withTransaction(db.pool, async (tx) => {
          await upsertOccurrences(tx, [stale, scheduled], now);
          await skipScheduled(tx, reminderId, '2027-09-21', 'disabled', now);
          throw new Error('abort');
        }),
      ).rejects.toThrow('abort');
      const skippedOf = async () =>
        (await events(`type = 'occurrence.skipped' AND data->>'localDate' LIKE '2027-09-%'`)).map((e) => [e.data.localDate, e.data.reason]);
      expect(await skippedOf()).toEqual([]);

      await withTransaction(db.pool, async (tx) => {
        await upsertOccurrences(tx, [stale, scheduled], now);
        await skipScheduled(tx, reminderId, '2027-09-21', 'disabled', now);
        // Already settled: written again, nothing changes and nothing is announced.
        await upsertOccurrences(tx, [stale], now);
        await skipScheduled(tx, reminderId, '2027-09-21', 'disabled', now);
      });
      expect(await skippedOf()).toEqual([
        ['2027-09-20', 'stale'],
        ['2027-09-21', 'disabled'],
      ]);
    });
  });

  it('announces the stale devices token cleanup removes', async () => {
    api.clock.set('2027-12-31T00:00:00Z');
    await db.pool.query(`INSERT INTO users (id, time_zone) VALUES ('gone', 'UTC')`);
    await db.pool.query(
      `INSERT INTO devices (user_id, installation_id, platform, push_token, active, last_seen_at)
       VALUES ('gone', 'old-tablet', 'android', 'tok-old', true, '2027-01-01T00:00:00Z')`,
    );
    const res = await api.request('POST', '/v1/ops/token-cleanup', { token: ops, body: { inactiveDays: 60 } });
    expect(res.status).toBe(202);
    const [event] = await eventually(async () => {
      const found = await events(`type = 'device.deactivated' AND user_id = 'gone'`);
      return found.length > 0 ? found : undefined;
    }, 'the device.deactivated event');
    expect(event!.data).toMatchObject({ installationId: 'old-tablet', platform: 'android', reason: 'stale', removed: true });
    expect((await db.pool.query(`SELECT 1 FROM devices WHERE user_id = 'gone'`)).rowCount).toBe(0);
  });
});
