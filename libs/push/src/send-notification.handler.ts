import { Inject, Injectable } from '@nestjs/common';
import type pg from 'pg';
import type { Logger } from 'pino';
import { Clock, LOGGER } from '@nudge/config';
import { PG_POOL } from '@nudge/database';
import { type ClaimedJob, type JobContext, queryRows, SnoozeJob, TransientJobError } from '@nudge/queue';
import { isInQuietHours, quietHoursEnd } from '@nudge/scheduling';
import type { SendNotificationPayload } from './notifications.service.js';
import { PushDelivery } from './push-delivery.js';

interface UserRow {
  timeZone: string;
  quietHoursStart: string | null;
  quietHoursEnd: string | null;
  notificationsEnabled: boolean;
}

/**
 * Runs one `send_notification` job. The user's settings are read at run
 * time: notifications turned off → `skipped` / `disabled`; inside quiet hours
 * → snoozed until they end (no attempt used) unless the push is time
 * sensitive; no profile → `skipped` / `no_device`. Otherwise it delivers
 * through the ledger, and devices that may succeed later make the job retry
 * (the ledger skips the devices already reached).
 */
@Injectable()
export class SendNotificationHandler {
  constructor(
    @Inject(PG_POOL) private readonly pool: pg.Pool,
    @Inject(PushDelivery) private readonly delivery: PushDelivery,
    @Inject(Clock) private readonly clock: Clock,
    @Inject(LOGGER) private readonly logger: Pick<Logger, 'info'>,
  ) {}

  readonly handle = async (job: ClaimedJob<SendNotificationPayload>, ctx?: Pick<JobContext, 'signal'>): Promise<void> => {
    const { payload } = job;
    const [user] = await queryRows<UserRow>(
      this.pool,
      `SELECT time_zone AS "timeZone", quiet_hours_start AS "quietHoursStart", quiet_hours_end AS "quietHoursEnd",
              notifications_enabled AS "notificationsEnabled"
         FROM users WHERE id = $1`,
      [payload.userId],
    );
    if (!user) {
      await this.delivery.recordSkipped(job.id, payload.userId, 'no_device');
      this.logger.info({ jobId: job.id, userId: payload.userId }, 'notification skipped: no such user');
      return;
    }
    // Time sensitive pierces quiet hours, not the user's own off switch.
    if (!user.notificationsEnabled) return this.delivery.recordSkipped(job.id, payload.userId, 'disabled');
    if (!payload.timeSensitive && user.quietHoursStart && user.quietHoursEnd) {
      const quiet = { start: user.quietHoursStart, end: user.quietHoursEnd };
      const now = this.clock.now();
      if (isInQuietHours(quiet, user.timeZone, now)) throw new SnoozeJob(quietHoursEnd(quiet, user.timeZone, now), 'quiet hours');
    }

    const summary = await this.delivery.deliver(
      {
        jobId: job.id,
        userId: payload.userId,
        title: payload.title,
        body: payload.body,
        data: payload.data,
        // `notification:<key>`: a notification collapses on its idempotency key.
        collapseKey: job.idempotencyKey ?? undefined,
        timeSensitive: payload.timeSensitive,
        notification: true,
      },
      // Its timeout (SEND_NOTIFICATION_TIMEOUT_SECONDS), a lost lease or shutdown abort the provider calls.
      { signal: ctx?.signal },
    );
    if (summary.retryable.length > 0) {
      throw new TransientJobError(
        `${summary.retryable.length} device(s) not reached: ${summary.retryable.map((r) => r.reason).join('; ')}`,
        { retryAfterSeconds: summary.retryAfterSeconds },
      );
    }
  };
}
