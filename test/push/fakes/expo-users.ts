import type pg from 'pg';
import { SEND_NOTIFICATION, type SendNotificationPayload } from '@nudge/push';
import { enqueueMany } from '@nudge/queue';

/**
 * One user per id with one Expo device (`ExponentPushToken[<id>]`), and one
 * event push queued for each: what the worker-process tests send to the fake
 * Expo. Returns the jobs' ids and the tokens, in the users' order.
 */
export async function enqueueExpoPushes(pool: pg.Pool, users: string[], title: string): Promise<{ jobIds: string[]; tokens: string[] }> {
  const tokens = users.map((u) => `ExponentPushToken[${u}]`);
  await pool.query(`INSERT INTO users (id, time_zone) SELECT unnest($1::text[]), 'UTC'`, [users]);
  await pool.query(
    `INSERT INTO devices (user_id, installation_id, platform, push_token) SELECT u, 'phone', 'expo', t FROM unnest($1::text[], $2::text[]) AS x(u, t)`,
    [users, tokens],
  );
  const queued = await enqueueMany(
    pool,
    users.map((userId) => ({
      kind: SEND_NOTIFICATION,
      payload: { userId, title, body: null, data: null, timeSensitive: false } satisfies SendNotificationPayload,
      idempotencyKey: `notification:${userId}`,
    })),
  );
  return { jobIds: queued.map((q) => q.job.id), tokens };
}
