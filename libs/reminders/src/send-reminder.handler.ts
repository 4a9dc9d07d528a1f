import { Inject, Injectable } from '@nestjs/common';
import type pg from 'pg';
import type { Logger } from 'pino';
import { Clock, LOGGER } from '@nudge/config';
import { PG_POOL, withTransaction } from '@nudge/database';
import { type DeliveryRequest, PushDelivery, type SkipRecord } from '@nudge/push';
import { type BatchContext, type ClaimedJob, queryRows, SnoozeJob, TransientJobError } from '@nudge/queue';
import { isInQuietHours, nextOccurrence, quietHoursEnd } from '@nudge/scheduling';
import { isStale, quietHoursOf, type ReminderFacts, scheduleOf, type SendReminderPayload, type UserFacts } from './reminder-plan.js';
import { type ChainLink, RemindersService } from './reminders.service.js';

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

/** Jobs per handler call at most (registerBatch's maxBatch). */
export const SEND_REMINDER_BATCH = 100;

/** A job and the reminder chain it continues. */
interface JobLink extends ChainLink {
  job: ClaimedJob<SendReminderPayload>;
}

/** A job whose occurrence is to be delivered, with what its delivery needs. */
interface Deliverable extends JobLink {
  request: DeliveryRequest;
}

/**
 * Runs occurrences of reminders, a batch of jobs at a time. Everything is
 * decided afresh from the database at run time: a job for an old version, a
 * deleted or disabled reminder does nothing visible; quiet hours snooze it
 * (no attempt used); an occurrence too late to matter is skipped as stale.
 * Otherwise it delivers to every active device and, in the transaction that
 * completes the job, enqueues the next occurrence.
 *
 * Batched because a 08:00 herd is many small jobs: per batch one read of the
 * reminders, one of the devices and ledger, one insert of the `sending` rows,
 * one of the simulated pushes, one update of the outcomes, and one
 * transaction that completes the jobs and enqueues every next occurrence —
 * instead of about a dozen statements per reminder. Each job still ends on
 * its own: a device that may succeed later retries only its job.
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

  readonly handle = async (jobs: ClaimedJob<SendReminderPayload>[], ctx: BatchContext<SendReminderPayload>): Promise<void> => {
    const rows = await queryRows<ReminderRow>(
      this.pool,
      `SELECT r.id, r.user_id AS "userId", r.title, r.body, r.data, r.enabled, r.version, r.local_time AS "localTime",
              r.time_zone AS "timeZone", r.recurrence, r.start_date AS "startDate",
              u.time_zone AS "userTimeZone", u.quiet_hours_start AS "quietHoursStart", u.quiet_hours_end AS "quietHoursEnd",
              u.notifications_enabled AS "notificationsEnabled"
         FROM reminders r JOIN users u ON u.id = r.user_id
        WHERE r.id = ANY($1::uuid[])`,
      [[...new Set(jobs.map((job) => job.payload.reminderId))]],
    );
    const byId = new Map(rows.map((row) => [row.id, row]));
    const now = this.clock.now();
    const chain: JobLink[] = [];
    const skipped: SkipRecord[] = [];
    const deliverable: Deliverable[] = [];

    for (const job of jobs) {
      const { payload } = job;
      const row = byId.get(payload.reminderId);
      // Superseded by an edit (its replacement is queued), deleted, or disabled: nothing to show.
      if (!row || row.version !== payload.version || !row.enabled) continue;
      const user: UserFacts = { timeZone: row.userTimeZone, quietHoursStart: row.quietHoursStart, quietHoursEnd: row.quietHoursEnd };
      const schedule = scheduleOf(row, user);
      const at = new Date(payload.at);
      const link = { job, reminder: row, user, after: at };

      if (isStale(schedule, at, now)) {
        skipped.push({ jobId: job.id, userId: row.userId, reason: 'stale' });
        chain.push(link);
        this.logger.info({ jobId: job.id, reminderId: row.id, dueAt: payload.at }, 'reminder occurrence skipped: stale');
        continue;
      }
      if (!row.notificationsEnabled) {
        skipped.push({ jobId: job.id, userId: row.userId, reason: 'disabled' });
        chain.push(link);
        continue;
      }
      const quiet = quietHoursOf(user);
      if (quiet && isInQuietHours(quiet, user.timeZone, now)) {
        ctx.fail(job, new SnoozeJob(quietHoursEnd(quiet, user.timeZone, now), 'quiet hours'));
        continue;
      }
      deliverable.push({
        ...link,
        request: {
          jobId: job.id,
          userId: row.userId,
          title: row.title,
          body: row.body,
          data: { ...(row.data ?? {}), reminderId: row.id, occurrence: payload.localDate },
          // Worthless once the next occurrence is due.
          expiresAt: nextOccurrence(schedule, at)?.at,
        },
      });
    }

    await this.delivery.recordSkippedMany(skipped);
    const summaries = await this.delivery.deliverMany(deliverable.map((d) => d.request));
    // Jobs on their last attempt die if they fail: their chain must not die with them.
    const lastChance: ChainLink[] = [];
    deliverable.forEach((d, i) => {
      const { retryable, retryAfterSeconds } = summaries[i]!;
      if (retryable.length === 0) return void chain.push(d);
      ctx.fail(
        d.job,
        new TransientJobError(`${retryable.length} device(s) not reached: ${retryable.map((r) => r.reason).join('; ')}`, {
          retryAfterSeconds,
        }),
      );
      if (d.job.attempts >= d.job.maxAttempts) lastChance.push(d);
    });
    if (lastChance.length > 0) {
      await withTransaction(this.pool, (tx) => this.reminders.scheduleNextMany(tx, lastChance, this.clock.now()));
    }
    if (chain.length === 0) return;
    await ctx.completeWith(
      chain.map((link) => link.job),
      async (tx, held) => {
        const mine = new Set(held);
        await this.reminders.scheduleNextMany(
          tx,
          chain.filter((link) => mine.has(link.job)),
          this.clock.now(),
        );
      },
    );
  };
}
