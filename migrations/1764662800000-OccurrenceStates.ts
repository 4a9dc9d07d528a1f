import type { MigrationInterface, QueryRunner } from 'typeorm';

// Occurrences become records of their own. An occurrence is (reminder, local
// date) with one state; it is what guarantees "at most one regular delivery
// per local date" whatever happens to the reminder's version (travel, edits,
// the sweep), and what the occurrences API reads. The old job map keeps its
// role (which jobs carried which occurrence: the delivery history) under the
// name reminder_jobs, and learns whether a job was the regular delivery or a
// snooze. Reminders may be one-off (no rule) and time-sensitive.
export class OccurrenceStates1764662800000 implements MigrationInterface {
  name = 'OccurrenceStates1764662800000';

  async up(db: QueryRunner): Promise<void> {
    await db.query(`ALTER TABLE reminder_occurrences RENAME TO reminder_jobs`);
    await db.query(`ALTER TABLE reminder_jobs RENAME CONSTRAINT reminder_occurrences_pkey TO reminder_jobs_pkey`);
    await db.query(`ALTER TABLE reminder_jobs RENAME CONSTRAINT reminder_occurrences_reminder_id_fkey TO reminder_jobs_reminder_id_fkey`);
    await db.query(`ALTER INDEX reminder_occurrences_due_idx RENAME TO reminder_jobs_due_idx`);
    await db.query(`ALTER TABLE reminder_jobs ADD COLUMN purpose text NOT NULL DEFAULT 'regular' CHECK (purpose IN ('regular', 'snooze'))`);

    await db.query(`ALTER TABLE reminders ALTER COLUMN recurrence DROP NOT NULL`);
    await db.query(`ALTER TABLE reminders ADD COLUMN time_sensitive boolean NOT NULL DEFAULT false`);

    await db.query(`
      CREATE TABLE reminder_occurrences (
        reminder_id   uuid NOT NULL REFERENCES reminders (id) ON DELETE CASCADE,
        local_date    text NOT NULL,
        status        text NOT NULL CHECK (status IN ('scheduled', 'sent', 'done', 'snoozed', 'skipped')),
        reason        text,
        -- The nominal instant (no jitter, no quiet hours) and the earliest one
        -- delivery was allowed at (jitter, or the end of the quiet hours that
        -- deferred it): staleness counts from the latter.
        due_at        timestamptz NOT NULL,
        earliest_at   timestamptz NOT NULL,
        -- The job of the regular delivery while scheduled; the pending snooze.
        job_id        bigint,
        snooze_job_id bigint,
        snoozed_until timestamptz,
        version       integer NOT NULL,
        sent_at       timestamptz,
        acted_at      timestamptz,
        created_at    timestamptz NOT NULL DEFAULT now(),
        updated_at    timestamptz NOT NULL DEFAULT now(),
        PRIMARY KEY (reminder_id, local_date),
        CHECK (status <> 'skipped' OR reason IS NOT NULL)
      )`);
    // A reminder's history by time (GET …/occurrences?before=), and the sweep's
    // "has a scheduled occurrence" probe.
    await db.query(`CREATE INDEX reminder_occurrences_due_idx ON reminder_occurrences (reminder_id, due_at)`);
    await db.query(`CREATE INDEX reminder_occurrences_scheduled_idx ON reminder_occurrences (reminder_id) WHERE status = 'scheduled'`);

    // What the job map already knows: pending occurrences are scheduled, delivered ones sent.
    await db.query(`
      INSERT INTO reminder_occurrences (reminder_id, local_date, status, due_at, earliest_at, job_id, version, sent_at, created_at, updated_at)
      SELECT DISTINCT ON (m.reminder_id, m.local_date)
             m.reminder_id, m.local_date,
             CASE WHEN j.status = 'succeeded' THEN 'sent' ELSE 'scheduled' END,
             m.due_at, m.due_at, CASE WHEN j.status = 'succeeded' THEN NULL ELSE m.job_id END, m.version,
             CASE WHEN j.status = 'succeeded' THEN j.finished_at END, m.created_at, now()
        FROM reminder_jobs m JOIN jobs j ON j.id = m.job_id
       WHERE j.status IN ('queued', 'running', 'succeeded')
       ORDER BY m.reminder_id, m.local_date, (j.status = 'succeeded') DESC, m.job_id DESC`);
  }

  async down(db: QueryRunner): Promise<void> {
    await db.query('DROP TABLE reminder_occurrences');
    await db.query('ALTER TABLE reminders DROP COLUMN time_sensitive');
    await db.query(`UPDATE reminders SET recurrence = 'FREQ=DAILY;COUNT=1' WHERE recurrence IS NULL`);
    await db.query('ALTER TABLE reminders ALTER COLUMN recurrence SET NOT NULL');
    await db.query('ALTER TABLE reminder_jobs DROP COLUMN purpose');
    await db.query(`ALTER INDEX reminder_jobs_due_idx RENAME TO reminder_occurrences_due_idx`);
    await db.query(`ALTER TABLE reminder_jobs RENAME CONSTRAINT reminder_jobs_reminder_id_fkey TO reminder_occurrences_reminder_id_fkey`);
    await db.query(`ALTER TABLE reminder_jobs RENAME CONSTRAINT reminder_jobs_pkey TO reminder_occurrences_pkey`);
    await db.query(`ALTER TABLE reminder_jobs RENAME TO reminder_occurrences`);
  }
}
