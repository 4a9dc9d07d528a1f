import type pg from 'pg';
import type { QueueClock, QueueLogger } from '../../libs/queue/src/index.js';

export class PinnedClock implements QueueClock {
  private t: number;
  constructor(start: string | Date) {
    this.t = new Date(start).getTime();
  }
  now(): Date {
    return new Date(this.t);
  }
  set(at: string | Date): void {
    this.t = new Date(at).getTime();
  }
  advance(ms: number): void {
    this.t += ms;
  }
}

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

export async function waitFor(check: () => Promise<boolean> | boolean, timeoutMs = 30_000, everyMs = 50): Promise<void> {
  const end = Date.now() + timeoutMs;
  while (Date.now() < end) {
    if (await check()) return;
    await new Promise((r) => setTimeout(r, everyMs));
  }
  throw new Error(`condition not met within ${timeoutMs} ms`);
}
