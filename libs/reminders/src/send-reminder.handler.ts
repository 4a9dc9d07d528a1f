import { Inject, Injectable } from '@nestjs/common';
import type pg from 'pg';
import type { Logger } from 'pino';
import { Clock, LOGGER } from '@nudge/config';
import { PG_POOL, withTransaction } from '@nudge/database';
import { PushDelivery } from '@nudge/push';
import { type ClaimedJob, type JobContext, queryRows, SnoozeJob, TransientJobError } from '@nudge/queue';
import { isInQuietHours, nextOccurrence, quietHoursEnd } from '@nudge/scheduling';
import { isStale, quietHoursOf, type ReminderFacts, scheduleOf, type SendReminderPayload, type UserFacts } from './reminder-plan.js';
import { RemindersService } from './reminders.service.js';

interface ReminderRow extends ReminderFacts {
  userId: string;
  userTimeZone: string;
  quietHoursStart: string | null;
  quietHoursEnd: string | null;
  title: string;
  body: string | null;
  data: Record<string, unknown> | null;
  enabled: boolean;
  notificationsEnabled: boolean;
}

/**
 * Runs one occurrence of one reminder. Everything is decided afresh from the
 * database at run time: a job for an old version, a deleted or disabled
 * reminder does nothing visible; quiet hours snooze it (no attempt used); an
 * occurrence too late to matter is skipped as stale. Otherwise it delivers to
 * every active device and, in the transaction that completes the job,
 * enqueues the next occurrence.
 */
@Injectable()
export class SendReminderHandler {
  constructor(
    @Inject(PG_POOL) private readonly pool: pg.Pool,
    private readonly delivery: PushDelivery,
    private readonly reminders: RemindersService,
    private readonly clock: Clock,
    @Inject(LOGGER) private readonly logger: Logger,
  ) {}

  readonly handle = async (job: ClaimedJob<SendReminderPayload>, ctx: JobContext): Promise<void> => {
    const { payload } = job;
    const [row] = await queryRows<ReminderRow>(
      this.pool,
      `SELECT r.id, r.user_id AS "userId", r.title, r.body, r.data, r.enabled, r.version, r.local_time AS "localTime",
              r.time_zone AS "timeZone", r.recurrence, r.start_date AS "startDate",
              u.time_zone AS "userTimeZone", u.quiet_hours_start AS "quietHoursStart", u.quiet_hours_end AS "quietHoursEnd",
              u.notifications_enabled AS "notificationsEnabled"
         FROM reminders r JOIN users u ON u.id = r.user_id
        WHERE r.id = $1`,
      [payload.reminderId],
    );
    // Superseded by an edit (its replacement is queued), deleted, or disabled: nothing to show.
    if (!row || row.version !== payload.version || !row.enabled) return;
    const user: UserFacts = { timeZone: row.userTimeZone, quietHoursStart: row.quietHoursStart, quietHoursEnd: row.quietHoursEnd };
    const reminder = row;
    const schedule = scheduleOf(reminder, user);
    const at = new Date(payload.at);
    const now = this.clock.now();

    if (isStale(schedule, at, now)) {
      await this.delivery.recordSkipped(job.id, row.userId, 'stale');
      this.logger.info({ jobId: job.id, reminderId: row.id, dueAt: payload.at }, 'reminder occurrence skipped: stale');
      return this.completeAndChain(ctx, reminder, user, at);
    }
    if (!row.notificationsEnabled) {
      await this.delivery.recordSkipped(job.id, row.userId, 'disabled');
      return this.completeAndChain(ctx, reminder, user, at);
    }
    const quiet = quietHoursOf(user);
    if (quiet && isInQuietHours(quiet, user.timeZone, now)) {
      throw new SnoozeJob(quietHoursEnd(quiet, user.timeZone, now), 'quiet hours');
    }

    const successor = nextOccurrence(schedule, at);
    const summary = await this.delivery.deliver({
      jobId: job.id,
      userId: row.userId,
      title: row.title,
      body: row.body,
      data: { ...(row.data ?? {}), reminderId: row.id, occurrence: payload.localDate },
      // Worthless once the next occurrence is due.
      expiresAt: successor?.at,
    });
    if (summary.retryable.length > 0) {
      const error = new TransientJobError(
        `${summary.retryable.length} device(s) not reached: ${summary.retryable.map((r) => r.reason).join('; ')}`,
        { retryAfterSeconds: summary.retryAfterSeconds },
      );
      // On the last attempt the job will be dead: the chain must not die with it.
      if (job.attempts >= job.maxAttempts) await this.chainOutsideJob(reminder, user, at);
      throw error;
    }
    await this.completeAndChain(ctx, reminder, user, at);
  };

  private async completeAndChain(ctx: JobContext, reminder: ReminderRow, user: UserFacts, at: Date): Promise<void> {
    await ctx.completeWith(async (tx) => {
      await this.reminders.scheduleNext(tx, reminder, user, at, this.clock.now());
    });
  }

  private async chainOutsideJob(reminder: ReminderRow, user: UserFacts, at: Date): Promise<void> {
    await withTransaction(this.pool, (tx) => this.reminders.scheduleNext(tx, reminder, user, at, this.clock.now()));
  }
}
