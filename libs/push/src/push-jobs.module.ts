import { Module } from '@nestjs/common';
import { Registry } from 'prom-client';
import { PushMetrics } from './metrics.js';
import { NotificationsService } from './notifications.service.js';
import { TokenCleanupService } from './token-cleanup.service.js';

/**
 * The push lib's jobs without its provider clients: event notifications and
 * token cleanup. The API imports it to enqueue; the worker also runs them.
 */
@Module({
  providers: [
    NotificationsService,
    TokenCleanupService,
    // The API process too exposes the push counter (at 0), so that every /metrics has its series.
    { provide: PushMetrics, inject: [Registry], useFactory: (registry: Registry) => new PushMetrics(registry) },
  ],
  exports: [NotificationsService, TokenCleanupService],
})
export class PushJobsModule {}
