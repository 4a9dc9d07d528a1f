import type { MigrationInterface, QueryRunner } from 'typeorm';
import { QUEUE_SCHEMA } from '@nudge/queue';

// The queue's step `controls`, shipped with the queue (libs/queue/src/schema.ts).
export class JobQueueControls1764662900000 implements MigrationInterface {
  name = 'JobQueueControls1764662900000';

  async up(db: QueryRunner): Promise<void> {
    await QUEUE_SCHEMA.controls.up(db);
  }

  async down(db: QueryRunner): Promise<void> {
    await QUEUE_SCHEMA.controls.down(db);
  }
}
