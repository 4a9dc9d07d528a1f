import { Injectable } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import type { DataSource, EntityManager } from 'typeorm';
import { Clock, DomainError } from '@nudge/config';
import { canonicalTimeZone, validateTimeZone } from '@nudge/scheduling';
import { UserEntity } from './user.entity.js';
import { UserEvents } from './user-events.js';

export interface QuietHoursInput {
  start: string;
  end: string;
}

export interface ProfileInput {
  timeZone: string;
  locale?: string | null;
  quietHours?: QuietHoursInput | null;
  followDeviceTimeZone?: boolean;
  notificationsEnabled?: boolean;
}

/** A profile's columns under UserEntity's property names, for raw reads. */
const USER_COLUMNS = `id, time_zone AS "timeZone", locale, quiet_hours_start AS "quietHoursStart", quiet_hours_end AS "quietHoursEnd",
  follow_device_time_zone AS "followDeviceTimeZone", notifications_enabled AS "notificationsEnabled",
  created_at AS "createdAt", updated_at AS "updatedAt"`;

/** The user's profile, in the caller's transaction (another lib's, e.g. a reminder's re-plan); throws when absent. */
export async function loadUser(tx: EntityManager, userId: string): Promise<UserEntity> {
  return tx.getRepository(UserEntity).findOneByOrFail({ id: userId });
}

@Injectable()
export class UsersService {
  constructor(
    @InjectDataSource() private readonly dataSource: DataSource,
    private readonly events: UserEvents,
    private readonly clock: Clock,
  ) {}

  async get(userId: string): Promise<UserEntity> {
    const user = await this.dataSource.getRepository(UserEntity).findOneBy({ id: userId });
    if (!user) throw DomainError.notFound('The profile (create it with PUT /v1/me)');
    return user;
  }

  /** Creates or replaces the whole profile; fields left out take their defaults. */
  async put(userId: string, input: ProfileInput): Promise<{ user: UserEntity; created: boolean }> {
    return this.dataSource.transaction(async (tx) => {
      let before = await this.lock(tx, userId);
      const now = this.clock.now();
      const values = {
        timeZone: canonicalZoneOrFail(input.timeZone),
        locale: input.locale ?? null,
        quietHoursStart: input.quietHours?.start ?? null,
        quietHoursEnd: input.quietHours?.end ?? null,
        followDeviceTimeZone: input.followDeviceTimeZone ?? true,
        notificationsEnabled: input.notificationsEnabled ?? true,
      };
      if (!before) {
        // ON CONFLICT: of two first PUTs racing for a new user, one inserts (201); the other waits
        // for it, inserts nothing, and applies its own values as an update below (200).
        const inserted = (await tx.query(
          `INSERT INTO users (id, time_zone, locale, quiet_hours_start, quiet_hours_end, follow_device_time_zone,
                              notifications_enabled, created_at, updated_at)
           VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $8) ON CONFLICT (id) DO NOTHING RETURNING id`,
          [
            userId,
            values.timeZone,
            values.locale,
            values.quietHoursStart,
            values.quietHoursEnd,
            values.followDeviceTimeZone,
            values.notificationsEnabled,
            now,
          ],
        )) as unknown[];
        if (inserted.length > 0) return { user: await loadUser(tx, userId), created: true };
        before = await this.lock(tx, userId);
        // The racing PUT's user was deleted again before this one could update it.
        if (!before) throw DomainError.conflict('The profile was deleted while this request ran; send it again.');
      }
      await this.update(tx, before, values, now);
      return { user: await loadUser(tx, userId), created: false };
    });
  }

  async patch(userId: string, input: Partial<ProfileInput>): Promise<UserEntity> {
    return this.dataSource.transaction(async (tx) => {
      const before = await this.lock(tx, userId);
      if (!before) throw DomainError.notFound('The profile (create it with PUT /v1/me)');
      const values: Partial<UserEntity> = {};
      if (input.timeZone !== undefined) values.timeZone = canonicalZoneOrFail(input.timeZone);
      if (input.locale !== undefined) values.locale = input.locale;
      if (input.quietHours !== undefined) {
        values.quietHoursStart = input.quietHours?.start ?? null;
        values.quietHoursEnd = input.quietHours?.end ?? null;
      }
      if (input.followDeviceTimeZone !== undefined) values.followDeviceTimeZone = input.followDeviceTimeZone;
      if (input.notificationsEnabled !== undefined) values.notificationsEnabled = input.notificationsEnabled;
      await this.update(tx, before, values, this.clock.now());
      return loadUser(tx, userId);
    });
  }

  /** Removes the user, their devices and reminders, and cancels their pending jobs. */
  async delete(userId: string): Promise<void> {
    await this.dataSource.transaction(async (tx) => {
      const user = await this.lock(tx, userId);
      if (!user) throw DomainError.notFound('The profile');
      await this.events.emitDeleted(tx, userId);
      await tx.delete(UserEntity, { id: userId });
    });
  }

  /**
   * Moves the user to a new zone inside the caller's transaction (travel, or a
   * PATCH), and lets the reminders that follow the user's zone reschedule.
   */
  async changeTimeZone(tx: EntityManager, user: UserEntity, timeZone: string): Promise<void> {
    await this.update(tx, user, { timeZone: canonicalZoneOrFail(timeZone) }, this.clock.now());
  }

  /** Locks the user's row for the rest of the transaction, so changes to one user queue up. */
  async lock(tx: EntityManager, userId: string): Promise<UserEntity | null> {
    // Raw SQL: every write of a user's data starts here (POST /v1/reminders is the API's hottest write).
    const [user] = (await tx.query(`SELECT ${USER_COLUMNS} FROM users WHERE id = $1 FOR UPDATE`, [userId])) as UserEntity[];
    return user ?? null;
  }

  private async update(tx: EntityManager, before: UserEntity, values: Partial<UserEntity>, now: Date): Promise<void> {
    await tx.update(UserEntity, { id: before.id }, { ...values, updatedAt: now });
    const zoneChanged = values.timeZone !== undefined && values.timeZone !== before.timeZone;
    if (zoneChanged) await this.events.emitTimeZoneChanged(tx, before.id, values.timeZone!);
    const quietChanged =
      (values.quietHoursStart !== undefined && values.quietHoursStart !== before.quietHoursStart) ||
      (values.quietHoursEnd !== undefined && values.quietHoursEnd !== before.quietHoursEnd);
    // Travel also moves the quiet hours (they are read in the user's zone): the reminders that
    // follow the user re-plan above, the others here.
    if (quietChanged || (zoneChanged && before.quietHoursStart !== null)) {
      await this.events.emitQuietHoursChanged(tx, before.id, zoneChanged);
    }
  }
}

/**
 * Zone names are stored canonical (`Asia/Calcutta` → `Asia/Kolkata`, case
 * fixed), so that two spellings of one zone never look like travel.
 */
export function canonicalZoneOrFail(zone: string): string {
  const canonical = canonicalTimeZone(zone);
  if (canonical === null) {
    const result = validateTimeZone(zone);
    throw DomainError.invalid([{ path: 'timeZone', message: result.ok ? `"${zone}" is not a time zone` : result.errors.join('; ') }]);
  }
  return canonical;
}
