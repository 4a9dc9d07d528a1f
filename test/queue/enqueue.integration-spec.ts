import pg from 'pg';
import { DataSource } from 'typeorm';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { enqueue, enqueueMany, WAKE_CHANNEL, type QueryExecutor } from '../../libs/queue/src/index.js';
import { createTestDatabase, type TestDatabase } from '../support/database.js';
import { statusCounts, waitFor } from './helpers.js';

describe('enqueue', () => {
  let db: TestDatabase;
  let listener: pg.Client;
  let notifications = 0;

  beforeAll(async () => {
    db = await createTestDatabase();
    listener = new pg.Client({ connectionString: db.url });
    await listener.connect();
    listener.on('notification', (n) => {
      if (n.channel === WAKE_CHANNEL) notifications++;
    });
    await listener.query(`LISTEN ${WAKE_CHANNEL}`);
  });
  afterAll(async () => {
    await listener.end();
    await db.drop();
  });
  beforeEach(async () => {
    await db.pool.query('TRUNCATE jobs, job_runs');
    notifications = 0;
  });

  // Counts notifications by sending a marker after the fact: NOTIFYs arrive in
  // commit order, so once the marker is in, every earlier one is too.
  async function settledNotifications(): Promise<number> {
    let marker = false;
    const onMarker = (n: pg.Notification) => {
      if (n.channel === 'test_marker') marker = true;
    };
    listener.on('notification', onMarker);
    await listener.query('LISTEN test_marker');
    await db.pool.query(`NOTIFY test_marker`);
    await waitFor(() => marker, 5000, 5);
    listener.off('notification', onMarker);
    return notifications;
  }

  it('joins the caller transaction: a rollback leaves no job and wakes nobody', async () => {
    const client = await db.pool.connect();
    try {
      await client.query('BEGIN');
      const { job, created } = await enqueue(client, { kind: 'test', payload: { a: 1 } });
      expect(created).toBe(true);
      expect((await client.query('SELECT count(*)::int AS n FROM jobs')).rows[0].n).toBe(1);
      await client.query('ROLLBACK');
      expect(job.status).toBe('queued');
    } finally {
      client.release();
    }
    expect(await statusCounts(db.pool)).toEqual({});
    expect(await settledNotifications()).toBe(0);
  });

  it('commits with the caller and notifies once at commit', async () => {
    const client = await db.pool.connect();
    try {
      await client.query('BEGIN');
      await enqueue(client, { kind: 'test' });
      await enqueue(client, { kind: 'test' });
      await client.query('COMMIT');
    } finally {
      client.release();
    }
    expect(await statusCounts(db.pool)).toEqual({ queued: 2 });
    // Two statements, identical notifies in one transaction: Postgres delivers one.
    expect(await settledNotifications()).toBe(1);
  });

  it('the same idempotency key twice leaves one job and returns it both times', async () => {
    const first = await enqueue(db.pool, { kind: 'test', idempotencyKey: 'k-1', payload: { n: 1 } });
    const second = await enqueue(db.pool, { kind: 'test', idempotencyKey: 'k-1', payload: { n: 2 } });
    expect(first.created).toBe(true);
    expect(second.created).toBe(false);
    expect(second.job.id).toBe(first.job.id);
    expect(second.job.payload).toEqual({ n: 1 });
    const { rows } = await db.pool.query(`SELECT count(*)::int AS n FROM jobs WHERE idempotency_key = 'k-1'`);
    expect(rows[0].n).toBe(1);
    // The key still blocks after the job finished (until the row is pruned).
    await db.pool.query(`UPDATE jobs SET status = 'succeeded', finished_at = now() WHERE id = $1`, [first.job.id]);
    expect((await enqueue(db.pool, { kind: 'test', idempotencyKey: 'k-1' })).created).toBe(false);
  });

  it('two concurrent transactions with one key: one job, both get it', async () => {
    const a = await db.pool.connect();
    const b = await db.pool.connect();
    try {
      await a.query('BEGIN');
      await b.query('BEGIN');
      const ra = await enqueue(a, { kind: 'test', idempotencyKey: 'race' });
      const pending = enqueue(b, { kind: 'test', idempotencyKey: 'race' }); // waits for a
      await new Promise((r) => setTimeout(r, 100));
      await a.query('COMMIT');
      const rb = await pending;
      await b.query('COMMIT');
      expect(ra.created).toBe(true);
      expect(rb.created).toBe(false);
      expect(rb.job.id).toBe(ra.job.id);
    } finally {
      a.release();
      b.release();
    }
  });

  it('REPEATABLE READ: a key committed by a concurrent transaction is a serialization failure (40001); the retried transaction gets the job', async () => {
    const a = await db.pool.connect();
    const b = await db.pool.connect();
    try {
      await a.query('BEGIN');
      await b.query('BEGIN ISOLATION LEVEL REPEATABLE READ');
      await b.query('SELECT 1'); // b's snapshot is taken here, before a commits
      const ra = await enqueue(a, { kind: 'test', idempotencyKey: 'rr-race' });
      await a.query('COMMIT');
      // The row is invisible to b's snapshot: PostgreSQL cannot return it, nor insert another.
      await expect(enqueue(b, { kind: 'test', idempotencyKey: 'rr-race' })).rejects.toMatchObject({ code: '40001' });
      await b.query('ROLLBACK');
      // What a caller at this level does with any 40001: run the transaction again.
      await b.query('BEGIN ISOLATION LEVEL REPEATABLE READ');
      const again = await enqueue(b, { kind: 'test', idempotencyKey: 'rr-race' });
      await b.query('COMMIT');
      expect(again).toMatchObject({ created: false, job: { id: ra.job.id } });
    } finally {
      a.release();
      b.release();
    }
  });

  it('enqueueMany makes N jobs in one statement and one notification', async () => {
    const statements: string[] = [];
    const spy: QueryExecutor = {
      query: (text, params) => {
        statements.push(text);
        return db.pool.query(text, params as unknown[]);
      },
    };
    const specs = Array.from({ length: 500 }, (_, i) => ({
      kind: 'bulk',
      payload: i % 2 ? { i, list: [1, 2, 3] } : [i, 'array payload'],
      idempotencyKey: i % 5 === 0 ? `bulk-${i}` : null,
    }));
    const results = await enqueueMany(spy, specs);
    expect(statements).toHaveLength(1);
    expect(results).toHaveLength(500);
    expect(results.every((r) => r.created)).toBe(true);
    results.forEach((r, i) => expect(r.job.payload).toEqual(specs[i]!.payload));
    // Caller order = id order.
    const ids = results.map((r) => BigInt(r.job.id));
    expect([...ids].sort((x, y) => (x < y ? -1 : 1))).toEqual(ids);
    expect(await statusCounts(db.pool)).toEqual({ queued: 500 });
    expect(await settledNotifications()).toBe(1);

    // Again: keyed specs come back as existing, and a key repeated inside the batch makes one job.
    const again = await enqueueMany(db.pool, [
      { kind: 'bulk', idempotencyKey: 'bulk-0' },
      { kind: 'bulk', idempotencyKey: 'fresh' },
      { kind: 'bulk', idempotencyKey: 'fresh' },
    ]);
    expect(again.map((r) => r.created)).toEqual([false, true, false]);
    expect(again[0]!.job.id).toBe(results[0]!.job.id);
    expect(again[1]!.job.id).toBe(again[2]!.job.id);
    expect(await statusCounts(db.pool)).toEqual({ queued: 501 });
  });

  it('works through TypeORM: EntityManager in a transaction and QueryRunner', async () => {
    const dataSource = new DataSource({ type: 'postgres', url: db.url, synchronize: false, extra: { max: 2 } });
    await dataSource.initialize();
    try {
      const created = await dataSource.transaction(async (manager) => {
        const r = await enqueue(manager, { kind: 'orm', idempotencyKey: 'orm-1', runAt: new Date('2030-01-01T00:00:00Z') });
        const again = await enqueue(manager, { kind: 'orm', idempotencyKey: 'orm-1' });
        expect(again.job.id).toBe(r.job.id);
        return r;
      });
      expect(created.created).toBe(true);
      expect(created.job.runAt.toISOString()).toBe('2030-01-01T00:00:00.000Z');
      await expect(
        dataSource.transaction(async (manager) => {
          await enqueueMany(manager, [{ kind: 'orm' }, { kind: 'orm' }]);
          throw new Error('roll back');
        }),
      ).rejects.toThrow('roll back');
      const runner = dataSource.createQueryRunner();
      const many = await enqueueMany(runner, [{ kind: 'orm' }, { kind: 'orm', idempotencyKey: 'orm-1' }]);
      await runner.release();
      expect(many.map((r) => r.created)).toEqual([true, false]);
      // The key's holder comes back whole, as it is stored.
      expect(many[1]!.job).toMatchObject({ id: created.job.id, runAt: new Date('2030-01-01T00:00:00Z'), status: 'queued' });
      expect(await statusCounts(db.pool)).toEqual({ queued: 2 });
    } finally {
      await dataSource.destroy();
    }
  });

  it('rejects a spec that cannot be a job before touching the database', async () => {
    await expect(enqueue(db.pool, { kind: '' })).rejects.toThrow(TypeError);
    await expect(enqueue(db.pool, { kind: 'x', maxAttempts: 0 })).rejects.toThrow(RangeError);
    await expect(enqueue(db.pool, { kind: 'x', runAt: new Date('nope') })).rejects.toThrow(TypeError);
    expect(await statusCounts(db.pool)).toEqual({});
  });
});
