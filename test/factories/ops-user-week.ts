import { expect } from 'vitest';
import { eventually, type TestApi } from '../support/api-app.js';
import type { TestDatabase } from '../support/database.js';

// A week an operator gets asked about, made through the real API and the real
// worker (simulated provider) on a pinned clock, in Europe/Berlin (UTC+1 in March):
//
// alice, quiet hours 22:00–07:00, an iPhone that works and a tablet whose token
// the provider rejects, "Morning pill" 08:00 and "Evening stretch" 23:00 daily:
//   03-01 pill sent to the phone; the tablet answers invalid token and is deactivated
//   03-01 stretch waits out the quiet hours and is sent at 07:00 the next morning
//   03-02 pill sent; 03-03 pill marked done in advance (never delivered)
//   03-02 stretch delivered 7 hours after it was allowed: skipped, stale
//   03-03 14:00Z an event notification "Your order shipped", sent
//   then alice turns notifications off: 03-03 stretch and 03-04 pill are skipped, disabled
// frank has no device: his one-off 07:00 (UTC) reminder on 03-01 is skipped, no device
// bob's only phone answers 500: his 12:30 reminder fails and waits for its retry
// carol has 20 reminders at 08:00 (tomorrow's herd) and gets a notification on two
// devices, one of them rejected.
// The clock ends at 2027-03-04T11:30:00Z.

export const WEEK_END = '2027-03-04T11:30:00.000Z';
export const ALICE_PHONE_TOKEN = 'sim-alice-phone-token-7a1b';
export const ALICE_TABLET_TOKEN = 'sim-invalid-alice-tablet-3c4d';

/**
 * The worker settings for a week's API: no recurring jobs. The daily token cleanup
 * deletes every deactivated device (alice's tablet) once the worker's next
 * maintenance tick (every few real seconds) sees the pinned clock on 03-04 — a
 * spec that read the week more than ~20 s after building it found the tablet gone.
 */
export const OPS_USER_WEEK_WORKER = { pollIntervalMs: 20, recurring: [] };

export interface OpsUserWeek {
  ops: string;
  pill: string;
  stretch: string;
  bobReminder: string;
  notificationJob: string;
}

export async function buildOpsUserWeek(api: TestApi, db: TestDatabase): Promise<OpsUserWeek> {
  const ops = await api.token('admin', ['ops']);
  const call = async (method: string, path: string, token: string, body?: unknown, expected?: number) => {
    const res = await api.request(method, path, { token, body });
    if (expected !== undefined) expect(res.status, `${method} ${path}: ${JSON.stringify(res.body)}`).toBe(expected);
    return res.body;
  };
  const pendingJob = async (reminderId: string) => {
    const { rows } = await db.pool.query<{ id: string; run_at: Date }>(
      `SELECT j.id, j.run_at FROM reminder_jobs m JOIN jobs j ON j.id = m.job_id
        WHERE m.reminder_id = $1 AND j.status = 'queued' ORDER BY j.run_at LIMIT 1`,
      [reminderId],
    );
    expect(rows[0], `a pending job for ${reminderId}`).toBeDefined();
    return rows[0]!;
  };
  /** Moves the clock to `at` and waits until the job has left the queue (or been put back for later). */
  const runJobAt = async (job: { id: string; run_at?: Date }, at: string) => {
    api.clock.set(at);
    await eventually(async () => {
      const { rows } = await db.pool.query<{ status: string; run_at: Date; attempts: number }>(
        `SELECT status, run_at, attempts FROM jobs WHERE id = $1`,
        [job.id],
      );
      const row = rows[0];
      return row && row.status !== 'running' && (row.status !== 'queued' || row.attempts > 0) ? row : undefined;
    }, `job ${job.id} to run`);
  };
  const runReminderAt = async (reminderId: string, at?: string) => {
    const job = await pendingJob(reminderId);
    await runJobAt(job, at ?? job.run_at.toISOString());
  };

  api.clock.set('2027-03-01T06:00:00Z');
  const alice = await api.token('alice');
  await call('PUT', '/v1/me', alice, { timeZone: 'Europe/Berlin', quietHours: { start: '22:00', end: '07:00' } }, 201);
  await call('PUT', '/v1/me/devices/phone', alice, { platform: 'ios', pushToken: ALICE_PHONE_TOKEN, appVersion: '3.2.1' }, 201);
  await call('PUT', '/v1/me/devices/tablet', alice, { platform: 'android', pushToken: ALICE_TABLET_TOKEN, appVersion: '3.1.0' }, 201);
  const pill = (await call('POST', '/v1/reminders', alice, { title: 'Morning pill', localTime: '08:00', recurrence: 'FREQ=DAILY' }, 201))
    .id;
  const stretch = (
    await call('POST', '/v1/reminders', alice, { title: 'Evening stretch', localTime: '23:00', recurrence: 'FREQ=DAILY' }, 201)
  ).id;

  const frank = await api.token('frank');
  await call('PUT', '/v1/me', frank, { timeZone: 'UTC' }, 201);
  const plants = (
    await call('POST', '/v1/reminders', frank, { title: 'Water the plants', localTime: '07:00', startDate: '2027-03-01' }, 201)
  ).id;

  await runReminderAt(pill); // 03-01 07:00Z, and frank's one-off with it
  await eventually(async () => {
    const { rows } = await db.pool.query(`SELECT 1 FROM reminder_occurrences WHERE reminder_id = $1 AND status = 'skipped'`, [plants]);
    return rows.length > 0;
  }, "frank's reminder to be skipped");
  await runReminderAt(stretch); // deferred by the quiet hours to 03-02 06:00Z
  await runReminderAt(pill); // 03-02 07:00Z
  await call('POST', `/v1/reminders/${pill}/occurrences/2027-03-03/done`, alice, undefined, 200);
  await runReminderAt(stretch, '2027-03-03T13:00:00Z'); // allowed from 06:00Z: 7 hours late

  api.clock.set('2027-03-03T14:00:00Z');
  const notificationJob = (
    await call('POST', '/v1/notifications', ops, { userId: 'alice', title: 'Your order shipped', idempotencyKey: 'order-1042' }, 202)
  ).jobId;
  await runJobAt({ id: notificationJob }, '2027-03-03T14:00:00Z');

  api.clock.set('2027-03-03T15:00:00Z');
  await call('PATCH', '/v1/me', alice, { notificationsEnabled: false }, 200);
  await runReminderAt(stretch); // 03-04 06:00Z
  await runReminderAt(pill); // 03-04 07:00Z

  api.clock.set('2027-03-04T10:00:00Z');
  const bob = await api.token('bob');
  await call('PUT', '/v1/me', bob, { timeZone: 'Europe/London' }, 201);
  await call('PUT', '/v1/me/devices/phone', bob, { platform: 'android', pushToken: 'sim-500-bob-phone-token-88' }, 201);
  const bobReminder = (await call('POST', '/v1/reminders', bob, { title: 'Stand-up', localTime: '11:30', recurrence: 'FREQ=DAILY' }, 201))
    .id;

  const carol = await api.token('carol');
  await call('PUT', '/v1/me', carol, { timeZone: 'Europe/Berlin' }, 201);
  await call('PUT', '/v1/me/devices/phone', carol, { platform: 'ios', pushToken: 'sim-carol-phone-token-11' }, 201);
  await call('PUT', '/v1/me/devices/old', carol, { platform: 'android', pushToken: 'sim-invalid-carol-old-22' }, 201);
  for (let i = 1; i <= 20; i++) {
    await call('POST', '/v1/reminders', carol, { title: `Habit ${i}`, localTime: '08:00', recurrence: 'FREQ=DAILY' }, 201);
  }
  api.clock.set('2027-03-04T11:20:00Z');
  const carolNote = (
    await call('POST', '/v1/notifications', ops, { userId: 'carol', title: 'Weekly digest', idempotencyKey: 'digest-9' }, 202)
  ).jobId;
  await runJobAt({ id: carolNote }, '2027-03-04T11:20:00Z');

  await runReminderAt(bobReminder, WEEK_END); // fails: 500, waits for its retry
  return { ops, pill, stretch, bobReminder, notificationJob };
}
