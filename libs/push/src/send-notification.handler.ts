import { Inject, Injectable } from '@nestjs/common';
import type pg from 'pg';
import type { Logger } from 'pino';
import { Clock, CONFIG, type Config, LOGGER } from '@nudge/config';
import { PG_POOL, withTransaction } from '@nudge/database';
import { type ClaimedJob, type JobContext, queryRows, SnoozeJob } from '@nudge/queue';
import { isInQuietHours, quietHoursEnd } from '@nudge/scheduling';
import { loadCategoryPreferences, preferenceOf, underPreference, USER_SETTINGS } from '@nudge/users';
import { SEND_NOTIFICATION, type SendNotificationPayload } from './notifications.service.js';
import { deliveryOutcomeError, PushDelivery } from './push-delivery.js';

interface UserRow {
  timeZone: string;
  quietHoursStart: string | null;
  quietHoursEnd: string | null;
  notificationsEnabled: boolean;
}

const HOUR_MS = 3_600_000;

/**
 * Runs one `send_notification` job. The user's settings are read at run
 * time, in this order: notifications turned off → `skipped` / `disabled`;
 * the notification's category turned off → `skipped` / `category_disabled`;
 * inside quiet hours (the category's own, else the user's) → snoozed until
 * they end (no attempt used) unless the push is time sensitive and its
 * category allows that; over the user's hourly cap
 * (NOTIFICATIONS_PER_USER_PER_HOUR) → `skipped` / `rate_limited`, unless time
 * sensitive; no profile → `skipped` / `no_device`. Otherwise it delivers
 * through the ledger, and devices that may succeed later make the job retry
 * (the ledger skips the devices already reached); devices the pace held back
 * put it back until they may go, without using an attempt (docs/pacing.md).
 */
@Injectable()
export class SendNotificationHandler {
  constructor(
    @Inject(PG_POOL) private readonly pool: pg.Pool,
    @Inject(PushDelivery) private readonly delivery: PushDelivery,
    @Inject(Clock) private readonly clock: Clock,
    @Inject(LOGGER) private readonly logger: Pick<Logger, 'info'>,
    @Inject(CONFIG) private readonly config: Pick<Config, 'notificationsPerUserPerHour'>,
  ) {}

  readonly handle = async (job: ClaimedJob<SendNotificationPayload>, ctx?: Pick<JobContext, 'signal' | 'assertLease'>): Promise<void> => {
    const { payload } = job;
    const [user] = await queryRows<UserRow>(
      this.pool,
      `SELECT time_zone AS "timeZone", quiet_hours_start AS "quietHoursStart", quiet_hours_end AS "quietHoursEnd",
              notifications_enabled AS "notificationsEnabled"
         FROM ${USER_SETTINGS} u WHERE id = $1`,
      [payload.userId],
    );
    if (!user) {
      await this.delivery.recordSkipped(job.id, payload.userId, 'no_device');
      this.logger.info({ jobId: job.id, userId: payload.userId }, 'notification skipped: no such user');
      return;
    }
    // Time sensitive pierces quiet hours, not the user's own off switch.
    if (!user.notificationsEnabled) return this.delivery.recordSkipped(job.id, payload.userId, 'disabled');
    const preferences = await loadCategoryPreferences(this.pool, [{ userId: payload.userId, category: payload.category }]);
    const governed = underPreference(user, payload.timeSensitive, preferenceOf(preferences, payload.userId, payload.category));
    if (!governed.enabled) {
      this.logger.info({ jobId: job.id, category: payload.category }, 'notification skipped: category turned off');
      return this.delivery.recordSkipped(job.id, payload.userId, 'category_disabled');
    }
    const now = this.clock.now();
    if (!governed.timeSensitive && governed.user.quietHoursStart && governed.user.quietHoursEnd) {
      const quiet = { start: governed.user.quietHoursStart, end: governed.user.quietHoursEnd };
      if (isInQuietHours(quiet, user.timeZone, now)) throw new SnoozeJob(quietHoursEnd(quiet, user.timeZone, now), 'quiet hours');
    }
    // A time-sensitive push counts towards the cap but is never held back by it.
    const cap = governed.timeSensitive ? 0 : this.config.notificationsPerUserPerHour;
    const claim = { jobId: job.id, userId: payload.userId, kind: SEND_NOTIFICATION, cap, since: new Date(now.getTime() - HOUR_MS) };
    // Without a cap the claim is one statement (the rows marked with the kind), so no transaction of its own.
    const claimed =
      cap > 0
        ? await withTransaction(this.pool, (tx) => this.delivery.claimWithinCap(tx, claim))
        : await this.delivery.claimWithinCap(this.pool, claim);
    if (!claimed) {
      this.logger.info({ jobId: job.id, cap }, 'notification skipped: the user had their hourly cap of event pushes');
      return this.delivery.recordSkipped(job.id, payload.userId, 'rate_limited');
    }

    const summary = await this.delivery.deliver(
      {
        jobId: job.id,
        userId: payload.userId,
        title: payload.title,
        body: payload.body,
        defaultLocale: payload.defaultLocale,
        data: payload.data,
        // `notification:<key>`: a notification collapses on its idempotency key.
        collapseKey: job.idempotencyKey ?? undefined,
        timeSensitive: governed.timeSensitive,
        pushOptions: payload.pushOptions,
        // The caller's TTL runs from the send (after quiet hours), as the provider counts it.
        expiresAt: payload.ttlSeconds !== undefined ? new Date(now.getTime() + payload.ttlSeconds * 1000) : undefined,
        notification: true,
      },
      // Its timeout (SEND_NOTIFICATION_TIMEOUT_SECONDS), a lost lease or shutdown abort the provider calls;
      // a lease lapsed while this process was frozen stops them before they go.
      { signal: ctx?.signal, beforeSend: ctx && (() => ctx.assertLease()) },
    );
    // Devices that may succeed later retry the job; devices the pace held back (or a 429) snooze it, no attempt used.
    const unfinished = deliveryOutcomeError(summary);
    if (unfinished) throw unfinished;
  };
}
