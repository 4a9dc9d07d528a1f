import { type DynamicModule, Global, Injectable, Module, type OnApplicationShutdown } from '@nestjs/common';
import type pg from 'pg';
import type { Logger } from 'pino';
import { Registry } from 'prom-client';
import { Clock, CONFIG, type Config, LOGGER } from '@nudge/config';
import { PG_POOL } from '@nudge/database';
import { openAppCredentials } from './app-credentials.js';
import { AppProviders } from './app-providers.js';
import { findApp } from './apps.repository.js';
import { createPushProviders, describePushProviders, type PushProviderDependencies, type PushProviders } from './provider-registry.js';
import { SecretBox } from './secret-box.js';
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
  constructor(private readonly providers: AppProviders) {}

  /** Every app's providers, the default app's included. */
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
        return createPushProviders(config, providerDependencies(pool, clock, config, overrides));
      },
    },
    {
      // The apps' providers beside the default app's, built from their credentials on first use (docs/apps.md).
      provide: AppProviders,
      inject: [CONFIG, PG_POOL, Clock, PUSH_PROVIDERS, { token: PUSH_PROVIDER_OVERRIDES, optional: true }],
      useFactory: (config: Config, pool: pg.Pool, clock: Clock, defaults: PushProviders, overrides?: PushProviderOverrides) => {
        const box = config.secretKey && new SecretBox(config.secretKey);
        const deps = providerDependencies(pool, clock, config, overrides);
        return new AppProviders(defaults, {
          async build(appId) {
            const app = await findApp(pool, appId);
            if (!app) return undefined;
            const hasSecret = Boolean(app.apns || app.fcm || app.expo || app.webPush);
            if (hasSecret && !box) throw new Error('NUDGE_SECRET_KEY is not set in this process');
            const credentials = openAppCredentials(appId, app, box!, config.expo);
            return { version: app.version, providers: createPushProviders(credentials, deps) };
          },
        });
      },
    },
    {
      provide: PushDelivery,
      inject: [PG_POOL, AppProviders, Clock, Registry, CONFIG],
      useFactory: (pool: pg.Pool, providers: AppProviders, clock: Clock, registry: Registry, config: Config) => {
        const metrics = new PushMetrics(registry, pool);
        // The pace acts on the database's clock, not the injected one (see pace.repository.ts).
        return new PushDelivery(pool, providers, clock, metrics, new PushPacer(pool, { limits: config.pacing, metrics }));
      },
    },
    {
      provide: ExpoReceiptsService,
      inject: [PG_POOL, AppProviders, Clock, LOGGER],
      useFactory: (pool: pg.Pool, providers: AppProviders, clock: Clock, logger: Logger) =>
        new ExpoReceiptsService(pool, providers, clock, logger),
    },
    PushProvidersLifecycle,
  ],
  exports: [PUSH_PROVIDERS, AppProviders, PushDelivery, ExpoReceiptsService],
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

// Retry-After dates and FCM's TTL are read against the injected clock; tests point the clients at the local fakes.
function providerDependencies(pool: pg.Pool, clock: Clock, config: Config, overrides?: PushProviderOverrides): PushProviderDependencies {
  const now = () => clock.now();
  return {
    db: pool,
    simulated: { now, hangAll: config.simulatedPushHang, ...overrides?.simulated },
    apns: { now, ...overrides?.apns },
    fcm: { now, ...overrides?.fcm },
    webPush: { now, ...overrides?.webPush },
    expo: { now, ...overrides?.expo },
  };
}
