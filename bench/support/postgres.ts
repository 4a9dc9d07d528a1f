import pg from 'pg';
import { startTemporaryPostgres, withDatabase } from '../../libs/database/src/embedded-postgres.js';

export { withDatabase };

export interface BenchServer {
  /** URL of the server's `postgres` database, for creating the bench databases. */
  adminUrl: string;
  embedded: boolean;
  version: string;
  stop(): Promise<void>;
}

/**
 * The server every system runs against: BENCH_DATABASE_URL (an admin URL on
 * a server where databases may be created and dropped), or an embedded
 * PostgreSQL in a temporary folder that is deleted afterwards.
 */
export async function startServer(log: (line: string) => void): Promise<BenchServer> {
  let adminUrl = process.env.BENCH_DATABASE_URL;
  let stop = async (): Promise<void> => undefined;
  const embedded = !adminUrl;
  if (!adminUrl) {
    const server = await startTemporaryPostgres('nudge-bench-pg-');
    log(`started an embedded PostgreSQL in ${server.folder}`);
    adminUrl = server.url;
    stop = server.stop;
  }
  const client = new pg.Client({ connectionString: adminUrl });
  await client.connect();
  const { rows } = await client.query<{ v: string; sc: string }>(
    `SELECT current_setting('server_version') AS v, current_setting('synchronous_commit') AS sc`,
  );
  await client.end();
  return { adminUrl, embedded, version: `PostgreSQL ${rows[0]!.v} (synchronous_commit=${rows[0]!.sc})`, stop };
}

/** A fresh, empty database on the bench server; returns its URL. */
export async function freshDatabase(adminUrl: string, name: string): Promise<string> {
  const client = new pg.Client({ connectionString: adminUrl });
  await client.connect();
  try {
    await client.query(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`);
    await client.query(`CREATE DATABASE ${name}`);
  } finally {
    await client.end();
  }
  return withDatabase(adminUrl, name);
}

export async function dropDatabase(adminUrl: string, name: string): Promise<void> {
  const client = new pg.Client({ connectionString: adminUrl });
  await client.connect();
  try {
    await client.query(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`);
  } finally {
    await client.end();
  }
}

/**
 * A pool for a bench. pg-pool's `end()` resolves once its clients are told to
 * end, before their sockets close: when the server is stopped right after (the
 * last section of a run), an idle client's "terminating connection" error
 * would reach a pool with no listener and end the bench.
 */
export function benchPool(url: string, max: number): pg.Pool {
  const pool = new pg.Pool({ connectionString: url, max });
  pool.on('error', () => undefined);
  return pool;
}
