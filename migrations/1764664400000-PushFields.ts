import type { MigrationInterface, QueryRunner } from 'typeorm';

// A reminder's push fields (sound, badge, threadId, imageUrl, androidChannelId,
// interruptionLevel, silent; docs/push-fields.md): only the ones set, so one
// jsonb column rather than seven mostly-null ones. `{}`: every platform's default.
export class PushFields1764664400000 implements MigrationInterface {
  name = 'PushFields1764664400000';

  async up(db: QueryRunner): Promise<void> {
    await db.query(`ALTER TABLE reminders ADD COLUMN push_options jsonb NOT NULL DEFAULT '{}'`);
  }

  async down(db: QueryRunner): Promise<void> {
    await db.query(`ALTER TABLE reminders DROP COLUMN push_options`);
  }
}
