import type { MigrationInterface, QueryRunner } from 'typeorm';

// Events out (issue 15): the outbox of state changes and the webhooks they
// are sent to.
export class Events1764664100000 implements MigrationInterface {
  name = 'Events1764664100000';

  async up(db: QueryRunner): Promise<void> {
    // One row per state change, written in the change's transaction. `seq`
    // orders rows of one transaction; `tx_id` is the writing transaction, so
    // the feed can serve only events whose transaction is older than every
    // transaction still running (a sequence alone is not commit-ordered: a
    // reader could pass over an id taken by a transaction that commits late).
    // No foreign keys: an event outlives the user, device or job it names.
    await db.query(`
      CREATE TABLE events (
        seq         bigserial PRIMARY KEY,
        id          uuid NOT NULL DEFAULT gen_random_uuid() UNIQUE,
        type        text NOT NULL,
        user_id     text,
        data        jsonb NOT NULL DEFAULT '{}',
        tx_id       xid8 NOT NULL DEFAULT pg_current_xact_id(),
        created_at  timestamptz NOT NULL
      )`);
    // The feed walks (tx_id, seq); the retention prune walks created_at.
    await db.query(`CREATE INDEX events_feed_idx ON events (tx_id, seq)`);
    await db.query(`CREATE INDEX events_created_idx ON events (created_at)`);

    await db.query(`
      CREATE TABLE webhooks (
        id          text PRIMARY KEY,
        url         text NOT NULL,
        events      text[] NOT NULL,
        secret      text NOT NULL,
        created_at  timestamptz NOT NULL,
        updated_at  timestamptz NOT NULL
      )`);
  }

  async down(db: QueryRunner): Promise<void> {
    await db.query('DROP TABLE webhooks');
    await db.query('DROP TABLE events');
  }
}
