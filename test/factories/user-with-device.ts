import type { TestApi } from '../support/api-app.js';
import { makeUser } from './user.js';

/** A user in `timeZone` with one device (`phone`), made through the API; returns the user's bearer token. */
export function userWithDevice(
  api: TestApi,
  userId: string,
  device: { platform: 'ios' | 'android'; pushToken: string },
  timeZone = 'UTC',
): Promise<string> {
  return makeUser(api, userId, { timeZone }, { phone: device });
}
