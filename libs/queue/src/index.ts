// The job queue: PostgreSQL only, no other Nudge lib. See ../README.md.
export * from './backoff.js';
export * from './enqueue.js';
export * from './errors.js';
export * from './executor.js';
export * from './housekeeping.js';
export type { JobPayloads, KnownJobKind, PayloadOf } from './job-kinds.js';
export type { KindOptions } from './lanes.js';
export * from './metrics.js';
export * from './ops.js';
export * from './queue.module.js';
export * from './relations.js';
export { parseJobId } from './rows.js';
export * from './schema.js';
export { WAKE_CHANNEL } from './sql.js';
export * from './types.js';
export * from './worker.js';
export { failSpan, formatTraceparent, jobTraceContext, parseTraceparent, tracer, tracingEnabled, type StoredTrace } from './tracing.js';
