import type { MigrationInterface, QueryRunner } from 'typeorm';

// Devices of two more platforms: `web` (a browser's Web Push subscription, its
// JSON in push_token) and `expo` (an Expo push token), each with its provider
// on the delivery ledger. The checks are replaced, not dropped, so a typo in a
// platform still fails at the database. And the ledger learns Expo's receipts.
export class WebAndExpoPlatforms1764664300000 implements MigrationInterface {
  name = 'WebAndExpoPlatforms1764664300000';

  async up(db: QueryRunner): Promise<void> {
    await this.checks(db, `('ios', 'android', 'web', 'expo')`, `('apns', 'fcm', 'webpush', 'expo', 'simulated')`);
    // Expo answers a send with a ticket and tells what became of it later, in a receipt:
    // the expo_receipts job reads the sends whose receipt it has not seen yet.
    await db.query(`ALTER TABLE push_deliveries ADD COLUMN receipt_checked_at timestamptz`);
    await db.query(`
      CREATE INDEX push_deliveries_expo_receipts_idx ON push_deliveries (updated_at)
       WHERE provider = 'expo' AND status = 'sent' AND receipt_checked_at IS NULL`);
  }

  async down(db: QueryRunner): Promise<void> {
    await db.query(`DROP INDEX push_deliveries_expo_receipts_idx`);
    await db.query(`ALTER TABLE push_deliveries DROP COLUMN receipt_checked_at`);
    await db.query(`DELETE FROM devices WHERE platform IN ('web', 'expo')`);
    await db.query(`DELETE FROM push_deliveries WHERE platform IN ('web', 'expo') OR provider IN ('webpush', 'expo')`);
    await this.checks(db, `('ios', 'android')`, `('apns', 'fcm', 'simulated')`);
  }

  private async checks(db: QueryRunner, platforms: string, providers: string): Promise<void> {
    await db.query(`ALTER TABLE devices DROP CONSTRAINT devices_platform_check`);
    await db.query(`ALTER TABLE devices ADD CONSTRAINT devices_platform_check CHECK (platform IN ${platforms})`);
    await db.query(`ALTER TABLE push_deliveries DROP CONSTRAINT push_deliveries_platform_check`);
    await db.query(`ALTER TABLE push_deliveries ADD CONSTRAINT push_deliveries_platform_check CHECK (platform IN ${platforms})`);
    await db.query(`ALTER TABLE push_deliveries DROP CONSTRAINT push_deliveries_provider_check`);
    await db.query(`ALTER TABLE push_deliveries ADD CONSTRAINT push_deliveries_provider_check CHECK (provider IN ${providers})`);
  }
}
