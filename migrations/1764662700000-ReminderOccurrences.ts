import type { MigrationInterface, QueryRunner } from 'typeorm';

// Which job carries which occurrence of a reminder: the reminder's pending job
// (to cancel it on a change, and for the sweep to find chains that broke) and
// its delivery history, without the generic queue knowing about reminders.
export class ReminderOccurrences1764662700000 implements MigrationInterface {
  name = 'ReminderOccurrences1764662700000';

  async up(db: QueryRunner): Promise<void> {
    await db.query(`
      CREATE TABLE reminder_occurrences (
        reminder_id uuid NOT NULL REFERENCES reminders (id) ON DELETE CASCADE,
        job_id      bigint NOT NULL,
        version     integer NOT NULL,
        local_date  text NOT NULL,
        due_at      timestamptz NOT NULL,
        created_at  timestamptz NOT NULL DEFAULT now(),
        PRIMARY KEY (reminder_id, job_id)
      )`);
    await db.query(`CREATE INDEX reminder_occurrences_due_idx ON reminder_occurrences (reminder_id, due_at DESC)`);
  }

  async down(db: QueryRunner): Promise<void> {
    await db.query('DROP TABLE reminder_occurrences');
  }
}
