import type { MigrationInterface, QueryRunner } from 'typeorm';

// An Idempotency-Key replay answers the first response again, byte for byte:
// json keeps the text as written, where jsonb reorders an object's keys.
export class IdempotencyAnswerVerbatim1764664900000 implements MigrationInterface {
  name = 'IdempotencyAnswerVerbatim1764664900000';

  async up(db: QueryRunner): Promise<void> {
    await db.query(`ALTER TABLE idempotency_keys ALTER COLUMN response TYPE json USING response::json`);
  }

  async down(db: QueryRunner): Promise<void> {
    await db.query(`ALTER TABLE idempotency_keys ALTER COLUMN response TYPE jsonb USING response::jsonb`);
  }
}
