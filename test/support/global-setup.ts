import pg from 'pg';
import type { TestProject } from 'vitest/node';
import { migrateUnderLock, startTemporaryPostgres, withDatabase } from '@nudge/database';

declare module 'vitest' {
  export interface ProvidedContext {
    /** URL of a database that test files may connect to as an admin to create their own. */
    adminDatabaseUrl: string;
    /** Name of the migrated template that each test file clones. */
    templateDatabase: string;
  }
}

// Runs once per `vitest run`: a PostgreSQL (TEST_DATABASE_URL, or an embedded
// one in a temporary folder), and one migrated template database. Each test
// file then clones the template (test/support/database.ts), which takes
// milliseconds and keeps files from seeing each other's rows.
export default async function setup(project: TestProject) {
  let adminUrl = process.env.TEST_DATABASE_URL;
  let stopServer = async () => undefined as void;
  if (!adminUrl) {
    const server = await startTemporaryPostgres('nudge-test-pg-');
    adminUrl = server.url;
    stopServer = server.stop;
  }

  const template = `nudge_template_${process.pid}`;
  const admin = new pg.Client({ connectionString: adminUrl });
  await admin.connect();
  await admin.query(`DROP DATABASE IF EXISTS ${template}`);
  await admin.query(`CREATE DATABASE ${template}`);
  await migrateUnderLock(withDatabase(adminUrl, template));
  await admin.end();

  project.provide('adminDatabaseUrl', adminUrl);
  project.provide('templateDatabase', template);

  return async () => {
    const client = new pg.Client({ connectionString: adminUrl });
    await client.connect();
    // Test files drop their own databases; sweep what a crashed file left.
    const { rows } = await client.query<{ datname: string }>(`SELECT datname FROM pg_database WHERE datname = $1 OR datname LIKE $2`, [
      template,
      `nudge_test_${process.pid}_%`,
    ]);
    for (const { datname } of rows) await client.query(`DROP DATABASE IF EXISTS ${datname} WITH (FORCE)`);
    await client.end();
    await stopServer();
  };
}
