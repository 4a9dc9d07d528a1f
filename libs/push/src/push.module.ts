import { type DynamicModule, Global, Inject, Injectable, Module, type OnApplicationShutdown } from '@nestjs/common';
import type pg from 'pg';
import type { Logger } from 'pino';
import { Registry } from 'prom-client';
import { Clock, CONFIG, type Config, LOGGER } from '@nudge/config';
import { PG_POOL } from '@nudge/database';
import { createPushProviders, describePushProviders, type PushProviderDependencies, type PushProviders } from './provider-registry.js';
import { ExpoReceiptsService } from './expo-receipts.service.js';
import { PushMetrics } from './metrics.js';
import { PushDelivery } from './push-delivery.js';
import { PushPacer } from './push-pacer.js';

export const PUSH_PROVIDERS = Symbol('PUSH_PROVIDERS');
export const PUSH_PROVIDER_OVERRIDES = Symbol('PUSH_PROVIDER_OVERRIDES');

/**
 * Merged over what the credentials give: other endpoints, CAs, an FCM
 * credential or connection (a relay, or the local fakes in tests).
 */
export type PushProviderOverrides = Omit<PushProviderDependencies, 'db'>;

@Injectable()
class PushProvidersLifecycle implements OnApplicationShutdown {
  constructor(@Inject(PUSH_PROVIDERS) private readonly providers: PushProviders) {}

  async onApplicationShutdown(): Promise<void> {
    await this.providers.close();
  }
}

/**
 * The providers each platform uses (APNs, FCM, or simulated when a platform
 * has no credentials — said once at boot) and the delivery ledger around them.
 */
@Global()
@Module({
  providers: [
    {
      provide: PUSH_PROVIDERS,
      inject: [CONFIG, PG_POOL, LOGGER, Clock, { token: PUSH_PROVIDER_OVERRIDES, optional: true }],
      useFactory: (config: Config, pool: pg.Pool, logger: Logger, clock: Clock, overrides?: PushProviderOverrides): PushProviders => {
        logger.info(describePushProviders(config));
        // Retry-After dates and FCM's TTL are read against the injected clock.
        const now = () => clock.now();
        return createPushProviders(config, {
          db: pool,
          simulated: { now, hangAll: config.simulatedPushHang, ...overrides?.simulated },
          apns: { now, ...overrides?.apns },
          fcm: { now, ...overrides?.fcm },
          webPush: { now, ...overrides?.webPush },
          expo: { now, ...overrides?.expo },
        });
      },
    },
    {
      provide: PushDelivery,
      inject: [PG_POOL, PUSH_PROVIDERS, Clock, Registry, CONFIG],
      useFactory: (pool: pg.Pool, providers: PushProviders, clock: Clock, registry: Registry, config: Config) => {
        const metrics = new PushMetrics(registry);
        // The pace acts on the database's clock, not the injected one (see pace.repository.ts).
        return new PushDelivery(pool, providers, clock, metrics, new PushPacer(pool, { limits: config.pacing, metrics }));
      },
    },
    {
      provide: ExpoReceiptsService,
      inject: [PG_POOL, PUSH_PROVIDERS, Clock, LOGGER],
      useFactory: (pool: pg.Pool, providers: PushProviders, clock: Clock, logger: Logger) =>
        new ExpoReceiptsService(pool, providers, clock, logger),
    },
    PushProvidersLifecycle,
  ],
  exports: [PUSH_PROVIDERS, PushDelivery, ExpoReceiptsService],
})
export class PushModule {
  /** The module with overrides for the provider clients (see PushProviderOverrides). */
  static forRoot(overrides: PushProviderOverrides = {}): DynamicModule {
    return {
      module: PushModule,
      providers: [{ provide: PUSH_PROVIDER_OVERRIDES, useValue: overrides }],
    };
  }
}
