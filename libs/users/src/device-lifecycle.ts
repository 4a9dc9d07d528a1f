import { queryRows, type QueryExecutor } from '@nudge/queue';

export interface DeviceToDeactivate {
  deviceId: string;
  /** Why, as the user's device list shows it. */
  reason: string;
  /** When the token stopped working. */
  since: Date;
}

export interface EndedDevice {
  id: string;
  userId: string;
  installationId: string;
  platform: string;
}

/**
 * Turns devices off (a provider rejected their tokens), in one statement on
 * the caller's transaction. Returns those this call turned off, not those
 * already off (another job may have done it first).
 */
export async function deactivateDevices(
  executor: QueryExecutor,
  devices: readonly DeviceToDeactivate[],
  now: Date,
): Promise<(EndedDevice & { reason: string })[]> {
  if (devices.length === 0) return [];
  return queryRows(
    executor,
    `UPDATE devices d SET active = false, deactivated_reason = r.reason, deactivated_at = r.since, updated_at = $4
       FROM unnest($1::uuid[], $2::text[], $3::timestamptz[]) AS r(id, reason, since)
      WHERE d.id = r.id AND d.active
    RETURNING d.id::text, d.user_id AS "userId", d.installation_id AS "installationId", d.platform, d.deactivated_reason AS reason`,
    [devices.map((d) => d.deviceId), devices.map((d) => d.reason), devices.map((d) => d.since), now],
  );
}

/**
 * Deletes up to `limit` devices that are off or unseen since `unseenSince`,
 * skipping rows another transaction holds. `active` tells which were still
 * on (stale) rather than deactivated.
 */
export async function deleteUnusedDevices(
  executor: QueryExecutor,
  unseenSince: Date,
  limit: number,
): Promise<(EndedDevice & { active: boolean })[]> {
  // `active AND …` lets the planner use both partial indexes (devices_inactive_idx,
  // devices_cleanup_idx); the outer condition re-checks rows a PUT reactivated meanwhile.
  return queryRows(
    executor,
    `WITH doomed AS (
       SELECT id FROM devices
        WHERE NOT active OR (active AND last_seen_at < $1)
        LIMIT $2
        FOR UPDATE SKIP LOCKED
     )
     DELETE FROM devices d USING doomed
      WHERE d.id = doomed.id AND (NOT d.active OR d.last_seen_at < $1)
     RETURNING d.id, d.user_id AS "userId", d.installation_id AS "installationId", d.platform, d.active`,
    [unseenSince, limit],
  );
}
