import { Counter, Gauge, type Registry } from 'prom-client';
import { listProviderFailures } from './apps.repository.js';
import { PUSH_PROVIDER_NAMES, type PushOutcomeKind, type PushProviderName, type SqlExecutor } from './push-provider.js';

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
  /** `nudge_push_provider_failing{app,provider}`, when this instance registered it. */
  readonly failing?: Gauge<'app' | 'provider'>;

  /** `db`: where `nudge_push_provider_failing` reads the marks at scrape time (the same in every process). */
  constructor(registry: Registry, db?: SqlExecutor) {
    if (db && !registry.getSingleMetric('nudge_push_provider_failing')) {
      this.failing = new Gauge({
        name: 'nudge_push_provider_failing',
        help: "1 for each (app, provider) whose credentials the provider rejected: that app's sends to it wait (docs/apps.md)",
        labelNames: ['app', 'provider'],
        registers: [registry],
        async collect() {
          const failures = await listProviderFailures(db).catch(() => undefined);
          // The database unreachable: keep the last values rather than report none failing.
          if (!failures) return;
          this.reset();
          for (const f of failures) this.set({ app: f.appId, provider: f.provider }, 1);
        },
      });
    }
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
