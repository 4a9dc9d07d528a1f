import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { FixedClock } from '@nudge/config';
import { createTestDatabase, type TestDatabase } from '../support/database.js';
import { startTestApi, type TestApi } from '../support/api-app.js';
import { startFakeExpo, type FakeExpo } from './fakes/fake-expo.js';

// A herd of reminders (one send_reminder batch) at a pace of one Expo push a
// second: the batch sends what fits in the in-job wait, the other jobs snooze
// until their turn (no attempt used, their occurrences still scheduled) and
// are sent then. The queue runs on a pinned clock, moved along with real
// time; the pace runs on the database's clock (docs/pacing.md).

const USERS = 5;

describe('a reminder herd held back by the push pace', () => {
  let db: TestDatabase;
  let api: TestApi;
  let expo: FakeExpo;

  beforeAll(async () => {
    [db, expo] = await Promise.all([createTestDatabase(), startFakeExpo()]);
    api = await startTestApi({
      databaseUrl: db.url,
      clock: new FixedClock('2026-06-01T07:00:00Z'),
      env: { EXPO_PUSH_ENABLED: '1', EXPO_BASE_URL: expo.baseUrl, EXPO_MAX_PER_SECOND: '1' },
      worker: { pollIntervalMs: 20 },
    });
  });
  afterAll(async () => {
    await api?.close();
    await Promise.all([db?.drop(), expo?.stop()]);
  });

  it('sends every reminder once at the pace; the jobs that waited used no attempt', async () => {
    const reminders: string[] = [];
    const tokens: string[] = [];
    for (let i = 0; i < USERS; i++) {
      const bearer = await api.token(`herd-${i}`);
      const token = `ExponentPushToken[herd-${i}]`;
      tokens.push(token);
      expect((await api.request('PUT', '/v1/me', { token: bearer, body: { timeZone: 'UTC' } })).status).toBe(201);
      const device = await api.request('PUT', '/v1/me/devices/phone', { token: bearer, body: { platform: 'expo', pushToken: token } });
      expect(device.status).toBe(201);
      const created = await api.request('POST', '/v1/reminders', { token: bearer, body: { title: 'Herd', localTime: '08:00' } });
      expect(created.status, JSON.stringify(created.body)).toBe(201);
      reminders.push(created.body.id);
    }

    api.clock.set('2026-06-01T08:00:00Z');
    const occurrences = async () =>
      (
        await db.pool.query<{ status: string; job_id: string }>(
          `SELECT status, job_id::text FROM reminder_occurrences WHERE reminder_id = ANY($1::uuid[]) AND local_date = '2026-06-01'`,
          [reminders],
        )
      ).rows;
    // The pinned clock follows real time, a second at a time, so that the snoozed jobs come due as the pace refills.
    const end = Date.now() + 30_000;
    while ((await occurrences()).some((o) => o.status !== 'sent')) {
      if (Date.now() > end) throw new Error(`not all sent: ${JSON.stringify(await occurrences())}\n${api.logs.text.slice(-2000)}`);
      await new Promise((r) => setTimeout(r, 1000));
      api.clock.advance(1000);
    }

    const arrivals = expo.arrivals.filter((a) => tokens.includes(a.token));
    expect(arrivals.map((a) => a.token).sort()).toEqual([...tokens].sort());
    const times = arrivals.map((a) => a.at).sort((a, b) => a - b);
    expect((times.length - 1) / ((times.at(-1)! - times[0]!) / 1000)).toBeLessThanOrEqual(1.05);

    const jobIds = (await occurrences()).map((o) => o.job_id);
    const { rows: jobs } = await db.pool.query(`SELECT status, attempts FROM jobs WHERE id = ANY($1::bigint[])`, [jobIds]);
    expect(jobs).toEqual(Array.from({ length: USERS }, () => ({ status: 'succeeded', attempts: 1 })));
    const { rows: runs } = await db.pool.query(`SELECT outcome, error FROM job_runs WHERE job_id = ANY($1::bigint[])`, [jobIds]);
    expect(runs.length).toBeGreaterThan(0);
    expect(runs.every((r) => r.outcome === 'snoozed' && /push pacing/.test(r.error))).toBe(true);
    const { rows: ledger } = await db.pool.query(`SELECT DISTINCT status FROM push_deliveries WHERE job_id = ANY($1::bigint[])`, [jobIds]);
    expect(ledger).toEqual([{ status: 'sent' }]);
  }, 60_000);
});
