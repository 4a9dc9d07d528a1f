import { randomUUID } from 'node:crypto';
import { setTimeout as sleep } from 'node:timers/promises';
import type { PushMessage, PushOutcome, PushProvider, SqlExecutor } from './push-provider.js';

export interface SimulatedPushProviderOptions {
  /** How long a `sim-slow-…` token takes to answer; SPEC says 2 s, tests shorten it. */
  slowDelayMs?: number;
}

/** SPEC §6: the token's prefix picks the answer, so anyone can provoke each path. */
export const SIMULATED_TOKEN_PREFIXES = {
  invalid: 'sim-invalid-',
  rateLimited: 'sim-429-',
  serverError: 'sim-500-',
  slow: 'sim-slow-',
} as const;

export const SIMULATED_RETRY_AFTER_SECONDS = 120;

/**
 * Stands in for APNs and FCM when a platform has no credentials: it records
 * every push in `simulated_pushes`, where a developer (or a test) can see what
 * would have reached the phone, and answers by the token's prefix.
 */
export class SimulatedPushProvider implements PushProvider {
  readonly name = 'simulated' as const;
  private readonly slowDelayMs: number;

  constructor(
    private readonly db: SqlExecutor,
    options: SimulatedPushProviderOptions = {},
  ) {
    this.slowDelayMs = options.slowDelayMs ?? 2000;
  }

  async send(message: PushMessage): Promise<PushOutcome> {
    const { token } = message;
    let outcome: PushOutcome;
    if (token.startsWith(SIMULATED_TOKEN_PREFIXES.invalid)) {
      outcome = { kind: 'invalid_token', reason: 'simulated: token is not registered' };
    } else if (token.startsWith(SIMULATED_TOKEN_PREFIXES.rateLimited)) {
      outcome = {
        kind: 'transient',
        reason: 'simulated: 429 TooManyRequests',
        retryAfterSeconds: SIMULATED_RETRY_AFTER_SECONDS,
      };
    } else if (token.startsWith(SIMULATED_TOKEN_PREFIXES.serverError)) {
      outcome = { kind: 'transient', reason: 'simulated: 500 InternalServerError' };
    } else {
      if (token.startsWith(SIMULATED_TOKEN_PREFIXES.slow)) await sleep(this.slowDelayMs);
      outcome = { kind: 'sent', providerMessageId: `sim-${randomUUID()}` };
    }
    await this.record(message, outcome);
    return outcome;
  }

  async close(): Promise<void> {
    // The pool belongs to the caller.
  }

  private async record(message: PushMessage, outcome: PushOutcome): Promise<void> {
    await this.db.query(
      `INSERT INTO simulated_pushes
         (platform, push_token, collapse_id, title, body, data, outcome, provider_message_id)
       VALUES ($1, $2, $3, $4, $5, $6, $7, $8)`,
      [
        message.platform,
        message.token,
        message.collapseId,
        message.title,
        message.body ?? null,
        message.data === undefined ? null : JSON.stringify(message.data),
        outcome.kind,
        outcome.kind === 'sent' ? (outcome.providerMessageId ?? null) : null,
      ],
    );
  }
}
