import type { SqlExecutor } from './push-provider.js';

export interface RejectedToken {
  deviceId: string;
  /** The provider's answer, e.g. `410 Unregistered`. */
  reason: string;
  /** When the provider says the token stopped working; else now. */
  since?: Date;
}

/**
 * Stops sending to tokens a provider rejected: the devices stay (the user's
 * list shows why) until token cleanup deletes them; re-registering the token
 * (PUT device) reactivates it. One statement.
 */
export async function deactivateRejectedDevices(db: SqlExecutor, rejected: readonly RejectedToken[], now: Date): Promise<void> {
  if (rejected.length === 0) return;
  await db.query(
    `UPDATE devices d SET active = false, deactivated_reason = r.reason, deactivated_at = r.since, updated_at = $4
       FROM unnest($1::uuid[], $2::text[], $3::timestamptz[]) AS r(id, reason, since)
      WHERE d.id = r.id AND d.active`,
    [rejected.map((r) => r.deviceId), rejected.map((r) => `invalid_token: ${r.reason}`), rejected.map((r) => r.since ?? now), now],
  );
}
