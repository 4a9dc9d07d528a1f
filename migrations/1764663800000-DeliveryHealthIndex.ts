import type { MigrationInterface, QueryRunner } from 'typeorm';

// Delivery health (GET /v1/ops/delivery-health): the ledger's last hour by
// minute and provider. On created_at, which a row never changes, so the
// outcome update of a delivery stays a HOT update (an index on updated_at
// would cost every push a write in each of the table's indexes).
export class DeliveryHealthIndex1764663800000 implements MigrationInterface {
  name = 'DeliveryHealthIndex1764663800000';

  async up(db: QueryRunner): Promise<void> {
    await db.query(`CREATE INDEX push_deliveries_created_idx ON push_deliveries (created_at)`);
  }

  async down(db: QueryRunner): Promise<void> {
    await db.query('DROP INDEX push_deliveries_created_idx');
  }
}
