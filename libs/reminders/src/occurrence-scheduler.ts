import { Inject, Injectable } from '@nestjs/common';
import type { Context } from '@opentelemetry/api';
import { CONFIG, type Config } from '@nudge/config';
import { cancelJobs, enqueue, enqueueMany, getJobs, type QueryExecutor } from '@nudge/queue';
import { loadCategoryPreferences, preferenceOf, underPreference } from '@nudge/users';
import {
  type ChainState,
  chainState,
  deleteScheduled,
  linkJobs,
  type NewOccurrence,
  settledDatesAfter,
  skipScheduled,
  upsertOccurrences,
} from './occurrences.repository.js';
import {
  type ChainPlan,
  planChain,
  type PlannedOccurrence,
  type ReminderFacts,
  SEND_REMINDER,
  type SendReminderPayload,
  type UserFacts,
} from './reminder-plan.js';

/** One reminder whose chain continues after `afterDate` (the date that just ran, or was acted on). */
export interface ChainLink {
  reminder: ReminderFacts & { enabled: boolean };
  user: UserFacts;
  afterDate: string | null;
  /** The trace of the job that ran `afterDate` (jobTraceContext): the next occurrence's job links to it (docs/tracing.md). */
  traceContext?: Context;
}

/** Attempts of a reminder's job before the occurrence is given up as `failed`. */
export const SEND_REMINDER_ATTEMPTS = 8;

/**
 * The one owner of a reminder's chain of occurrences, for the API (creation,
 * edits, travel, actions: RemindersService, OccurrencesService), the worker
 * (SendReminderHandler, after each occurrence) and the sweep (ReminderSweep):
 * it plans with the pure planChain, enqueues the job and writes the
 * occurrence rows in the caller's transaction. Every send_reminder job —
 * a chain's next occurrence or a snooze's re-delivery — is enqueued here.
 */
@Injectable()
export class OccurrenceScheduler {
  constructor(@Inject(CONFIG) private readonly config: Config) {}

  /**
   * Continues each chain after its date: enqueues the next occurrence, records
   * the ones passed over as stale. Statements per call, whatever the number of
   * links: one read of settled dates, one enqueue, one write of rows, one of links.
   */
  async continueChains(tx: QueryExecutor, links: readonly ChainLink[], now: Date): Promise<(PlannedOccurrence | null)[]> {
    const live = links.filter((l) => l.reminder.enabled);
    const settled = await settledDatesAfter(
      tx,
      live.map((l) => ({ reminderId: l.reminder.id, afterDate: l.afterDate })),
    );
    const governed = await governedByCategory(tx, links);
    const plans = links.map((link, i) =>
      link.reminder.enabled
        ? planChain({
            reminder: governed[i]!.reminder,
            user: governed[i]!.user,
            now,
            jitterSeconds: this.config.reminderJitterSeconds,
            mode: 'chain',
            afterDate: link.afterDate,
            settled: settled.get(link.reminder.id) ?? new Set(),
          })
        : null,
    );
    await this.write(
      tx,
      plans.map((plan, i) => ({ plan, reminder: links[i]!.reminder, traceContext: links[i]!.traceContext })),
      now,
    );
    return plans.map((plan) => plan?.next ?? null);
  }

  /**
   * Plans a reminder again after its schedule changed (creation, an edit of
   * time, zone, rule or start, travel, enabling, a repair). The pending
   * occurrence's queued job is replaced; one that is already running is left
   * to finish (it delivers, then the chain continues under the new schedule).
   * Returns the occurrence now pending. `created`: the reminder was inserted
   * in this transaction, so it has no occurrence yet and none is read (three
   * statements fewer for POST /v1/reminders).
   */
  async replan(
    tx: QueryExecutor,
    reminder: ReminderFacts & { enabled: boolean },
    user: UserFacts,
    now: Date,
    options: { created?: boolean } = {},
  ): Promise<PlannedOccurrence | null> {
    const state: ChainState = options.created
      ? { pending: null, lastSettled: null, settled: new Set() }
      : await chainState(tx, reminder.id, now);
    const { pending } = state;
    // A running job delivers the occurrence; the chain then continues from the reminder as it is now.
    if (pending?.jobId && !(await this.release(tx, pending.jobId, now))) return null;
    if (!reminder.enabled) {
      if (pending) await this.dropPending(tx, reminder.id, pending.localDate, pending.earliestAt, 'disabled', now);
      return null;
    }
    const [governed] = await governedByCategory(tx, [{ reminder, user }]);
    const plan = planChain({
      reminder: governed!.reminder,
      user: governed!.user,
      now,
      jitterSeconds: this.config.reminderJitterSeconds,
      mode: 'replan',
      afterDate: state.lastSettled,
      pendingDate: pending?.localDate ?? null,
      settled: state.settled,
    });
    if (
      pending &&
      plan.next?.occurrence.localDate !== pending.localDate &&
      !plan.skipped.some((s) => s.occurrence.localDate === pending.localDate)
    ) {
      // The pending date is no longer produced by the schedule (or comes later).
      await this.dropPending(tx, reminder.id, pending.localDate, pending.earliestAt, 'rescheduled', now);
    }
    await this.write(tx, [{ plan, reminder }], now);
    return plan.next;
  }

  /**
   * Takes an occurrence's job out of the queue so that something else may
   * decide its fate: true when it was cancelled (or had already ended), false
   * when a worker is running it right now.
   */
  async release(tx: QueryExecutor, jobId: string, now: Date): Promise<boolean> {
    if ((await cancelJobs(tx, [jobId], now)).length > 0) return true;
    return (await getJobs(tx, [jobId])).get(jobId)?.status !== 'running';
  }

  /**
   * A snooze: one more delivery of an occurrence already delivered, at
   * `until`, beside the chain (the next regular occurrence is unaffected).
   * Returns the job's id.
   */
  async snooze(
    tx: QueryExecutor,
    reminder: ReminderFacts,
    occurrence: { localDate: string; at: Date },
    until: Date,
    now: Date,
  ): Promise<string> {
    const payload: SendReminderPayload = {
      reminderId: reminder.id,
      userId: reminder.userId,
      version: reminder.version,
      localDate: occurrence.localDate,
      at: occurrence.at.toISOString(),
      snooze: true,
    };
    const { job } = await enqueue(
      tx,
      {
        kind: SEND_REMINDER,
        payload,
        runAt: until,
        idempotencyKey: `reminder:${reminder.id}:${occurrence.localDate}:snooze:${now.getTime()}`,
        maxAttempts: SEND_REMINDER_ATTEMPTS,
      },
      { now },
    );
    await linkJobs(
      tx,
      [
        {
          reminderId: reminder.id,
          jobId: job.id,
          version: reminder.version,
          localDate: occurrence.localDate,
          dueAt: until,
          purpose: 'snooze',
        },
      ],
      now,
    );
    return job.id;
  }

  /** Withdraws a snooze's re-delivery that has not run yet (a new snooze replaces it, done ends it). */
  async cancelSnooze(tx: QueryExecutor, jobId: string, now: Date): Promise<void> {
    await cancelJobs(tx, [jobId], now);
  }

  /** Cancels the queued jobs of the pending occurrence when a reminder stops (disable, delete). */
  async stop(tx: QueryExecutor, reminder: ReminderFacts & { enabled: boolean }, user: UserFacts, now: Date): Promise<void> {
    await this.replan(tx, { ...reminder, enabled: false }, user, now);
  }

  // A pending occurrence that was already due is recorded skipped; one still ahead simply is no more.
  private async dropPending(
    tx: QueryExecutor,
    reminderId: string,
    localDate: string,
    earliestAt: Date,
    reason: 'disabled' | 'rescheduled',
    now: Date,
  ) {
    if (earliestAt <= now) await skipScheduled(tx, reminderId, localDate, reason, now);
    else await deleteScheduled(tx, reminderId, localDate);
  }

  private async write(
    tx: QueryExecutor,
    plans: readonly { plan: ChainPlan | null; reminder: ReminderFacts; traceContext?: Context }[],
    now: Date,
  ): Promise<void> {
    const rows: NewOccurrence[] = [];
    const next: { plan: PlannedOccurrence; reminder: ReminderFacts; timeZone: string; traceContext?: Context }[] = [];
    for (const { plan, reminder, traceContext } of plans) {
      if (!plan) continue;
      for (const { occurrence, reason } of plan.skipped) {
        rows.push({
          reminderId: reminder.id,
          localDate: occurrence.localDate,
          status: 'skipped',
          reason,
          dueAt: occurrence.at,
          earliestAt: occurrence.at,
          jobId: null,
          version: reminder.version,
          timeZone: plan.timeZone,
        });
      }
      if (plan.next) next.push({ plan: plan.next, reminder, timeZone: plan.timeZone, traceContext });
    }
    if (next.length > 0) {
      const jobs = await enqueueMany(
        tx,
        next.map(({ plan, traceContext }) => ({
          kind: SEND_REMINDER,
          payload: plan.payload,
          runAt: plan.runAt,
          idempotencyKey: plan.idempotencyKey,
          maxAttempts: SEND_REMINDER_ATTEMPTS,
          traceContext,
        })),
        { now },
      );
      next.forEach(({ plan, reminder, timeZone }, i) =>
        rows.push({
          reminderId: reminder.id,
          localDate: plan.occurrence.localDate,
          status: 'scheduled',
          reason: null,
          dueAt: plan.occurrence.at,
          earliestAt: plan.earliestAt,
          jobId: jobs[i]!.job.id,
          version: reminder.version,
          timeZone,
        }),
      );
      await linkJobs(
        tx,
        next.map(({ plan, reminder }, i) => ({
          reminderId: reminder.id,
          jobId: jobs[i]!.job.id,
          version: reminder.version,
          localDate: plan.occurrence.localDate,
          dueAt: plan.occurrence.at,
          purpose: 'regular' as const,
        })),
        now,
      );
    }
    await upsertOccurrences(tx, rows, now);
  }
}

/**
 * The facts each reminder is planned with under its category's preference:
 * the category's quiet hours in place of the user's, and timeSensitive only
 * where the category allows it. One read for all of them.
 */
export async function governedByCategory<R extends ReminderFacts, U extends UserFacts>(
  tx: QueryExecutor,
  items: readonly { reminder: R; user: U }[],
): Promise<{ reminder: R; user: U; enabled: boolean }[]> {
  const preferences = await loadCategoryPreferences(
    tx,
    items.map(({ reminder }) => ({ userId: reminder.userId, category: reminder.category })),
  );
  return items.map(({ reminder, user }) => {
    const governed = underPreference(user, reminder.timeSensitive, preferenceOf(preferences, reminder.userId, reminder.category));
    return { reminder: { ...reminder, timeSensitive: governed.timeSensitive }, user: governed.user, enabled: governed.enabled };
  });
}
