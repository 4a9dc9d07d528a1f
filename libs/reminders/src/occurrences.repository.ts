import { type NewEvent, recordEvents } from '@nudge/events';
import { QUEUED_JOBS, queryRows, type QueryExecutor } from '@nudge/queue';
import type { OccurrenceStatus, OccurrenceSkipReason } from './reminder-plan.js';

// The statements on reminder_occurrences (one row per reminder and local
// date, with its state) and reminder_jobs (which jobs carried which
// occurrence: the delivery history). Every write that settles an occurrence
// is a compare-and-set on its state, so a late job, an action and a re-plan
// can never overwrite each other. Every write that leaves an occurrence
// skipped, done or snoozed announces it (occurrence.<status>, in the events
// outbox) in the same transaction: a new skip reason is announced too.

export interface OccurrenceRow {
  reminderId: string;
  localDate: string;
  status: OccurrenceStatus;
  reason: string | null;
  dueAt: Date;
  earliestAt: Date;
  jobId: string | null;
  snoozeJobId: string | null;
  snoozedUntil: Date | null;
  version: number;
  sentAt: Date | null;
  actedAt: Date | null;
  /** The zone it was planned in (its local time in the history); null for rows from before it was kept. */
  timeZone: string | null;
}

/** What a re-plan needs to know about a reminder's occurrences. */
export interface ChainState {
  /** The scheduled occurrence (locked). */
  pending: OccurrenceRow | null;
  /** Where the chain stands: the latest date settled before the pending one (or, with none pending, by now). */
  lastSettled: string | null;
  /** Every settled date from `fromDate` on. */
  settled: Set<string>;
}

export interface NewOccurrence {
  reminderId: string;
  localDate: string;
  status: OccurrenceStatus;
  reason: OccurrenceSkipReason | null;
  dueAt: Date;
  earliestAt: Date;
  jobId: string | null;
  version: number;
  /** The zone the plan was computed in. */
  timeZone: string;
}

export interface JobLinkRow {
  reminderId: string;
  jobId: string;
  version: number;
  localDate: string;
  dueAt: Date;
  purpose: 'regular' | 'snooze';
}

export const FINAL_STATUSES: readonly OccurrenceStatus[] = ['sent', 'done', 'skipped', 'snoozed'];

const COLUMNS = `o.reminder_id AS "reminderId", o.local_date AS "localDate", o.status, o.reason, o.due_at AS "dueAt",
  o.earliest_at AS "earliestAt", o.job_id::text AS "jobId", o.snooze_job_id::text AS "snoozeJobId",
  o.snoozed_until AS "snoozedUntil", o.version, o.sent_at AS "sentAt", o.acted_at AS "actedAt", o.time_zone AS "timeZone"`;

// What a write returns of the rows it changed, with their reminder's user, for the events.
interface ChangedRow {
  reminderId: string;
  localDate: string;
  status: OccurrenceStatus;
  reason: string | null;
  dueAt: Date;
  snoozedUntil: Date | null;
  userId: string | null;
  jobId: string | null;
}

/** `statement` (an INSERT or UPDATE of reminder_occurrences aliased `o`, without RETURNING) and the rows it changed. */
async function writeAndAnnounce(db: QueryExecutor, statement: string, params: unknown[], now: Date): Promise<ChangedRow[]> {
  const rows = await queryRows<ChangedRow>(
    db,
    `WITH w AS (${statement}
       RETURNING o.reminder_id, o.local_date, o.status, o.reason, o.due_at, o.snoozed_until, o.job_id)
     SELECT w.reminder_id AS "reminderId", w.local_date AS "localDate", w.status, w.reason, w.due_at AS "dueAt",
            w.snoozed_until AS "snoozedUntil", w.job_id::text AS "jobId", r.user_id AS "userId"
       FROM w LEFT JOIN reminders r ON r.id = w.reminder_id`,
    params,
  );
  const events: NewEvent[] = [];
  for (const row of rows) {
    if (row.status !== 'skipped' && row.status !== 'done' && row.status !== 'snoozed') continue;
    const data: Record<string, unknown> = { reminderId: row.reminderId, userId: row.userId, localDate: row.localDate, dueAt: row.dueAt };
    if (row.status === 'skipped') data.reason = row.reason;
    if (row.status === 'snoozed') data.snoozedUntil = row.snoozedUntil;
    events.push({ type: `occurrence.${row.status}`, userId: row.userId, data });
  }
  await recordEvents(db, events, now);
  return rows;
}

export async function findOccurrence(
  db: QueryExecutor,
  reminderId: string,
  localDate: string,
  lock = false,
): Promise<OccurrenceRow | null> {
  const [row] = await queryRows<OccurrenceRow>(
    db,
    `SELECT ${COLUMNS} FROM reminder_occurrences o WHERE o.reminder_id = $1 AND o.local_date = $2 ${lock ? 'FOR UPDATE' : ''}`,
    [reminderId, localDate],
  );
  return row ?? null;
}

/** The latest `limit` records of one reminder due before `before`, oldest first (history). */
export async function occurrencesBefore(
  db: QueryExecutor,
  reminderId: string,
  range: { before: Date; limit: number },
): Promise<OccurrenceRow[]> {
  const rows = await queryRows<OccurrenceRow>(
    db,
    `SELECT ${COLUMNS} FROM reminder_occurrences o WHERE o.reminder_id = $1 AND o.due_at < $2 ORDER BY o.due_at DESC LIMIT $3`,
    [reminderId, range.before, range.limit],
  );
  return rows.reverse();
}

/**
 * The records a page of occurrences after `after` is made of: those due in (after, horizon], and those of the
 * given local dates wherever their instant lies (a date recorded under another zone or time of day can lie
 * on either side of its nominal instant in the current one).
 */
export async function occurrencesAround(
  db: QueryExecutor,
  reminderId: string,
  range: { after: Date; horizon: Date | null; localDates: readonly string[]; limit: number },
): Promise<OccurrenceRow[]> {
  return queryRows<OccurrenceRow>(
    db,
    `(SELECT ${COLUMNS} FROM reminder_occurrences o
       WHERE o.reminder_id = $1 AND o.due_at > $2 AND ($3::timestamptz IS NULL OR o.due_at <= $3)
       ORDER BY o.due_at LIMIT $5)
     UNION
     (SELECT ${COLUMNS} FROM reminder_occurrences o WHERE o.reminder_id = $1 AND o.local_date = ANY($4::text[]))`,
    [reminderId, range.after, range.horizon, range.localDates, range.limit],
  );
}

/** The scheduled occurrence of each reminder, when it has one (for `nextOccurrence` in views). */
export async function scheduledOccurrences(db: QueryExecutor, reminderIds: readonly string[]): Promise<Map<string, OccurrenceRow>> {
  if (reminderIds.length === 0) return new Map();
  const rows = await queryRows<OccurrenceRow>(
    db,
    `SELECT ${COLUMNS} FROM reminder_occurrences o WHERE o.reminder_id = ANY($1::uuid[]) AND o.status = 'scheduled'
      ORDER BY o.reminder_id, o.due_at`,
    [reminderIds],
  );
  const out = new Map<string, OccurrenceRow>();
  for (const row of rows) if (!out.has(row.reminderId)) out.set(row.reminderId, row);
  return out;
}

/** Settled dates after `afterDate`, per reminder (the chain never plans them again). */
export async function settledDatesAfter(
  db: QueryExecutor,
  pairs: readonly { reminderId: string; afterDate: string | null }[],
): Promise<Map<string, Set<string>>> {
  const out = new Map<string, Set<string>>();
  if (pairs.length === 0) return out;
  const rows = await queryRows<{ reminderId: string; localDate: string }>(
    db,
    `SELECT o.reminder_id AS "reminderId", o.local_date AS "localDate"
       FROM unnest($1::uuid[], $2::text[]) AS p(reminder_id, after_date)
       JOIN reminder_occurrences o ON o.reminder_id = p.reminder_id AND o.local_date > COALESCE(p.after_date, '')
      WHERE o.status <> 'scheduled'`,
    [pairs.map((p) => p.reminderId), pairs.map((p) => p.afterDate)],
  );
  for (const row of rows) {
    const set = out.get(row.reminderId) ?? new Set<string>();
    set.add(row.localDate);
    out.set(row.reminderId, set);
  }
  return out;
}

/** The state a re-plan starts from; locks the pending row. */
export async function chainState(db: QueryExecutor, reminderId: string, now: Date): Promise<ChainState> {
  const [pending] = await queryRows<OccurrenceRow>(
    db,
    `SELECT ${COLUMNS} FROM reminder_occurrences o
      WHERE o.reminder_id = $1 AND o.status = 'scheduled'
      ORDER BY o.due_at LIMIT 1 FOR UPDATE`,
    [reminderId],
  );
  // Where the chain stands: the last date settled before the pending one (a date settled ahead of
  // it, skipped in advance, is no frontier), or without a pending one the last settled by now.
  const [last] = await queryRows<{ localDate: string | null }>(
    db,
    `SELECT max(local_date) AS "localDate" FROM reminder_occurrences
      WHERE reminder_id = $1 AND status <> 'scheduled' AND ($2::text IS NULL OR local_date < $2) AND ($2::text IS NOT NULL OR due_at <= $3)`,
    [reminderId, pending?.localDate ?? null, now],
  );
  const lastSettled = last?.localDate ?? null;
  const settled = await settledDatesAfter(db, [{ reminderId, afterDate: lastSettled }]);
  return { pending: pending ?? null, lastSettled, settled: settled.get(reminderId) ?? new Set() };
}

/**
 * Writes planned and passed-over occurrences. A scheduled row replaces a
 * scheduled one for the same date (a re-plan); a settled date is never
 * touched (its state is final).
 */
export async function upsertOccurrences(db: QueryExecutor, rows: readonly NewOccurrence[], now: Date): Promise<void> {
  if (rows.length === 0) return;
  await writeAndAnnounce(
    db,
    `INSERT INTO reminder_occurrences AS o (reminder_id, local_date, status, reason, due_at, earliest_at, job_id, version, time_zone,
                                            created_at, updated_at)
     SELECT r.reminder_id, r.local_date, r.status, r.reason, r.due_at, r.earliest_at, r.job_id, r.version, r.time_zone, $10, $10
       FROM unnest($1::uuid[], $2::text[], $3::text[], $4::text[], $5::timestamptz[], $6::timestamptz[], $7::bigint[], $8::int[], $9::text[])
         AS r(reminder_id, local_date, status, reason, due_at, earliest_at, job_id, version, time_zone)
     ON CONFLICT (reminder_id, local_date) DO UPDATE
        SET status = EXCLUDED.status, reason = EXCLUDED.reason, due_at = EXCLUDED.due_at, earliest_at = EXCLUDED.earliest_at,
            job_id = EXCLUDED.job_id, version = EXCLUDED.version, time_zone = EXCLUDED.time_zone, updated_at = EXCLUDED.updated_at
      WHERE o.status = 'scheduled'`,
    [
      rows.map((r) => r.reminderId),
      rows.map((r) => r.localDate),
      rows.map((r) => r.status),
      rows.map((r) => r.reason),
      rows.map((r) => r.dueAt),
      rows.map((r) => r.earliestAt),
      rows.map((r) => r.jobId),
      rows.map((r) => r.version),
      rows.map((r) => r.timeZone),
      now,
    ],
    now,
  );
}

export interface Settlement {
  reminderId: string;
  localDate: string;
  jobId: string;
  status: 'sent' | 'skipped';
  reason: OccurrenceSkipReason | null;
}

/**
 * Ends scheduled occurrences carried by these jobs (compare-and-set: only
 * while the job still carries it). Returns the ids of the jobs whose
 * occurrence it ended.
 */
export async function settleOccurrences(db: QueryExecutor, settlements: readonly Settlement[], now: Date): Promise<Set<string>> {
  if (settlements.length === 0) return new Set();
  const rows = await writeAndAnnounce(
    db,
    `UPDATE reminder_occurrences o
        SET status = s.status, reason = s.reason, sent_at = CASE WHEN s.status = 'sent' THEN $6::timestamptz END, updated_at = $6
       FROM unnest($1::uuid[], $2::text[], $3::bigint[], $4::text[], $5::text[]) AS s(reminder_id, local_date, job_id, status, reason)
      WHERE o.reminder_id = s.reminder_id AND o.local_date = s.local_date AND o.job_id = s.job_id AND o.status = 'scheduled'`,
    [
      settlements.map((s) => s.reminderId),
      settlements.map((s) => s.localDate),
      settlements.map((s) => s.jobId),
      settlements.map((s) => s.status),
      settlements.map((s) => s.reason),
      now,
    ],
    now,
  );
  return new Set(rows.map((r) => r.jobId!));
}

/** Moves the earliest allowed instant of occurrences deferred by quiet hours while their job ran. */
export async function deferOccurrences(
  db: QueryExecutor,
  deferrals: readonly { reminderId: string; localDate: string; earliestAt: Date }[],
  now: Date,
): Promise<void> {
  if (deferrals.length === 0) return;
  await db.query(
    `UPDATE reminder_occurrences o SET earliest_at = GREATEST(o.earliest_at, d.earliest_at), updated_at = $4
       FROM unnest($1::uuid[], $2::text[], $3::timestamptz[]) AS d(reminder_id, local_date, earliest_at)
      WHERE o.reminder_id = d.reminder_id AND o.local_date = d.local_date AND o.status = 'scheduled'`,
    [deferrals.map((d) => d.reminderId), deferrals.map((d) => d.localDate), deferrals.map((d) => d.earliestAt), now],
  );
}

/** A snooze's re-delivery has run (or lapsed): the occurrence no longer waits for it. */
export async function clearSnoozes(
  db: QueryExecutor,
  jobs: readonly { reminderId: string; localDate: string; jobId: string }[],
  now: Date,
): Promise<void> {
  if (jobs.length === 0) return;
  await db.query(
    `UPDATE reminder_occurrences o SET snooze_job_id = NULL, updated_at = $4
       FROM unnest($1::uuid[], $2::text[], $3::bigint[]) AS s(reminder_id, local_date, job_id)
      WHERE o.reminder_id = s.reminder_id AND o.local_date = s.local_date AND o.snooze_job_id = s.job_id`,
    [jobs.map((j) => j.reminderId), jobs.map((j) => j.localDate), jobs.map((j) => j.jobId), now],
  );
}

/** An action's new state for one occurrence (the caller holds the row lock or inserts it). */
export async function setOccurrenceState(
  db: QueryExecutor,
  row: Pick<
    OccurrenceRow,
    | 'reminderId'
    | 'localDate'
    | 'status'
    | 'reason'
    | 'dueAt'
    | 'earliestAt'
    | 'version'
    | 'snoozeJobId'
    | 'snoozedUntil'
    | 'actedAt'
    | 'timeZone'
  >,
  now: Date,
): Promise<void> {
  await writeAndAnnounce(
    db,
    `INSERT INTO reminder_occurrences AS o (reminder_id, local_date, status, reason, due_at, earliest_at, version, snooze_job_id,
                                      snoozed_until, acted_at, time_zone, created_at, updated_at)
     VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $12)
     ON CONFLICT (reminder_id, local_date) DO UPDATE
        SET status = EXCLUDED.status, reason = EXCLUDED.reason, snooze_job_id = EXCLUDED.snooze_job_id,
            snoozed_until = EXCLUDED.snoozed_until, acted_at = EXCLUDED.acted_at, updated_at = EXCLUDED.updated_at`,
    [
      row.reminderId,
      row.localDate,
      row.status,
      row.reason,
      row.dueAt,
      row.earliestAt,
      row.version,
      row.snoozeJobId,
      row.snoozedUntil,
      row.actedAt,
      row.timeZone,
      now,
    ],
    now,
  );
}

/** Removes a scheduled occurrence that no plan produces any more (it was not yet due). */
export async function deleteScheduled(db: QueryExecutor, reminderId: string, localDate: string): Promise<void> {
  await db.query(`DELETE FROM reminder_occurrences WHERE reminder_id = $1 AND local_date = $2 AND status = 'scheduled'`, [
    reminderId,
    localDate,
  ]);
}

/** Marks a scheduled occurrence skipped (a re-plan or a disable passed it over after it was due). */
export async function skipScheduled(
  db: QueryExecutor,
  reminderId: string,
  localDate: string,
  reason: OccurrenceSkipReason,
  now: Date,
): Promise<void> {
  await writeAndAnnounce(
    db,
    `UPDATE reminder_occurrences o SET status = 'skipped', reason = $3, updated_at = $4
      WHERE o.reminder_id = $1 AND o.local_date = $2 AND o.status = 'scheduled'`,
    [reminderId, localDate, reason, now],
    now,
  );
}

export async function linkJobs(db: QueryExecutor, links: readonly JobLinkRow[], now: Date): Promise<void> {
  if (links.length === 0) return;
  await db.query(
    `INSERT INTO reminder_jobs (reminder_id, job_id, version, local_date, due_at, purpose, created_at)
     SELECT l.*, $7::timestamptz
       FROM unnest($1::uuid[], $2::bigint[], $3::integer[], $4::text[], $5::timestamptz[], $6::text[])
         AS l(reminder_id, job_id, version, local_date, due_at, purpose)
     ON CONFLICT DO NOTHING`,
    [
      links.map((l) => l.reminderId),
      links.map((l) => l.jobId),
      links.map((l) => l.version),
      links.map((l) => l.localDate),
      links.map((l) => l.dueAt),
      links.map((l) => l.purpose),
      now,
    ],
  );
}

/** The queued or running jobs of these reminders (to cancel them). */
export async function pendingJobIds(db: QueryExecutor, reminderIds: readonly string[]): Promise<string[]> {
  if (reminderIds.length === 0) return [];
  const rows = await queryRows<{ id: string }>(
    db,
    `SELECT m.job_id::text AS id FROM reminder_jobs m JOIN ${QUEUED_JOBS} j ON j.id = m.job_id
      WHERE m.reminder_id = ANY($1::uuid[])`,
    [reminderIds],
  );
  return rows.map((r) => r.id);
}

/** The occurrence a job carried (a reminder's regular delivery or a snooze), for the operator's view of the job. */
export async function occurrenceOfJob(
  db: QueryExecutor,
  jobId: string,
): Promise<(OccurrenceRow & { purpose: 'regular' | 'snooze' }) | null> {
  const [row] = await queryRows<OccurrenceRow & { purpose: 'regular' | 'snooze' }>(
    db,
    `SELECT ${COLUMNS}, m.purpose FROM reminder_jobs m
       JOIN reminder_occurrences o ON o.reminder_id = m.reminder_id AND o.local_date = m.local_date
      WHERE m.job_id = $1`,
    [jobId],
  );
  return row ?? null;
}
