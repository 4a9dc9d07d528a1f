import type { MigrationInterface, QueryRunner } from 'typeorm';

// The zone an occurrence was planned in, so that its history keeps the local
// time it ran at: a 06:30 in Berlin stays 06:30+02:00 after its user flies to
// New York (rendered in the new zone it read 00:30-04:00). NULL for rows
// written before: they show in the reminder's zone of the moment, as they did.
export class OccurrenceTimeZone1764665300000 implements MigrationInterface {
  name = 'OccurrenceTimeZone1764665300000';

  async up(db: QueryRunner): Promise<void> {
    await db.query(`ALTER TABLE reminder_occurrences ADD COLUMN time_zone text`);
  }

  async down(db: QueryRunner): Promise<void> {
    await db.query(`ALTER TABLE reminder_occurrences DROP COLUMN time_zone`);
  }
}
