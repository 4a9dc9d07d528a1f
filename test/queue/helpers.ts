import type pg from 'pg';
import type { QueueLogger } from '../../libs/queue/src/index.js';
import { eventually } from '../support/eventually.js';

// The queue takes any `{ now(): Date }`: tests pin the config lib's FixedClock.
export { FixedClock } from '../../libs/config/src/clock.js';

export interface LogLine {
  level: string;
  msg?: string;
  fields: Record<string, unknown>;
}

/** A logger that keeps what it is told. */
export function memoryLogger(): QueueLogger & { lines: LogLine[] } {
  const lines: LogLine[] = [];
  const at = (level: string) => (obj: object, msg?: string) => lines.push({ level, msg, fields: obj as Record<string, unknown> });
  return { lines, info: at('info'), warn: at('warn'), error: at('error'), debug: at('debug'), isLevelEnabled: () => true };
}

export interface JobRowView {
  id: string;
  kind: string;
  status: string;
  attempts: number;
  max_attempts: number;
  run_at: Date;
  last_error: string | null;
  locked_by: string | null;
  idempotency_key: string | null;
}

export async function jobRow(pool: pg.Pool, id: string): Promise<JobRowView> {
  const { rows } = await pool.query<JobRowView>('SELECT * FROM jobs WHERE id = $1', [id]);
  if (!rows[0]) throw new Error(`job ${id} not found`);
  return rows[0];
}

export async function statusCounts(pool: pg.Pool): Promise<Record<string, number>> {
  const { rows } = await pool.query<{ status: string; n: number }>('SELECT status, count(*)::int AS n FROM jobs GROUP BY status');
  return Object.fromEntries(rows.map((r) => [r.status, r.n]));
}

export function deferred<T = void>() {
  let resolve!: (value: T) => void;
  let reject!: (error: unknown) => void;
  const promise = new Promise<T>((res, rej) => {
    resolve = res;
    reject = rej;
  });
  return { promise, resolve, reject };
}

/** Polls until `check` holds (see test/support's eventually, which it uses). */
export async function waitFor(check: () => Promise<boolean> | boolean, timeoutMs = 30_000, everyMs = 50): Promise<void> {
  await eventually(async () => (await check()) || undefined, 'a condition', timeoutMs, everyMs);
}
