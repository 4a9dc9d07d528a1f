import { Inject, Injectable } from '@nestjs/common';
import type pg from 'pg';
import { Clock, DomainError } from '@nudge/config';
import { PG_POOL } from '@nudge/database';
import {
  type DeliveryRecord,
  defaultText,
  deliveriesOfJobs,
  maskPushToken,
  type SendNotificationPayload,
  type UserDeliveryJob,
  userDeliveryJobs,
} from '@nudge/push';
import { getJobs, type Job } from '@nudge/queue';
import { reminderJobIds, RemindersService, type UserOccurrence, userOccurrences } from '@nudge/reminders';
import { type DeviceEntity, DevicesService, type UserEntity, UsersService } from '@nudge/users';
import { DeviceDto } from '../devices/device.dto.js';
import { ProfileDto } from '../me/profile.dto.js';
import type { OpsDeviceDto } from './user-ops.dto.js';
import { compareTimeline, decodeTimelineCursor, encodeTimelineCursor, sourceBounds, type TimelinePosition } from './timeline-cursor.js';

// How many of a user's delivery jobs one round reads while looking for event
// notifications among reminder deliveries, and how many rounds a page may take.
const NOTIFICATION_SCAN = 200;
const NOTIFICATION_ROUNDS = 10;

type Entry = TimelinePosition & { occurrence?: UserOccurrence; notification?: UserDeliveryJob };

const iso = (date: Date | null | undefined) => (date ? date.toISOString() : null);

function deviceOf(device: DeviceEntity): OpsDeviceDto {
  return { ...DeviceDto.from(device), id: device.id, deactivatedAt: iso(device.deactivatedAt), createdAt: device.createdAt.toISOString() };
}

/** A notification's title as its job carried it (a string, or the default of a localized map). */
function titleOf(job: Job | undefined): string | null {
  const payload = job?.payload as Partial<SendNotificationPayload> | undefined;
  if (!payload?.title || (typeof payload.title !== 'string' && typeof payload.title !== 'object')) return null;
  return defaultText(payload.title, payload.defaultLocale);
}

/** What a notification came to, from its per-device rows. */
function notificationState(rows: DeliveryRecord[]): { status: string; reason: string | null } {
  if (rows.some((r) => r.status === 'sent')) return { status: 'sent', reason: null };
  const skipped = rows.find((r) => r.status === 'skipped');
  if (skipped && rows.every((r) => r.status === 'skipped')) return { status: 'skipped', reason: skipped.reason };
  const failed = rows.find((r) => r.status === 'failed' || r.status === 'invalid_token');
  if (failed) return { status: 'failed', reason: failed.reason };
  return { status: 'sending', reason: null };
}

/**
 * The operators' view of one user: profile, devices, reminders and a timeline
 * of what became of each occurrence and notification, composed from the
 * owning libs' reads (users, reminders, push, queue). Tokens only masked.
 */
@Injectable()
export class UserOpsService {
  constructor(
    @Inject(PG_POOL) private readonly pool: pg.Pool,
    private readonly clock: Clock,
    private readonly users: UsersService,
    private readonly devices: DevicesService,
    private readonly reminders: RemindersService,
  ) {}

  async overview(userId: string) {
    const user = await this.user(userId);
    const devices = await this.devices.list(userId);
    const reminders = await this.reminders.list(userId, 100);
    const timeline = await this.timelineOf(userId, devices, undefined, 50);
    return {
      generatedAt: this.clock.now().toISOString(),
      profile: ProfileDto.from(user),
      devices: devices.map(deviceOf),
      reminders: reminders.items,
      moreReminders: reminders.nextCursor !== null,
      timeline,
    };
  }

  async timeline(userId: string, cursor: string | undefined, limit: number) {
    // The cursor first: a bad one is a 400 whoever it names.
    const from = cursor === undefined ? undefined : decodeTimelineCursor(cursor);
    await this.user(userId);
    return this.timelineOf(userId, await this.devices.list(userId), from, limit);
  }

  private async user(userId: string): Promise<UserEntity> {
    try {
      return await this.users.get(userId);
    } catch (error) {
      if (error instanceof DomainError && error.code === 'not_found') throw DomainError.notFound('The user');
      throw error;
    }
  }

  private async timelineOf(userId: string, devices: DeviceEntity[], from: TimelinePosition | undefined, limit: number) {
    // The first page: everything up to now (what is ahead is in the reminders' next occurrences).
    const start: TimelinePosition = from ?? { at: this.clock.now(), kind: 'occurrence', key: '~' };
    const bounds = sourceBounds(start);
    const occurrences = await userOccurrences(this.pool, userId, { before: bounds.occurrence, limit: limit + 1 });
    const { jobs: notifications, frontier } = await this.notificationJobs(userId, bounds.notification, limit + 1);

    let entries: Entry[] = [
      ...occurrences.map((o): Entry => ({ at: o.dueAt, kind: 'occurrence', key: o.key, occurrence: o })),
      ...notifications.map((n): Entry => ({ at: n.at, kind: 'notification', key: n.jobId, notification: n })),
    ].sort(compareTimeline);
    // The notification walk stopped early: this page ends where it did.
    if (frontier) entries = entries.filter((e) => compareTimeline(e, frontier) < 0);
    const page = entries.slice(0, limit);
    const last = page[page.length - 1];
    const nextCursor = entries.length > limit && last ? encodeTimelineCursor(last) : frontier ? encodeTimelineCursor(frontier) : null;

    const jobIds = [...new Set(page.flatMap((e) => (e.occurrence ? e.occurrence.jobs.map((j) => j.jobId) : [e.notification!.jobId])))];
    const [jobs, rows] = await Promise.all([getJobs(this.pool, jobIds), deliveriesOfJobs(this.pool, jobIds)]);
    const byDevice = new Map(devices.map((d) => [d.id, d]));
    const rowsByJob = new Map<string, DeliveryRecord[]>();
    for (const row of rows) rowsByJob.set(row.jobId, [...(rowsByJob.get(row.jobId) ?? []), row]);

    const jobView = (jobId: string, purpose: string) => {
      const job = jobs.get(jobId);
      return {
        id: jobId,
        purpose,
        status: job?.status ?? null,
        attempts: job?.attempts ?? null,
        lastError: job?.lastError ?? null,
        runAt: iso(job?.runAt),
      };
    };
    const deliveryView = (row: DeliveryRecord) => {
      const device = row.deviceId ? byDevice.get(row.deviceId) : undefined;
      return {
        jobId: row.jobId,
        installationId: device?.installationId ?? null,
        pushToken: device ? maskPushToken(device.pushToken) : null,
        deviceRemoved: row.deviceId !== null && !device,
        platform: row.platform,
        provider: row.provider,
        status: row.status,
        reason: row.reason,
        attempts: row.attempts,
        at: row.updatedAt.toISOString(),
      };
    };

    const items = page.map((entry) => {
      if (entry.occurrence) {
        const o = entry.occurrence;
        return {
          kind: 'occurrence' as const,
          at: o.dueAt.toISOString(),
          title: o.title,
          reminderId: o.reminderId,
          localDate: o.localDate,
          status: o.status,
          reason: o.reason,
          earliestAt: iso(o.earliestAt),
          sentAt: iso(o.sentAt),
          actedAt: iso(o.actedAt),
          snoozedUntil: iso(o.snoozedUntil),
          jobs: o.jobs.map((j) => jobView(j.jobId, j.purpose)),
          deliveries: o.jobs.flatMap((j) => (rowsByJob.get(j.jobId) ?? []).map(deliveryView)),
        };
      }
      const jobId = entry.notification!.jobId;
      const own = rowsByJob.get(jobId) ?? [];
      const state = notificationState(own);
      return {
        kind: 'notification' as const,
        at: entry.at.toISOString(),
        title: titleOf(jobs.get(jobId)),
        reminderId: null,
        localDate: null,
        status: state.status,
        reason: state.reason,
        earliestAt: null,
        sentAt: iso(own.find((r) => r.status === 'sent')?.updatedAt),
        actedAt: null,
        snoozedUntil: null,
        jobs: [jobView(jobId, 'notification')],
        deliveries: own.map(deliveryView),
      };
    });
    return { items, nextCursor };
  }

  /**
   * The user's event notifications: the jobs that wrote ledger rows for the
   * user, less those that carried a reminder. Reads on until it has `want`
   * or the rounds run out; then `frontier` is the last job it looked at.
   */
  private async notificationJobs(userId: string, before: { at: Date; jobId: string }, want: number) {
    const jobs: UserDeliveryJob[] = [];
    let bound = before;
    for (let round = 0; round < NOTIFICATION_ROUNDS; round++) {
      const scanned = await userDeliveryJobs(this.pool, userId, { before: bound, limit: NOTIFICATION_SCAN });
      const ofReminders = await reminderJobIds(
        this.pool,
        userId,
        scanned.map((j) => j.jobId),
      );
      jobs.push(...scanned.filter((j) => !ofReminders.has(j.jobId)));
      if (jobs.length >= want || scanned.length < NOTIFICATION_SCAN) return { jobs, frontier: null };
      const last = scanned[scanned.length - 1]!;
      bound = { at: last.at, jobId: last.jobId };
    }
    const frontier: TimelinePosition = { at: bound.at, kind: 'notification', key: bound.jobId };
    return { jobs, frontier };
  }
}
