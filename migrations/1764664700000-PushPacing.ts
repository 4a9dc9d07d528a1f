import type { MigrationInterface, QueryRunner } from 'typeorm';

// The pace of each provider and app, shared by every worker process: one row
// per (provider, app) holding a token bucket that the send path updates with
// one statement per provider call group (libs/push/src/pace.repository.ts).
// `rate` NULL: unpaced (a provider without a configured maximum that has not
// answered 429 lately). `tokens` may be negative: sends already promised to
// waiting senders. `ceiling`: where an adaptive bucket's rate climbs back to
// after a 429 (the rate that drew it). `queue_until`: the end of the turns
// handed to senders that were told to come back later, so that they come back
// one after another at the rate instead of all at once. The window columns
// measure the rate actually sent, which a 429 on an unpaced bucket halves.
export class PushPacing1764664700000 implements MigrationInterface {
  name = 'PushPacing1764664700000';

  async up(db: QueryRunner): Promise<void> {
    await db.query(`
      CREATE TABLE push_pace (
        provider text NOT NULL,
        app_id text NOT NULL DEFAULT 'default',
        max_rate double precision CHECK (max_rate > 0),
        rate double precision CHECK (rate > 0),
        ceiling double precision,
        tokens double precision NOT NULL DEFAULT 0,
        refreshed_at timestamptz NOT NULL DEFAULT clock_timestamp(),
        queue_until timestamptz,
        window_started_at timestamptz NOT NULL DEFAULT clock_timestamp(),
        window_sent double precision NOT NULL DEFAULT 0,
        observed_rate double precision NOT NULL DEFAULT 0,
        throttles bigint NOT NULL DEFAULT 0,
        throttled_at timestamptz,
        PRIMARY KEY (provider, app_id)
      )`);
  }

  async down(db: QueryRunner): Promise<void> {
    await db.query(`DROP TABLE push_pace`);
  }
}
