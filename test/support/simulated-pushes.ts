import type pg from 'pg';

/**
 * What the simulated provider recorded for one push token, oldest first:
 * `columns` of simulated_pushes (SQL expressions allowed, e.g.
 * `data->>'occurrence' AS occurrence`). The phone's view of a test.
 */
export async function simulatedPushesTo<T extends object>(pool: pg.Pool, token: string, columns: string): Promise<T[]> {
  return (await pool.query(`SELECT ${columns} FROM simulated_pushes WHERE push_token = $1 ORDER BY id`, [token])).rows as T[];
}
