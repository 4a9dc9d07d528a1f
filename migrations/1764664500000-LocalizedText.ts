import type { MigrationInterface, QueryRunner } from 'typeorm';

// Localized reminders: `title` and `body` keep one text each (the default
// language's, so every reader that wants a string still gets one), and the
// maps by BCP 47 tag sit beside them, null for a plain string. The default
// language is stored because jsonb does not keep the order of keys.
export class LocalizedText1764664500000 implements MigrationInterface {
  name = 'LocalizedText1764664500000';

  async up(db: QueryRunner): Promise<void> {
    await db.query(`ALTER TABLE reminders ADD COLUMN title_i18n jsonb, ADD COLUMN body_i18n jsonb, ADD COLUMN default_locale text`);
  }

  async down(db: QueryRunner): Promise<void> {
    await db.query(`ALTER TABLE reminders DROP COLUMN title_i18n, DROP COLUMN body_i18n, DROP COLUMN default_locale`);
  }
}
