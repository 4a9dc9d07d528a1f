import { Module } from '@nestjs/common';
import { NotificationsService } from './notifications.service.js';
import { TokenCleanupService } from './token-cleanup.service.js';

/**
 * The push lib's jobs without its provider clients: event notifications and
 * token cleanup. The API imports it to enqueue; the worker also runs them.
 */
@Module({
  providers: [NotificationsService, TokenCleanupService],
  exports: [NotificationsService, TokenCleanupService],
})
export class PushJobsModule {}
