import { Counter, Gauge, type Registry } from 'prom-client';
import { registeredMetric } from '@nudge/config';
import type { QueryExecutor } from '@nudge/queue';
import { listProviderFailures } from './apps.repository.js';
import { PUSH_PROVIDER_NAMES, type PushOutcomeKind, type PushProviderName } from './push-provider.js';

/** What a send came to, as the counter labels it: the ledger's three final states, and `throttled` (a 429: sent again later, not a failure). */
export type PushSendOutcome = 'sent' | 'failed' | 'invalid_token' | 'throttled';

const OUTCOMES: readonly PushSendOutcome[] = ['sent', 'failed', 'invalid_token', 'throttled'];

export function sendOutcomeOf(kind: PushOutcomeKind): PushSendOutcome {
  return kind === 'sent' || kind === 'invalid_token' || kind === 'throttled' ? kind : 'failed';
}

/**
 * `nudge_push_sends_total{provider,outcome}`: every provider answer, one per
 * device and attempt (a retried send counts again). Per process, like every
 * counter. Every series starts at 0 in every process that has the registry,
 * so that `rate()` and the failure-ratio alert see a provider before its
 * first failure. One counter per registry (the API and a worker in one
 * process share it).
 *
 * `nudge_push_pace_rate{provider,app}`: the shared pace of each provider and
 * app as this process last saw it (sends a second; +Inf: unpaced), see
 * docs/pacing.md.
 */
export class PushMetrics {
  readonly sends: Counter<'provider' | 'outcome'>;
  readonly paceRate: Gauge<'provider' | 'app'>;
  /** `nudge_push_provider_failing{app,provider}`, when this instance registered it. */
  readonly failing?: Gauge<'app' | 'provider'>;

  /** `db`: where `nudge_push_provider_failing` reads the marks at scrape time (the same in every process). */
  constructor(registry: Registry, db?: QueryExecutor) {
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
    this.sends = registeredMetric(
      registry,
      'nudge_push_sends_total',
      () =>
        new Counter({
          name: 'nudge_push_sends_total',
          help: 'Push sends by provider and outcome (sent, failed, invalid_token, throttled): one per device and attempt',
          labelNames: ['provider', 'outcome'],
          registers: [registry],
        }),
    );
    this.paceRate = registeredMetric(
      registry,
      'nudge_push_pace_rate',
      () =>
        new Gauge({
          name: 'nudge_push_pace_rate',
          help: 'The shared pace of each provider and app as this process last saw it, in sends a second (+Inf: unpaced)',
          labelNames: ['provider', 'app'],
          registers: [registry],
        }),
    );
    for (const provider of PUSH_PROVIDER_NAMES) for (const outcome of OUTCOMES) this.sends.inc({ provider, outcome }, 0);
  }

  record(provider: PushProviderName, kind: PushOutcomeKind): void {
    this.sends.inc({ provider, outcome: sendOutcomeOf(kind) });
  }

  recordPace(provider: PushProviderName, app: string, rate: number | null): void {
    this.paceRate.set({ provider, app }, rate ?? Number.POSITIVE_INFINITY);
  }
}
