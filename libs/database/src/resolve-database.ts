import { resolve } from 'node:path';
import type { Logger } from 'pino';
import type { Config } from '@nudge/config';
import { startEmbeddedPostgres } from './embedded-postgres.js';
import pg from 'pg';

export interface ResolvedDatabase {
  url: string;
  embedded: boolean;
  stop(): Promise<void>;
}

export const EMBEDDED_DATA_DIR = resolve(process.cwd(), '.data', 'postgres');
const EMBEDDED_DATABASE = 'nudge';

/**
 * DATABASE_URL when set; otherwise an embedded PostgreSQL with its data under
 * ./.data/postgres, initialised on the first start and reused afterwards.
 */
export async function resolveDatabase(config: Config, logger: Logger): Promise<ResolvedDatabase> {
  if (config.databaseUrl) return { url: config.databaseUrl, embedded: false, stop: async () => undefined };

  logger.info({ dataDir: EMBEDDED_DATA_DIR }, 'DATABASE_URL is not set: starting an embedded PostgreSQL');
  const server = await startEmbeddedPostgres({ dataDir: EMBEDDED_DATA_DIR, onWarning: (line) => logger.warn(line) });
  const admin = new pg.Client({ connectionString: server.url });
  await admin.connect();
  try {
    const { rowCount } = await admin.query('SELECT 1 FROM pg_database WHERE datname = $1', [EMBEDDED_DATABASE]);
    if (!rowCount) await admin.query(`CREATE DATABASE ${EMBEDDED_DATABASE}`);
  } finally {
    await admin.end();
  }
  const url = server.url.replace(/\/postgres$/, `/${EMBEDDED_DATABASE}`);
  return { url, embedded: true, stop: () => server.stop() };
}
