import type { MigrationInterface, QueryRunner } from 'typeorm';
import { QUEUE_SCHEMA } from '@nudge/queue';

// The queue's step `claimIndex`, shipped with the queue (libs/queue/src/schema.ts).
export class JobClaimIndex1764663900000 implements MigrationInterface {
  name = 'JobClaimIndex1764663900000';

  async up(db: QueryRunner): Promise<void> {
    await QUEUE_SCHEMA.claimIndex.up(db);
  }

  async down(db: QueryRunner): Promise<void> {
    await QUEUE_SCHEMA.claimIndex.down(db);
  }
}
