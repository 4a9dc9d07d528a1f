import { DomainError } from '@nudge/config';
import type { PushPlatform } from './push-provider.js';
import { SIMULATED_TOKEN_PREFIX } from './simulated.provider.js';
import { canonicalWebPushToken, parseWebPushSubscription } from './web-subscription.js';

/**
 * A device's push token as it is stored, checked for its platform: a web
 * device's subscription is parsed and kept in one spelling (so the same
 * browser registering twice is one device); APNs and FCM tokens are opaque
 * and kept as given. A `sim-…` token is accepted on every platform (the
 * simulated provider answers it by its prefix). A 400 naming `pushToken`
 * otherwise.
 */
export function devicePushToken(platform: PushPlatform, token: string): string {
  if (token.startsWith(SIMULATED_TOKEN_PREFIX) || platform !== 'web') return token;
  const subscription = parseWebPushSubscription(token);
  if (typeof subscription === 'string') throw DomainError.invalid([{ path: 'pushToken', message: subscription }]);
  return canonicalWebPushToken(subscription);
}
