import type { MigrationInterface, QueryRunner } from 'typeorm';
import { QUEUE_SCHEMA } from '@nudge/queue';

// The queue's step `finishedByStatus`, shipped with the queue (libs/queue/src/schema.ts).
export class JobFinishedByStatus1764665100000 implements MigrationInterface {
  name = 'JobFinishedByStatus1764665100000';

  async up(db: QueryRunner): Promise<void> {
    await QUEUE_SCHEMA.finishedByStatus.up(db);
  }

  async down(db: QueryRunner): Promise<void> {
    await QUEUE_SCHEMA.finishedByStatus.down(db);
  }
}
