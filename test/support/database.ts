import { randomBytes } from 'node:crypto';
import pg from 'pg';
import { inject } from 'vitest';
import { withDatabase } from '@nudge/database';

export interface TestDatabase {
  url: string;
  name: string;
  /** A small pool on the test database, for arranging and asserting rows. */
  pool: pg.Pool;
  drop(): Promise<void>;
}

/**
 * A fresh database cloned from the migrated template: the test file owns it
 * whole. Call in beforeAll and drop it in afterAll.
 */
export async function createTestDatabase(): Promise<TestDatabase> {
  const adminUrl = inject('adminDatabaseUrl');
  const template = inject('templateDatabase');
  const pid = template.replace('nudge_template_', '');
  const name = `nudge_test_${pid}_${randomBytes(4).toString('hex')}`;
  const admin = new pg.Client({ connectionString: adminUrl });
  await admin.connect();
  await admin.query(`CREATE DATABASE ${name} TEMPLATE ${template}`);
  await admin.end();
  const url = withDatabase(adminUrl, name);
  const pool = new pg.Pool({ connectionString: url, max: 5 });
  pool.on('error', () => undefined);
  return {
    url,
    name,
    pool,
    async drop() {
      await pool.end();
      const client = new pg.Client({ connectionString: adminUrl });
      await client.connect();
      await client.query(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`);
      await client.end();
    },
  };
}
