import type { MigrationInterface, QueryRunner } from 'typeorm';

// Issue 15 part 3: notification categories and per-user category preferences,
// and the ledger column that the hourly cap on event pushes counts by.
// A category is 1–64 of a-z 0-9 . _ : - (the API lowercases what it is given).
export class CategoryPreferences1764664000000 implements MigrationInterface {
  name = 'CategoryPreferences1764664000000';

  async up(db: QueryRunner): Promise<void> {
    await db.query(`ALTER TABLE reminders ADD COLUMN category text CHECK (category ~ '^[a-z0-9._:-]{1,64}$')`);
    await db.query(`
      CREATE TABLE user_preferences (
        user_id              text NOT NULL REFERENCES users (id) ON DELETE CASCADE,
        category             text NOT NULL CHECK (category ~ '^[a-z0-9._:-]{1,64}$'),
        enabled              boolean NOT NULL,
        quiet_hours_start    text,
        quiet_hours_end      text,
        allow_time_sensitive boolean NOT NULL DEFAULT true,
        updated_at           timestamptz NOT NULL DEFAULT now(),
        PRIMARY KEY (user_id, category),
        CHECK ((quiet_hours_start IS NULL) = (quiet_hours_end IS NULL))
      )`);
    // The job kind whose send made the row (set for send_notification), so the
    // per-user hourly cap counts event pushes without reading the queue's table.
    await db.query(`ALTER TABLE push_deliveries ADD COLUMN kind text`);
    // On created_at, which a row never changes, so the outcome update stays HOT.
    await db.query(
      `CREATE INDEX push_deliveries_user_notifications_idx ON push_deliveries (user_id, created_at) WHERE kind = 'send_notification'`,
    );
  }

  async down(db: QueryRunner): Promise<void> {
    await db.query('DROP INDEX push_deliveries_user_notifications_idx');
    await db.query('ALTER TABLE push_deliveries DROP COLUMN kind');
    await db.query('DROP TABLE user_preferences');
    await db.query('ALTER TABLE reminders DROP COLUMN category');
  }
}
