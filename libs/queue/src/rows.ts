import type { Job, JobRun, JobRunOutcome, JobStatus } from './types.js';

// Row shapes differ a little between drivers (pg parses int8 to string and
// timestamptz to Date; another driver setup may give numbers or strings):
// normalise once here.

export interface JobRow {
  id: string | number;
  kind: string;
  payload: unknown;
  idempotency_key: string | null;
  priority: number;
  run_at: Date | string;
  attempts: number;
  max_attempts: number;
  status: JobStatus;
  last_error: string | null;
  locked_at: Date | string | null;
  locked_until: Date | string | null;
  locked_by: string | null;
  finished_at: Date | string | null;
  created_at: Date | string;
  updated_at: Date | string;
}

export interface JobRunRow {
  job_id?: string | number;
  attempt: number;
  worker: string | null;
  started_at: Date | string | null;
  finished_at: Date | string;
  outcome: JobRunOutcome;
  error: string | null;
  next_run_at: Date | string | null;
}

export function toDate(value: Date | string): Date {
  return value instanceof Date ? value : new Date(value);
}

export function toDateOrNull(value: Date | string | null | undefined): Date | null {
  return value === null || value === undefined ? null : toDate(value);
}

function payloadOf(value: unknown): unknown {
  // A driver without jsonb parsing hands back the text.
  if (typeof value === 'string') {
    try {
      return JSON.parse(value);
    } catch {
      return value;
    }
  }
  return value;
}

export function toJob<P>(row: JobRow): Job<P> {
  return {
    id: String(row.id),
    kind: row.kind,
    payload: payloadOf(row.payload) as P,
    idempotencyKey: row.idempotency_key,
    priority: Number(row.priority),
    runAt: toDate(row.run_at),
    attempts: Number(row.attempts),
    maxAttempts: Number(row.max_attempts),
    status: row.status,
    lastError: row.last_error,
    lockedAt: toDateOrNull(row.locked_at),
    lockedUntil: toDateOrNull(row.locked_until),
    lockedBy: row.locked_by,
    finishedAt: toDateOrNull(row.finished_at),
    createdAt: toDate(row.created_at),
    updatedAt: toDate(row.updated_at),
  };
}

export function toJobRun(row: JobRunRow): JobRun {
  return {
    attempt: Number(row.attempt),
    worker: row.worker,
    startedAt: toDateOrNull(row.started_at),
    finishedAt: toDate(row.finished_at),
    outcome: row.outcome,
    error: row.error,
    nextRunAt: toDateOrNull(row.next_run_at),
  };
}

/** A job id as the API accepts it: a positive integer, as number, bigint or decimal string. */
export function parseJobId(id: string | number | bigint): string | null {
  const text = typeof id === 'string' ? id.trim() : String(id);
  if (!/^[1-9][0-9]{0,18}$/.test(text)) return null;
  return BigInt(text) <= 9223372036854775807n ? text : null;
}
