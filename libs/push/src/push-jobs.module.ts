import { Module } from '@nestjs/common';
import type pg from 'pg';
import { PG_POOL } from '@nudge/database';
import { Registry } from 'prom-client';
import { AppsService } from './apps.service.js';
import { PushMetrics } from './metrics.js';
import { NotificationsService } from './notifications.service.js';
import { TokenCleanupService } from './token-cleanup.service.js';

/**
 * The push lib's jobs without its provider clients: event notifications and
 * token cleanup, and the apps' credentials (AppsService). The API imports it
 * to enqueue; the worker also runs them.
 */
@Module({
  providers: [
    NotificationsService,
    TokenCleanupService,
    AppsService,
    // The API process too exposes the push counter (at 0), so that every /metrics has its series.
    {
      provide: PushMetrics,
      inject: [Registry, PG_POOL],
      useFactory: (registry: Registry, pool: pg.Pool) => new PushMetrics(registry, pool),
    },
  ],
  exports: [NotificationsService, TokenCleanupService, AppsService],
})
export class PushJobsModule {}
