// `npm run migrate`: applies pending migrations to DATABASE_URL (or to the
// embedded PostgreSQL under ./.data when it is unset).
import { createLogger, loadConfig } from '@nudge/config';
import { EmbeddedPostgresError } from '../embedded-postgres.js';
import { resolveDatabase } from '../resolve-database.js';
import { migrateUnderLock } from '../migrate.js';

const config = loadConfig();
const logger = createLogger({ level: config.logLevel, nodeEnv: config.nodeEnv });
const database = await resolveDatabase(config, logger).catch((error: unknown) => {
  if (!(error instanceof EmbeddedPostgresError)) throw error;
  console.error(error.message);
  process.exit(1);
});
try {
  const { applied } = await migrateUnderLock(database.url);
  logger.info({ applied }, applied.length ? `applied ${applied.length} migration(s)` : 'the database is up to date');
} finally {
  await database.stop();
}
