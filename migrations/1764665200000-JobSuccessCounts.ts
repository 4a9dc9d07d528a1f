import type { MigrationInterface, QueryRunner } from 'typeorm';
import { QUEUE_SCHEMA } from '@nudge/queue';

// The queue's step `successCounts`, shipped with the queue (libs/queue/src/schema.ts).
export class JobSuccessCounts1764665200000 implements MigrationInterface {
  name = 'JobSuccessCounts1764665200000';

  async up(db: QueryRunner): Promise<void> {
    await QUEUE_SCHEMA.successCounts.up(db);
  }

  async down(db: QueryRunner): Promise<void> {
    await QUEUE_SCHEMA.successCounts.down(db);
  }
}
