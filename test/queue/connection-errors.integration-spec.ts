import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import pg from 'pg';
import { withTransaction } from '@nudge/database';
import { withClient } from '@nudge/queue';
import { createTestDatabase, type TestDatabase } from '../support/database.js';

// pg reports a connection that dies while no query runs on it (the server
// restarting between two statements of a transaction) as an 'error' event on
// the client; on a checked-out client nothing listened, and the event ended
// the worker process (CI, database-restart test on PostgreSQL 15). Here the
// backend is killed between two statements: the next statement must fail,
// the process must not, and the pool must go on with a fresh connection.
let db: TestDatabase;
let pool: pg.Pool;

beforeAll(async () => {
  db = await createTestDatabase();
  pool = new pg.Pool({ connectionString: db.url, max: 2 });
  pool.on('error', () => undefined);
});
afterAll(async () => {
  await pool.end();
  await db.drop();
});

async function killBetweenStatements(client: pg.PoolClient): Promise<void> {
  const { rows } = await client.query<{ pid: number }>('SELECT pg_backend_pid() AS pid');
  await db.pool.query('SELECT pg_terminate_backend($1)', [rows[0]!.pid]);
  // The server's FATAL arrives while no query runs on the client.
  await new Promise((resolve) => setTimeout(resolve, 300));
  await client.query('SELECT 1');
}

describe('a connection lost between statements', () => {
  it('withClient: the next statement fails, the process goes on, the pool replaces the connection', async () => {
    await expect(withClient(pool, killBetweenStatements)).rejects.toThrow();
    expect((await pool.query<{ one: number }>('SELECT 1 AS one')).rows[0]!.one).toBe(1);
  });

  it('withTransaction: the same inside BEGIN … COMMIT', async () => {
    await expect(withTransaction(pool, killBetweenStatements)).rejects.toThrow();
    expect((await pool.query<{ one: number }>('SELECT 1 AS one')).rows[0]!.one).toBe(1);
  });
});
