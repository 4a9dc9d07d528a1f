import type { MigrationInterface, QueryRunner } from 'typeorm';
import { QUEUE_SCHEMA } from '@nudge/queue';

// The queue's step `jobs`, shipped with the queue (libs/queue/src/schema.ts).
export class JobQueue1764662500000 implements MigrationInterface {
  name = 'JobQueue1764662500000';

  async up(db: QueryRunner): Promise<void> {
    await QUEUE_SCHEMA.jobs.up(db);
  }

  async down(db: QueryRunner): Promise<void> {
    await QUEUE_SCHEMA.jobs.down(db);
  }
}
