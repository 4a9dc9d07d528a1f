import type { MigrationInterface, QueryRunner } from 'typeorm';

// Devices of two more platforms: `web` (a browser's Web Push subscription, its
// JSON in push_token) and `expo` (an Expo push token), each with its provider
// on the delivery ledger. The checks are replaced, not dropped, so a typo in a
// platform still fails at the database.
export class WebAndExpoPlatforms1764664300000 implements MigrationInterface {
  name = 'WebAndExpoPlatforms1764664300000';

  async up(db: QueryRunner): Promise<void> {
    await this.checks(db, `('ios', 'android', 'web', 'expo')`, `('apns', 'fcm', 'webpush', 'expo', 'simulated')`);
  }

  async down(db: QueryRunner): Promise<void> {
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
