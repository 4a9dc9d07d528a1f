import type { NewEvent } from '@nudge/events';
import { deactivateDevices } from '@nudge/users';
import type { QueryExecutor } from '@nudge/queue';

export interface RejectedToken {
  deviceId: string;
  /** The provider's answer, e.g. `410 Unregistered`. */
  reason: string;
  /** When the provider says the token stopped working; else now. */
  since?: Date;
}

export interface DeactivatedDevice {
  id: string;
  userId: string;
  installationId: string;
  platform: string;
  reason: string;
}

/**
 * Stops sending to tokens a provider rejected: the devices stay (the user's
 * list shows why) until token cleanup deletes them; re-registering the token
 * (PUT device) reactivates it. One statement, on the caller's transaction.
 * Returns the devices this call turned off — not those already off (another
 * job may have done it first) — each with its `device.deactivated` event to
 * record in the same transaction.
 */
export async function deactivateRejectedDevices(
  tx: QueryExecutor,
  rejected: readonly RejectedToken[],
  now: Date,
): Promise<{ devices: DeactivatedDevice[]; events: NewEvent[] }> {
  if (rejected.length === 0) return { devices: [], events: [] };
  const devices: DeactivatedDevice[] = await deactivateDevices(
    tx,
    rejected.map((r) => ({ deviceId: r.deviceId, reason: `invalid_token: ${r.reason}`, since: r.since ?? now })),
    now,
  );
  const events: NewEvent[] = devices.map((d) => ({
    type: 'device.deactivated',
    userId: d.userId,
    data: { userId: d.userId, deviceId: d.id, installationId: d.installationId, platform: d.platform, reason: d.reason },
  }));
  return { devices, events };
}
