import { isDeepStrictEqual } from 'node:util';
import { Inject, Injectable } from '@nestjs/common';
import type pg from 'pg';
import { Clock, DomainError } from '@nudge/config';
import { PG_POOL } from '@nudge/database';
import { enqueue, type QueryExecutor } from '@nudge/queue';
import { optionalCategory } from '@nudge/users';
import { type LocalizedText, localizedFields } from './localized-text.js';
import { assertPayloadFits } from './payload-limit.js';
import { mergePushOptions, type PushOptions, type PushOptionsInput, resolveInterruptionLevel } from './push-options.js';

export const SEND_NOTIFICATION = 'send_notification';
const MAX_ATTEMPTS = 8;
const TEXT_LIMITS = { title: { minLength: 1, maxLength: 200 }, body: { minLength: 0, maxLength: 2000 } };

/** An event push to one user, e.g. "your order shipped". */
export interface NotificationInput extends PushOptionsInput {
  userId: string;
  /** A string, or a map by BCP 47 tag (each device gets its language). */
  title: LocalizedText;
  body?: LocalizedText | null;
  /** The language of a localized title or body shown when none fits; default: the first key of title. */
  defaultLocale?: string;
  /** Passed through to the app (deep links). */
  data?: Record<string, unknown> | null;
  /** The caller's id for this event: the same key twice makes one job. */
  idempotencyKey: string;
  /** Delivered through quiet hours (never when the user turned notifications off). */
  timeSensitive?: boolean;
  /** The user's preference for this category governs it; omitted or null: the user's settings alone. */
  category?: string | null;
  /** Seconds the provider keeps it for an offline device, counted from the send; omitted: the provider's default. */
  ttlSeconds?: number;
}

export interface SendNotificationPayload {
  userId: string;
  title: LocalizedText;
  body: LocalizedText | null;
  /** Canonical; present only when title or body is localized (so payloads of older jobs compare equal). */
  defaultLocale?: string;
  data: Record<string, unknown> | null;
  timeSensitive: boolean;
  /** Lower case; absent when the notification has none (so payloads of older jobs compare equal). */
  category?: string;
  /** The push fields that are set; absent when none is (so payloads of older jobs compare equal). */
  pushOptions?: PushOptions;
  ttlSeconds?: number;
}

export interface NotificationAccepted {
  jobId: string;
  /** False when the key already had a job: that job is returned. */
  created: boolean;
}

/**
 * Turns an event into a `send_notification` job. `notify` joins the caller's
 * transaction (a pg client after BEGIN, a TypeORM EntityManager or
 * QueryRunner), so a domain change and its push commit or roll back together.
 *
 * A user id without a profile or devices is accepted: the job records
 * `skipped` / `no_device`, so the caller need not know who installed the app.
 */
@Injectable()
export class NotificationsService {
  constructor(
    @Inject(PG_POOL) private readonly pool: pg.Pool,
    private readonly clock: Clock,
  ) {}

  async notify(executor: QueryExecutor, input: NotificationInput): Promise<NotificationAccepted> {
    const category = optionalCategory(input.category);
    const text = localizedFields(input, TEXT_LIMITS);
    const level = resolveInterruptionLevel(input.timeSensitive, input.interruptionLevel);
    const pushOptions = mergePushOptions({}, input, level.interruptionLevel);
    // Through JSON, as the job will store it, so that a repeat compares equal.
    const payload = JSON.parse(
      JSON.stringify({
        userId: input.userId,
        title: text.title,
        body: text.body,
        ...(text.defaultLocale ? { defaultLocale: text.defaultLocale } : {}),
        data: input.data ?? null,
        timeSensitive: level.timeSensitive ?? false,
        ...(category ? { category } : {}),
        ...(Object.keys(pushOptions).length > 0 ? { pushOptions } : {}),
        ...(input.ttlSeconds !== undefined ? { ttlSeconds: input.ttlSeconds } : {}),
      } satisfies SendNotificationPayload),
    ) as SendNotificationPayload;
    assertPayloadFits({
      ...payload.pushOptions,
      title: payload.title,
      body: payload.body,
      data: payload.data ?? undefined,
      timeSensitive: payload.timeSensitive,
    });
    const { job, created } = await enqueue(
      executor,
      { kind: SEND_NOTIFICATION, payload, idempotencyKey: `notification:${input.idempotencyKey}`, maxAttempts: MAX_ATTEMPTS },
      { now: this.clock.now() },
    );
    if (!created && !isDeepStrictEqual(job.payload, payload)) {
      throw DomainError.conflict('This idempotencyKey was already used for a different notification.');
    }
    return { jobId: job.id, created };
  }

  /** `notify` for the HTTP API: in the request's transaction (its Idempotency-Key's), else in one of its own. */
  async send(input: NotificationInput, tx?: QueryExecutor): Promise<NotificationAccepted> {
    return this.notify(tx ?? this.pool, input);
  }
}
