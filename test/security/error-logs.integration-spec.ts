import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { QueryFailedError } from 'typeorm';
import { createLogger } from '@nudge/config';
import { createTestDatabase, type TestDatabase } from '../support/database.js';
import { LogCapture } from '../support/api-app.js';

// An unexpected database error is logged whole (the 500's error id points at
// it), but the values of its statement are not: PostgreSQL's `detail` names
// the offending key ("Key (platform, push_token)=(…)") and TypeORM keeps every
// bound value in `parameters`. Both would put push tokens and secrets in logs.
describe('database errors in the logs', () => {
  let db: TestDatabase;
  beforeAll(async () => {
    db = await createTestDatabase();
  });
  afterAll(async () => {
    await db?.drop();
  });

  it('keep the message, code and constraint, and none of the values', async () => {
    const token = 'push-token-that-must-stay-out-of-logs-7f3a';
    const insert = `INSERT INTO users (id, time_zone, created_at, updated_at) VALUES ($1, 'Europe/Berlin', now(), now())
                    ON CONFLICT DO NOTHING`;
    await db.pool.query(insert, ['u1']);
    await db.pool.query(
      `INSERT INTO devices (user_id, installation_id, platform, push_token, created_at, updated_at, last_seen_at)
       VALUES ('u1', 'a', 'ios', $1, now(), now(), now())`,
      [token],
    );
    const statement = `INSERT INTO devices (user_id, installation_id, platform, push_token, created_at, updated_at, last_seen_at)
                       VALUES ('u1', 'b', 'ios', $1, now(), now(), now())`;
    const driverError = await db.pool.query(statement, [token]).then(
      () => undefined,
      (error: Error) => error,
    );
    expect(driverError).toBeDefined();
    expect(JSON.stringify({ ...driverError })).toContain(token); // PostgreSQL's own detail names it
    const logs = new LogCapture();
    createLogger({ destination: logs, pretty: false }).error(
      { err: new QueryFailedError(statement, [token], driverError!) },
      'unhandled error',
    );

    expect(logs.text).not.toContain(token);
    const { err } = JSON.parse(logs.lines[0]!) as { err: Record<string, unknown> };
    expect(err).toMatchObject({
      type: 'QueryFailedError',
      message: expect.stringContaining('devices_push_token_key'),
      code: '23505',
      constraint: 'devices_push_token_key',
      table: 'devices',
      query: statement,
    });
    expect(err.stack).toEqual(expect.stringContaining('QueryFailedError'));
  });
});
