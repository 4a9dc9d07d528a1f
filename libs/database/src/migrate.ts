import pg from 'pg';
import { createDataSource } from './data-source.js';
import { migrations } from '../../../migrations/index.js';

// Any number of API and worker processes may boot at once; the advisory lock
// makes them take turns, so exactly one applies each migration and the others
// find nothing left to do.
const MIGRATION_LOCK_KEY = 7_231_001;

export interface MigrationResult {
  applied: string[];
}

export async function migrateUnderLock(url: string): Promise<MigrationResult> {
  const lockClient = new pg.Client({ connectionString: url });
  await lockClient.connect();
  try {
    await lockClient.query('SELECT pg_advisory_lock($1)', [MIGRATION_LOCK_KEY]);
    const dataSource = createDataSource(url);
    await dataSource.initialize();
    try {
      const applied = await dataSource.runMigrations({ transaction: 'each' });
      return { applied: applied.map((m) => m.name) };
    } finally {
      await dataSource.destroy();
    }
  } finally {
    await lockClient.query('SELECT pg_advisory_unlock($1)', [MIGRATION_LOCK_KEY]).catch(() => undefined);
    await lockClient.end();
  }
}

/** Names of the migrations this build knows that the database has not applied. */
export async function pendingMigrations(query: (sql: string) => Promise<{ rows: { name: string }[] }>): Promise<string[]> {
  const known = migrations.map((m) => m.name);
  const { rows } = await query('SELECT name FROM migrations');
  const done = new Set(rows.map((r) => r.name));
  return known.filter((name) => !done.has(name));
}
