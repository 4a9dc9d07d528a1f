import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { migrateUnderLock, pendingMigrations } from '@nudge/database';
import { createTestDatabase, type TestDatabase } from '../support/database.js';

describe('migrations', () => {
  let db: TestDatabase;
  beforeAll(async () => {
    db = await createTestDatabase();
  });
  afterAll(async () => db.drop());

  it('leaves the cloned template fully migrated', async () => {
    expect(await pendingMigrations((sql) => db.pool.query(sql))).toEqual([]);
    const { rows } = await db.pool.query(`SELECT to_regclass('users') AS users, to_regclass('reminders') AS reminders`);
    expect(rows[0]).toEqual({ users: 'users', reminders: 'reminders' });
  });

  it('lets several processes migrate at once: one applies, the rest find nothing to do', async () => {
    // A fresh database with nothing applied: migrate it from four clients at once.
    await db.pool.query(`DROP SCHEMA public CASCADE; CREATE SCHEMA public`);
    const results = await Promise.all([1, 2, 3, 4].map(() => migrateUnderLock(db.url)));
    const applied = results.flatMap((r) => r.applied);
    expect(new Set(applied).size).toBe(applied.length);
    expect(results.filter((r) => r.applied.length > 0)).toHaveLength(1);
    expect(await pendingMigrations((sql) => db.pool.query(sql))).toEqual([]);
  });
});
