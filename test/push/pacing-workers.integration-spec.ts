import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { type AppProcess, startApp, WORKER_MAIN } from '../reliability/processes.js';
import { createTestDatabase, type TestDatabase } from '../support/database.js';
import { enqueueExpoPushes } from './fakes/expo-users.js';
import { startFakeExpo, type FakeExpo } from './fakes/fake-expo.js';

// Pacing shared by two built worker processes through `push_pace`
// (docs/pacing.md), against a local fake Expo that records when each push
// arrives (Expo: plain HTTPS, so EXPO_BASE_URL points a child process at the
// fake). Every job is an event push to one Expo device.

describe('push pacing across two worker processes', () => {
  let db: TestDatabase;
  let fake: FakeExpo | undefined;
  let workers: AppProcess[] = [];
  let batch = 0;

  beforeAll(async () => {
    db = await createTestDatabase();
  });
  afterEach(async () => {
    await Promise.all(workers.map((w) => w.kill('SIGKILL')));
    workers = [];
    await fake?.stop();
    fake = undefined;
  });
  afterAll(async () => {
    await db?.drop();
  });

  const count = async (sql: string, params: unknown[] = []) => (await db.pool.query<{ n: number }>(sql, params)).rows[0]!.n;

  /** Two workers sending Expo pushes to the fake at EXPO_MAX_PER_SECOND = maxPerSecond. */
  async function startWorkers(maxPerSecond: number): Promise<void> {
    const env = {
      DATABASE_URL: db.url,
      SKIP_MIGRATIONS: '1',
      EXPO_PUSH_ENABLED: '1',
      EXPO_BASE_URL: fake!.baseUrl,
      EXPO_MAX_PER_SECOND: String(maxPerSecond),
    };
    workers = [startApp(WORKER_MAIN, env), startApp(WORKER_MAIN, env)];
    await Promise.all(workers.map((w) => w.waitFor('Nudge worker started')));
  }

  /** `n` users with one Expo device each, and one event push for each: the jobs' ids. */
  function enqueuePushes(n: number): Promise<{ jobIds: string[]; tokens: string[] }> {
    batch++;
    return enqueueExpoPushes(
      db.pool,
      Array.from({ length: n }, (_, i) => `pace-${batch}-${i}`),
      'Paced',
    );
  }

  async function untilAllSucceeded(jobIds: string[], timeoutMs: number): Promise<void> {
    const end = Date.now() + timeoutMs;
    for (;;) {
      const open = await count(`SELECT count(*)::int AS n FROM jobs WHERE id = ANY($1::bigint[]) AND status <> 'succeeded'`, [jobIds]);
      if (open === 0) return;
      if (Date.now() > end) {
        const { rows } = await db.pool.query(
          `SELECT status, attempts, last_error, count(*)::int AS n FROM jobs WHERE id = ANY($1::bigint[]) GROUP BY 1, 2, 3`,
          [jobIds],
        );
        throw new Error(`${open} jobs not done: ${JSON.stringify(rows)}\n${workers.map((w) => w.output().slice(-1500)).join('\n')}`);
      }
      await new Promise((r) => setTimeout(r, 200));
    }
  }

  /** Checks that the fake took each token's push exactly once; the rate it measured: (pushes − 1) / (last − first). */
  function measuredRateOf(tokens: string[]): number {
    const mine = new Set(tokens);
    const arrivals = fake!.arrivals.filter((a) => mine.has(a.token));
    expect(arrivals.map((a) => a.token).sort()).toEqual([...tokens].sort());
    const times = arrivals.map((a) => a.at).sort((a, b) => a - b);
    return (times.length - 1) / ((times.at(-1)! - times[0]!) / 1000);
  }

  /** The jobs ended as a user would want: all succeeded on their one attempt, no failed sends, no dead job. */
  async function expectNoFailureCounted(jobIds: string[]): Promise<void> {
    expect(await count(`SELECT count(*)::int AS n FROM jobs WHERE id = ANY($1::bigint[]) AND attempts <> 1`, [jobIds])).toBe(0);
    expect(await count(`SELECT count(*)::int AS n FROM jobs WHERE status = 'dead'`)).toBe(0);
    expect(await count(`SELECT count(*)::int AS n FROM job_runs WHERE job_id = ANY($1::bigint[]) AND outcome <> 'snoozed'`, [jobIds])).toBe(
      0,
    );
    const { rows } = await db.pool.query(
      `SELECT status, count(*)::int AS n FROM push_deliveries WHERE job_id = ANY($1::bigint[]) GROUP BY status`,
      [jobIds],
    );
    expect(rows).toEqual([{ status: 'sent', n: jobIds.length }]);
    expect(await count(`SELECT count(*)::int AS n FROM events WHERE type = 'delivery.failed'`)).toBe(0);
  }

  it('sends at the configured rate (never 5 % over it, nor 15 % under), shared by both processes; every push once', async () => {
    fake = await startFakeExpo();
    await startWorkers(40);
    // 12 s at 40 a second: long enough that the start (both processes claiming at once) weighs little.
    const { jobIds, tokens } = await enqueuePushes(480);
    await untilAllSucceeded(jobIds, 60_000);

    const measuredRate = measuredRateOf(tokens);
    // Over the rate is the pacer's fault whatever the load. Under it can be the box's: a slot taken by a process
    // the shared cores starve is used late (39.7–40.1 a second on a quiet box, 37.2 once in CI with PostgreSQL 15,
    // the suite and both workers on two cores). 15 % under still catches a pace split between the processes (20).
    expect(measuredRate, `measured ${measuredRate.toFixed(2)} a second`).toBeLessThan(40 * 1.05);
    expect(measuredRate, `measured ${measuredRate.toFixed(2)} a second`).toBeGreaterThan(40 * 0.85);
    // Both processes sent: the pace is one, not one per process (each alone at 40 would make 80).
    expect(await count(`SELECT count(DISTINCT locked_by)::int AS n FROM jobs WHERE id = ANY($1::bigint[])`, [jobIds])).toBe(2);
    await expectNoFailureCounted(jobIds);
  }, 120_000);

  it('waiting for the pace uses no attempt: beyond the in-job wait the jobs snooze and come back', async () => {
    await db.pool.query(`DELETE FROM push_pace`);
    fake = await startFakeExpo();
    await startWorkers(2);
    // 40 slots want 14 pushes at once; at 2 a second, 5 fit in the in-job wait of 2 s.
    const { jobIds, tokens } = await enqueuePushes(14);
    await untilAllSucceeded(jobIds, 60_000);

    expect(measuredRateOf(tokens)).toBeLessThanOrEqual(2 * 1.05);
    expect(
      await count(`SELECT count(*)::int AS n FROM job_runs WHERE job_id = ANY($1::bigint[]) AND outcome = 'snoozed'`, [jobIds]),
    ).toBeGreaterThan(0);
    await expectNoFailureCounted(jobIds);
  }, 120_000);

  it('a provider that answers 429 above its own limit slows the shared pace; no failure is counted', async () => {
    await db.pool.query(`DELETE FROM push_pace`);
    fake = await startFakeExpo({ limitPerSecond: 15 });
    await startWorkers(40);
    const { jobIds, tokens } = await enqueuePushes(120);
    await untilAllSucceeded(jobIds, 90_000);

    expect(fake.throttled()).toBeGreaterThan(0);
    measuredRateOf(tokens);
    // The 429s put jobs back without an attempt...
    expect(
      await count(`SELECT count(*)::int AS n FROM job_runs WHERE job_id = ANY($1::bigint[]) AND outcome = 'snoozed'`, [jobIds]),
    ).toBeGreaterThan(0);
    await expectNoFailureCounted(jobIds);
    // ...and lowered the shared rate.
    const { rows } = await db.pool.query(`SELECT rate, max_rate, throttles FROM push_pace WHERE provider = 'expo' AND app_id = 'default'`);
    expect(rows).toHaveLength(1);
    expect(rows[0].max_rate).toBe(40);
    expect(rows[0].rate).toBeLessThan(40);
    expect(Number(rows[0].throttles)).toBeGreaterThan(0);
  }, 150_000);
});
