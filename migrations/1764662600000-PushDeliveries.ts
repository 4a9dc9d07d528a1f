import type { MigrationInterface, QueryRunner } from 'typeorm';

export class PushDeliveries1764662600000 implements MigrationInterface {
  name = 'PushDeliveries1764662600000';

  async up(db: QueryRunner): Promise<void> {
    // The delivery ledger: one row per (job, device). No foreign keys on
    // purpose: finished jobs are pruned and devices deleted, and the history
    // of what was sent to whom must outlive both.
    // device_id is null only for a job that found no device to send to
    // (status skipped, skip_reason no_device); the partial index below keeps
    // that to one row per job, since a unique constraint lets NULLs repeat.
    await db.query(`
      CREATE TABLE push_deliveries (
        id                  bigserial PRIMARY KEY,
        job_id              bigint NOT NULL,
        device_id           uuid,
        user_id             text NOT NULL,
        platform            text CHECK (platform IN ('ios', 'android')),
        provider            text CHECK (provider IN ('apns', 'fcm', 'simulated')),
        status              text NOT NULL CHECK (status IN ('sending', 'sent', 'failed', 'invalid_token', 'skipped')),
        provider_message_id text,
        error               text,
        attempts            integer NOT NULL DEFAULT 0,
        collapse_id         text,
        skip_reason         text,
        created_at          timestamptz NOT NULL DEFAULT now(),
        updated_at          timestamptz NOT NULL DEFAULT now(),
        CONSTRAINT push_deliveries_job_device_key UNIQUE (job_id, device_id),
        CHECK (status <> 'skipped' OR skip_reason IS NOT NULL)
      )`);
    await db.query(`CREATE UNIQUE INDEX push_deliveries_job_no_device_key ON push_deliveries (job_id) WHERE device_id IS NULL`);
    // A job's rows are found through the unique index above (job_id leads it).
    // A user's history, newest first (GET …/deliveries, DELETE /v1/me).
    await db.query(`CREATE INDEX push_deliveries_user_idx ON push_deliveries (user_id, created_at DESC)`);

    // Every push the simulated provider "sent", for developers and tests to inspect.
    await db.query(`
      CREATE TABLE simulated_pushes (
        id                  bigserial PRIMARY KEY,
        platform            text NOT NULL,
        push_token          text NOT NULL,
        collapse_id         text,
        title               text NOT NULL,
        body                text,
        data                jsonb,
        outcome             text NOT NULL,
        provider_message_id text,
        created_at          timestamptz NOT NULL DEFAULT now()
      )`);
    await db.query(`CREATE INDEX simulated_pushes_token_idx ON simulated_pushes (push_token, id)`);
  }

  async down(db: QueryRunner): Promise<void> {
    await db.query('DROP TABLE simulated_pushes');
    await db.query('DROP TABLE push_deliveries');
  }
}
