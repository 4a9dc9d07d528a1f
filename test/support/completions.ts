import type pg from 'pg';
import { COMPLETE_MANY } from '../../libs/queue/src/sql.js';

/**
 * Ends these jobs as successes finished at `at`, the way a worker does: taken
 * under a lease of their own, then written by the worker's completion
 * statement (COMPLETE_MANY, which also counts them). For fixtures that need
 * successes at set instants without running a worker at each.
 */
export async function completeAt(pool: pg.Pool | pg.PoolClient, ids: string[], at: Date): Promise<string[]> {
  const taken = await pool.query<{ id: string; lease_token: string }>(
    `UPDATE jobs SET status = 'running', attempts = attempts + 1, locked_by = 'fixture', locked_at = $2,
            locked_until = $2::timestamptz + interval '1 minute', lease_token = nextval('jobs_lease_token_seq')
      WHERE id = ANY ($1::bigint[]) AND status = 'queued' RETURNING id, lease_token`,
    [ids, at],
  );
  const done = await pool.query<{ id: string }>(COMPLETE_MANY.text, [
    taken.rows.map((r) => r.id),
    taken.rows.map((r) => r.lease_token),
    at,
    'fixture',
  ]);
  return done.rows.map((r) => String(r.id));
}
