import { queryRows, type QueryExecutor } from '@nudge/queue';
import type { OccurrenceStatus } from './reminder-plan.js';

// Reads for the operator's view of a user: every occurrence of the user's
// reminders with the jobs that carried it, newest first.

/** One occurrence of one of the user's reminders, and every job that carried it. */
export interface UserOccurrence {
  reminderId: string;
  title: string;
  localDate: string;
  status: OccurrenceStatus;
  reason: string | null;
  dueAt: Date;
  earliestAt: Date;
  sentAt: Date | null;
  actedAt: Date | null;
  snoozedUntil: Date | null;
  /** `<reminderId>:<localDate>`: with dueAt, the order of the walk. */
  key: string;
  /** Oldest first: the regular delivery (retries are the same job) and any snoozes. */
  jobs: { jobId: string; purpose: 'regular' | 'snooze' }[];
}

/**
 * The user's occurrences, newest first by (due_at, key), strictly before
 * `before` (keys compare bytewise). A page of a keyset walk
 * backwards; `before` is typically now, so that dates ahead stay out.
 */
export async function userOccurrences(
  db: QueryExecutor,
  userId: string,
  page: { before: { at: Date; key: string }; limit: number },
): Promise<UserOccurrence[]> {
  return queryRows<UserOccurrence>(
    db,
    `SELECT o.reminder_id::text AS "reminderId", r.title, o.local_date AS "localDate", o.status, o.reason,
            o.due_at AS "dueAt", o.earliest_at AS "earliestAt", o.sent_at AS "sentAt", o.acted_at AS "actedAt",
            o.snoozed_until AS "snoozedUntil", o.reminder_id::text || ':' || o.local_date AS key,
            COALESCE((SELECT json_agg(json_build_object('jobId', m.job_id::text, 'purpose', m.purpose) ORDER BY m.job_id)
                        FROM reminder_jobs m WHERE m.reminder_id = o.reminder_id AND m.local_date = o.local_date), '[]') AS jobs
       FROM reminders r
       JOIN reminder_occurrences o ON o.reminder_id = r.id
      WHERE r.user_id = $1
        AND (date_trunc('milliseconds', o.due_at), (o.reminder_id::text || ':' || o.local_date) COLLATE "C") < ($2::timestamptz, $3::text COLLATE "C")
      ORDER BY date_trunc('milliseconds', o.due_at) DESC, (o.reminder_id::text || ':' || o.local_date) COLLATE "C" DESC
      LIMIT $4`,
    [userId, page.before.at, page.before.key, page.limit],
  );
}

/**
 * Which of these jobs carried an occurrence of one of the user's reminders
 * (the others are event notifications). Through the user's reminders, so that
 * reminder_jobs is probed by its primary key (reminder_id, job_id).
 */
export async function reminderJobIds(db: QueryExecutor, userId: string, jobIds: readonly string[]): Promise<Set<string>> {
  if (jobIds.length === 0) return new Set();
  const rows = await queryRows<{ jobId: string }>(
    db,
    `SELECT m.job_id::text AS "jobId" FROM reminders r JOIN reminder_jobs m ON m.reminder_id = r.id
      WHERE r.user_id = $1 AND m.job_id = ANY($2::bigint[])`,
    [userId, jobIds],
  );
  return new Set(rows.map((r) => r.jobId));
}
