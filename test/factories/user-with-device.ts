import { expect } from 'vitest';
import type { TestApi } from '../support/api-app.js';

/** A user in `timeZone` with one device (`phone`), made through the API; returns the user's bearer token. */
export async function userWithDevice(
  api: TestApi,
  userId: string,
  device: { platform: 'ios' | 'android'; pushToken: string },
  timeZone = 'UTC',
): Promise<string> {
  const bearer = await api.token(userId);
  expect((await api.request('PUT', '/v1/me', { token: bearer, body: { timeZone } })).status).toBe(201);
  expect((await api.request('PUT', '/v1/me/devices/phone', { token: bearer, body: device })).status).toBe(201);
  return bearer;
}
