import type { EntityManager } from 'typeorm';
import { DomainError } from '@nudge/config';
import { queryRows, type QueryExecutor } from '@nudge/queue';
import { loadUser, USER_SETTINGS } from '@nudge/users';
import { ReminderEntity } from './reminder.entity.js';
import { REMINDER_COLUMNS } from './reminder-rows.js';

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

// GET /v1/reminders/{id} is the API's hottest read: the reminder, its user's
// zone and its pending occurrence in one statement (one round trip instead of
// three, and no query building). Unnamed on purpose: a named (prepared)
// statement measured no clear gain and breaks behind PgBouncer in transaction
// mode without max_prepared_statements (docs/scaling.md puts one there).
const READ_OWN_REMINDER = `SELECT ${REMINDER_COLUMNS},
         u.time_zone AS "userTimeZone",
         (SELECT o.due_at FROM reminder_occurrences o WHERE o.reminder_id = r.id AND o.status = 'scheduled'
           ORDER BY o.due_at LIMIT 1) AS "nextAt"
    FROM reminders r JOIN ${USER_SETTINGS} u ON u.id = r.user_id
   WHERE r.id = $1 AND r.user_id = $2`;

/** A reminder as one read returns it: the row, its user's zone, and the pending occurrence's instant. */
export interface OwnReminderRead {
  reminder: ReminderEntity;
  userTimeZone: string;
  next: { at: Date } | null;
}

/** The user's reminder for showing it (not for changing it: no lock), or the same 404 as loadOwnReminder. */
export async function readOwnReminder(db: QueryExecutor, userId: string, id: string): Promise<OwnReminderRead> {
  if (!UUID.test(id)) throw DomainError.notFound('The reminder');
  const [row] = await queryRows<ReminderEntity & { userTimeZone: string; nextAt: Date | null }>(db, READ_OWN_REMINDER, [id, userId]);
  if (!row) throw DomainError.notFound('The reminder');
  const { userTimeZone, nextAt, ...reminder } = row;
  return { reminder, userTimeZone, next: nextAt ? { at: nextAt } : null };
}
