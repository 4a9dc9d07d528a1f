import { buildExpoMessage, type ExpoMessage } from './payload.js';
import type { LaterOutcome, PushMessage, PushOutcome, PushProvider, SendOptions } from './push-provider.js';
import { parseRetryAfter } from './retry-after.js';

export interface ExpoProviderOptions {
  /** An Expo access token, needed when the project has "enhanced push security" on; else unset. */
  accessToken?: string;
  /** Default https://exp.host; tests point it at a local fake. */
  baseUrl?: string;
  /** Per request. */
  timeoutMs?: number;
  now?: () => Date;
}

/** A ticket: Expo took the message (its id fetches the receipt later), or refused it at once. */
type ExpoTicket =
  { status: 'ok'; id: string } | { status: 'error'; message?: string; details?: { error?: string; expoPushToken?: string } };

/** A receipt: what happened once Expo handed the message to APNs or FCM. */
export type ExpoReceipt = { status: 'ok' } | { status: 'error'; message?: string; details?: { error?: string; expoPushToken?: string } };

type Failure = Exclude<PushOutcome, { kind: 'sent' }>;

/** Expo takes at most 100 messages a request and 1,000 receipt ids. */
export const EXPO_MAX_MESSAGES_PER_REQUEST = 100;
export const EXPO_MAX_RECEIPTS_PER_REQUEST = 1000;

/** `ExponentPushToken[…]` or `ExpoPushToken[…]`, as `getExpoPushTokenAsync` returns it. */
const EXPO_TOKEN = /^Expo(nent)?PushToken\[[^\]\s]{1,200}\]$/;

export function isExpoPushToken(token: string): boolean {
  return EXPO_TOKEN.test(token);
}

/**
 * Expo's push service (for Expo and React Native apps) over plain HTTPS:
 * `POST /--/api/v2/push/send` returns a ticket per message; the receipts
 * (`/getReceipts`) come later and `ExpoReceiptsService` reads them. Our own
 * few lines rather than `expo-server-sdk`: the SDK has no endpoint setting
 * (only an environment variable read once at import), cannot be aborted by the
 * job's signal, retries 429s itself and drops `Retry-After`; here the queue
 * owns retries as it does for APNs and FCM.
 */
export class ExpoPushProvider implements PushProvider {
  readonly name = 'expo' as const;
  private readonly baseUrl: string;
  private readonly timeoutMs: number;
  private readonly now: () => Date;
  private closed = false;

  constructor(private readonly options: ExpoProviderOptions = {}) {
    this.baseUrl = (options.baseUrl ?? 'https://exp.host').replace(/\/$/, '');
    this.timeoutMs = options.timeoutMs ?? 10_000;
    this.now = options.now ?? (() => new Date());
  }

  async send(message: PushMessage, options: SendOptions = {}): Promise<PushOutcome> {
    return (await this.sendMany([message], options))[0]!;
  }

  /** Up to 100 messages a request, one request per hundred; outcomes in the messages' order. */
  async sendMany(messages: readonly PushMessage[], options: SendOptions = {}): Promise<PushOutcome[]> {
    const outcomes: PushOutcome[] = [];
    for (let i = 0; i < messages.length; i += EXPO_MAX_MESSAGES_PER_REQUEST) {
      outcomes.push(...(await this.sendChunk(messages.slice(i, i + EXPO_MAX_MESSAGES_PER_REQUEST), options.signal)));
    }
    return outcomes;
  }

  /** The receipts Expo has for these ticket ids (an id without one is not ready yet, or older than a day). */
  async receipts(ids: readonly string[], signal?: AbortSignal): Promise<Record<string, ExpoReceipt>> {
    const answer = await this.post('/--/api/v2/push/getReceipts', { ids }, signal);
    if (answer.kind !== 'ok') throw new Error(`Expo receipts: ${answer.outcome.reason}`);
    const data = (answer.body as { data?: unknown }).data;
    if (!data || typeof data !== 'object' || Array.isArray(data)) throw new Error('Expo receipts: no map of receipts in the answer');
    return data as Record<string, ExpoReceipt>;
  }

  async close(): Promise<void> {
    this.closed = true;
  }

  private async sendChunk(messages: readonly PushMessage[], signal: AbortSignal | undefined): Promise<PushOutcome[]> {
    const refused = (outcome: PushOutcome) => messages.map(() => outcome);
    if (this.closed) return refused({ kind: 'transient', reason: 'Expo provider is shut down' });
    const wrong = messages.find((m) => m.platform !== 'expo');
    if (wrong) return refused({ kind: 'permanent', reason: `Expo provider does not deliver to ${wrong.platform}` });

    const body: ExpoMessage[] = messages.map((m) => buildExpoMessage(m, this.now()));
    const answer = await this.post('/--/api/v2/push/send', body, signal);
    if (answer.kind !== 'ok') return refused(answer.outcome);
    const tickets = (answer.body as { data?: unknown }).data;
    if (!Array.isArray(tickets) || tickets.length !== messages.length) {
      return refused({
        kind: 'transient',
        reason: `Expo answered ${Array.isArray(tickets) ? tickets.length : 'no'} tickets for ${messages.length}`,
      });
    }
    return (tickets as ExpoTicket[]).map(classifyTicket);
  }

  private async post(
    path: string,
    payload: unknown,
    signal: AbortSignal | undefined,
  ): Promise<{ kind: 'ok'; body: unknown } | { kind: 'failed'; outcome: Failure }> {
    const headers: Record<string, string> = { accept: 'application/json', 'content-type': 'application/json' };
    if (this.options.accessToken) headers.authorization = `Bearer ${this.options.accessToken}`;
    const timeout = AbortSignal.timeout(this.timeoutMs);
    let response: Response;
    let text: string;
    try {
      response = await fetch(`${this.baseUrl}${path}`, {
        method: 'POST',
        headers,
        body: JSON.stringify(payload),
        signal: signal ? AbortSignal.any([signal, timeout]) : timeout,
      });
      text = await response.text();
    } catch (error) {
      // The job's own signal (its timeout, a lost lease, shutdown): the caller's to handle.
      if (signal?.aborted) throw signal.reason;
      return { kind: 'failed', outcome: { kind: 'transient', reason: `Expo unreachable: ${(error as Error).message}` } };
    }
    let body: { data?: unknown; errors?: { code?: string; message?: string }[] } = {};
    try {
      body = JSON.parse(text) as typeof body;
    } catch {
      // A proxy's HTML page, say: classified by the status alone.
    }
    if (response.status === 200 && !body.errors) return { kind: 'ok', body };
    const error = body.errors?.[0];
    const reason = `${response.status} ${error?.code ?? ''} ${error?.message ?? text.slice(0, 200)}`.replace(/\s+/g, ' ').trim();
    if (response.status === 429 || response.status >= 500) {
      // 429 (TOO_MANY_REQUESTS, RATE_LIMIT_EXCEEDED): Expo's limit of the project's sends a second, which slows the shared pace.
      const outcome: LaterOutcome = { kind: response.status === 429 ? 'throttled' : 'transient', reason };
      const retryAfterSeconds = parseRetryAfter(response.headers.get('retry-after') ?? undefined, this.now());
      if (retryAfterSeconds !== undefined) outcome.retryAfterSeconds = retryAfterSeconds;
      return { kind: 'failed', outcome };
    }
    if (response.status === 401 || response.status === 403) return { kind: 'failed', outcome: { kind: 'configuration_error', reason } };
    return { kind: 'failed', outcome: { kind: 'permanent', reason } };
  }
}

/** A ticket's error, or a receipt's: what it means for the device and the job. */
export function classifyExpoError(error: string | undefined, message: string | undefined): PushOutcome {
  const reason = `${error ?? 'error'}: ${message ?? ''}`.trim();
  switch (error) {
    case 'DeviceNotRegistered':
      return { kind: 'invalid_token', reason };
    case 'MessageRateExceeded':
    case 'ProviderError': // APNs or FCM failed Expo's request
    case 'ExpoError':
      return { kind: 'transient', reason };
    case 'InvalidCredentials':
      // The app's FCM or APNs credentials uploaded to Expo are wrong: an operator's to fix.
      return { kind: 'configuration_error', reason };
    default:
      // MessageTooBig, DeveloperError.
      return { kind: 'permanent', reason };
  }
}

function classifyTicket(ticket: ExpoTicket): PushOutcome {
  if (ticket.status === 'ok') return { kind: 'sent', providerMessageId: ticket.id };
  return classifyExpoError(ticket.details?.error, ticket.message);
}
