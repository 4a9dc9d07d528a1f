import { randomUUID } from 'node:crypto';
import { cert, deleteApp, initializeApp, type App, type Credential } from 'firebase-admin/app';
import { getMessaging, type BatchResponse, type Messaging, type SendResponse } from 'firebase-admin/messaging';
import { routingFcm, type FcmConnect } from './fcm-connect.js';
import { buildFcmMessage } from './payload.js';
import type { LaterOutcome, PushMessage, PushOutcome, PushProvider, SendOptions } from './push-provider.js';
import { parseRetryAfter } from './retry-after.js';
import { untilAborted } from './until-aborted.js';

export type { FcmConnect, FcmConnectOptions } from './fcm-connect.js';

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
   * Replaces the TLS connection of firebase-admin's HTTP/2 session to FCM.
   * firebase-admin has no endpoint setting; this is how tests reach a local
   * fake (and how a deployment could route through a relay). Unset: a direct
   * connection. The socket must offer ALPN `h2` (`options.ALPNProtocols`).
   */
  connect?: FcmConnect;
  now?: () => Date;
}

/** FCM's answer to one message, as the HTTP/2 stream got it: firebase-admin's error drops both. */
interface FcmAnswer {
  status: number;
  retryAfter?: string;
}

interface FirebaseLikeError {
  code?: string;
  message?: string;
}

/** A SendResponse of `sendEach`, with the answer `captureAnswers` notes on a failed one. */
type AnsweredSendResponse = SendResponse & { answer?: FcmAnswer };

/** sendEach takes at most 500 messages. */
export const FCM_MAX_MESSAGES_PER_BATCH = 500;

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
 * FCM HTTP v1 through firebase-admin's `messaging().sendEach`: each batch of
 * up to 500 messages goes as concurrent streams of one HTTP/2 session, one
 * TLS connection, where `send` took one HTTP/1.1 connection per request in
 * flight.
 *
 * firebase-admin retries a 503 up to four times inside a call, sleeping up
 * to a minute each time; we turn its retries off and let the queue own
 * retries and backoff.
 */
export class FcmPushProvider implements PushProvider {
  readonly name = 'fcm' as const;
  private readonly app: App;
  private readonly messaging: Messaging;
  private readonly connect: FcmConnect | undefined;
  private readonly now: () => Date;
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
    this.connect = options.connect;
    this.app = initializeApp({ credential, ...(options.projectId ? { projectId: options.projectId } : {}) }, `nudge-fcm-${randomUUID()}`);
    this.messaging = getMessaging(this.app);
    adaptRequestHandler(this.messaging);
  }

  async send(message: PushMessage, options: SendOptions = {}): Promise<PushOutcome> {
    return (await this.sendMany([message], options))[0]!;
  }

  /**
   * Android messages in batches of 500, each batch over one HTTP/2 session;
   * outcomes in the messages' order. The job's signal rejects the call at once
   * with its reason; streams already sent finish in the background (each
   * within firebase-admin's 15 s timeout), as an aborted fetch's request may
   * still have reached the server.
   */
  async sendMany(messages: readonly PushMessage[], options: SendOptions = {}): Promise<PushOutcome[]> {
    options.signal?.throwIfAborted();
    const sending = this.sendAll(messages);
    return options.signal ? Promise.race([sending, untilAborted(options.signal)]) : sending;
  }

  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    await deleteApp(this.app);
  }

  private async sendAll(messages: readonly PushMessage[]): Promise<PushOutcome[]> {
    const outcomes: PushOutcome[] = new Array<PushOutcome>(messages.length);
    const android: number[] = [];
    messages.forEach((message, i) => {
      if (this.closed) outcomes[i] = { kind: 'transient', reason: 'FCM provider is shut down' };
      else if (message.platform !== 'android')
        outcomes[i] = { kind: 'permanent', reason: `FCM provider does not deliver to ${message.platform}` };
      else android.push(i);
    });
    for (let from = 0; from < android.length; from += FCM_MAX_MESSAGES_PER_BATCH) {
      const batch = android.slice(from, from + FCM_MAX_MESSAGES_PER_BATCH);
      const answers = await this.sendBatch(batch.map((i) => messages[i]!));
      batch.forEach((index, k) => (outcomes[index] = answers[k]!));
    }
    return outcomes;
  }

  /** One sendEach; never rejects: a failure of the whole batch is every message's outcome. */
  private async sendBatch(messages: readonly PushMessage[]): Promise<PushOutcome[]> {
    let responses: AnsweredSendResponse[];
    try {
      const now = this.now();
      const batch = await routingFcm(this.connect, () => this.messaging.sendEach(messages.map((m) => buildFcmMessage(m, now))));
      responses = batch.responses;
    } catch (error) {
      // A FirebaseMessagingSessionError (refused, reset, GOAWAY): the answers that came stand, the rest go again later.
      const pending = (error as { pendingBatchResponse?: Promise<BatchResponse> }).pendingBatchResponse;
      if (!pending) return messages.map(() => this.classify(error as FirebaseLikeError));
      const reason = `FCM session failed: ${(error as Error).message}`;
      responses = await pending.then(
        (batch) => batch.responses,
        () => [],
      );
      return messages.map((_, i) => (responses[i] ? this.outcomeOf(responses[i]) : { kind: 'transient', reason }));
    }
    return responses.map((response) => this.outcomeOf(response));
  }

  private outcomeOf(response: AnsweredSendResponse): PushOutcome {
    if (response.success) return { kind: 'sent', providerMessageId: response.messageId };
    return this.classify(response.error as FirebaseLikeError, response.answer);
  }

  private classify(error: FirebaseLikeError, answer?: FcmAnswer): PushOutcome {
    const code = error.code ?? 'unknown';
    const reason = `${code}: ${error.message ?? 'no message'}`;
    const status = answer?.status;

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
      const retryAfterSeconds = parseRetryAfter(answer?.retryAfter, this.now());
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

/**
 * Two changes to firebase-admin's request handler of this app, through its
 * internals (the library has no setting for either):
 * - no retries in the library (HTTP/2 and HTTP/1.1 clients): the queue owns
 *   retries and backoff, and a 503 must not hold the batch for a minute;
 * - each failed answer keeps its status and Retry-After: `sendEach` turns it
 *   into a FirebaseMessagingError that carries neither, and
 *   `buildSendResponseFromError` is the one place that still holds the HTTP/2
 *   response's headers, per message, with nothing to tie back by token.
 */
function adaptRequestHandler(messaging: Messaging): void {
  const handler = (messaging as unknown as { messagingRequestHandler: RequestHandlerInternals }).messagingRequestHandler;
  for (const client of [handler.httpClient, handler.http2Client]) {
    client.retry = { maxRetries: 0, statusCodes: [], ioErrorCodes: [], backOffFactor: 0, maxDelayInMillis: 0 };
  }
  const build = handler.buildSendResponseFromError.bind(handler);
  handler.buildSendResponseFromError = (error) => {
    const retryAfter = error.response.headers['retry-after'];
    const answer: FcmAnswer = { status: error.response.status, ...(typeof retryAfter === 'string' ? { retryAfter } : {}) };
    return { ...build(error), answer };
  };
}

/** The parts of firebase-admin 13's FirebaseMessagingRequestHandler that `adaptRequestHandler` changes. */
interface RequestHandlerInternals {
  httpClient: { retry?: unknown };
  http2Client: { retry?: unknown };
  buildSendResponseFromError(error: { response: { status: number; headers: Record<string, unknown> } }): AnsweredSendResponse;
}
