import { Injectable } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import type { DataSource, EntityManager } from 'typeorm';
import { Clock, DomainError } from '@nudge/config';
import { nextOccurrence, occurrences as occurrencesOf, parseLocalDate } from '@nudge/scheduling';
import { UserEntity } from '@nudge/users';
import { governedByCategory, OccurrenceScheduler } from './occurrence-scheduler.js';
import { findOccurrence, occurrencesAround, occurrencesBefore, type OccurrenceRow, setOccurrenceState } from './occurrences.repository.js';
import { allowedFrom, type ReminderFacts, scheduleOf } from './reminder-plan.js';
import { loadOwnReminder } from './own-reminder.js';
import { ReminderEntity } from './reminder.entity.js';
import { type OccurrenceView, toOccurrenceView } from './reminder.view.js';

export type OccurrenceAction = 'done' | 'skip' | 'snooze';

/**
 * A reminder's occurrences as its user sees them (past ones with what
 * happened, future ones as planned) and the actions on one occurrence —
 * done, snooze, skip — that notification buttons and app screens call.
 * Every action is idempotent and runs in one transaction with the reminder
 * locked, so it cannot interleave with an edit, travel or another action.
 */
/** Nominal dates computed beyond a page's count (see list). */
const PAGE_MARGIN = 10;

@Injectable()
export class OccurrencesService {
  constructor(
    @InjectDataSource() private readonly dataSource: DataSource,
    private readonly scheduler: OccurrenceScheduler,
    private readonly clock: Clock,
  ) {}

  /**
   * With `before`: the latest recorded occurrences before it (history).
   * Otherwise the first `count` occurrences whose instant is after `after`
   * (default now): a recorded date at its recorded instant with its state, a
   * date without a record at the instant the schedule computes (scheduled, or
   * skipped/not_scheduled once past), and records the schedule no longer
   * produces (an older rule or zone). Paging by the last `at` lists each date
   * once.
   */
  async list(userId: string, id: string, query: { count: number; after?: Date; before?: Date }): Promise<OccurrenceView[]> {
    const { reminder, user } = await loadOwnReminder(this.dataSource.manager, userId, id);
    const schedule = scheduleOf(reminder, user);
    if (query.before) {
      const rows = await occurrencesBefore(this.dataSource.manager, reminder.id, { before: query.before, limit: query.count });
      return rows.map((row) => toOccurrenceView(schedule.timeZone, { localDate: row.localDate, at: row.dueAt }, row));
    }
    const after = query.after ?? this.clock.now();
    // A recorded date shows at its own instant (the zone or time it ran under), which can lie a day either side
    // of its nominal one: a few nominal dates more than asked for keep the page full when some of them belong
    // to the page before (their record is due before `after`) or to the next.
    const wanted = query.count + PAGE_MARGIN;
    const nominal = occurrencesOf(schedule, after, wanted);
    const horizon = nominal.length === wanted ? nominal[nominal.length - 1]!.at : null;
    const rows = await occurrencesAround(this.dataSource.manager, reminder.id, {
      after,
      horizon,
      localDates: nominal.map((o) => o.localDate),
      limit: wanted * 2,
    });
    const byDate = new Map(rows.map((row) => [row.localDate, row]));
    const now = this.clock.now();
    const views: OccurrenceView[] = [];
    for (const o of nominal) {
      if (byDate.has(o.localDate)) continue;
      // A past date with no record was never owed: before the reminder existed, while it was disabled, or
      // passed by a re-plan.
      const view = toOccurrenceView(schedule.timeZone, o, null);
      if (o.at <= now) views.push({ ...view, status: 'skipped', reason: 'not_scheduled' });
      // A disabled reminder plans nothing (its nextOccurrence is null): its coming dates are not `scheduled`.
      else if (reminder.enabled) views.push(view);
    }
    for (const row of byDate.values()) {
      if (row.dueAt > after && (!horizon || row.dueAt <= horizon)) {
        views.push(toOccurrenceView(schedule.timeZone, { localDate: row.localDate, at: row.dueAt }, row));
      }
    }
    return views.sort((a, b) => a.at.localeCompare(b.at)).slice(0, query.count);
  }

  /** Done: before delivery it is not delivered; after, it is recorded (and a pending snooze is dropped). */
  async done(userId: string, id: string, localDate: string): Promise<OccurrenceView> {
    return this.act(userId, id, localDate, async (tx, ctx) => {
      const { row, now } = ctx;
      if (row?.status === 'done') return row;
      if (row?.status === 'skipped') throw DomainError.conflict(`The occurrence of ${localDate} was skipped; it cannot be marked done.`);
      await this.dropSnooze(tx, row, now);
      const updated = { ...ctx.base, ...row, status: 'done' as const, reason: null, snoozeJobId: null, actedAt: now };
      await setOccurrenceState(tx, updated, now);
      if (row?.status === 'scheduled') await this.moveOn(tx, ctx);
      return updated;
    });
  }

  /** Skip: before delivery only. */
  async skip(userId: string, id: string, localDate: string): Promise<OccurrenceView> {
    return this.act(userId, id, localDate, async (tx, ctx) => {
      const { row, now } = ctx;
      if (row?.status === 'skipped') return row;
      if (row && row.status !== 'scheduled') {
        throw DomainError.conflict(`The occurrence of ${localDate} is already ${row.status}; only one not yet delivered can be skipped.`);
      }
      const updated = { ...ctx.base, ...row, status: 'skipped' as const, reason: 'user', actedAt: now };
      await setOccurrenceState(tx, updated, now);
      if (row) await this.moveOn(tx, ctx);
      return updated;
    });
  }

  /**
   * Snooze: delivered again once at now + minutes (quiet hours apply). Only
   * after delivery; a snooze while another waits replaces it, so repeating the
   * request never adds a second re-delivery. The next regular occurrence is
   * unaffected. A disabled reminder, or a user with notifications off, gets 409.
   */
  async snooze(userId: string, id: string, localDate: string, minutes: number): Promise<OccurrenceView> {
    return this.act(userId, id, localDate, async (tx, ctx) => {
      const { row, now, reminder, user } = ctx;
      if (!row || (row.status !== 'sent' && row.status !== 'snoozed')) {
        const state = row?.status === 'scheduled' || !row ? 'not delivered yet' : row.status;
        throw DomainError.conflict(`The occurrence of ${localDate} is ${state}; only a delivered one can be snoozed.`);
      }
      // Nothing would be delivered: say so now rather than accept a snooze that lapses unseen.
      if (!reminder.enabled) throw DomainError.conflict('The reminder is disabled; enable it before snoozing an occurrence.');
      if (!user.notificationsEnabled) {
        throw DomainError.conflict("The user's notifications are turned off; a snooze would not be delivered.");
      }
      // Under the reminder's category: its quiet hours, its time-sensitive rule, its off switch.
      const [governed] = await governedByCategory(tx, [{ reminder, user }]);
      if (!governed!.enabled) {
        throw DomainError.conflict(`The reminder's category "${reminder.category}" is turned off; a snooze would not be delivered.`);
      }
      await this.dropSnooze(tx, row, now);
      const until = allowedFrom(governed!.reminder, governed!.user, new Date(now.getTime() + minutes * 60_000));
      const jobId = await this.scheduler.snooze(tx, reminder, { localDate, at: row.dueAt }, until, now);
      const updated = { ...row, status: 'snoozed' as const, snoozeJobId: jobId, snoozedUntil: until, actedAt: now };
      await setOccurrenceState(tx, updated, now);
      return updated;
    });
  }

  private async act(
    userId: string,
    id: string,
    localDate: string,
    fn: (
      tx: EntityManager,
      ctx: ActionContext,
    ) => Promise<Pick<OccurrenceRow, 'status' | 'reason' | 'sentAt' | 'actedAt' | 'snoozedUntil' | 'dueAt' | 'timeZone'>>,
  ): Promise<OccurrenceView> {
    if (!parseLocalDate(localDate).ok) {
      throw DomainError.invalid([{ path: 'localDate', message: `"${localDate}" is not a date in YYYY-MM-DD form` }]);
    }
    return this.dataSource.transaction(async (tx) => {
      const { reminder, user } = await loadOwnReminder(tx, userId, id, true);
      const now = this.clock.now();
      const schedule = scheduleOf(reminder, user);
      const row = await findOccurrence(tx, reminder.id, localDate, true);
      const nominal = row ? null : nominalOn(schedule, localDate);
      if (!row && !nominal) {
        throw DomainError.invalid([{ path: 'localDate', message: `the reminder has no occurrence on ${localDate}` }]);
      }
      const base = {
        reminderId: reminder.id,
        localDate,
        status: 'scheduled' as const,
        reason: null,
        dueAt: nominal ?? now,
        earliestAt: nominal ?? now,
        version: reminder.version,
        jobId: null,
        snoozeJobId: null,
        snoozedUntil: null,
        sentAt: null,
        actedAt: null,
        timeZone: schedule.timeZone,
      };
      const result = await fn(tx, { reminder, user, row, now, base, localDate });
      return toOccurrenceView(schedule.timeZone, { localDate, at: result.dueAt }, result);
    });
  }

  // The pending occurrence was acted on before delivery: its job goes, and the chain continues after it.
  private async moveOn(tx: EntityManager, { reminder, user, row, now, localDate }: ActionContext): Promise<void> {
    if (row?.jobId && !(await this.scheduler.release(tx, row.jobId, now))) {
      throw DomainError.conflict(`The occurrence of ${localDate} is being delivered right now; try again in a moment.`);
    }
    if (reminder.enabled) await this.scheduler.continueChains(tx, [{ reminder, user, afterDate: localDate }], now);
  }

  private async dropSnooze(tx: EntityManager, row: OccurrenceRow | null, now: Date): Promise<void> {
    if (row?.snoozeJobId) await this.scheduler.cancelSnooze(tx, row.snoozeJobId, now);
  }
}

interface ActionContext {
  reminder: ReminderEntity & ReminderFacts;
  user: UserEntity;
  row: OccurrenceRow | null;
  now: Date;
  base: OccurrenceRow;
  localDate: string;
}

/** The nominal instant of the schedule's occurrence on a local date. */
function nominalOn(schedule: ReturnType<typeof scheduleOf>, localDate: string): Date | null {
  let cursor = new Date(Date.parse(`${localDate}T00:00:00Z`) - 15 * 3600_000);
  for (let i = 0; i < 4; i++) {
    const next = nextOccurrence(schedule, cursor);
    if (!next || next.localDate > localDate) return null;
    if (next.localDate === localDate) return next.at;
    cursor = next.at;
  }
  return null;
}
