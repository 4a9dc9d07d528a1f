import type { MigrationInterface, QueryRunner } from 'typeorm';

// What the simulated provider "sent", in full: the body APNs, FCM, the Web Push
// service or Expo would have received for that device (`platformPayload`), so
// a developer sees exactly what a phone would get, sound and category included.
export class SimulatedPayload1764664600000 implements MigrationInterface {
  name = 'SimulatedPayload1764664600000';

  async up(db: QueryRunner): Promise<void> {
    await db.query(`ALTER TABLE simulated_pushes ADD COLUMN payload jsonb`);
  }

  async down(db: QueryRunner): Promise<void> {
    await db.query(`ALTER TABLE simulated_pushes DROP COLUMN payload`);
  }
}
