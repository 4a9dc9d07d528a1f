import pg from 'pg';
import { withClient } from '@nudge/queue';

/**
 * Runs `fn` in a transaction on one pooled connection (guarded against the
 * connection failing between statements: see withClient): commit on success,
 * rollback on error.
 */
export async function withTransaction<T>(pool: pg.Pool, fn: (client: pg.PoolClient) => Promise<T>): Promise<T> {
  return withClient(pool, async (client) => {
    try {
      await client.query('BEGIN');
      const result = await fn(client);
      await client.query('COMMIT');
      return result;
    } catch (error) {
      await client.query('ROLLBACK').catch(() => undefined);
      throw error;
    }
  });
}

/**
 * withTransaction when `db` is a pool; otherwise `db` is already one
 * connection (the caller's transaction, or a test's executor) and `fn` runs on it.
 */
export async function inTransaction<D, T>(db: D, fn: (executor: D | pg.PoolClient) => Promise<T>): Promise<T> {
  return db instanceof pg.Pool ? withTransaction(db, fn) : fn(db);
}
