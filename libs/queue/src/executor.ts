import type pg from 'pg';

/**
 * Anything that runs SQL with positional parameters: a pg Pool, PoolClient or
 * Client, or a TypeORM EntityManager or QueryRunner. Passing the caller's
 * transaction (a PoolClient after BEGIN, a QueryRunner, a transactional
 * EntityManager) makes the queue's writes commit or roll back with theirs.
 */
export interface QueryExecutor {
  query(text: string, params?: unknown[]): Promise<unknown>;
}

/**
 * Rows of a result, whichever driver produced it: pg returns `{rows}`,
 * TypeORM returns the rows array, or `[rows, affected]` for a top-level
 * UPDATE/DELETE, or a QueryResult `{records}` when asked for structure.
 */
export function rowsOf<T>(result: unknown): T[] {
  if (Array.isArray(result)) {
    if (result.length === 2 && Array.isArray(result[0]) && typeof result[1] === 'number') return result[0] as T[];
    return result as T[];
  }
  if (result && typeof result === 'object') {
    const shaped = result as { rows?: unknown; records?: unknown };
    if (Array.isArray(shaped.rows)) return shaped.rows as T[];
    if (Array.isArray(shaped.records)) return shaped.records as T[];
  }
  return [];
}

export async function queryRows<T>(executor: QueryExecutor, text: string, params: unknown[] = []): Promise<T[]> {
  return rowsOf<T>(await executor.query(text, params));
}

/**
 * Runs `fn` on one pooled connection, guarded. pg reports a connection's
 * failure (the server restarting, a network cut) as an 'error' event on the
 * client when no query is running on it — between two statements of a
 * transaction, say — and the pool listens only to its idle clients: on a
 * checked-out one the event would be unhandled and end the process. The guard
 * takes it, the next statement fails instead, and the broken client is
 * destroyed on release rather than returned to the pool.
 */
export async function withClient<T>(pool: pg.Pool, fn: (client: pg.PoolClient) => Promise<T>): Promise<T> {
  const client = await pool.connect();
  let broken: Error | undefined;
  const guard = (error: Error) => {
    broken = error;
  };
  client.on('error', guard);
  try {
    return await fn(client);
  } finally {
    client.removeListener('error', guard);
    client.release(broken);
  }
}
