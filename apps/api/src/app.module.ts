import { type DynamicModule, Module } from '@nestjs/common';
import { APP_FILTER, APP_GUARD } from '@nestjs/core';
import type pg from 'pg';
import type { Logger } from 'pino';
import { Registry } from 'prom-client';
import { type Clock, type Config, ConfigModule } from '@nudge/config';
import { DatabaseModule, PG_POOL } from '@nudge/database';
import { EventsModule } from '@nudge/events';
import { PushJobsModule } from '@nudge/push';
import { QueueMetrics } from '@nudge/queue';
import { RemindersModule } from '@nudge/reminders';
import { UsersModule } from '@nudge/users';
import { AuthGuard } from './auth/auth.guard.js';
import { TokenVerifier } from './auth/token-verifier.js';
import { DevicesController } from './devices/devices.controller.js';
import { HealthController } from './health/health.controller.js';
import { MeController } from './me/me.controller.js';
import { PreferencesController } from './me/preferences.controller.js';
import { MetricsController } from './metrics/metrics.controller.js';
import { NotificationsController } from './notifications/notifications.controller.js';
import { AppsController } from './ops/apps.controller.js';
import { OpsController } from './ops/ops.controller.js';
import { OpsPageController } from './ops/ops-page.controller.js';
import { DeliveryOpsService } from './ops/delivery-ops.service.js';
import { QueueOpsService } from './ops/queue-ops.service.js';
import { TokenCleanupController } from './ops/token-cleanup.controller.js';
import { UserOpsController } from './ops/user-ops.controller.js';
import { UserOpsService } from './ops/user-ops.service.js';
import { WebhooksController } from './ops/webhooks.controller.js';
import { NUDGE_JOB_KINDS } from './ops/job-kinds.js';
import { RemindersController } from './reminders/reminders.controller.js';
import { IdempotencyKeyErasure } from './http/idempotency.interceptor.js';
import { ProblemDetailsFilter } from './http/problem-details.filter.js';
import { rateLimiting } from './http/rate-limit.guard.js';

export interface ApiModuleOptions {
  config: Config;
  logger: Logger;
  databaseUrl: string;
  registry?: Registry;
  clock?: Clock;
  /** Extra modules to run in the same process, e.g. the worker when ROLE=all. */
  imports?: DynamicModule[];
}

@Module({})
export class ApiModule {
  static forRoot(options: ApiModuleOptions): DynamicModule {
    const registry = options.registry ?? new Registry();
    // With the worker in this process, its queue module owns the queue metrics;
    // an API-only process reads the same gauges for its own /metrics.
    const queueMetrics =
      options.config.role === 'api'
        ? [
            {
              provide: QueueMetrics,
              inject: [PG_POOL],
              useFactory: (pool: pg.Pool) =>
                new QueueMetrics({ registry, executor: pool, clock: options.clock, logger: options.logger, kinds: () => NUDGE_JOB_KINDS }),
            },
          ]
        : [];
    const rateLimit = rateLimiting(options.config);
    return {
      module: ApiModule,
      imports: [
        ConfigModule.forRoot({ config: options.config, logger: options.logger, clock: options.clock, registry }),
        DatabaseModule.forRoot({ url: options.databaseUrl }),
        UsersModule,
        RemindersModule,
        PushJobsModule,
        EventsModule,
        ...rateLimit.imports,
        ...(options.imports ?? []),
      ],
      controllers: [
        HealthController,
        MetricsController,
        MeController,
        PreferencesController,
        DevicesController,
        RemindersController,
        OpsController,
        AppsController,
        OpsPageController,
        UserOpsController,
        NotificationsController,
        TokenCleanupController,
        WebhooksController,
      ],
      providers: [
        ...queueMetrics,
        QueueOpsService,
        UserOpsService,
        DeliveryOpsService,
        TokenVerifier,
        IdempotencyKeyErasure,
        // Guards run in this order: the IP limit, authentication, the per-user limit.
        ...rateLimit.beforeAuth,
        { provide: APP_GUARD, useClass: AuthGuard },
        ...rateLimit.afterAuth,
        { provide: APP_FILTER, useClass: ProblemDetailsFilter },
      ],
    };
  }
}
