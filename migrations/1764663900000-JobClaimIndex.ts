import type { MigrationInterface, QueryRunner } from 'typeorm';

// The claim probes each of its kinds (and each priority level of a kind) for
// ready jobs: an index led by kind skips the jobs of kinds no worker claiming
// handles, and (kind, priority) equal makes `run_at <= now` a range, so the
// jobs scheduled for later are not walked (PostgreSQL 15–17 cannot skip over
// a leading priority). jobs_runnable_idx stays for the gauges and the
// "coming due" views, which read every kind.
export class JobClaimIndex1764663900000 implements MigrationInterface {
  name = 'JobClaimIndex1764663900000';

  async up(db: QueryRunner): Promise<void> {
    await db.query(`CREATE INDEX jobs_claim_idx ON jobs (kind, priority, run_at, id) WHERE status = 'queued'`);
  }

  async down(db: QueryRunner): Promise<void> {
    await db.query('DROP INDEX jobs_claim_idx');
  }
}
