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
