import { Inject, Injectable } from '@nestjs/common';
import type { Context } from '@opentelemetry/api';
import type pg from 'pg';
import type { Logger } from 'pino';
import { Clock, LOGGER } from '@nudge/config';
import { PG_POOL, withTransaction } from '@nudge/database';
import {
  deliveryOutcomeError,
  type DeliveryRequest,
  jobsThatReachedADevice,
  PushDelivery,
  type PushOptions,
  type SkipRecord,
} from '@nudge/push';
import { type BatchContext, type ClaimedJob, jobTraceContext, queryRows, SnoozeJob } from '@nudge/queue';
import { nextOccurrence } from '@nudge/scheduling';
import { loadCategoryPreferences, preferenceOf, underPreference, USER_SETTINGS } from '@nudge/users';
import { type ChainLink, OccurrenceScheduler } from './occurrence-scheduler.js';
import { clearSnoozes, deferOccurrences, type Settlement, settleOccurrences } from './occurrences.repository.js';
import { textOf } from './reminder.view.js';
import {
  allowedFrom,
  isStale,
  type OccurrenceSkipReason,
  REMINDER_ACTION_CATEGORY,
  type ReminderFacts,
  scheduleOf,
  type SendReminderPayload,
  STALE_AFTER_MS,
  type UserFacts,
} from './reminder-plan.js';

interface ReminderRow extends Omit<ReminderFacts, 'timeZone'>, UserFacts {
  jobId: string;
  reminderTimeZone: string | null;
  title: string;
  body: string | null;
  titleI18n: Record<string, string> | null;
  bodyI18n: Record<string, string> | null;
  defaultLocale: string | null;
  data: Record<string, unknown> | null;
  pushOptions: PushOptions;
  enabled: boolean;
  notificationsEnabled: boolean;
  occurrenceStatus: string | null;
  occurrenceJobId: string | null;
  snoozeJobId: string | null;
  dueAt: Date | null;
  earliestAt: Date | null;
  snoozedUntil: Date | null;
}

/** Jobs per handler call at most (registerBatch's maxBatch). */
export const SEND_REMINDER_BATCH = 100;

/** A job whose occurrence is to be delivered, with what its delivery needs. */
interface Deliverable {
  job: ClaimedJob<SendReminderPayload>;
  row: ReminderRow;
  link: ChainLink;
  request: DeliveryRequest;
}

/**
 * Runs occurrences of reminders, a batch of jobs at a time. The occurrence's
 * row decides, at run time: a job delivers only while it still carries a
 * scheduled occurrence (an edit, travel or action may have replaced or
 * settled it), so a (reminder, local date) is delivered at most once whatever
 * its versions. Quiet hours defer it (no attempt used) and move its earliest
 * allowed instant; an occurrence too late to matter is skipped as stale.
 * Otherwise it goes to every active device, and the transaction that
 * completes the job settles the occurrence and enqueues the next one.
 * A snooze job re-delivers a delivered occurrence once.
 *
 * Batched because a 08:00 herd is many small jobs: per batch one read of the
 * reminders and occurrences, the delivery ledger's fixed statements, and one
 * transaction that completes the jobs, settles their occurrences and enqueues
 * every next one. Each job still ends on its own.
 */
@Injectable()
export class SendReminderHandler {
  constructor(
    @Inject(PG_POOL) private readonly pool: pg.Pool,
    private readonly delivery: PushDelivery,
    private readonly scheduler: OccurrenceScheduler,
    private readonly clock: Clock,
    @Inject(LOGGER) private readonly logger: Logger,
  ) {}

  readonly handle = async (jobs: ClaimedJob<SendReminderPayload>[], ctx: BatchContext<SendReminderPayload>): Promise<void> => {
    const rows = await queryRows<ReminderRow>(
      this.pool,
      `SELECT k.job_id::text AS "jobId", r.id, r.user_id AS "userId", r.title, r.body, r.data, r.push_options AS "pushOptions", r.enabled, r.version,
              r.title_i18n AS "titleI18n", r.body_i18n AS "bodyI18n", r.default_locale AS "defaultLocale",
              r.local_time AS "localTime", r.time_zone AS "reminderTimeZone", r.recurrence, r.start_date AS "startDate",
              r.time_sensitive AS "timeSensitive", r.category, u.time_zone AS "timeZone", u.quiet_hours_start AS "quietHoursStart",
              u.quiet_hours_end AS "quietHoursEnd", u.notifications_enabled AS "notificationsEnabled",
              o.status AS "occurrenceStatus", o.job_id::text AS "occurrenceJobId", o.snooze_job_id::text AS "snoozeJobId",
              o.due_at AS "dueAt", o.earliest_at AS "earliestAt", o.snoozed_until AS "snoozedUntil"
         FROM unnest($1::bigint[], $2::uuid[], $3::text[]) AS k(job_id, reminder_id, local_date)
         JOIN reminders r ON r.id = k.reminder_id
         JOIN ${USER_SETTINGS} u ON u.id = r.user_id
         LEFT JOIN reminder_occurrences o ON o.reminder_id = k.reminder_id AND o.local_date = k.local_date`,
      [jobs.map((j) => j.id), jobs.map((j) => j.payload.reminderId), jobs.map((j) => j.payload.localDate)],
    );
    const byJob = new Map(rows.map((row) => [row.jobId, row]));
    const preferences = await loadCategoryPreferences(this.pool, rows);
    const now = this.clock.now();
    const settled: { job: ClaimedJob<SendReminderPayload>; settlement: Settlement; link: ChainLink | null }[] = [];
    const ledgerSkips: SkipRecord[] = [];
    const deferrals: { reminderId: string; localDate: string; earliestAt: Date }[] = [];
    const lapsedSnoozes: ClaimedJob<SendReminderPayload>[] = [];
    const deliverable: Deliverable[] = [];

    const settle = (
      job: ClaimedJob<SendReminderPayload>,
      row: ReminderRow,
      status: 'sent' | 'skipped',
      reason: OccurrenceSkipReason | null,
    ) => {
      const link = row.enabled ? linkOf(row, job.payload.localDate, jobTraceContext(job)) : null;
      settled.push({ job, link, settlement: { reminderId: row.id, localDate: job.payload.localDate, jobId: job.id, status, reason } });
      if (reason === 'stale' || reason === 'disabled' || reason === 'category_disabled' || reason === 'no_device') {
        ledgerSkips.push({ jobId: job.id, userId: row.userId, reason });
      }
    };

    for (const job of jobs) {
      const { payload } = job;
      const row = byJob.get(job.id);
      const snooze = payload.snooze === true;
      // Deleted, superseded (an edit or travel replaced this job), or already settled (done / skipped ahead): nothing to show.
      if (!row || row.occurrenceStatus === null) continue;
      if (
        snooze
          ? row.snoozeJobId !== job.id || row.occurrenceStatus !== 'snoozed'
          : row.occurrenceJobId !== job.id || row.occurrenceStatus !== 'scheduled'
      ) {
        continue;
      }
      // The category's preference: on or off, and the quiet hours and time-sensitive rule that apply.
      const governed = underPreference(
        { timeZone: row.timeZone, quietHoursStart: row.quietHoursStart, quietHoursEnd: row.quietHoursEnd } satisfies UserFacts,
        row.timeSensitive,
        preferenceOf(preferences, row.userId, row.category),
      );
      const user = governed.user;
      const reminder = { ...row, timeZone: row.reminderTimeZone, timeSensitive: governed.timeSensitive };
      const schedule = scheduleOf(reminder, user);
      const occurrence = { at: row.dueAt! };
      const earliestAt = snooze ? row.snoozedUntil! : row.earliestAt!;

      // A snooze is a request of its own: late only by its own instant, not by the occurrence's successor.
      const stale = snooze ? now.getTime() - earliestAt.getTime() > STALE_AFTER_MS : isStale(schedule, occurrence, earliestAt, now);
      // The user's off switch first, then the category's, then staleness.
      if (!row.enabled || !row.notificationsEnabled || !governed.enabled || stale) {
        const reason = !row.enabled || !row.notificationsEnabled ? 'disabled' : !governed.enabled ? 'category_disabled' : 'stale';
        if (snooze) lapsedSnoozes.push(job);
        else settle(job, row, 'skipped', reason);
        this.logger.info(
          { jobId: job.id, reminderId: row.id, occurrence: payload.localDate, reason, snooze },
          'reminder occurrence skipped',
        );
        continue;
      }
      const allowed = allowedFrom(reminder, user, now);
      if (allowed > now) {
        if (!snooze) deferrals.push({ reminderId: row.id, localDate: payload.localDate, earliestAt: allowed });
        ctx.fail(job, new SnoozeJob(allowed, 'quiet hours'));
        continue;
      }
      deliverable.push({
        job,
        row,
        link: linkOf(row, payload.localDate, jobTraceContext(job)),
        request: {
          jobId: job.id,
          userId: row.userId,
          // Strings, or maps by language: PushDelivery picks each device's.
          ...textOf(row),
          data: { ...(row.data ?? {}), reminderId: row.id, occurrence: payload.localDate },
          // One collapse id per reminder: a newer occurrence replaces an older undelivered one, a retry or snooze its own.
          collapseKey: `reminder:${row.id}`,
          actionCategory: REMINDER_ACTION_CATEGORY,
          timeSensitive: governed.timeSensitive,
          pushOptions: row.pushOptions,
          // Worthless once the next occurrence is due.
          expiresAt: nextOccurrence(schedule, occurrence.at)?.at,
          traceContext: jobTraceContext(job),
        },
      });
    }

    // A retried job, or one the push pace put back (its attempt given back), may have reached some devices
    // before it went stale: then the occurrence was sent.
    const retried = settled.filter((s) => s.settlement.reason === 'stale');
    if (retried.length > 0) {
      const reached = await jobsThatReachedADevice(
        this.pool,
        retried.map((s) => s.job.id),
      );
      for (const s of retried) {
        if (!reached.has(s.job.id)) continue;
        s.settlement = { ...s.settlement, status: 'sent', reason: null };
      }
    }
    await this.delivery.recordSkippedMany(
      ledgerSkips.filter((skip) => !retried.some((s) => s.job.id === skip.jobId && s.settlement.status === 'sent')),
    );
    if (deferrals.length > 0) await deferOccurrences(this.pool, deferrals, now);
    // The batch's timeout (SEND_REMINDER_TIMEOUT_SECONDS) or shutdown abort the provider calls; a lease
    // lapsed while this process was frozen stops them before they go.
    const summaries = await this.delivery.deliverMany(
      deliverable.map((d) => d.request),
      { signal: ctx.signal, beforeSend: () => ctx.assertLease() },
    );
    const delivered: ClaimedJob<SendReminderPayload>[] = [];
    // Jobs on their last attempt die if they fail: their occurrence is given up, visibly, and the chain goes on.
    const lastChance: typeof settled = [];
    deliverable.forEach((d, i) => {
      const summary = summaries[i]!;
      const snooze = d.job.payload.snooze === true;
      const unfinished = deliveryOutcomeError(summary);
      // Held back by the push pace, or its app's rejected credentials: back later, no attempt used, the occurrence
      // still scheduled (docs/pacing.md, docs/apps.md).
      if (unfinished instanceof SnoozeJob) return void ctx.fail(d.job, unfinished);
      if (unfinished) {
        ctx.fail(d.job, unfinished);
        if (d.job.attempts >= d.job.maxAttempts && !snooze) {
          // Some devices got it: the user saw the occurrence.
          const reached = summary.sent > 0;
          lastChance.push({
            job: d.job,
            link: d.link,
            settlement: settlementOf(d, reached ? 'sent' : 'skipped', reached ? null : 'failed'),
          });
        }
        return;
      }
      if (snooze) return void delivered.push(d.job);
      if (summary.sent > 0) settled.push({ job: d.job, link: d.link, settlement: settlementOf(d, 'sent', null) });
      else
        settled.push({
          job: d.job,
          link: d.link,
          settlement: settlementOf(d, 'skipped', summary.permanentFailures > 0 ? 'failed' : 'no_device'),
        });
    });
    if (lastChance.length > 0) {
      await withTransaction(this.pool, (tx) => this.settleAndContinue(tx, lastChance));
    }

    const snoozesDone = [...delivered, ...lapsedSnoozes];
    const completing = [...settled.map((s) => s.job), ...snoozesDone];
    if (completing.length === 0) return;
    await ctx.completeWith(completing, async (tx, held) => {
      const mine = new Set(held);
      await this.settleAndContinue(
        tx,
        settled.filter((s) => mine.has(s.job)),
      );
      await clearSnoozes(
        tx,
        snoozesDone
          .filter((job) => mine.has(job))
          .map((job) => ({ reminderId: job.payload.reminderId, localDate: job.payload.localDate, jobId: job.id })),
        this.clock.now(),
      );
    });
  };

  // Settles the occurrences, then continues each chain from the reminder as
  // it is now: read again under a share lock, so an edit or travel that
  // committed while the batch was sending is planned with, not overwritten.
  private async settleAndContinue(tx: pg.PoolClient, settled: { settlement: Settlement; link: ChainLink | null }[]): Promise<void> {
    const now = this.clock.now();
    const ended = await settleOccurrences(
      tx,
      settled.map((s) => s.settlement),
      now,
    );
    const links = settled.flatMap((s) => (s.link && ended.has(s.settlement.jobId) ? [s.link] : []));
    if (links.length === 0) return;
    const fresh = await queryRows<ReminderRow>(
      tx,
      `SELECT r.id, r.user_id AS "userId", r.enabled, r.version, r.local_time AS "localTime", r.time_zone AS "reminderTimeZone",
              r.recurrence, r.start_date AS "startDate", r.time_sensitive AS "timeSensitive", r.category, u.time_zone AS "timeZone",
              u.quiet_hours_start AS "quietHoursStart", u.quiet_hours_end AS "quietHoursEnd"
         FROM reminders r JOIN ${USER_SETTINGS} u ON u.id = r.user_id
        WHERE r.id = ANY($1::uuid[])
        FOR SHARE OF r`,
      [links.map((l) => l.reminder.id)],
    );
    const byId = new Map(fresh.map((row) => [row.id, row]));
    await this.scheduler.continueChains(
      tx,
      links.flatMap((link) => {
        const row = byId.get(link.reminder.id);
        return row ? [linkOf(row, link.afterDate!, link.traceContext)] : [];
      }),
      now,
    );
  }
}

// traceContext: the job that ran `localDate`, which the next occurrence's job links to (docs/tracing.md).
function linkOf(row: ReminderRow, localDate: string, traceContext: Context | undefined): ChainLink {
  return {
    reminder: { ...row, timeZone: row.reminderTimeZone },
    user: { timeZone: row.timeZone, quietHoursStart: row.quietHoursStart, quietHoursEnd: row.quietHoursEnd },
    afterDate: localDate,
    traceContext,
  };
}

function settlementOf(d: Deliverable, status: 'sent' | 'skipped', reason: OccurrenceSkipReason | null): Settlement {
  return { reminderId: d.row.id, localDate: d.job.payload.localDate, jobId: d.job.id, status, reason };
}
