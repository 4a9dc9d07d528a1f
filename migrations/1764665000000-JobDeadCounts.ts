import type { MigrationInterface, QueryRunner } from 'typeorm';
import { QUEUE_SCHEMA } from '@nudge/queue';

// The queue's step `deadCounts`, shipped with the queue (libs/queue/src/schema.ts).
export class JobDeadCounts1764665000000 implements MigrationInterface {
  name = 'JobDeadCounts1764665000000';

  async up(db: QueryRunner): Promise<void> {
    await QUEUE_SCHEMA.deadCounts.up(db);
  }

  async down(db: QueryRunner): Promise<void> {
    await QUEUE_SCHEMA.deadCounts.down(db);
  }
}
