import { expect } from 'vitest';
import type { TestApi } from '../support/api-app.js';

/** A device as PUT /v1/me/devices/{installationId} takes it. */
export interface DeviceBody {
  platform: 'ios' | 'android' | 'web' | 'expo';
  pushToken: string;
  locale?: string;
  [field: string]: unknown;
}

/**
 * A user made through the API: the profile (PUT /v1/me), then each device by
 * its installation id. Returns the user's bearer token.
 */
export async function makeUser(
  api: TestApi,
  userId: string,
  profile: Record<string, unknown> = { timeZone: 'UTC' },
  devices: Record<string, DeviceBody> = {},
): Promise<string> {
  const bearer = await api.token(userId);
  const me = await api.request('PUT', '/v1/me', { token: bearer, body: profile });
  expect(me.status, JSON.stringify(me.body)).toBe(201);
  for (const [installationId, body] of Object.entries(devices)) {
    const res = await api.request('PUT', `/v1/me/devices/${installationId}`, { token: bearer, body });
    expect(res.status, JSON.stringify(res.body)).toBe(201);
  }
  return bearer;
}

/** Devices `${prefix}-0`, `${prefix}-1`, … alternating iOS and Android, with an optional locale each. */
export function alternatingDevices(prefix: string, devices: readonly (string | [string, string | null])[]): Record<string, DeviceBody> {
  return Object.fromEntries(
    devices.map((device, i) => {
      const [pushToken, locale] = typeof device === 'string' ? [device, null] : device;
      const body: DeviceBody = { platform: i % 2 === 0 ? 'ios' : 'android', pushToken, ...(locale ? { locale } : {}) };
      return [`${prefix}-${i}`, body];
    }),
  );
}
