import type { MigrationInterface, QueryRunner } from 'typeorm';

// The W3C trace context a job carries from where it was enqueued to where it
// runs (docs/tracing.md). Nullable and without a default: with tracing off
// every row holds NULL, which costs no space in the tuple (the null bitmap)
// and adding the column rewrites nothing.
// trace_parent: the job's span is a child of this one (an API request's enqueue).
// trace_link: the job's span starts a new trace linked to this one (a job that
// planned the next occurrence of a reminder: a chain that lasts weeks is not one trace).
export class JobTraceContext1764664200000 implements MigrationInterface {
  name = 'JobTraceContext1764664200000';

  async up(db: QueryRunner): Promise<void> {
    await db.query('ALTER TABLE jobs ADD COLUMN trace_parent text, ADD COLUMN trace_link text');
  }

  async down(db: QueryRunner): Promise<void> {
    await db.query('ALTER TABLE jobs DROP COLUMN trace_parent, DROP COLUMN trace_link');
  }
}
