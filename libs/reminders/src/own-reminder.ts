import type { EntityManager } from 'typeorm';
import { DomainError } from '@nudge/config';
import { loadUser } from '@nudge/users';
import { ReminderEntity } from './reminder.entity.js';

export const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

/**
 * The user's reminder and profile, or a 404 — the same one whether the id is
 * malformed, unknown or another user's, so nobody learns of others' data.
 * `lock` takes the reminder's row for the rest of the transaction.
 */
export async function loadOwnReminder(executor: EntityManager, userId: string, id: string, lock = false) {
  if (!UUID.test(id)) throw DomainError.notFound('The reminder');
  const reminder = await executor.getRepository(ReminderEntity).findOne({
    where: { id, userId },
    ...(lock ? { lock: { mode: 'pessimistic_write' as const } } : {}),
  });
  if (!reminder) throw DomainError.notFound('The reminder');
  const user = await loadUser(executor, userId);
  return { reminder, user };
}
