import { Injectable } from '@nestjs/common';
import type { EntityManager } from 'typeorm';

type TimeZoneChanged = (tx: EntityManager, userId: string, timeZone: string) => Promise<void>;
type UserDeleted = (tx: EntityManager, userId: string) => Promise<void>;

/**
 * In-process hooks that run inside the transaction of a user change, so that
 * other modules (reminders) react atomically without libs/users depending on
 * them: travel reschedules reminders, deleting a user cancels their jobs.
 */
@Injectable()
export class UserEvents {
  private readonly timeZoneChanged: TimeZoneChanged[] = [];
  private readonly deleted: UserDeleted[] = [];

  onTimeZoneChanged(listener: TimeZoneChanged): void {
    this.timeZoneChanged.push(listener);
  }

  onDeleted(listener: UserDeleted): void {
    this.deleted.push(listener);
  }

  async emitTimeZoneChanged(tx: EntityManager, userId: string, timeZone: string): Promise<void> {
    for (const listener of this.timeZoneChanged) await listener(tx, userId, timeZone);
  }

  async emitDeleted(tx: EntityManager, userId: string): Promise<void> {
    for (const listener of this.deleted) await listener(tx, userId);
  }
}
