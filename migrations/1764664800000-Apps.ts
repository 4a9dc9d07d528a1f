import type { MigrationInterface, QueryRunner } from 'typeorm';

// Several apps on one Nudge, each with its own push credentials (docs/apps.md).
// `apps` holds each app's credentials; the secrets inside (the APNs key, the
// FCM service account, the Expo token, the VAPID private key) are sealed with
// AES-256-GCM under NUDGE_SECRET_KEY. A device names its app (NULL: the
// default app, the credentials of the environment). `app_provider_failures`
// marks a provider that rejected an app's credentials ('default' for the
// environment's), so that app's sends for it wait instead of burning attempts.
export class Apps1764664800000 implements MigrationInterface {
  name = 'Apps1764664800000';

  async up(db: QueryRunner): Promise<void> {
    await db.query(`
      CREATE TABLE apps (
        id text PRIMARY KEY CHECK (id ~ '^[a-z0-9][a-z0-9._-]{0,63}$' AND id <> 'default'),
        name text NOT NULL,
        version integer NOT NULL DEFAULT 1,
        apns jsonb,
        fcm jsonb,
        expo jsonb,
        web_push jsonb,
        created_at timestamptz NOT NULL,
        updated_at timestamptz NOT NULL
      )`);
    await db.query(`
      CREATE TABLE app_provider_failures (
        app_id text NOT NULL,
        provider text NOT NULL,
        reason text NOT NULL,
        since timestamptz NOT NULL,
        checked_at timestamptz NOT NULL,
        app_version integer NOT NULL,
        PRIMARY KEY (app_id, provider)
      )`);
    await db.query(`ALTER TABLE devices ADD COLUMN app_id text REFERENCES apps (id)`);
    await db.query(`ALTER TABLE simulated_pushes ADD COLUMN app_id text`);
  }

  async down(db: QueryRunner): Promise<void> {
    await db.query(`ALTER TABLE simulated_pushes DROP COLUMN app_id`);
    await db.query(`ALTER TABLE devices DROP COLUMN app_id`);
    await db.query(`DROP TABLE app_provider_failures`);
    await db.query(`DROP TABLE apps`);
  }
}
