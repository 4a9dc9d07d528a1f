import { createHash } from 'node:crypto';
import https from 'node:https';
import webpush, { WebPushError, type RequestOptions } from 'web-push';
import { buildWebPushPayload } from './payload.js';
import type { LaterOutcome, PushMessage, PushOutcome, PushProvider } from './push-provider.js';
import { parseRetryAfter } from './retry-after.js';
import { parseWebPushSubscription } from './web-subscription.js';

export interface WebPushProviderOptions {
  /** VAPID keys (base64url, as `web-push generate-vapid-keys` prints them) and a `mailto:` or `https:` contact. */
  vapidPublicKey: string;
  vapidPrivateKey: string;
  vapidSubject: string;
  /** Per request; the push service answers in well under a second. */
  timeoutMs?: number;
  /** The HTTPS agent (tests pass one that trusts the local fake's certificate). Default: keep-alive. */
  agent?: https.Agent;
  now?: () => Date;
}

/** Push services keep a message at most four weeks (RFC 8030 lets them cap TTL). */
const MAX_TTL_SECONDS = 28 * 24 * 3600;
/** Without an expiry, a day: a reminder is worth little after that. */
const DEFAULT_TTL_SECONDS = 24 * 3600;
/**
 * web-push signs a VAPID JWT valid 12 hours (RFC 8292 allows at most 24) from
 * the wall clock the push service checks it against; we sign again once half
 * of that is gone (elapsed time, so an injected clock pinned elsewhere cannot
 * make a JWT the service would refuse).
 */
const VAPID_REUSE_MS = 6 * 3600 * 1000;
/** Push services are a handful of origins; a bound all the same, against subscriptions naming arbitrary hosts. */
const MAX_VAPID_AUDIENCES = 64;

/**
 * Web Push (RFC 8030) with VAPID (RFC 8292) through the `web-push` package,
 * which encrypts the payload for the browser's keys (RFC 8291). The push
 * service is whatever the subscription's endpoint names (Google's, Mozilla's,
 * Apple's): there is no fixed host, so tests point the endpoint at a fake.
 */
export class WebPushProvider implements PushProvider {
  readonly name = 'webpush' as const;
  private readonly vapidDetails: NonNullable<RequestOptions['vapidDetails']>;
  /** The signed `Authorization` header per push service origin (the JWT's audience), and when it expires. */
  private readonly vapidHeaders = new Map<string, { authorization: string; signedAt: number }>();
  private readonly agent: https.Agent;
  private readonly timeoutMs: number;
  private readonly now: () => Date;
  private closed = false;

  constructor(options: WebPushProviderOptions) {
    this.vapidDetails = { subject: options.vapidSubject, publicKey: options.vapidPublicKey, privateKey: options.vapidPrivateKey };
    // Refuses malformed keys or subject now, at boot, rather than on every send.
    webpush.getVapidHeaders('https://push.example', options.vapidSubject, options.vapidPublicKey, options.vapidPrivateKey, 'aes128gcm');
    this.agent = options.agent ?? new https.Agent({ keepAlive: true });
    this.timeoutMs = options.timeoutMs ?? 10_000;
    this.now = options.now ?? (() => new Date());
  }

  async send(message: PushMessage): Promise<PushOutcome> {
    if (this.closed) return { kind: 'transient', reason: 'Web Push provider is shut down' };
    if (message.platform !== 'web') return { kind: 'permanent', reason: `Web Push provider does not deliver to ${message.platform}` };
    const subscription = parseWebPushSubscription(message.token);
    // The API refuses such tokens; one stored before that check can never work.
    if (typeof subscription === 'string') return { kind: 'invalid_token', reason: subscription };
    const payload = JSON.stringify(buildWebPushPayload(message, message.collapseId));
    try {
      const result = await webpush.sendNotification(subscription, payload, {
        // Signed here once per push service and reused: web-push would sign a new ES256 JWT for every push.
        headers: { Authorization: this.vapidAuthorization(subscription.endpoint) },
        TTL: this.ttlSeconds(message),
        // A silent push is background work: normal, as FCM and Expo send it.
        urgency: message.silent || message.priority === 'normal' ? 'normal' : 'high',
        topic: topicFor(message.collapseId),
        timeout: this.timeoutMs,
        agent: this.agent,
      });
      const location = result.headers.location;
      return { kind: 'sent', providerMessageId: typeof location === 'string' ? location : undefined };
    } catch (error) {
      return this.classify(error);
    }
  }

  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    this.agent.destroy();
  }

  private vapidAuthorization(endpoint: string): string {
    const audience = new URL(endpoint).origin;
    const cached = this.vapidHeaders.get(audience);
    if (cached && performance.now() - cached.signedAt < VAPID_REUSE_MS) return cached.authorization;
    const { subject, publicKey, privateKey } = this.vapidDetails;
    const { Authorization } = webpush.getVapidHeaders(audience, subject, publicKey, privateKey, 'aes128gcm');
    if (this.vapidHeaders.size >= MAX_VAPID_AUDIENCES) this.vapidHeaders.clear();
    this.vapidHeaders.set(audience, { authorization: Authorization, signedAt: performance.now() });
    return Authorization;
  }

  private ttlSeconds(message: PushMessage): number {
    if (!message.expiresAt) return DEFAULT_TTL_SECONDS;
    const seconds = Math.floor((message.expiresAt.getTime() - this.now().getTime()) / 1000);
    return Math.min(MAX_TTL_SECONDS, Math.max(0, seconds));
  }

  private classify(error: unknown): PushOutcome {
    if (!(error instanceof WebPushError)) {
      // No answer: refused, reset or timed out connection.
      return { kind: 'transient', reason: error instanceof Error ? error.message : String(error) };
    }
    const status = error.statusCode;
    const described = `${status} ${firstLine(error.body)}`.trim();
    // 404 Not Found / 410 Gone: the subscription expired or the user revoked permission.
    if (status === 404 || status === 410) return { kind: 'invalid_token', reason: described };
    if (status === 429 || status >= 500) {
      // 429: the push service's rate limit, which slows the shared pace.
      const outcome: LaterOutcome = { kind: status === 429 ? 'throttled' : 'transient', reason: described };
      const retryAfterSeconds = parseRetryAfter(error.headers['retry-after'], this.now());
      if (retryAfterSeconds !== undefined) outcome.retryAfterSeconds = retryAfterSeconds;
      return outcome;
    }
    // 401/403: the push service does not accept our VAPID signature or key (rotated keys, wrong subject).
    if (status === 401 || status === 403) return { kind: 'configuration_error', reason: described };
    // 400 malformed, 413 payload too large: this message will never be accepted.
    return { kind: 'permanent', reason: described };
  }
}

/**
 * The `Topic` header (RFC 8030 §5.4): a newer message with the same topic
 * replaces an undelivered older one, as the collapse id does on APNs. At most
 * 32 characters of the base64url alphabet, so a digest of the collapse id.
 */
export function topicFor(collapseId: string): string {
  return createHash('sha256').update(collapseId).digest('base64url').slice(0, 32);
}

function firstLine(body: string | undefined): string {
  return (body ?? '').split('\n')[0]!.slice(0, 200);
}
