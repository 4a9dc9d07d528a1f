import { DomainError } from '@nudge/config';
import { isExpoPushToken } from './expo.provider.js';
import type { PushPlatform } from './push-provider.js';
import { SIMULATED_TOKEN_PREFIX } from './simulated.provider.js';
import { canonicalWebPushToken, parseWebPushSubscription } from './web-subscription.js';

/**
 * A device's push token as it is stored, checked for its platform: a web
 * device's subscription is parsed and kept in one spelling (so the same
 * browser registering twice is one device); an Expo token must look like one
 * (`ExponentPushToken[…]`); APNs and FCM tokens are opaque and kept as given. A `sim-…` token is accepted on every platform (the
 * simulated provider answers it by its prefix). A 400 naming `pushToken`
 * otherwise.
 */
export function devicePushToken(platform: PushPlatform, token: string): string {
  if (token.startsWith(SIMULATED_TOKEN_PREFIX)) return token;
  if (platform === 'expo') {
    if (!isExpoPushToken(token)) throw invalidToken('pushToken of an expo device must be an Expo push token: ExponentPushToken[…]');
    return token;
  }
  if (platform !== 'web') return token;
  const subscription = parseWebPushSubscription(token);
  if (typeof subscription === 'string') throw invalidToken(subscription);
  return canonicalWebPushToken(subscription);
}

function invalidToken(message: string): DomainError {
  return DomainError.invalid([{ path: 'pushToken', message }]);
}
