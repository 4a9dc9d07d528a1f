import { AsyncLocalStorage } from 'node:async_hooks';
import { randomUUID } from 'node:crypto';
import type { ClientRequest, IncomingMessage } from 'node:http';
import https from 'node:https';
import type { Duplex } from 'node:stream';
import { cert, deleteApp, initializeApp, type App, type Credential } from 'firebase-admin/app';
import { getMessaging, type Messaging } from 'firebase-admin/messaging';
import { buildFcmMessage } from './payload.js';
import type { LaterOutcome, PushMessage, PushOutcome, PushProvider } from './push-provider.js';
import { parseRetryAfter } from './retry-after.js';

/** Opens the connection for a request to fcm.googleapis.com:443 (`options.host`, `options.port`). */
export type FcmConnect = (options: https.RequestOptions) => Duplex;

export interface FcmProviderOptions {
  /** Path of the Firebase service-account JSON; it also names the project. */
  serviceAccountFile?: string;
  /** Instead of the file: its parsed contents (an app's credentials). */
  serviceAccount?: { project_id: string; client_email: string; private_key: string };
  /** Instead of a service-account file: any firebase-admin credential (tests use a fixed access token). */
  credential?: Credential;
  /** Required with `credential`; read from the service-account file otherwise. */
  projectId?: string;
  /**
   * Replaces the TCP/TLS connection firebase-admin opens to FCM. firebase-admin
   * has no endpoint setting; this is how tests reach a local fake (and how a
   * deployment could route through a relay). Unset: a direct connection.
   */
  connect?: FcmConnect;
  now?: () => Date;
}

/** What we learn from the HTTP response that firebase-admin's error does not carry. */
interface ResponseCapture {
  status?: number;
  retryAfter?: string;
}

interface FirebaseLikeError {
  code?: string;
  message?: string;
}

/**
 * The https.Agent firebase-admin sends through (its documented `httpAgent`
 * option). Besides the optional connection override it notes each response's
 * status and Retry-After, which firebase-admin drops when it turns an answer
 * into a FirebaseMessagingError; AsyncLocalStorage ties each request to the
 * `send` that made it.
 */
class FcmAgent extends https.Agent {
  constructor(
    private readonly responses: AsyncLocalStorage<ResponseCapture>,
    private readonly connectOverride: FcmConnect | undefined,
  ) {
    super({ keepAlive: true });
  }

  override createConnection(
    options: https.RequestOptions,
    callback?: (err: Error | null, stream: Duplex) => void,
  ): Duplex | null | undefined {
    if (this.connectOverride) return this.connectOverride(options);
    return super.createConnection(options, callback);
  }

  // Called synchronously by every ClientRequest this agent serves, in the caller's async context.
  addRequest(request: ClientRequest, options: unknown): void {
    const capture = this.responses.getStore();
    if (capture) {
      request.once('response', (response: IncomingMessage) => {
        capture.status = response.statusCode;
        const value = response.headers['retry-after'];
        if (value !== undefined) capture.retryAfter = value;
      });
    }
    (https.Agent.prototype as unknown as { addRequest(r: ClientRequest, o: unknown): void }).addRequest.call(this, request, options);
  }
}

const INVALID_TOKEN_CODES = new Set(['messaging/registration-token-not-registered', 'messaging/invalid-registration-token']);
const TRANSIENT_CODES = new Set([
  'messaging/message-rate-exceeded', // QUOTA_EXCEEDED, RESOURCE_EXHAUSTED
  'messaging/device-message-rate-exceeded',
  'messaging/server-unavailable', // UNAVAILABLE
  'messaging/internal-error', // INTERNAL
  'app/network-error',
  'app/network-timeout',
]);
const CONFIGURATION_CODES = new Set([
  'messaging/mismatched-credential', // SENDER_ID_MISMATCH, PERMISSION_DENIED
  'messaging/third-party-auth-error', // THIRD_PARTY_AUTH_ERROR, UNAUTHENTICATED
  'messaging/authentication-error',
]);

/**
 * FCM HTTP v1 through firebase-admin's `messaging().send`.
 *
 * firebase-admin retries a 503 up to four times inside `send`, sleeping up to
 * a minute each time; we cut that down to one immediate retry of a reset
 * keep-alive connection, and let the queue own retries and backoff.
 */
export class FcmPushProvider implements PushProvider {
  readonly name = 'fcm' as const;
  private readonly app: App;
  private readonly messaging: Messaging;
  private readonly agent: FcmAgent;
  private readonly now: () => Date;
  private readonly responses = new AsyncLocalStorage<ResponseCapture>();
  private closed = false;

  constructor(options: FcmProviderOptions) {
    const account = options.serviceAccount;
    const credential =
      options.credential ??
      (account
        ? cert({ projectId: account.project_id, clientEmail: account.client_email, privateKey: account.private_key })
        : options.serviceAccountFile
          ? cert(options.serviceAccountFile)
          : undefined);
    if (!credential) throw new Error('FcmPushProvider needs a service-account file or a credential');
    if (options.credential && !options.projectId) throw new Error('FcmPushProvider needs projectId with a custom credential');
    this.now = options.now ?? (() => new Date());
    this.agent = new FcmAgent(this.responses, options.connect);
    this.app = initializeApp(
      { credential, httpAgent: this.agent, ...(options.projectId ? { projectId: options.projectId } : {}) },
      `nudge-fcm-${randomUUID()}`,
    );
    this.messaging = getMessaging(this.app);
    limitLibraryRetries(this.messaging);
  }

  async send(message: PushMessage): Promise<PushOutcome> {
    if (this.closed) return { kind: 'transient', reason: 'FCM provider is shut down' };
    if (message.platform !== 'android') return { kind: 'permanent', reason: `FCM provider does not deliver to ${message.platform}` };
    const capture: ResponseCapture = {};
    try {
      const name = await this.responses.run(capture, () => this.messaging.send(buildFcmMessage(message, this.now())));
      return { kind: 'sent', providerMessageId: name };
    } catch (error) {
      return this.classify(error as FirebaseLikeError, capture);
    }
  }

  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    await deleteApp(this.app);
    this.agent.destroy();
  }

  private classify(error: FirebaseLikeError, capture: ResponseCapture): PushOutcome {
    const code = error.code ?? 'unknown';
    const reason = `${code}: ${error.message ?? 'no message'}`;
    const status = capture.status;

    if (INVALID_TOKEN_CODES.has(code)) return { kind: 'invalid_token', reason };
    // INVALID_ARGUMENT covers both a malformed token and a malformed message; only the text tells them apart.
    if (code === 'messaging/invalid-argument' && /registration token|\btoken\b/i.test(error.message ?? '')) {
      return { kind: 'invalid_token', reason };
    }
    if (CONFIGURATION_CODES.has(code)) return { kind: 'configuration_error', reason };
    if (code === 'app/invalid-credential') {
      // The OAuth token could not be fetched: a revoked or malformed key will not heal, a network hiccup will.
      return /invalid_grant|invalid_client|unauthorized_client|Failed to parse|private key/i.test(error.message ?? '')
        ? { kind: 'configuration_error', reason }
        : { kind: 'transient', reason };
    }
    if (TRANSIENT_CODES.has(code) || status === 429 || (status !== undefined && status >= 500)) {
      // The project's quota (QUOTA_EXCEEDED, or any 429 but one device's own rate): the shared pace slows down.
      const throttled = code === 'messaging/message-rate-exceeded' || (status === 429 && code !== 'messaging/device-message-rate-exceeded');
      const outcome: LaterOutcome = { kind: throttled ? 'throttled' : 'transient', reason };
      const retryAfterSeconds = parseRetryAfter(capture.retryAfter, this.now());
      if (retryAfterSeconds !== undefined) outcome.retryAfterSeconds = retryAfterSeconds;
      return outcome;
    }
    if (!code.startsWith('messaging/') && !code.startsWith('app/') && status === undefined) {
      // Not a Firebase error and no answer: the request never completed.
      return { kind: 'transient', reason };
    }
    return { kind: 'permanent', reason };
  }
}

function limitLibraryRetries(messaging: Messaging): void {
  const handler = (messaging as unknown as { messagingRequestHandler?: { httpClient?: { retry?: unknown } } }).messagingRequestHandler;
  if (!handler?.httpClient) return;
  handler.httpClient.retry = {
    maxRetries: 1,
    statusCodes: [],
    ioErrorCodes: ['ECONNRESET'],
    backOffFactor: 0,
    maxDelayInMillis: 0,
  };
}
