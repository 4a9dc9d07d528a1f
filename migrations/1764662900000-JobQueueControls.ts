import type { MigrationInterface, QueryRunner } from 'typeorm';

// The queue under faults (libs/queue, issue 13).
// - lease_token: a value of its own for every claim, which every transition
//   of a running job compares. (id, worker, attempt) repeats after an
//   operator's retry resets the attempts or a snooze gives one back, so a
//   stale run could end a later run of the same job; a token never repeats.
//   Drawn from a sequence (CACHE: each connection takes a block, so a claim
//   of a thousand rows rarely touches the sequence itself). Not indexed: it
//   is compared on a row found by id.
// - snoozes: snoozes in a row since the job last ran to an end, so that a
//   handler that snoozes for ever (to a past time, say) is stopped.
// - job_kind_pauses: kinds an operator paused. The claim reads it (a handful
//   of rows at most), so every worker stops claiming a paused kind at its
//   next claim and a pause survives restarts.
export class JobQueueControls1764662900000 implements MigrationInterface {
  name = 'JobQueueControls1764662900000';

  async up(db: QueryRunner): Promise<void> {
    await db.query(`CREATE SEQUENCE jobs_lease_token_seq AS bigint CACHE 1000`);
    await db.query(`ALTER TABLE jobs ADD COLUMN lease_token bigint`);
    await db.query(`ALTER TABLE jobs ADD COLUMN snoozes integer NOT NULL DEFAULT 0`);
    await db.query(`
      CREATE TABLE job_kind_pauses (
        kind      text PRIMARY KEY,
        paused_at timestamptz NOT NULL
      )`);
  }

  async down(db: QueryRunner): Promise<void> {
    await db.query('DROP TABLE job_kind_pauses');
    await db.query('ALTER TABLE jobs DROP COLUMN snoozes');
    await db.query('ALTER TABLE jobs DROP COLUMN lease_token');
    await db.query('DROP SEQUENCE jobs_lease_token_seq');
  }
}
