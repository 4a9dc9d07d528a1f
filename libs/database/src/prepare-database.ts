import type { Logger } from 'pino';
import type { Config } from '@nudge/config';
import { EmbeddedPostgresError } from './embedded-postgres.js';
import { migrateUnderLock } from './migrate.js';
import { resolveDatabase, type ResolvedDatabase } from './resolve-database.js';

/** What both apps do before Nest starts: find (or start) the database and migrate it. */
export async function prepareDatabase(config: Config, logger: Logger): Promise<ResolvedDatabase> {
  const database = await resolveDatabase(config, logger);
  if (config.skipMigrations) {
    logger.info('SKIP_MIGRATIONS=1: not migrating');
    return database;
  }
  try {
    const { applied } = await migrateUnderLock(database.url);
    logger.info({ applied }, applied.length ? `applied ${applied.length} migration(s)` : 'database schema is up to date');
  } catch (error) {
    await database.stop();
    throw error;
  }
  return database;
}

/**
 * prepareDatabase, or, when the embedded PostgreSQL cannot run, stop the
 * process with the one line that names the cause and the fix (no stack trace).
 */
export async function prepareDatabaseOrExit(config: Config, logger: Logger): Promise<ResolvedDatabase> {
  try {
    return await prepareDatabase(config, logger);
  } catch (error) {
    if (!(error instanceof EmbeddedPostgresError)) throw error;
    console.error(error.message);
    process.exit(1);
  }
}
