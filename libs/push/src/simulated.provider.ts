import { randomUUID } from 'node:crypto';
import { setTimeout as sleep } from 'node:timers/promises';
import type { QueryExecutor } from '@nudge/queue';
import { dataWithCategory, platformPayload } from './payload.js';
import type { PushMessage, PushOutcome, PushProvider, SendOptions } from './push-provider.js';
import { untilAborted } from './until-aborted.js';

export interface SimulatedPushProviderOptions {
  /** How long a `sim-slow-…` token takes to answer; SPEC says 2 s, tests shorten it. */
  slowDelayMs?: number;
  /** The time a push is recorded at (the injected clock, so a simulated calendar shows when each push went). */
  now?: () => Date;
  /**
   * Every call hangs for good, deaf to its signal: a wedged process (a call
   * that cannot be interrupted, as firebase-admin's cannot). Set by
   * SIMULATED_PUSH_HANG=1 in one worker process (test/reliability/wedged-worker).
   */
  hangAll?: boolean;
}

/** Every simulated token starts so; a token of this prefix is accepted on every platform. */
export const SIMULATED_TOKEN_PREFIX = 'sim-';

/** SPEC §6: the token's prefix picks the answer, so anyone can provoke each path. */
export const SIMULATED_TOKEN_PREFIXES = {
  invalid: 'sim-invalid-',
  rateLimited: 'sim-429-',
  serverError: 'sim-500-',
  slow: 'sim-slow-',
  /** Never answers: the call ends only when the job's signal aborts it (its timeout). */
  hang: 'sim-hang-',
} as const;

export const SIMULATED_RETRY_AFTER_SECONDS = 120;

/**
 * Stands in for APNs, FCM, Web Push and Expo when a platform has no
 * credentials: it records every push in `simulated_pushes` — with `payload`,
 * the very body the platform's service would have received — where a
 * developer (or a test) can see what would have reached the phone, and
 * answers by the token's prefix.
 */
export class SimulatedPushProvider implements PushProvider {
  readonly name = 'simulated' as const;
  private readonly slowDelayMs: number;
  private readonly now: () => Date;
  private readonly hangAll: boolean;

  constructor(
    private readonly db: QueryExecutor,
    options: SimulatedPushProviderOptions = {},
  ) {
    this.slowDelayMs = options.slowDelayMs ?? 2000;
    this.now = options.now ?? (() => new Date());
    this.hangAll = options.hangAll ?? false;
  }

  async send(message: PushMessage, options: SendOptions = {}): Promise<PushOutcome> {
    return (await this.sendMany([message], options))[0]!;
  }

  /** Answers each message by its token and records them all in one statement (nothing is recorded of a call that was aborted). */
  async sendMany(messages: readonly PushMessage[], options: SendOptions = {}): Promise<PushOutcome[]> {
    if (this.hangAll) await new Promise<never>(() => undefined);
    const outcomes = await Promise.all(messages.map((message) => this.answer(message.token, options.signal)));
    await this.record(messages, outcomes);
    return outcomes;
  }

  async close(): Promise<void> {
    // The pool belongs to the caller.
  }

  private async answer(token: string, signal: AbortSignal | undefined): Promise<PushOutcome> {
    if (token.startsWith(SIMULATED_TOKEN_PREFIXES.hang)) await untilAborted(signal);
    if (token.startsWith(SIMULATED_TOKEN_PREFIXES.invalid)) {
      return { kind: 'invalid_token', reason: 'simulated: token is not registered' };
    }
    if (token.startsWith(SIMULATED_TOKEN_PREFIXES.rateLimited)) {
      return { kind: 'transient', reason: 'simulated: 429 TooManyRequests', retryAfterSeconds: SIMULATED_RETRY_AFTER_SECONDS };
    }
    if (token.startsWith(SIMULATED_TOKEN_PREFIXES.serverError)) {
      return { kind: 'transient', reason: 'simulated: 500 InternalServerError' };
    }
    if (token.startsWith(SIMULATED_TOKEN_PREFIXES.slow)) await sleep(this.slowDelayMs);
    return { kind: 'sent', providerMessageId: `sim-${randomUUID()}` };
  }

  private async record(messages: readonly PushMessage[], outcomes: PushOutcome[]): Promise<void> {
    if (messages.length === 0) return;
    const now = this.now();
    await this.db.query(
      `INSERT INTO simulated_pushes (platform, push_token, collapse_id, title, body, data, outcome, provider_message_id, payload, app_id, created_at)
       SELECT *, $11::timestamptz
         FROM unnest($1::text[], $2::text[], $3::text[], $4::text[], $5::text[], $6::jsonb[], $7::text[], $8::text[], $9::jsonb[], $10::text[])`,
      [
        messages.map((m) => m.platform),
        messages.map((m) => m.token),
        messages.map((m) => m.collapseId),
        messages.map((m) => m.title),
        messages.map((m) => m.body ?? null),
        // The table has no column for the platform payload: the action category shows as data.category, as Android gets it.
        messages.map((m) => {
          const data = dataWithCategory(m);
          return data === undefined ? null : JSON.stringify(data);
        }),
        outcomes.map((o) => o.kind),
        outcomes.map((o) => (o.kind === 'sent' ? (o.providerMessageId ?? null) : null)),
        messages.map((m) => JSON.stringify(platformPayload(m, now))),
        messages.map((m) => m.appId ?? 'default'),
        now,
      ],
    );
  }
}
