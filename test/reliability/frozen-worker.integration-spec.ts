import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { enqueueExpoPushes } from '../push/fakes/expo-users.js';
import { startFakeExpo, type FakeExpo } from '../push/fakes/fake-expo.js';
import { createTestDatabase, type TestDatabase } from '../support/database.js';
import { type AppProcess, startApp, WORKER_MAIN } from './processes.js';

// A worker frozen past its lease (SIGSTOP here; in production a long pause, a
// suspended VM) and thawed after another worker has taken its jobs over. Two
// built worker processes, a local fake Expo that records each push it gets.
// At EXPO_MAX_PER_SECOND=1 the frozen worker's jobs wait their turn inside the
// job, their ledger rows already `sending`: the frozen worker is stopped right
// after its first push arrives, while the others wait. The healthy worker
// starts, the reaper returns the jobs once their lease lapses, and it sends
// them. Thawed, the frozen worker's waits are over at once, and its sends
// race its heartbeat (which would abort them once it hears the jobs are
// another's, a round trip or two later): it must find its lease lapsed by its
// own clock and send nothing (JobContext.assertLease). Without that check the
// heartbeat often wins this race here, so test/queue/lease and batch pin the
// check itself with a test clock; this test holds the whole path to it.

const LEASE_SECONDS = 5;
const N = 3; // at one a second, sends granted within the in-job wait of 2 s: 0, 1 and 2 s

describe('a worker frozen past its lease', () => {
  let db: TestDatabase;
  let fake: FakeExpo;
  const workers: AppProcess[] = [];

  beforeAll(async () => {
    db = await createTestDatabase();
    fake = await startFakeExpo();
  });
  afterAll(async () => {
    for (const w of workers) if (w.alive()) w.child.kill('SIGCONT');
    await Promise.all(workers.map((w) => w.kill('SIGKILL')));
    await fake?.stop();
    await db?.drop();
  });

  const count = async (sql: string, params: unknown[] = []) => (await db.pool.query<{ n: number }>(sql, params)).rows[0]!.n;
  const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

  it('sends nothing once thawed: every push arrives once, the jobs it held are delivered by the other worker', async () => {
    const env = {
      DATABASE_URL: db.url,
      SKIP_MIGRATIONS: '1',
      EXPO_PUSH_ENABLED: '1',
      EXPO_BASE_URL: fake.baseUrl,
      EXPO_MAX_PER_SECOND: '1',
      JOB_LEASE_SECONDS: String(LEASE_SECONDS),
    };
    const frozen = startApp(WORKER_MAIN, env);
    workers.push(frozen);
    await frozen.waitFor('Nudge worker started');

    const users = Array.from({ length: N }, (_, i) => `frozen-${i}`);
    const { jobIds, tokens } = await enqueueExpoPushes(db.pool, users, 'Your order shipped');

    // Frozen right after its first push arrives: the next waits a second for the pace.
    const deadline = Date.now() + 30_000;
    while (fake.arrivals.length === 0) {
      if (Date.now() > deadline) throw new Error(`no push arrived:\n${frozen.output().slice(-2000)}`);
      await sleep(5);
    }
    frozen.child.kill('SIGSTOP');
    await sleep(300); // a request already on the wire lands
    const arrivedBefore = new Set(fake.arrivals.map((a) => a.token));
    const { rows: ledger } = await db.pool.query<{ token: string; status: string }>(
      `SELECT d.push_token AS token, pd.status FROM push_deliveries pd JOIN devices d ON d.id = pd.device_id`,
    );
    // The case under test: devices whose send the frozen worker had written down but not made.
    const waiting = ledger.filter((r) => r.status === 'sending' && !arrivedBefore.has(r.token)).map((r) => r.token);
    expect(waiting.length, `froze too late: ${JSON.stringify(ledger)}`).toBeGreaterThan(0);

    const healthy = startApp(WORKER_MAIN, env);
    workers.push(healthy);
    await healthy.waitFor('Nudge worker started');
    const end = Date.now() + 60_000;
    while ((await count(`SELECT count(*)::int AS n FROM jobs WHERE id = ANY($1::bigint[]) AND status <> 'succeeded'`, [jobIds])) > 0) {
      if (Date.now() > end) throw new Error(`jobs unfinished:\n${healthy.output().slice(-2000)}`);
      await sleep(100);
    }
    for (const token of waiting) expect(fake.arrivals.filter((a) => a.token === token)).toHaveLength(1);

    // Thawed: it wakes, finds the jobs are no longer its own, and sends none of them.
    frozen.child.kill('SIGCONT');
    await frozen.waitFor('job lease lost');
    await sleep(2000);
    for (const token of waiting) {
      expect(
        fake.arrivals.filter((a) => a.token === token),
        `${token} arrived twice`,
      ).toHaveLength(1);
    }
    // Pushes it made before the freeze and had recorded as sent were not sent again by the other worker.
    for (const r of ledger.filter((l) => l.status === 'sent')) expect(fake.arrivals.filter((a) => a.token === r.token)).toHaveLength(1);
    expect(new Set(fake.arrivals.map((a) => a.token))).toEqual(new Set(tokens));

    // The jobs it held ended with the healthy worker, after the reaper returned them; it wrote nothing of theirs.
    const { rows: jobs } = await db.pool.query<{ token: string; locked_by: string }>(
      `SELECT d.push_token AS token, j.locked_by FROM jobs j JOIN devices d ON d.user_id = j.payload->>'userId' WHERE j.id = ANY($1::bigint[])`,
      [jobIds],
    );
    for (const token of waiting) expect(jobs.find((j) => j.token === token)!.locked_by).toContain(`:${healthy.child.pid}:`);
    expect(
      await count(`SELECT count(*)::int AS n FROM job_runs WHERE job_id = ANY($1::bigint[]) AND outcome = 'lease_expired'`, [jobIds]),
    ).toBeGreaterThanOrEqual(waiting.length);
    expect(frozen.alive()).toBe(true);
  }, 120_000);
});
