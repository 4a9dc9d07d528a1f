import { createHash } from 'node:crypto';
import { Inject, Injectable, type OnModuleInit } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import { type DataSource, type EntityManager, IsNull } from 'typeorm';
import { Clock, CONFIG, type Config, DomainError } from '@nudge/config';
import { assertPayloadFits } from '@nudge/push';
import { cancelJobs, enqueueMany, queryRows, type QueryExecutor } from '@nudge/queue';
import { localIsoAt, occurrences as occurrencesOf, validateSchedule } from '@nudge/scheduling';
import { UserEntity, UserEvents, UsersService } from '@nudge/users';
import { ReminderEntity } from './reminder.entity.js';
import { planNextJob, type ReminderFacts, scheduleOf, SEND_REMINDER, type UserFacts } from './reminder-plan.js';
import { type OccurrenceView, type ReminderView, toReminderView } from './reminder.view.js';

export interface ReminderInput {
  title: string;
  body?: string | null;
  localTime: string;
  /** Omitted or null: follow the user's zone. */
  timeZone?: string | null;
  recurrence: string;
  startDate?: string;
  enabled?: boolean;
  data?: Record<string, unknown> | null;
}

/** One reminder whose next occurrence after `after` is to be enqueued. */
export interface ChainLink {
  reminder: ReminderFacts & { userId: string; enabled: boolean };
  user: UserFacts;
  after: Date;
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
    private readonly clock: Clock,
    @Inject(CONFIG) private readonly config: Config,
  ) {}

  onModuleInit(): void {
    // Travel (or a PATCH of the zone): reminders that follow the user move with them.
    this.userEvents.onTimeZoneChanged((tx, userId) => this.rescheduleFollowing(tx, userId));
    this.userEvents.onDeleted((tx, userId) => this.cancelAllFor(tx, userId));
  }

  /**
   * Creates a reminder and enqueues its first occurrence in one transaction.
   * With an Idempotency-Key, the same key and body return the first response
   * again, and the same key with another body is a 409.
   */
  async create(userId: string, input: ReminderInput, idempotencyKey?: string): Promise<ReminderView> {
    checkPushSize(input);
    return this.dataSource.transaction(async (tx) => {
      const user = await this.users.lock(tx, userId);
      if (!user) throw DomainError.conflict('The user has no profile yet: create it with PUT /v1/me first.');
      if (idempotencyKey !== undefined) {
        const replay = await this.claimIdempotencyKey(tx, userId, idempotencyKey, input);
        if (replay) return replay;
      }
      const now = this.clock.now();
      const zone = input.timeZone ?? user.timeZone;
      const values = {
        userId,
        title: input.title,
        body: input.body ?? null,
        localTime: input.localTime,
        timeZone: input.timeZone ?? null,
        recurrence: input.recurrence,
        startDate: input.startDate ?? todayIn(zone, now),
        enabled: input.enabled ?? true,
        data: input.data ?? null,
        version: 1,
        createdAt: now,
        updatedAt: now,
      };
      this.checkSchedule({ ...values, timeZone: zone });
      const reminder = await tx.getRepository(ReminderEntity).save(tx.getRepository(ReminderEntity).create(values));
      const view = toReminderView(reminder, user.timeZone, await this.scheduleNext(tx, reminder, user, now, now));
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
    const { reminder, user } = await this.load(this.dataSource.manager, userId, id);
    return toReminderView(reminder, user.timeZone, await this.pendingOccurrence(this.dataSource.manager, reminder));
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
    const pending = await this.pendingOccurrences(page.map((r) => r.id));
    return {
      items: page.map((r) => toReminderView(r, user.timeZone, pending.get(r.id) ?? null)),
      nextCursor: rows.length > limit ? encodeCursor(page[page.length - 1]!) : null,
    };
  }

  /** Applies a change, bumps the version and replaces the pending job, in one transaction. */
  async update(userId: string, id: string, patch: Partial<ReminderInput>): Promise<ReminderView> {
    return this.dataSource.transaction(async (tx) => {
      const user = await this.users.lock(tx, userId);
      const { reminder } = await this.load(tx, userId, id, true);
      const now = this.clock.now();
      if (patch.title !== undefined) reminder.title = patch.title;
      if (patch.body !== undefined) reminder.body = patch.body;
      if (patch.localTime !== undefined) reminder.localTime = patch.localTime;
      if (patch.timeZone !== undefined) reminder.timeZone = patch.timeZone;
      if (patch.recurrence !== undefined) reminder.recurrence = patch.recurrence;
      if (patch.startDate !== undefined) reminder.startDate = patch.startDate;
      if (patch.enabled !== undefined) reminder.enabled = patch.enabled;
      if (patch.data !== undefined) reminder.data = patch.data;
      checkPushSize(reminder);
      this.checkSchedule({ ...reminder, timeZone: reminder.timeZone ?? user!.timeZone });
      reminder.version += 1;
      reminder.updatedAt = now;
      await tx.getRepository(ReminderEntity).save(reminder);
      await this.cancelPending(tx, [reminder.id]);
      return toReminderView(reminder, user!.timeZone, await this.scheduleNext(tx, reminder, user!, now, now));
    });
  }

  async delete(userId: string, id: string): Promise<void> {
    await this.dataSource.transaction(async (tx) => {
      const { reminder } = await this.load(tx, userId, id, true);
      await this.cancelPending(tx, [reminder.id]);
      await tx.delete(ReminderEntity, { id: reminder.id });
    });
  }

  /** The nominal occurrences after `after`, by the same code that schedules them. */
  async occurrences(userId: string, id: string, count: number, after?: Date): Promise<OccurrenceView[]> {
    const { reminder, user } = await this.load(this.dataSource.manager, userId, id);
    return occurrencesOf(scheduleOf(reminder, user), after ?? this.clock.now(), count).map((o) => ({
      at: o.at.toISOString(),
      local: o.local,
    }));
  }

  /** Each occurrence that ran (or is pending), newest first, with per-device outcomes. */
  async deliveries(userId: string, id: string, limit = 50): Promise<DeliveryView[]> {
    await this.load(this.dataSource.manager, userId, id);
    const rows = await queryRows<any>(
      this.dataSource.manager,
      `SELECT o.job_id, o.local_date, o.due_at, o.version, j.status, j.attempts, j.last_error,
              COALESCE(json_agg(json_build_object(
                'installationId', d.installation_id, 'platform', pd.platform, 'provider', pd.provider,
                'status', pd.status, 'error', COALESCE(pd.error, pd.skip_reason), 'updatedAt', pd.updated_at)
                ORDER BY pd.created_at) FILTER (WHERE pd.job_id IS NOT NULL), '[]') AS devices
         FROM reminder_occurrences o
         LEFT JOIN jobs j ON j.id = o.job_id
         LEFT JOIN push_deliveries pd ON pd.job_id = o.job_id
         LEFT JOIN devices d ON d.id = pd.device_id
        WHERE o.reminder_id = $1
        GROUP BY o.job_id, o.local_date, o.due_at, o.version, j.status, j.attempts, j.last_error
        ORDER BY o.due_at DESC
        LIMIT $2`,
      [id, limit],
    );
    return rows.map((r) => ({
      jobId: String(r.job_id),
      localDate: r.local_date,
      dueAt: new Date(r.due_at).toISOString(),
      version: r.version,
      status: r.status ?? null,
      attempts: r.attempts ?? null,
      lastError: r.last_error ?? null,
      devices: r.devices,
    }));
  }

  /**
   * Enqueues the reminder's next occurrence after `after` (inside `tx`) and
   * records which job carries it. Returns the occurrence, or null when the
   * reminder is disabled or its rule has run out.
   */
  async scheduleNext(
    tx: QueryExecutor,
    reminder: ReminderFacts & { userId: string; enabled: boolean },
    user: UserFacts,
    after: Date,
    now: Date,
  ): Promise<OccurrenceView | null> {
    return (await this.scheduleNextMany(tx, [{ reminder, user, after }], now))[0]!;
  }

  /**
   * scheduleNext for many reminders in two statements (one enqueueMany, one
   * insert of their reminder_occurrences rows); results in their order.
   */
  async scheduleNextMany(tx: QueryExecutor, chains: readonly ChainLink[], now: Date): Promise<(OccurrenceView | null)[]> {
    const plans = chains.map(({ reminder, user, after }) =>
      reminder.enabled ? planNextJob(reminder, user, after, now, this.config.reminderJitterSeconds) : null,
    );
    const planned = plans.flatMap((plan, i) => (plan ? [{ plan, reminder: chains[i]!.reminder }] : []));
    if (planned.length > 0) {
      const jobs = await enqueueMany(
        tx,
        planned.map(({ plan }) => ({
          kind: SEND_REMINDER,
          payload: plan.payload,
          runAt: plan.runAt,
          idempotencyKey: plan.idempotencyKey,
          maxAttempts: 8,
        })),
        { now },
      );
      await tx.query(
        `INSERT INTO reminder_occurrences (reminder_id, job_id, version, local_date, due_at, created_at)
         SELECT o.*, $6::timestamptz FROM unnest($1::uuid[], $2::bigint[], $3::integer[], $4::text[], $5::timestamptz[]) AS o
         ON CONFLICT DO NOTHING`,
        [
          planned.map(({ reminder }) => reminder.id),
          jobs.map(({ job }) => job.id),
          planned.map(({ reminder }) => reminder.version),
          planned.map(({ plan }) => plan.occurrence.localDate),
          planned.map(({ plan }) => plan.occurrence.at),
          now,
        ],
      );
    }
    return plans.map((plan) => (plan ? { at: plan.occurrence.at.toISOString(), local: plan.occurrence.local } : null));
  }

  private async rescheduleFollowing(tx: EntityManager, userId: string): Promise<void> {
    const user = await tx.getRepository(UserEntity).findOneByOrFail({ id: userId });
    const reminders = await tx.getRepository(ReminderEntity).find({
      where: { userId, timeZone: IsNull() },
      lock: { mode: 'pessimistic_write' },
    });
    if (reminders.length === 0) return;
    const now = this.clock.now();
    await this.cancelPending(tx, reminders.map((r) => r.id));
    for (const reminder of reminders) {
      reminder.version += 1;
      reminder.updatedAt = now;
      await tx.getRepository(ReminderEntity).save(reminder);
      await this.scheduleNext(tx, reminder, user, now, now);
    }
  }

  private async cancelAllFor(tx: EntityManager, userId: string): Promise<void> {
    const ids = (await tx.getRepository(ReminderEntity).find({ where: { userId }, select: { id: true } })).map((r) => r.id);
    if (ids.length > 0) await this.cancelPending(tx, ids);
  }

  /** Cancels the queued jobs of these reminders' occurrences. */
  private async cancelPending(tx: EntityManager, reminderIds: string[]): Promise<void> {
    const rows = await queryRows<{ job_id: string }>(
      tx,
      `SELECT o.job_id FROM reminder_occurrences o JOIN jobs j ON j.id = o.job_id
        WHERE o.reminder_id = ANY($1::uuid[]) AND j.status = 'queued'`,
      [reminderIds],
    );
    if (rows.length > 0) await cancelJobs(tx, rows.map((r) => r.job_id), this.clock.now());
  }

  private async pendingOccurrence(executor: EntityManager, reminder: ReminderEntity): Promise<OccurrenceView | null> {
    return (await this.pendingOccurrences([reminder.id], executor)).get(reminder.id) ?? null;
  }

  private async pendingOccurrences(reminderIds: string[], executor: EntityManager = this.dataSource.manager): Promise<Map<string, OccurrenceView>> {
    if (reminderIds.length === 0) return new Map();
    const rows = await queryRows<{ reminder_id: string; due_at: Date; payload: { at: string } ; time_zone: string }>(
      executor,
      `SELECT DISTINCT ON (o.reminder_id) o.reminder_id, o.due_at, COALESCE(r.time_zone, u.time_zone) AS time_zone
         FROM reminder_occurrences o
         JOIN jobs j ON j.id = o.job_id AND j.status IN ('queued', 'running')
         JOIN reminders r ON r.id = o.reminder_id AND r.version = o.version
         JOIN users u ON u.id = r.user_id
        WHERE o.reminder_id = ANY($1::uuid[])
        ORDER BY o.reminder_id, o.due_at`,
      [reminderIds],
    );
    return new Map(rows.map((r) => [r.reminder_id, occurrenceView(new Date(r.due_at), r.time_zone)]));
  }

  private checkSchedule(schedule: { localTime: string; timeZone: string; recurrence: string; startDate: string }): void {
    const result = validateSchedule(schedule);
    if (!result.ok) {
      throw DomainError.invalid(result.errors.map((message) => ({ path: message.split(':')[0]!, message })));
    }
  }

  private async load(executor: EntityManager, userId: string, id: string, lock = false) {
    if (!UUID.test(id)) throw DomainError.notFound('The reminder');
    const reminder = await executor.getRepository(ReminderEntity).findOne({
      where: { id, userId },
      ...(lock ? { lock: { mode: 'pessimistic_write' as const } } : {}),
    });
    if (!reminder) throw DomainError.notFound('The reminder');
    const user = await executor.getRepository(UserEntity).findOneByOrFail({ id: userId });
    return { reminder, user };
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

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

/**
 * A 400 now rather than a dead job later: the push of an occurrence must fit
 * in 4 KiB. Measured as SendReminderHandler builds it, with the keys it adds
 * to `data` (placeholders of the real lengths).
 */
function checkPushSize(reminder: Pick<ReminderInput, 'title' | 'body' | 'data'>): void {
  assertPayloadFits({
    title: reminder.title,
    body: reminder.body ?? undefined,
    data: { ...(reminder.data ?? {}), reminderId: '00000000-0000-0000-0000-000000000000', occurrence: '2000-01-01' },
  });
}

/** Today's date in the zone, YYYY-MM-DD: the default start of a rule. */
function todayIn(zone: string, now: Date): string {
  return localIsoAt(zone, now).slice(0, 10);
}

function occurrenceView(at: Date, zone: string): OccurrenceView {
  return { at: at.toISOString(), local: localIsoAt(zone, at) };
}

function canonicalJson(value: unknown): string {
  if (Array.isArray(value)) return `[${value.map(canonicalJson).join(',')}]`;
  if (value && typeof value === 'object') {
    return `{${Object.keys(value).sort().filter((k) => (value as any)[k] !== undefined).map((k) => `${JSON.stringify(k)}:${canonicalJson((value as any)[k])}`).join(',')}}`;
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
