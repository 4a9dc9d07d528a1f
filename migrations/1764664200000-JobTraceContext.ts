import type { MigrationInterface, QueryRunner } from 'typeorm';
import { QUEUE_SCHEMA } from '@nudge/queue';

// The queue's step `traceContext`, shipped with the queue (libs/queue/src/schema.ts).
export class JobTraceContext1764664200000 implements MigrationInterface {
  name = 'JobTraceContext1764664200000';

  async up(db: QueryRunner): Promise<void> {
    await QUEUE_SCHEMA.traceContext.up(db);
  }

  async down(db: QueryRunner): Promise<void> {
    await QUEUE_SCHEMA.traceContext.down(db);
  }
}
