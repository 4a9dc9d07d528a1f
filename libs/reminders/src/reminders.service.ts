import { createHash } from 'node:crypto';
import { Injectable, type OnModuleInit } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import { type DataSource, type EntityManager, IsNull, Not } from 'typeorm';
import { Clock, DomainError } from '@nudge/config';
import {
  assertPayloadFits,
  defaultText,
  type LocalizedFields,
  localizedFields,
  type LocalizedText,
  mergePushOptions,
  type PushOptions,
  type PushOptionsInput,
  resolveInterruptionLevel,
} from '@nudge/push';
import { queryRows } from '@nudge/queue';
import { localIsoAt, nextOccurrence, validateSchedule } from '@nudge/scheduling';
import { canonicalZoneOrFail, optionalCategory, UserEntity, UserEvents, UsersService } from '@nudge/users';
import { OccurrenceScheduler } from './occurrence-scheduler.js';
import { scheduledOccurrences } from './occurrences.repository.js';
import { loadOwnReminder, UUID } from './own-reminder.js';
import { ReminderEntity } from './reminder.entity.js';
import { REMINDER_ACTION_CATEGORY, scheduleOf, type UserFacts } from './reminder-plan.js';
import { type ReminderView, textOf, toReminderView } from './reminder.view.js';

export interface ReminderInput extends PushOptionsInput {
  /** A string, or a map by BCP 47 tag. */
  title: LocalizedText;
  body?: LocalizedText | null;
  /** The language of a localized title or body shown when none fits; default: the first key of title. */
  defaultLocale?: string;
  localTime: string;
  /** Omitted or null: follow the user's zone. */
  timeZone?: string | null;
  /** Omitted or null: a one-off reminder, one occurrence at startDate + localTime. */
  recurrence?: string | null;
  startDate?: string;
  enabled?: boolean;
  timeSensitive?: boolean;
  /** Omitted or null: no category (the user's settings alone). */
  category?: string | null;
  data?: Record<string, unknown> | null;
}

export interface ReminderPage {
  items: ReminderView[];
  nextCursor: string | null;
}

export interface DeliveryView {
  jobId: string;
  localDate: string;
  dueAt: string;
  version: number;
  /** `regular`: the occurrence's delivery; `snooze`: a re-delivery the user asked for. */
  purpose: 'regular' | 'snooze';
  status: string | null;
  attempts: number | null;
  lastError: string | null;
  devices: { installationId: string | null; platform: string; provider: string; status: string; error: string | null; updatedAt: string }[];
}

@Injectable()
export class RemindersService implements OnModuleInit {
  constructor(
    @InjectDataSource() private readonly dataSource: DataSource,
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
   * Creates a reminder and enqueues its first occurrence in one transaction.
   * With an Idempotency-Key, the same key and body return the first response
   * again, and the same key with another body is a 409.
   */
  async create(userId: string, input: ReminderInput, idempotencyKey?: string): Promise<ReminderView> {
    const text = localizedFields(input, TEXT_LIMITS);
    const level = resolveInterruptionLevel(input.timeSensitive, input.interruptionLevel);
    const pushOptions = mergePushOptions({}, input, level.interruptionLevel);
    checkPushSize({ ...text, data: input.data ?? null, timeSensitive: level.timeSensitive, pushOptions });
    return this.dataSource.transaction(async (tx) => {
      const user = await this.users.lock(tx, userId);
      if (!user) throw DomainError.conflict('The user has no profile yet: create it with PUT /v1/me first.');
      if (idempotencyKey !== undefined) {
        const replay = await this.claimIdempotencyKey(tx, userId, idempotencyKey, input);
        if (replay) return replay;
      }
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
      const reminder = await tx.getRepository(ReminderEntity).save(tx.getRepository(ReminderEntity).create(values));
      const next = await this.scheduler.replan(tx, reminder, user, now);
      const view = toReminderView(reminder, user.timeZone, next && { at: next.occurrence.at });
      if (idempotencyKey !== undefined) {
        await tx.query(`UPDATE idempotency_keys SET status_code = 201, response = $3 WHERE user_id = $1 AND key = $2`, [
          userId,
          idempotencyKey,
          JSON.stringify(view),
        ]);
      }
      return view;
    });
  }

  async get(userId: string, id: string): Promise<ReminderView> {
    const { reminder, user } = await loadOwnReminder(this.dataSource.manager, userId, id);
    const pending = await scheduledOccurrences(this.dataSource.manager, [reminder.id]);
    return toReminderView(reminder, user.timeZone, nextOf(pending.get(reminder.id)));
  }

  async list(userId: string, limit: number, cursor?: string): Promise<ReminderPage> {
    const user = await this.users.get(userId);
    const after = cursor ? decodeCursor(cursor) : null;
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
      nextCursor: rows.length > limit ? encodeCursor(page[page.length - 1]!) : null,
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

  /** Each occurrence that ran (or is pending), newest first, with per-device outcomes. */
  async deliveries(userId: string, id: string, limit = 50): Promise<DeliveryView[]> {
    await loadOwnReminder(this.dataSource.manager, userId, id);
    const rows = await queryRows<any>(
      this.dataSource.manager,
      `SELECT o.job_id, o.local_date, o.due_at, o.version, o.purpose, j.status, j.attempts, j.last_error,
              COALESCE(json_agg(json_build_object(
                'installationId', d.installation_id, 'platform', pd.platform, 'provider', pd.provider,
                'status', pd.status, 'error', COALESCE(pd.error, pd.skip_reason), 'updatedAt', pd.updated_at)
                ORDER BY pd.created_at) FILTER (WHERE pd.job_id IS NOT NULL), '[]') AS devices
         FROM reminder_jobs o
         LEFT JOIN jobs j ON j.id = o.job_id
         LEFT JOIN push_deliveries pd ON pd.job_id = o.job_id
         LEFT JOIN devices d ON d.id = pd.device_id
        WHERE o.reminder_id = $1
        GROUP BY o.job_id, o.local_date, o.due_at, o.version, o.purpose, j.status, j.attempts, j.last_error
        ORDER BY o.due_at DESC, o.job_id DESC
        LIMIT $2`,
      [id, limit],
    );
    return rows.map((r) => ({
      jobId: String(r.job_id),
      localDate: r.local_date,
      dueAt: new Date(r.due_at).toISOString(),
      version: r.version,
      purpose: r.purpose,
      status: r.status ?? null,
      attempts: r.attempts ?? null,
      lastError: r.last_error ?? null,
      devices: r.devices,
    }));
  }

  // Travel (or a PATCH of the zone): each enabled reminder that follows the user re-plans in the
  // new zone. New quiet hours: the user's other reminders (pinned to a zone) re-plan too.
  private async replanAll(tx: EntityManager, userId: string, which: { following: boolean; pinned: boolean }): Promise<void> {
    if (!which.following && !which.pinned) return;
    const user = await tx.getRepository(UserEntity).findOneByOrFail({ id: userId });
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
    const user = await tx.getRepository(UserEntity).findOneByOrFail({ id: userId });
    const reminders = await tx.getRepository(ReminderEntity).find({ where: { userId } });
    for (const reminder of reminders) await this.scheduler.stop(tx, reminder, user, this.clock.now());
  }

  /**
   * Takes the key for this request, or finds who took it: the same body gets
   * the stored response back, another body a 409. Concurrent requests with one
   * key serialise on the key's row.
   */
  private async claimIdempotencyKey(tx: EntityManager, userId: string, key: string, input: ReminderInput): Promise<ReminderView | null> {
    const hash = createHash('sha256').update(canonicalJson(input)).digest('hex');
    const inserted = await queryRows(
      tx,
      `INSERT INTO idempotency_keys (user_id, key, request_hash, status_code, response, created_at)
       VALUES ($1, $2, $3, 0, '{}', $4) ON CONFLICT DO NOTHING RETURNING 1`,
      [userId, key, hash, this.clock.now()],
    );
    if (inserted.length > 0) return null;
    const [row] = await queryRows<{ request_hash: string; response: ReminderView }>(
      tx,
      `SELECT request_hash, response FROM idempotency_keys WHERE user_id = $1 AND key = $2`,
      [userId, key],
    );
    if (!row || row.request_hash !== hash) {
      throw DomainError.conflict('This Idempotency-Key was already used with a different request body.');
    }
    return row.response;
  }
}

/**
 * A 400 now rather than a dead job later: the push of an occurrence must fit
 * in 4 KiB. Measured as SendReminderHandler builds it, with the keys it adds
 * to `data` (placeholders of the real lengths).
 */
function checkPushSize(
  reminder: Pick<LocalizedFields, 'title' | 'body'> & Pick<ReminderInput, 'data' | 'timeSensitive'> & { pushOptions: PushOptions },
): void {
  assertPayloadFits({
    ...reminder.pushOptions,
    timeSensitive: reminder.timeSensitive,
    title: reminder.title,
    body: reminder.body,
    data: { ...(reminder.data ?? {}), reminderId: '00000000-0000-0000-0000-000000000000', occurrence: '2000-01-01' },
    actionCategory: REMINDER_ACTION_CATEGORY,
  });
}

const TEXT_LIMITS = { title: { minLength: 1, maxLength: 200 }, body: { minLength: 0, maxLength: 1000 } };

/** The columns of a title and body: the default language's text in `title`/`body`, the maps beside them. */
function storedText(text: LocalizedFields): Pick<ReminderEntity, 'title' | 'body' | 'titleI18n' | 'bodyI18n' | 'defaultLocale'> {
  return {
    title: defaultText(text.title, text.defaultLocale),
    body: text.body === null ? null : defaultText(text.body, text.defaultLocale),
    titleI18n: typeof text.title === 'string' ? null : text.title,
    bodyI18n: text.body === null || typeof text.body === 'string' ? null : text.body,
    defaultLocale: text.defaultLocale,
  };
}

/**
 * A PATCH of title, body or defaultLocale, checked as a whole: the stored
 * default language carries over unless the patch names another, so a map that
 * lacks it is a 400 asking for defaultLocale; with no map left it is dropped.
 */
function patchedText(reminder: ReminderEntity, patch: Partial<ReminderInput>): LocalizedFields {
  const current = textOf(reminder);
  const title = patch.title !== undefined ? patch.title : current.title;
  const body = patch.body !== undefined ? patch.body : current.body;
  const localized = typeof title === 'object' || (body !== null && typeof body === 'object');
  const defaultLocale = patch.defaultLocale ?? (localized ? (current.defaultLocale ?? undefined) : undefined);
  return localizedFields({ title, body, defaultLocale }, TEXT_LIMITS);
}

/**
 * A 400 for a schedule that is invalid or can never fire again (UNTIL before
 * startDate, COUNT used up, a one-off in the past): nothing is written.
 */
function checkSchedule(
  reminder: { localTime: string; timeZone: string | null; recurrence: string | null; startDate: string },
  user: UserFacts,
  now: Date,
  given: { recurrenceGiven: boolean; startDateGiven: boolean },
): void {
  const schedule = scheduleOf(reminder, user);
  const result = validateSchedule(schedule);
  if (!result.ok) {
    throw DomainError.invalid(result.errors.map((message) => ({ path: message.split(':')[0]!, message })));
  }
  if (nextOccurrence(schedule, now) === null) {
    const path = given.recurrenceGiven ? 'recurrence' : given.startDateGiven ? 'startDate' : 'localTime';
    const what = given.recurrenceGiven ? 'the rule has no occurrence after now' : 'its one occurrence is in the past';
    throw DomainError.invalid([{ path, message: `${path}: this reminder would never fire: ${what}` }]);
  }
}

const nextOf = (row: { dueAt: Date } | undefined) => (row ? { at: row.dueAt } : null);

/** Today's date in the zone, YYYY-MM-DD: the default start of a rule. */
function todayIn(zone: string, now: Date): string {
  return localIsoAt(zone, now).slice(0, 10);
}

function canonicalJson(value: unknown): string {
  if (Array.isArray(value)) return `[${value.map(canonicalJson).join(',')}]`;
  if (value && typeof value === 'object') {
    return `{${Object.keys(value)
      .sort()
      .filter((k) => (value as any)[k] !== undefined)
      .map((k) => `${JSON.stringify(k)}:${canonicalJson((value as any)[k])}`)
      .join(',')}}`;
  }
  return JSON.stringify(value);
}

function encodeCursor(reminder: ReminderEntity): string {
  return Buffer.from(JSON.stringify([reminder.createdAt.toISOString(), reminder.id])).toString('base64url');
}

function decodeCursor(cursor: string): { createdAt: string; id: string } {
  try {
    const [createdAt, id] = JSON.parse(Buffer.from(cursor, 'base64url').toString('utf8'));
    if (typeof createdAt === 'string' && !Number.isNaN(Date.parse(createdAt)) && typeof id === 'string' && UUID.test(id)) {
      return { createdAt, id };
    }
  } catch {
    // fall through
  }
  throw DomainError.invalid([{ path: 'cursor', message: 'cursor is not one this API returned' }]);
}
