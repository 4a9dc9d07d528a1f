import { AsyncLocalStorage } from 'node:async_hooks';
import { randomUUID } from 'node:crypto';
import { readFileSync } from 'node:fs';
import type { ClientHttp2Session, ClientHttp2Stream, IncomingHttpHeaders, OutgoingHttpHeaders } from 'node:http2';
import apn from '@parse/node-apn';
import { MAX_COLLAPSE_ID_BYTES } from './collapse-id.js';
import { buildApnsPayload, MAX_PAYLOAD_BYTES } from './payload.js';
import type { LaterOutcome, PushMessage, PushOutcome, PushProvider } from './push-provider.js';
import { parseRetryAfter } from './retry-after.js';

export interface ApnsProviderOptions {
  /** The `.p8` token key: its PEM text (`key`) or its path (`keyFile`). */
  key?: string | Buffer;
  keyFile?: string;
  keyId: string;
  teamId: string;
  /** The app's bundle id. */
  topic: string;
  /** api.push.apple.com when true, else the sandbox. */
  production?: boolean;
  /** Per request; the default is the library's 5 s. */
  requestTimeoutMs?: number;
  now?: () => Date;
  // Another endpoint than Apple's: a local fake in tests, or a relay.
  address?: string;
  port?: number;
  /** Extra trusted certificate(s) in PEM, e.g. a fake server's self-signed one. */
  ca?: string | Buffer;
  rejectUnauthorized?: boolean;
}

interface ApnsFailure {
  status?: number | string;
  response?: { reason?: string; timestamp?: number | string };
  error?: Error;
}

/** What we learn from a response that @parse/node-apn does not hand back. */
interface ResponseCapture {
  retryAfter?: string;
}

// The library's client and session, as far as we reach into them (see instrumentRetryAfter).
interface ApnClientInternals {
  connect?: () => Promise<void>;
  session?: ClientHttp2Session;
}

const INVALID_TOKEN_REASONS = new Set(['Unregistered', 'ExpiredToken', 'BadDeviceToken']);

/**
 * APNs over HTTP/2 with token authentication, through @parse/node-apn.
 *
 * The library's own retries are switched off (`connectionRetryLimit: 0`): it
 * retries 429 and 5xx immediately, without waiting, which only burns the rate
 * limit; the queue retries with backoff instead. The one retry we keep is for
 * `ExpiredProviderToken`, which a fresh JWT fixes at once.
 */
export class ApnsPushProvider implements PushProvider {
  readonly name = 'apns' as const;
  private readonly provider: apn.Provider;
  private readonly topic: string;
  private readonly now: () => Date;
  private readonly responses = new AsyncLocalStorage<ResponseCapture>();
  private closed = false;

  constructor(options: ApnsProviderOptions) {
    const key = options.key ?? (options.keyFile ? readFileSync(options.keyFile) : undefined);
    if (!key) throw new Error('ApnsPushProvider needs the .p8 key (key or keyFile)');
    this.topic = options.topic;
    this.now = options.now ?? (() => new Date());
    const providerOptions: apn.ProviderOptions = {
      token: { key, keyId: options.keyId, teamId: options.teamId },
      production: options.production ?? false,
      connectionRetryLimit: 0,
    };
    if (options.requestTimeoutMs !== undefined) providerOptions.requestTimeout = options.requestTimeoutMs;
    if (options.address !== undefined) providerOptions.address = options.address;
    if (options.port !== undefined) providerOptions.port = options.port;
    if (options.ca !== undefined) providerOptions.ca = [options.ca];
    if (options.rejectUnauthorized !== undefined) providerOptions.rejectUnauthorized = options.rejectUnauthorized;
    this.provider = new apn.Provider(providerOptions);
    this.instrumentRetryAfter();
  }

  async send(message: PushMessage): Promise<PushOutcome> {
    if (this.closed) return { kind: 'transient', reason: 'APNs provider is shut down' };
    if (message.platform !== 'ios') return { kind: 'permanent', reason: `APNs cannot deliver to ${message.platform}` };
    if (!/^[0-9a-fA-F]+$/.test(message.token)) {
      // The library would put it in the URL path as is; Apple answers BadDeviceToken to anything not hex.
      return { kind: 'invalid_token', reason: 'BadDeviceToken: not a hexadecimal APNs token' };
    }
    if (Buffer.byteLength(message.collapseId, 'utf8') > MAX_COLLAPSE_ID_BYTES) {
      return { kind: 'permanent', reason: `collapse id longer than ${MAX_COLLAPSE_ID_BYTES} bytes` };
    }

    const notification = this.notificationFor(message);
    // The body the library sends: its compile() (untyped) builds it once and caches it on the notification, so
    // measuring that string costs no second JSON.stringify per push.
    const body = (notification as unknown as { compile?: () => string }).compile?.() ?? JSON.stringify(notification.rawPayload);
    const bytes = Buffer.byteLength(body, 'utf8');
    if (bytes > MAX_PAYLOAD_BYTES) {
      return { kind: 'permanent', reason: `PayloadTooLarge: ${bytes} bytes, the limit is ${MAX_PAYLOAD_BYTES}` };
    }

    let attempt = await this.attempt(notification, message.token);
    if (attempt.failure && isExpiredProviderToken(attempt.failure)) {
      // The library has already signed a new JWT on this answer; one more try uses it.
      attempt = await this.attempt(notification, message.token);
      if (attempt.failure && isExpiredProviderToken(attempt.failure)) {
        return { kind: 'transient', reason: 'ExpiredProviderToken: rejected twice in a row; check the server clock' };
      }
    }
    if (!attempt.failure) return { kind: 'sent', providerMessageId: attempt.apnsId ?? notification.id };
    return this.classify(attempt.failure, attempt.retryAfter);
  }

  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    // The library's shutdown waits for `session.close()`'s callback, which Node
    // never calls on a session already destroyed by an error (a refused
    // connection, say): forget such a session so shutdown does not hang.
    const client = (this.provider as unknown as { client?: ApnClientInternals }).client;
    if (client?.session?.destroyed) client.session = undefined;
    await new Promise<void>((resolve) => this.provider.shutdown(() => resolve()));
  }

  private notificationFor(message: PushMessage): apn.Notification {
    const notification = new apn.Notification();
    notification.rawPayload = buildApnsPayload(message);
    notification.topic = this.topic;
    // A silent push must say `background` and priority 5, or APNs refuses it (or, at 10, the device may throttle the app).
    notification.pushType = message.silent ? 'background' : 'alert';
    notification.priority = message.silent || message.priority === 'normal' ? 5 : 10;
    notification.collapseId = message.collapseId;
    // Our own apns-id, so the message id is known even if the answer omits it.
    notification.id = randomUUID();
    if (message.expiresAt) notification.expiry = Math.max(0, Math.floor(message.expiresAt.getTime() / 1000));
    return notification;
  }

  private async attempt(
    notification: apn.Notification,
    token: string,
  ): Promise<{ failure?: ApnsFailure; apnsId?: string; retryAfter?: string }> {
    const capture: ResponseCapture = {};
    try {
      const result = await this.responses.run(capture, () => this.provider.send(notification, token));
      const failure = result.failed[0] as ApnsFailure | undefined;
      if (failure) return { failure, retryAfter: capture.retryAfter };
      const sent = result.sent[0] as { 'apns-id'?: string } | undefined;
      return { apnsId: sent?.['apns-id'] };
    } catch (error) {
      // Provider.send settles every recipient itself; this is only a safety net.
      return { failure: { error: error instanceof Error ? error : new Error(String(error)) } };
    }
  }

  private classify(failure: ApnsFailure, retryAfterHeader: string | undefined): PushOutcome {
    const status = typeof failure.status === 'number' ? failure.status : undefined;
    const reason = failure.response?.reason ?? failure.error?.message ?? 'unknown APNs failure';
    const described = status ? `${status} ${reason}` : reason;

    if (status === 410 || INVALID_TOKEN_REASONS.has(reason)) {
      const timestamp = Number(failure.response?.timestamp);
      const outcome: PushOutcome = { kind: 'invalid_token', reason: described };
      if (status === 410 && Number.isFinite(timestamp) && timestamp > 0) outcome.invalidSince = new Date(timestamp);
      return outcome;
    }
    if (status === 403 && reason === 'InvalidProviderToken') {
      // A wrong key id, team id or key: every later request would fail too, and
      // Apple throttles providers that keep presenting bad tokens. PushDelivery
      // marks APNs failing for the app, and its sends wait for new credentials
      // (or a re-check) instead of calling again (docs/apps.md).
      return { kind: 'configuration_error', reason: `${described}: APNs rejected the signing key (key id, team id or key)` };
    }
    if (status === 429 || (status !== undefined && status >= 500) || status === undefined) {
      // 429 TooManyRequests: Apple's rate limit, which slows the shared pace. No status at all: the connection failed, timed out or was reset.
      const outcome: LaterOutcome = { kind: status === 429 ? 'throttled' : 'transient', reason: described };
      const retryAfterSeconds = parseRetryAfter(retryAfterHeader, this.now());
      if (retryAfterSeconds !== undefined) outcome.retryAfterSeconds = retryAfterSeconds;
      return outcome;
    }
    if (status === 403) return { kind: 'configuration_error', reason: described };
    // 400 (BadTopic, BadCollapseId, DeviceTokenNotForTopic…), 404, 405, 413 PayloadTooLarge.
    return { kind: 'permanent', reason: described };
  }

  /**
   * @parse/node-apn reads `Retry-After` with the wrong case (HTTP/2 header
   * names are lower-case) and then deletes it before answering, so the header
   * never reaches us. We wrap the session's `request` to read it ourselves;
   * AsyncLocalStorage ties each stream to the `send` that opened it. Should a
   * future version change these internals, we only lose the header.
   */
  private instrumentRetryAfter(): void {
    const client = (this.provider as unknown as { client?: ApnClientInternals }).client;
    if (!client || typeof client.connect !== 'function') return;
    const connect = client.connect.bind(client);
    const responses = this.responses;
    const wrapped = new WeakSet<ClientHttp2Session>();
    client.connect = async () => {
      await connect();
      const session = client.session;
      if (!session || wrapped.has(session)) return;
      wrapped.add(session);
      const request = session.request.bind(session);
      session.request = ((headers?: OutgoingHttpHeaders, options?: object) => {
        const stream: ClientHttp2Stream = request(headers, options);
        const capture = responses.getStore();
        if (capture) {
          stream.once('response', (responseHeaders: IncomingHttpHeaders) => {
            const value = responseHeaders['retry-after'];
            if (value !== undefined) capture.retryAfter = Array.isArray(value) ? value[0] : String(value);
          });
        }
        return stream;
      }) as ClientHttp2Session['request'];
    };
  }
}

function isExpiredProviderToken(failure: ApnsFailure): boolean {
  return (
    Number(failure.status) === 403 &&
    (failure.error?.message === 'ExpiredProviderToken' || failure.response?.reason === 'ExpiredProviderToken')
  );
}
