import { Registry } from 'prom-client';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import {
  cancelJob,
  cancelJobs,
  cancelPendingByKey,
  cancelPendingByKeyPrefix,
  enqueue,
  enqueueMany,
  getJob,
  InvalidQueueQueryError,
  listJobs,
  pauseKind,
  pausedKinds,
  pruneSuccessCounts,
  QueueMetrics,
  queueStats,
  resumeKind,
  retryDeadJobs,
  retryJob,
  SUCCESS_COUNTS_KEPT_MS,
  throughputByMinute,
  Worker,
} from '../../libs/queue/src/index.js';
import { createTestDatabase, type TestDatabase } from '../support/database.js';
import { completeAt } from '../support/completions.js';
import { deferred, jobRow, FixedClock, statusCounts } from './helpers.js';

describe('ops functions and metrics', () => {
  let db: TestDatabase;
  const clock = new FixedClock('2026-03-01T12:00:00.000Z');
  const at = (offsetSeconds: number) => new Date(clock.now().getTime() + offsetSeconds * 1000);

  beforeAll(async () => {
    db = await createTestDatabase();
  });
  afterAll(async () => db.drop());
  beforeEach(async () => {
    await db.pool.query('TRUNCATE jobs, job_runs, job_kind_pauses');
  });

  async function arrange() {
    const now = clock.now();
    await enqueueMany(
      db.pool,
      [
        { kind: 'send_reminder', runAt: at(-90) },
        { kind: 'send_reminder', runAt: at(-30) },
        { kind: 'send_reminder', runAt: at(3600) },
        { kind: 'send_notification', runAt: at(-5) },
      ],
      { now },
    );
    const running = await enqueueMany(db.pool, [{ kind: 'send_reminder' }, { kind: 'send_reminder' }], { now });
    await db.pool.query(`UPDATE jobs SET status = 'running', attempts = 1, locked_by = 'w', locked_until = $2 WHERE id = $1`, [
      running[0]!.job.id,
      at(30),
    ]);
    await db.pool.query(`UPDATE jobs SET status = 'running', attempts = 1, locked_by = 'w', locked_until = $2 WHERE id = $1`, [
      running[1]!.job.id,
      at(-1),
    ]);
    const finished = await enqueueMany(db.pool, [{ kind: 'send_reminder' }, { kind: 'send_reminder' }, { kind: 'send_notification' }], {
      now,
    });
    await completeAt(db.pool, [finished[0]!.job.id], at(-600));
    await completeAt(db.pool, [finished[1]!.job.id], at(-7200));
    await db.pool.query(`UPDATE jobs SET status = 'dead', finished_at = $2, last_error = 'boom' WHERE id = $1`, [
      finished[2]!.job.id,
      at(-60),
    ]);
    await db.pool.query(
      `INSERT INTO job_runs (job_id, kind, attempt, finished_at, outcome, error) VALUES ($1, 'send_notification', 1, $2, 'dead', 'boom'),
       ($1, 'send_notification', 0, $3, 'failed', 'old')`,
      [finished[2]!.job.id, at(-60), at(-7200)],
    );
    return { running, finished };
  }

  it('queueStats: ready, scheduled, running, stuck, dead, oldest ready age, last hour, per kind', async () => {
    await arrange();
    expect(await queueStats(db.pool, clock.now())).toEqual({
      send_notification: {
        ready: 1,
        scheduled: 0,
        running: 0,
        stuck: 0,
        dead: 1,
        oldestReadyAgeSeconds: 5,
        succeededLastHour: 0,
        failedLastHour: 1,
        paused: false,
      },
      send_reminder: {
        ready: 2,
        scheduled: 1,
        running: 2,
        stuck: 1,
        dead: 0,
        oldestReadyAgeSeconds: 90,
        succeededLastHour: 1,
        failedLastHour: 0,
        paused: false,
      },
    });
  });

  it('metrics: the gauges come from one grouped query at scrape time', async () => {
    await arrange();
    const registry = new Registry();
    const statements: string[] = [];
    new QueueMetrics({
      registry,
      clock,
      executor: { query: (text, params) => (statements.push(text), db.pool.query(text, params as unknown[])) },
    });
    const text = await registry.metrics();
    expect(statements).toHaveLength(1);
    expect(text).toContain('queue_jobs_ready{kind="send_reminder"} 2');
    expect(text).toContain('queue_oldest_ready_age_seconds{kind="send_reminder"} 90');
    expect(text).toContain('queue_jobs_running{kind="send_reminder"} 2');
    expect(text).toContain('queue_jobs_stuck{kind="send_reminder"} 1');
    expect(text).toContain('queue_jobs_dead{kind="send_notification"} 1');
    // The plan reads partial indexes only, never the whole table.
    const plan = await db.pool.query(`EXPLAIN ${statements[0]}`, [clock.now()]);
    const lines = plan.rows.map((r: Record<string, string>) => r['QUERY PLAN']).join('\n');
    expect(lines).not.toMatch(/Seq Scan on jobs/);
  });

  it('completed and failed counters, with a worker', async () => {
    const registry = new Registry();
    const metrics = new QueueMetrics({ registry });
    const w = new Worker({
      pool: db.pool,
      clock,
      housekeeping: false,
      listen: false,
      metrics,
      handlers: {
        ok: async () => undefined,
        bad: async () => {
          throw new TypeError('nope');
        },
      },
    });
    await enqueueMany(db.pool, [{ kind: 'ok' }, { kind: 'ok' }, { kind: 'bad' }], { now: clock.now() });
    await w.runOnce();
    const text = await registry.metrics();
    expect(text).toContain('queue_jobs_completed_total{kind="ok"} 2');
    expect(text).toContain('queue_jobs_retried_total{kind="bad",error_class="TypeError"} 1');
    expect(text).toMatch(/queue_job_duration_seconds_count\{kind="ok",outcome="succeeded"\} 2/);
    // The worker's completions are what "succeeded in the last hour" counts.
    const stats = await queueStats(db.pool, clock.now());
    expect(stats.ok?.succeededLastHour).toBe(2);
    expect(stats.bad?.succeededLastHour).toBe(0);
  });

  it('succeeded in the last hour: per kind, the edge of the hour included, rolled back with its transaction, pruned after two hours', async () => {
    const now = clock.now();
    const jobs = await enqueueMany(
      db.pool,
      Array.from({ length: 7 }, (_, i) => ({ kind: i < 5 ? 'a' : 'b' })),
      { now },
    );
    const id = (i: number) => jobs[i]!.job.id;
    expect(await completeAt(db.pool, [id(0), id(1), id(5)], at(-3600))).toHaveLength(3);
    expect(await completeAt(db.pool, [id(2)], at(-3601))).toHaveLength(1);
    const client = await db.pool.connect();
    try {
      await client.query('BEGIN');
      await completeAt(client, [id(3)], at(-10));
      await client.query('ROLLBACK');
    } finally {
      client.release();
    }
    expect(await completeAt(db.pool, [id(4), id(6)], at(-1))).toHaveLength(2);
    const stats = await queueStats(db.pool, now);
    expect([stats.a?.succeededLastHour, stats.b?.succeededLastHour]).toEqual([3, 2]);
    expect(await throughputByMinute(db.pool, at(-3600), now)).toEqual([
      { minute: at(-3600), succeeded: 3, failed: 0 },
      { minute: at(-60), succeeded: 2, failed: 0 },
    ]);

    // Two hours on, the pruner's cut takes the first four successes (three rows: one a kind and instant); the last two stay.
    const later = new Date(now.getTime() + 2 * 3_600_000 - 2000);
    expect(await pruneSuccessCounts(db.pool, new Date(later.getTime() - SUCCESS_COUNTS_KEPT_MS))).toBe(3);
    const { rows } = await db.pool.query<{ n: number }>('SELECT sum(succeeded)::int AS n FROM job_success_counts');
    expect(rows[0]!.n).toBe(2);
    await db.pool.query('TRUNCATE jobs');
    expect((await db.pool.query('SELECT 1 FROM job_success_counts')).rowCount).toBe(0);
  });

  it('listJobs pages newest first with an opaque cursor and filters', async () => {
    await arrange();
    const all: string[] = [];
    let cursor: string | null = null;
    do {
      const page = await listJobs(db.pool, { limit: 4, cursor });
      all.push(...page.items.map((j) => j.id));
      cursor = page.nextCursor;
    } while (cursor);
    expect(all).toHaveLength(9);
    expect([...all].sort((a, b) => Number(b) - Number(a))).toEqual(all);
    const dead = await listJobs(db.pool, { status: 'dead', limit: 10 });
    expect(dead.items.map((j) => [j.kind, j.lastError])).toEqual([['send_notification', 'boom']]);
    expect(dead.nextCursor).toBeNull();
    expect((await listJobs(db.pool, { kind: 'send_notification', status: 'queued', limit: 10 })).items).toHaveLength(1);
    await expect(listJobs(db.pool, { limit: 10, cursor: 'garbage' })).rejects.toBeInstanceOf(InvalidQueueQueryError);
    await expect(listJobs(db.pool, { limit: 0 })).rejects.toBeInstanceOf(InvalidQueueQueryError);
    await expect(listJobs(db.pool, { limit: 5, status: 'bogus' as never })).rejects.toBeInstanceOf(InvalidQueueQueryError);
  });

  it('getJob returns payload, attempts, last error and history; null for unknown or malformed ids', async () => {
    const { finished } = await arrange();
    const job = await getJob(db.pool, finished[2]!.job.id);
    expect(job).toMatchObject({ status: 'dead', lastError: 'boom', payload: {} });
    expect(job!.history.map((h) => h.outcome)).toEqual(['dead', 'failed']);
    expect(await getJob(db.pool, '999999')).toBeNull();
    expect(await getJob(db.pool, 'not-a-number')).toBeNull();
  });

  it('retryJob and cancelJob say what happened', async () => {
    const { running, finished } = await arrange();
    const queued = await enqueue(db.pool, { kind: 'x' }, { now: clock.now() });
    expect(await cancelJob(db.pool, queued.job.id, clock.now())).toBe('cancelled');
    expect(await cancelJob(db.pool, queued.job.id, clock.now())).toBe('conflict');
    expect(await cancelJob(db.pool, running[0]!.job.id, clock.now())).toBe('conflict');
    expect(await cancelJob(db.pool, '424242', clock.now())).toBe('not_found');
    expect(await retryJob(db.pool, queued.job.id, clock.now())).toBe('retried'); // cancelled → queued
    expect(await retryJob(db.pool, finished[0]!.job.id, clock.now())).toBe('conflict'); // succeeded
    expect(await retryJob(db.pool, finished[2]!.job.id, clock.now())).toBe('retried'); // dead
    expect(await retryJob(db.pool, 'x', clock.now())).toBe('not_found');
    expect(await jobRow(db.pool, finished[2]!.job.id)).toMatchObject({ status: 'queued', attempts: 0 });
  });

  it('cancels pending jobs by key, key prefix or ids, and leaves running ones alone', async () => {
    const now = clock.now();
    const jobs = await enqueueMany(
      db.pool,
      [
        { kind: 'send_reminder', idempotencyKey: 'reminder:r1:v1:2026-03-01' },
        { kind: 'send_reminder', idempotencyKey: 'reminder:r1:v1:2026-03-02' },
        { kind: 'send_reminder', idempotencyKey: 'reminder:r10:v1:2026-03-01' },
        { kind: 'send_reminder', idempotencyKey: 'reminder:r_:v1:2026-03-01' },
        { kind: 'send_reminder', idempotencyKey: 'reminder:r2:v1:2026-03-01' },
        { kind: 'send_reminder', idempotencyKey: 'reminder:r3:v1:2026-03-01' },
      ],
      { now },
    );
    await db.pool.query(`UPDATE jobs SET status = 'running' WHERE id = $1`, [jobs[1]!.job.id]);
    expect(await cancelPendingByKeyPrefix(db.pool, 'reminder:r1:', now)).toEqual([jobs[0]!.job.id]);
    // `_` is literal, not a wildcard.
    expect(await cancelPendingByKeyPrefix(db.pool, 'reminder:r_:', now)).toEqual([jobs[3]!.job.id]);
    expect(await cancelPendingByKey(db.pool, 'reminder:r2:v1:2026-03-01', now)).toEqual([jobs[4]!.job.id]);
    expect(await cancelJobs(db.pool, [jobs[5]!.job.id, jobs[1]!.job.id, 'junk'], now)).toEqual([jobs[5]!.job.id]);
    const { rows } = await db.pool.query(`SELECT idempotency_key, status FROM jobs ORDER BY id`);
    expect(rows.map((r) => r.status)).toEqual(['cancelled', 'running', 'queued', 'cancelled', 'cancelled', 'cancelled']);
    // With many queued jobs, the prefix cancel is an index range on the key, not a walk of every queued row.
    await db.pool.query(
      `INSERT INTO jobs (kind, idempotency_key, run_at) SELECT 'send_reminder', 'reminder:x' || g || ':v1:2026-03-01', $1
       FROM generate_series(1, 20000) g`,
      [now],
    );
    await db.pool.query('ANALYZE jobs');
    const plan = await db.pool.query(
      `EXPLAIN UPDATE jobs SET status = 'cancelled' WHERE idempotency_key LIKE 'reminder:r1:%' AND status = 'queued'`,
    );
    expect(plan.rows.map((r: Record<string, string>) => r['QUERY PLAN']).join('\n')).toMatch(/jobs_idempotency_key_key/);
  });

  it('pauseKind: no worker claims the kind (a running job finishes), stats and the gauge show it; resumeKind lets it run again', async () => {
    const now = clock.now();
    await enqueueMany(db.pool, [{ kind: 'a' }, { kind: 'a' }, { kind: 'b' }], { now });
    const started = deferred();
    const gate = deferred();
    let runsOfA = 0;
    const handlers = {
      a: async () => {
        if (++runsOfA === 1) {
          started.resolve();
          await gate.promise;
        }
      },
      b: async () => undefined,
    };
    const one = new Worker({ pool: db.pool, clock, housekeeping: false, listen: false, concurrency: 1, batchSize: 1, handlers });
    const first = one.runOnce(1);
    await started.promise;
    expect(await pauseKind(db.pool, 'a', now)).toBe(true);
    expect(await pauseKind(db.pool, 'a', new Date(now.getTime() + 1000))).toBe(false);
    expect(await pauseKind(db.pool, 'c', now)).toBe(true);
    gate.resolve();
    await first;
    expect(await statusCounts(db.pool)).toEqual({ succeeded: 1, queued: 2 });

    const w = new Worker({ pool: db.pool, clock, housekeeping: false, listen: false, handlers });
    expect(await w.runOnce()).toBe(1); // b only
    expect(await w.runOnce()).toBe(0);
    expect(runsOfA).toBe(1);

    const stats = await queueStats(db.pool, now);
    expect(stats.a).toMatchObject({ ready: 1, paused: true });
    expect(stats.b?.paused).toBe(false);
    expect(stats.c).toMatchObject({ ready: 0, paused: true });
    expect(await pausedKinds(db.pool)).toEqual([
      { kind: 'a', pausedAt: now },
      { kind: 'c', pausedAt: now },
    ]);
    const registry = new Registry();
    new QueueMetrics({ registry, clock, executor: db.pool });
    const text = await registry.metrics();
    expect(text).toContain('queue_kind_paused{kind="a"} 1');
    expect(text).not.toContain('queue_kind_paused{kind="b"}');

    expect(await resumeKind(db.pool, 'a')).toBe(true);
    expect(await resumeKind(db.pool, 'a')).toBe(false);
    expect(await w.runOnce()).toBe(1);
    expect(runsOfA).toBe(2);
    expect(await statusCounts(db.pool)).toEqual({ succeeded: 3 });
    expect((await queueStats(db.pool, now)).a?.paused).toBe(false);
  });

  it('retryDeadJobs: every dead job of one kind back to queued, attempts reset; others untouched', async () => {
    const now = clock.now();
    const jobs = await enqueueMany(db.pool, [{ kind: 'a' }, { kind: 'a' }, { kind: 'a' }, { kind: 'b' }, { kind: 'a' }], { now });
    await db.pool.query(
      `UPDATE jobs SET status = 'dead', attempts = max_attempts, last_error = 'boom', finished_at = $2 WHERE id = ANY($1::bigint[])`,
      [jobs.slice(0, 4).map((j) => j.job.id), at(-60)],
    );
    expect(await retryDeadJobs(db.pool, 'a', now)).toBe(3);
    expect(await retryDeadJobs(db.pool, 'a', now)).toBe(0);
    const { rows } = await db.pool.query(`SELECT kind, status, attempts, count(*)::int AS n FROM jobs GROUP BY 1, 2, 3 ORDER BY 1, 2`);
    expect(rows).toEqual([
      { kind: 'a', status: 'queued', attempts: 0, n: 4 },
      { kind: 'b', status: 'dead', attempts: 10, n: 1 },
    ]);
  });
});
