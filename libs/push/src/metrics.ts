import { Counter, type Registry } from 'prom-client';
import { PUSH_PROVIDER_NAMES, type PushOutcomeKind, type PushProviderName } from './push-provider.js';

/** What a send came to, as the counter labels it: the ledger's three final states. */
export type PushSendOutcome = 'sent' | 'failed' | 'invalid_token';

const OUTCOMES: readonly PushSendOutcome[] = ['sent', 'failed', 'invalid_token'];

export function sendOutcomeOf(kind: PushOutcomeKind): PushSendOutcome {
  return kind === 'sent' ? 'sent' : kind === 'invalid_token' ? 'invalid_token' : 'failed';
}

/**
 * `nudge_push_sends_total{provider,outcome}`: every provider answer, one per
 * device and attempt (a retried send counts again). Per process, like every
 * counter. Every series starts at 0 in every process that has the registry,
 * so that `rate()` and the failure-ratio alert see a provider before its
 * first failure. One counter per registry (the API and a worker in one
 * process share it).
 */
export class PushMetrics {
  readonly sends: Counter<'provider' | 'outcome'>;

  constructor(registry: Registry) {
    this.sends =
      (registry.getSingleMetric('nudge_push_sends_total') as Counter<'provider' | 'outcome'> | undefined) ??
      new Counter({
        name: 'nudge_push_sends_total',
        help: 'Push sends by provider and outcome (sent, failed, invalid_token): one per device and attempt',
        labelNames: ['provider', 'outcome'],
        registers: [registry],
      });
    for (const provider of PUSH_PROVIDER_NAMES) for (const outcome of OUTCOMES) this.sends.inc({ provider, outcome }, 0);
  }

  record(provider: PushProviderName, kind: PushOutcomeKind): void {
    this.sends.inc({ provider, outcome: sendOutcomeOf(kind) });
  }
}
