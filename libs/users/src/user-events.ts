import { Injectable } from '@nestjs/common';
import type { EntityManager } from 'typeorm';

type TimeZoneChanged = (tx: EntityManager, userId: string, timeZone: string) => Promise<void>;
type UserDeleted = (tx: EntityManager, userId: string) => Promise<void>;
/** `zoneChangedToo`: the reminders that follow the user's zone were re-planned by the zone change already. */
type QuietHoursChanged = (tx: EntityManager, userId: string, zoneChangedToo: boolean) => Promise<void>;

/**
 * In-process hooks that run inside the transaction of a user change, so that
 * other modules (reminders) react atomically without libs/users depending on
 * them: travel and new quiet hours reschedule reminders, deleting a user
 * cancels their jobs.
 */
@Injectable()
export class UserEvents {
  private readonly timeZoneChanged: TimeZoneChanged[] = [];
  private readonly deleted: UserDeleted[] = [];
  private readonly quietHoursChanged: QuietHoursChanged[] = [];

  onTimeZoneChanged(listener: TimeZoneChanged): void {
    this.timeZoneChanged.push(listener);
  }

  onDeleted(listener: UserDeleted): void {
    this.deleted.push(listener);
  }

  onQuietHoursChanged(listener: QuietHoursChanged): void {
    this.quietHoursChanged.push(listener);
  }

  async emitTimeZoneChanged(tx: EntityManager, userId: string, timeZone: string): Promise<void> {
    for (const listener of this.timeZoneChanged) await listener(tx, userId, timeZone);
  }

  async emitDeleted(tx: EntityManager, userId: string): Promise<void> {
    for (const listener of this.deleted) await listener(tx, userId);
  }

  async emitQuietHoursChanged(tx: EntityManager, userId: string, zoneChangedToo: boolean): Promise<void> {
    for (const listener of this.quietHoursChanged) await listener(tx, userId, zoneChangedToo);
  }
}
