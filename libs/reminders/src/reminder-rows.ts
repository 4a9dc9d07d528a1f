import type { EntityManager } from 'typeorm';
import { queryRows } from '@nudge/queue';
import type { ReminderEntity } from './reminder.entity.js';

/** A reminder's columns (table alias `r`) under ReminderEntity's property names, for the hot paths' raw SQL. */
export const REMINDER_COLUMNS = `r.id, r.user_id AS "userId", r.title, r.body, r.title_i18n AS "titleI18n", r.body_i18n AS "bodyI18n",
         r.default_locale AS "defaultLocale", r.local_time AS "localTime", r.time_zone AS "timeZone", r.recurrence,
         r.start_date AS "startDate", r.enabled, r.time_sensitive AS "timeSensitive", r.category, r.data,
         r.push_options AS "pushOptions", r.version, r.created_at AS "createdAt", r.updated_at AS "updatedAt"`;

const INSERT_REMINDER = `INSERT INTO reminders AS r (user_id, title, body, title_i18n, body_i18n, default_locale, local_time, time_zone,
                                     recurrence, start_date, enabled, time_sensitive, category, data, push_options,
                                     version, created_at, updated_at)
  VALUES ($1, $2, $3, $4::jsonb, $5::jsonb, $6, $7, $8, $9, $10, $11, $12, $13, $14::jsonb, $15::jsonb, $16, $17, $18)
  RETURNING ${REMINDER_COLUMNS}`;

/**
 * Inserts a new reminder and returns it as stored (its id drawn by the
 * database). One statement, without TypeORM's persistence machinery: POST
 * /v1/reminders is the API's hottest write (docs/performance.md, API profile).
 */
export async function insertReminder(tx: EntityManager, values: Omit<ReminderEntity, 'id'>): Promise<ReminderEntity> {
  const json = (value: unknown) => (value === null ? null : JSON.stringify(value));
  const [row] = await queryRows<ReminderEntity>(tx, INSERT_REMINDER, [
    values.userId,
    values.title,
    values.body,
    json(values.titleI18n),
    json(values.bodyI18n),
    values.defaultLocale,
    values.localTime,
    values.timeZone,
    values.recurrence,
    values.startDate,
    values.enabled,
    values.timeSensitive,
    values.category,
    json(values.data),
    json(values.pushOptions),
    values.version,
    values.createdAt,
    values.updatedAt,
  ]);
  return row!;
}
