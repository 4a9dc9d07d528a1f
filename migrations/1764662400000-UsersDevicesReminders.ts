import type { MigrationInterface, QueryRunner } from 'typeorm';

export class UsersDevicesReminders1764662400000 implements MigrationInterface {
  name = 'UsersDevicesReminders1764662400000';

  async up(db: QueryRunner): Promise<void> {
    await db.query(`
      CREATE TABLE users (
        id                      text PRIMARY KEY CHECK (length(id) BETWEEN 1 AND 128),
        time_zone               text NOT NULL,
        locale                  text,
        quiet_hours_start       text,
        quiet_hours_end         text,
        follow_device_time_zone boolean NOT NULL DEFAULT true,
        notifications_enabled   boolean NOT NULL DEFAULT true,
        created_at              timestamptz NOT NULL DEFAULT now(),
        updated_at              timestamptz NOT NULL DEFAULT now(),
        CHECK ((quiet_hours_start IS NULL) = (quiet_hours_end IS NULL))
      )`);
    await db.query(`
      CREATE TABLE devices (
        id                 uuid PRIMARY KEY DEFAULT gen_random_uuid(),
        user_id            text NOT NULL REFERENCES users (id) ON DELETE CASCADE,
        installation_id    text NOT NULL,
        platform           text NOT NULL CHECK (platform IN ('ios', 'android')),
        push_token         text NOT NULL,
        active             boolean NOT NULL DEFAULT true,
        deactivated_reason text,
        deactivated_at     timestamptz,
        time_zone          text,
        app_version        text,
        locale             text,
        last_seen_at       timestamptz NOT NULL DEFAULT now(),
        created_at         timestamptz NOT NULL DEFAULT now(),
        updated_at         timestamptz NOT NULL DEFAULT now(),
        UNIQUE (user_id, installation_id)
      )`);
    // One token is one phone: it belongs to one installation at a time.
    await db.query(`CREATE UNIQUE INDEX devices_push_token_key ON devices (platform, push_token)`);
    await db.query(`CREATE INDEX devices_cleanup_idx ON devices (last_seen_at) WHERE active`);
    await db.query(`CREATE INDEX devices_inactive_idx ON devices (deactivated_at) WHERE NOT active`);

    await db.query(`
      CREATE TABLE reminders (
        id          uuid PRIMARY KEY DEFAULT gen_random_uuid(),
        user_id     text NOT NULL REFERENCES users (id) ON DELETE CASCADE,
        title       text NOT NULL,
        body        text,
        local_time  text NOT NULL,
        time_zone   text,
        recurrence  text NOT NULL,
        start_date  text NOT NULL,
        enabled     boolean NOT NULL DEFAULT true,
        data        jsonb,
        version     integer NOT NULL DEFAULT 1,
        created_at  timestamptz NOT NULL DEFAULT now(),
        updated_at  timestamptz NOT NULL DEFAULT now()
      )`);
    // Cursor pagination walks a user's reminders in creation order.
    await db.query(`CREATE INDEX reminders_user_idx ON reminders (user_id, created_at, id)`);

    // Replays of POST requests that carried an Idempotency-Key.
    await db.query(`
      CREATE TABLE idempotency_keys (
        user_id      text NOT NULL,
        key          text NOT NULL,
        request_hash text NOT NULL,
        status_code  integer NOT NULL,
        response     jsonb NOT NULL,
        created_at   timestamptz NOT NULL DEFAULT now(),
        PRIMARY KEY (user_id, key)
      )`);
  }

  async down(db: QueryRunner): Promise<void> {
    await db.query('DROP TABLE idempotency_keys');
    await db.query('DROP TABLE reminders');
    await db.query('DROP TABLE devices');
    await db.query('DROP TABLE users');
  }
}
