import { Inject, Injectable, type OnModuleInit } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import type pg from 'pg';
import { type DataSource, type EntityManager, IsNull, Not } from 'typeorm';
import { Clock, cursorInstant, decodeCursor, DomainError, encodeCursor, invalidCursor } from '@nudge/config';
import { PG_POOL } from '@nudge/database';
import { localizedFields, mergePushOptions, resolveInterruptionLevel } from '@nudge/push';
import { canonicalZoneOrFail, loadUser, optionalCategory, UserEvents, UsersService } from '@nudge/users';
import { OccurrenceScheduler } from './occurrence-scheduler.js';
import { scheduledOccurrences } from './occurrences.repository.js';
import { loadOwnReminder, readOwnReminder, UUID } from './own-reminder.js';
import { ReminderEntity } from './reminder.entity.js';
import { insertReminder } from './reminder-rows.js';
import { checkPushSize, checkSchedule, patchedText, type ReminderInput, storedText, TEXT_LIMITS, todayIn } from './reminder-input.js';
import { scheduleOf } from './reminder-plan.js';
import { type ReminderView, textOf, toReminderView } from './reminder.view.js';

export type { ReminderInput } from './reminder-input.js';

export interface ReminderPage {
  items: ReminderView[];
  nextCursor: string | null;
}

@Injectable()
export class RemindersService implements OnModuleInit {
  constructor(
    @InjectDataSource() private readonly dataSource: DataSource,
    @Inject(PG_POOL) private readonly pool: pg.Pool,
    private readonly users: UsersService,
    private readonly userEvents: UserEvents,
    private readonly scheduler: OccurrenceScheduler,
    private readonly clock: Clock,
  ) {}

  onModuleInit(): void {
    // Travel (or a PATCH of the zone): reminders that follow the user move with them.
    this.userEvents.onTimeZoneChanged((tx, userId) => this.replanAll(tx, userId, { following: true, pinned: false }));
    // Quiet hours are checked when a job is planned and again when it runs: re-plan, so that
    // an occurrence deferred by hours that no longer apply is not held back by them.
    this.userEvents.onQuietHoursChanged((tx, userId, zoneChangedToo) =>
      this.replanAll(tx, userId, { following: !zoneChangedToo, pinned: true }),
    );
    this.userEvents.onDeleted((tx, userId) => this.cancelAllFor(tx, userId));
  }

  /**
   * Creates a reminder and enqueues its first occurrence in one transaction:
   * the caller's when given (the request's, holding its Idempotency-Key), else one of its own.
   */
  async create(userId: string, input: ReminderInput, callerTx?: EntityManager): Promise<ReminderView> {
    const text = localizedFields(input, TEXT_LIMITS);
    const level = resolveInterruptionLevel(input.timeSensitive, input.interruptionLevel);
    const pushOptions = mergePushOptions({}, input, level.interruptionLevel);
    checkPushSize({ ...text, data: input.data ?? null, timeSensitive: level.timeSensitive, pushOptions });
    return this.transaction(callerTx, async (tx) => {
      const user = await this.users.lock(tx, userId);
      if (!user) throw DomainError.conflict('The user has no profile yet: create it with PUT /v1/me first.');
      const now = this.clock.now();
      const timeZone = input.timeZone ? canonicalZoneOrFail(input.timeZone) : null;
      const values = {
        userId,
        ...storedText(text),
        localTime: input.localTime,
        timeZone,
        recurrence: input.recurrence ?? null,
        startDate: input.startDate ?? todayIn(timeZone ?? user.timeZone, now),
        enabled: input.enabled ?? true,
        timeSensitive: level.timeSensitive ?? false,
        category: optionalCategory(input.category) ?? null,
        data: input.data ?? null,
        pushOptions,
        version: 1,
        createdAt: now,
        updatedAt: now,
      };
      checkSchedule(values, user, now, { recurrenceGiven: input.recurrence != null, startDateGiven: input.startDate !== undefined });
      const reminder = await insertReminder(tx, values);
      const next = await this.scheduler.replan(tx, reminder, user, now, { created: true });
      return toReminderView(reminder, user.timeZone, next && { at: next.occurrence.at });
    });
  }

  async get(userId: string, id: string): Promise<ReminderView> {
    const { reminder, userTimeZone, next } = await readOwnReminder(this.pool, userId, id);
    return toReminderView(reminder, userTimeZone, next);
  }

  async list(userId: string, limit: number, cursor?: string): Promise<ReminderPage> {
    const user = await this.users.get(userId);
    const after = cursor ? positionOf(cursor) : null;
    const rows = await this.dataSource
      .getRepository(ReminderEntity)
      .createQueryBuilder('r')
      .where('r.user_id = :userId', { userId })
      .andWhere(after ? '(r.created_at, r.id) > (:createdAt, :id)' : 'true', after ?? {})
      .orderBy('r.created_at', 'ASC')
      .addOrderBy('r.id', 'ASC')
      .limit(limit + 1)
      .getMany();
    const page = rows.slice(0, limit);
    const pending = await scheduledOccurrences(
      this.dataSource.manager,
      page.map((r) => r.id),
    );
    return {
      items: page.map((r) => toReminderView(r, user.timeZone, nextOf(pending.get(r.id)))),
      nextCursor: rows.length > limit ? cursorOf(page[page.length - 1]!) : null,
    };
  }

  /**
   * Applies a change and bumps the version, in one transaction. A change of
   * the schedule (time, zone, rule, start) or of `enabled` re-plans the
   * pending occurrence; any other change (title, body, data…) leaves it as it
   * is — its instant, snooze and retry state — and it delivers the new content.
   */
  async update(userId: string, id: string, patch: Partial<ReminderInput>): Promise<ReminderView> {
    return this.dataSource.transaction(async (tx) => {
      const user = (await this.users.lock(tx, userId))!;
      const { reminder } = await loadOwnReminder(tx, userId, id, true);
      const now = this.clock.now();
      const before = { ...scheduleOf(reminder, user), enabled: reminder.enabled };
      const categoryBefore = reminder.category;
      if (patch.title !== undefined || patch.body !== undefined || patch.defaultLocale !== undefined) {
        Object.assign(reminder, storedText(patchedText(reminder, patch)));
      }
      if (patch.localTime !== undefined) reminder.localTime = patch.localTime;
      if (patch.timeZone !== undefined) reminder.timeZone = patch.timeZone === null ? null : canonicalZoneOrFail(patch.timeZone);
      if (patch.recurrence !== undefined) reminder.recurrence = patch.recurrence;
      if (patch.startDate !== undefined) reminder.startDate = patch.startDate;
      if (patch.enabled !== undefined) reminder.enabled = patch.enabled;
      // interruptionLevel 'time-sensitive' is timeSensitive; a passive or active level ends it.
      const level = resolveInterruptionLevel(patch.timeSensitive, patch.interruptionLevel);
      if (level.timeSensitive !== undefined) reminder.timeSensitive = level.timeSensitive;
      reminder.pushOptions = mergePushOptions(reminder.pushOptions, patch, level.interruptionLevel);
      if (patch.category !== undefined) reminder.category = optionalCategory(patch.category);
      if (patch.data !== undefined) reminder.data = patch.data;
      checkPushSize({ ...textOf(reminder), data: reminder.data, timeSensitive: reminder.timeSensitive, pushOptions: reminder.pushOptions });
      const after = { ...scheduleOf(reminder, user), enabled: reminder.enabled };
      const replan = JSON.stringify(before) !== JSON.stringify(after);
      if (replan && reminder.enabled) {
        checkSchedule(reminder, user, now, { recurrenceGiven: reminder.recurrence !== null, startDateGiven: true });
      }
      reminder.version += 1;
      reminder.updatedAt = now;
      await tx.getRepository(ReminderEntity).save(reminder);
      // Another category may bring other quiet hours: the pending occurrence re-plans under them.
      if (replan || (reminder.category !== categoryBefore && reminder.enabled)) await this.scheduler.replan(tx, reminder, user, now);
      const pending = await scheduledOccurrences(tx, [reminder.id]);
      return toReminderView(reminder, user.timeZone, nextOf(pending.get(reminder.id)));
    });
  }

  async delete(userId: string, id: string): Promise<void> {
    await this.dataSource.transaction(async (tx) => {
      const { reminder, user } = await loadOwnReminder(tx, userId, id, true);
      await this.scheduler.stop(tx, reminder, user, this.clock.now());
      await tx.delete(ReminderEntity, { id: reminder.id });
    });
  }

  // Travel (or a PATCH of the zone): each enabled reminder that follows the user re-plans in the
  // new zone. New quiet hours: the user's other reminders (pinned to a zone) re-plan too.
  private async replanAll(tx: EntityManager, userId: string, which: { following: boolean; pinned: boolean }): Promise<void> {
    if (!which.following && !which.pinned) return;
    const user = await loadUser(tx, userId);
    const reminders = await tx.getRepository(ReminderEntity).find({
      where: which.following && which.pinned ? { userId } : { userId, timeZone: which.following ? IsNull() : Not(IsNull()) },
      lock: { mode: 'pessimistic_write' },
    });
    const now = this.clock.now();
    for (const reminder of reminders) {
      reminder.version += 1;
      reminder.updatedAt = now;
      await tx.getRepository(ReminderEntity).save(reminder);
      if (reminder.enabled) await this.scheduler.replan(tx, reminder, user, now);
    }
  }

  private async cancelAllFor(tx: EntityManager, userId: string): Promise<void> {
    const user = await loadUser(tx, userId);
    const reminders = await tx.getRepository(ReminderEntity).find({ where: { userId } });
    for (const reminder of reminders) await this.scheduler.stop(tx, reminder, user, this.clock.now());
  }

  private transaction<T>(callerTx: EntityManager | undefined, fn: (tx: EntityManager) => Promise<T>): Promise<T> {
    return callerTx ? fn(callerTx) : this.dataSource.transaction(fn);
  }
}

const nextOf = (row: { dueAt: Date } | undefined) => (row ? { at: row.dueAt } : null);

function cursorOf(reminder: ReminderEntity): string {
  return encodeCursor([reminder.createdAt.toISOString(), reminder.id]);
}

function positionOf(cursor: string): { createdAt: string; id: string } {
  const [createdAt, id] = decodeCursor(cursor, 2);
  // The instant goes to PostgreSQL as this API writes them: V8's parser accepts more than PostgreSQL's.
  const at = typeof createdAt === 'string' ? cursorInstant(createdAt) : null;
  if (at && typeof id === 'string' && UUID.test(id)) return { createdAt: at.toISOString(), id };
  throw invalidCursor();
}
