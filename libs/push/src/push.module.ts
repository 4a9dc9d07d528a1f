import { Global, Inject, Injectable, Module, type OnApplicationShutdown } from '@nestjs/common';
import type pg from 'pg';
import type { Logger } from 'pino';
import { Clock, CONFIG, type Config, LOGGER } from '@nudge/config';
import { PG_POOL } from '@nudge/database';
import { createPushProviders, describePushProviders, type PushProviders } from './provider-registry.js';
import { PushDelivery } from './push-delivery.js';

export const PUSH_PROVIDERS = Symbol('PUSH_PROVIDERS');

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
      inject: [CONFIG, PG_POOL, LOGGER],
      useFactory: (config: Config, pool: pg.Pool, logger: Logger): PushProviders => {
        logger.info(describePushProviders(config));
        return createPushProviders(config, { db: pool });
      },
    },
    {
      provide: PushDelivery,
      inject: [PG_POOL, PUSH_PROVIDERS, Clock],
      useFactory: (pool: pg.Pool, providers: PushProviders, clock: Clock) => new PushDelivery(pool, providers, clock),
    },
    PushProvidersLifecycle,
  ],
  exports: [PUSH_PROVIDERS, PushDelivery],
})
export class PushModule {}
