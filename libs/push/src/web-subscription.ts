// A Web Push subscription, as the browser's `PushSubscription.toJSON()` gives
// it: the push service's endpoint URL and the two keys that encrypt for this
// browser. A `web` device stores it, as JSON, in `push_token`.

export interface WebPushSubscription {
  endpoint: string;
  keys: { p256dh: string; auth: string };
}

/** Decoded sizes RFC 8291 fixes: an uncompressed P-256 point and a 16-byte secret. */
const P256DH_BYTES = 65;
const AUTH_BYTES = 16;
const BASE64URL = /^[A-Za-z0-9_-]+={0,2}$/;
/** Longest endpoint accepted: real ones are 150–400 characters. */
const MAX_ENDPOINT_LENGTH = 2048;

/**
 * Parses a `web` device's push token. Returns the subscription, or a sentence
 * that says what is wrong (for a 400 naming `pushToken`). Only `https`
 * endpoints: push services are HTTPS, and an `http` URL would send the
 * encrypted payload and our VAPID signature in clear.
 */
export function parseWebPushSubscription(token: string): WebPushSubscription | string {
  let value: unknown;
  try {
    value = JSON.parse(token);
  } catch {
    return 'pushToken of a web device must be the subscription as JSON: JSON.stringify(pushSubscription)';
  }
  if (!isRecord(value)) return 'pushToken of a web device must be a JSON object {endpoint, keys: {p256dh, auth}}';
  const { endpoint, keys } = value;
  if (typeof endpoint !== 'string' || endpoint.length > MAX_ENDPOINT_LENGTH) {
    return `pushToken.endpoint must be a URL of at most ${MAX_ENDPOINT_LENGTH} characters`;
  }
  let url: URL;
  try {
    url = new URL(endpoint);
  } catch {
    return 'pushToken.endpoint must be a URL';
  }
  if (url.protocol !== 'https:') return 'pushToken.endpoint must be an https URL';
  if (!isRecord(keys)) return 'pushToken.keys must be an object {p256dh, auth}';
  if (!isBase64UrlOfLength(keys.p256dh, P256DH_BYTES)) return `pushToken.keys.p256dh must be base64url of ${P256DH_BYTES} bytes`;
  if (!isBase64UrlOfLength(keys.auth, AUTH_BYTES)) return `pushToken.keys.auth must be base64url of ${AUTH_BYTES} bytes`;
  return { endpoint, keys: { p256dh: keys.p256dh, auth: keys.auth } };
}

/**
 * The one spelling a subscription is stored under, so that the same browser
 * registering twice (with other whitespace or key order) is one device.
 */
export function canonicalWebPushToken(subscription: WebPushSubscription): string {
  return JSON.stringify({ endpoint: subscription.endpoint, keys: { p256dh: subscription.keys.p256dh, auth: subscription.keys.auth } });
}

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

function isBase64UrlOfLength(value: unknown, bytes: number): value is string {
  return typeof value === 'string' && BASE64URL.test(value) && Buffer.from(value, 'base64url').length === bytes;
}
