import { Injectable } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import type { DataSource } from 'typeorm';
import { Clock, DomainError } from '@nudge/config';
import { DeviceEntity, type Platform } from './device.entity.js';
import { canonicalZoneOrFail, UsersService } from './users.service.js';

export interface DeviceInput {
  platform: Platform;
  pushToken: string;
  timeZone?: string;
  appVersion?: string;
  locale?: string;
  /** The device's app (its push credentials); 'default': the environment's; omitted: unchanged (new devices: default). */
  appId?: string;
}

/** The app of a device that names none: the environment's credentials. Stored as NULL. */
const DEFAULT_APP_ID = 'default';

@Injectable()
export class DevicesService {
  constructor(
    @InjectDataSource() private readonly dataSource: DataSource,
    private readonly users: UsersService,
    private readonly clock: Clock,
  ) {}

  /**
   * Registers or refreshes one installation. Idempotent. A push token that
   * another installation held moves here (the phone was reinstalled or changed
   * hands). A device zone that differs from the user's moves the user there
   * when they follow their device's zone (travel), in the same transaction.
   */
  async put(userId: string, installationId: string, input: DeviceInput): Promise<{ device: DeviceEntity; created: boolean }> {
    return this.dataSource.transaction(async (tx) => {
      const user = await this.users.lock(tx, userId);
      if (!user) throw DomainError.conflict('The user has no profile yet: create it with PUT /v1/me first.');
      const now = this.clock.now();
      const timeZone = input.timeZone === undefined ? undefined : canonicalZoneOrFail(input.timeZone);

      // Two users registering one token at once lock different user rows: this lock queues them
      // on the token, so the second DELETE sees (and removes) the first's committed row instead of
      // failing the unique (platform, push_token) index.
      await tx.query(`SELECT pg_advisory_xact_lock(hashtextextended('nudge:push-token:' || $1 || ':' || $2, 0))`, [
        input.platform,
        input.pushToken,
      ]);
      await tx.query(`DELETE FROM devices WHERE platform = $1 AND push_token = $2 AND NOT (user_id = $3 AND installation_id = $4)`, [
        input.platform,
        input.pushToken,
        userId,
        installationId,
      ]);
      const appId = input.appId === undefined || input.appId === DEFAULT_APP_ID ? null : input.appId;
      // xmax = 0 only for a row this statement inserted. An app that does not exist fails the foreign key (below).
      const [row] = await tx
        .query(
          `INSERT INTO devices (user_id, installation_id, platform, push_token, active, deactivated_reason, deactivated_at,
                              time_zone, app_version, locale, last_seen_at, created_at, updated_at, app_id)
         VALUES ($1, $2, $3, $4, true, NULL, NULL, $5, $6, $7, $8, $8, $8, $9)
         ON CONFLICT (user_id, installation_id) DO UPDATE SET
           platform = EXCLUDED.platform,
           push_token = EXCLUDED.push_token,
           active = true, deactivated_reason = NULL, deactivated_at = NULL,
           time_zone = COALESCE(EXCLUDED.time_zone, devices.time_zone),
           app_version = COALESCE(EXCLUDED.app_version, devices.app_version),
           locale = COALESCE(EXCLUDED.locale, devices.locale),
           last_seen_at = EXCLUDED.last_seen_at,
           updated_at = EXCLUDED.updated_at,
           app_id = CASE WHEN $10 THEN EXCLUDED.app_id ELSE devices.app_id END
         RETURNING id, (xmax = 0) AS created`,
          [
            userId,
            installationId,
            input.platform,
            input.pushToken,
            timeZone ?? null,
            input.appVersion ?? null,
            input.locale ?? null,
            now,
            appId,
            input.appId !== undefined,
          ],
        )
        .catch((error: unknown) => {
          if (isForeignKeyViolation(error)) {
            throw DomainError.invalid([{ path: 'appId', message: `appId names no app: create it with PUT /v1/ops/apps/${appId}` }]);
          }
          throw error;
        });

      // Travel: the device is somewhere else. An alias of the user's zone is the same zone, not travel.
      if (timeZone && user.followDeviceTimeZone && timeZone !== canonicalZoneOrFail(user.timeZone)) {
        await this.users.changeTimeZone(tx, user, timeZone);
      }
      const device = await tx.getRepository(DeviceEntity).findOneByOrFail({ id: row.id });
      return { device, created: row.created as boolean };
    });
  }

  async list(userId: string): Promise<DeviceEntity[]> {
    return this.dataSource.getRepository(DeviceEntity).find({ where: { userId }, order: { createdAt: 'ASC', id: 'ASC' } });
  }

  async delete(userId: string, installationId: string): Promise<void> {
    const result = await this.dataSource.getRepository(DeviceEntity).delete({ userId, installationId });
    if (!result.affected) throw DomainError.notFound('The device');
  }
}

function isForeignKeyViolation(error: unknown): boolean {
  const e = error as { code?: unknown; driverError?: { code?: unknown } } | null;
  return e?.code === '23503' || e?.driverError?.code === '23503';
}
