// History at scale (issue 17 part 5): does the current layout (one table
// each for jobs, job_runs, push_deliveries, reminder_occurrences and
// reminder_jobs, pruned row by row) hold as history grows? On one migrated
// database with the built API (ROLE=api) running on it:
//
// 1. a few users made through the API, each given three years of daily
//    history (the "long history" the occurrences endpoint pages through);
//    300 due jobs queued through enqueueMany; the latencies measured
//    (the baseline: no history but theirs);
// 2. the tables filled to N history rows with set-based SQL (rows shaped
//    like production's: a succeeded or dead send_reminder job, a failed run
//    for some, one or two push_deliveries, the occurrence and its job link,
//    for many users over the last 14 days, the jobs' retention), then
//    ANALYZE; the latencies measured again;
// 3. the pruner (pruneFinishedJobs, the worker's own) deletes the older half
//    of the finished jobs for a bounded time: rows/s; the latencies once more
//    (dead tuples left behind, before any vacuum).
//
// The latencies: the worker's claim statement (CLAIM from libs/queue/src/sql.ts,
// in a transaction rolled back, so the due jobs stay queued), the queue gauges
// (queueGauges, as a scrape reads them), and through the API GET /metrics
// (which caches the gauges for a second), GET /v1/ops/queue, and
// GET /v1/reminders/{id}/occurrences (history `before=`, coming `after=`) and
// …/deliveries of the long-history users. One request at a time.
//
// This is a bench: it writes the tables directly (the table-ownership test
// reads libs/ and apps/ only).
import pg from 'pg';
import { signToken } from '../../apps/api/src/auth/jwt.js';
import { migrateUnderLock } from '../../libs/database/src/migrate.js';
import { enqueueMany, foldDeadCounts, pruneFinishedJobs, queueGauges } from '../../libs/queue/src/index.js';
import { FAILED_SINCE, GAUGES, SCHEDULED_BY_KIND, SUCCEEDED_SINCE } from '../../libs/queue/src/ops-sql.js';
import { CLAIM } from '../../libs/queue/src/sql.js';
import { API_SECRET, seedUsers, startApi } from '../api/api.bench.js';
import { benchPool, freshDatabase } from '../support/postgres.js';
import { distribution, type Distribution } from '../support/stats.js';

const DAY_MS = 86_400_000;
/** Users with a long history, made through the API; their history is in every measurement. */
const LONG_USERS = 3;
const LONG_DAYS = 3 * 365;
/** The bulk's history spans the jobs' retention (14 days): the pruner keeps no more. */
const BULK_DAYS = 14;
/** Queued due jobs the claim finds (not history: the same in every measurement). */
const DUE_JOBS = 300;
const CLAIM_KINDS = ['send_reminder', 'send_notification', 'queue.reap', 'queue.prune'];
/** Occurrences written per fill statement. */
const CHUNK = 50_000;
/** History rows per occurrence: job, occurrence, job link, 1.5 deliveries, 0.06 runs. */
const ROWS_PER_OCCURRENCE = 4.56;
export const HISTORY_TABLES = ['jobs', 'job_runs', 'push_deliveries', 'reminder_occurrences', 'reminder_jobs'] as const;

export const PROBES = ['claim', 'gauges', 'scrape', 'opsQueue', 'occurrencesBefore', 'occurrencesAfter', 'deliveries'] as const;
export type Probe = (typeof PROBES)[number];
export const PROBE_LABELS: Record<Probe, string> = {
  claim: 'worker claim statement (100 of 300 due jobs)',
  gauges: 'queue gauges statement (queueGauges, what a scrape reads)',
  scrape: 'GET /metrics (queue gauges cached up to 1 s)',
  opsQueue: 'GET /v1/ops/queue',
  occurrencesBefore: 'GET /v1/reminders/{id}/occurrences?before= (history)',
  occurrencesAfter: 'GET /v1/reminders/{id}/occurrences (coming)',
  deliveries: 'GET /v1/reminders/{id}/deliveries',
};

export interface HistoryPoint {
  label: string;
  /** History rows in the five tables (exact: counted as written, less what was pruned). */
  rows: number;
  latency: Record<Probe, Distribution>;
  /** job_runs rows (to count what the pruner took with the jobs). */
  jobRuns: number;
  /** The ops page's statements on their own (EXPLAIN ANALYZE execution time, ms, one run each, warm). */
  opsStatements: Record<string, number>;
  /** Bytes: table (heap + TOAST) and indexes, per table. */
  sizes: Record<string, { table: number; indexes: number }>;
}

export interface HistoryFigures {
  target: number;
  points: HistoryPoint[];
  fill: { rows: number; seconds: number; secondsPerMillion: number };
  prune: { deleted: number; seconds: number; perSecond: number; stoppedByTimeLimit: boolean };
}

export interface HistoryBenchOptions {
  adminUrl: string;
  /** History rows to fill to. */
  rows: number;
  /** Samples per probe and measurement. */
  samples: number;
  /** How long the pruner may run. */
  pruneSeconds: number;
  log: (line: string) => void;
}

export async function historyBench(o: HistoryBenchOptions): Promise<HistoryFigures> {
  const url = await freshDatabase(o.adminUrl, 'bench_history');
  await migrateUnderLock(url);
  const pool = benchPool(url, 3);
  const api = await startApi(url);
  try {
    const users = await seedUsers(api.base, LONG_USERS, 'history-user');
    const opsToken = await signToken(API_SECRET, { userId: 'history-ops', scopes: ['ops'] });
    const now = Date.now();
    await enqueueMany(
      pool,
      Array.from({ length: DUE_JOBS }, (_, i) => ({ kind: 'send_reminder', payload: { bench: i }, runAt: new Date(now - 60_000) })),
    );

    let rows = await fill(pool, await longHistoryReminders(pool), LONG_DAYS, LONG_USERS * LONG_DAYS, now);
    await pool.query('ANALYZE');
    await settleCounts(pool, now);
    o.log(`history: ${rows} rows of long history for ${LONG_USERS} users (${LONG_DAYS} days each)`);
    // `jobsDeleted`: the pruner's count; the job_runs it took with them are counted by difference.
    const probe = async (label: string, jobsDeleted = 0) => {
      const point = await measure(pool, api.base, users, opsToken, label, o.samples, now);
      const runsDeleted = jobsDeleted === 0 ? 0 : points[points.length - 1]!.jobRuns - point.jobRuns;
      rows -= jobsDeleted + runsDeleted;
      point.rows = rows;
      o.log(`history ${label}: ops statements in the server, ms: ${JSON.stringify(point.opsStatements)}`);
      o.log(
        `history ${label} (${rows} rows): ` +
          PROBES.map((p) => `${p} p50 ${point.latency[p].p50.toFixed(2)} / p99 ${point.latency[p].p99.toFixed(2)} ms`).join(', '),
      );
      return point;
    };
    const points: HistoryPoint[] = [];
    points.push(await probe('baseline'));

    const occurrences = Math.max(0, Math.ceil((o.rows - rows) / ROWS_PER_OCCURRENCE));
    const reminders = Math.max(1, Math.ceil(occurrences / BULK_DAYS));
    const fillStarted = performance.now();
    const bulk = await bulkReminders(pool, reminders, now);
    let filled = 0;
    for (let lo = 0; lo < occurrences; lo += CHUNK) {
      filled += await fill(pool, bulk, BULK_DAYS, Math.min(CHUNK, occurrences - lo), now, lo);
      if ((lo / CHUNK) % 20 === 19) o.log(`history: filled ${filled} rows in ${((performance.now() - fillStarted) / 1000).toFixed(0)} s`);
    }
    await pool.query('ANALYZE');
    await settleCounts(pool, now);
    const fillSeconds = (performance.now() - fillStarted) / 1000;
    rows += filled;
    o.log(`history: filled ${filled} rows (${occurrences} occurrences of ${reminders} reminders) in ${fillSeconds.toFixed(1)} s`);
    points.push(await probe('filled'));

    // The pruner as the worker runs it, retention cut to 7 days: half of the bulk's jobs (and their runs) are past it.
    const pruneStarted = performance.now();
    const cutoff = new Date(now - 7 * DAY_MS);
    const deleted = await pruneFinishedJobs(pool, cutoff, {
      deadOlderThan: cutoff,
      maxBatches: Number.MAX_SAFE_INTEGER,
      signal: AbortSignal.timeout(o.pruneSeconds * 1000),
    });
    const pruneSeconds = (performance.now() - pruneStarted) / 1000;
    await settleCounts(pool, now);
    o.log(`history: the pruner deleted ${deleted} jobs with their runs in ${pruneSeconds.toFixed(1)} s`);
    const pruned = await probe('after prune', deleted);
    points.push(pruned);

    return {
      target: o.rows,
      points,
      fill: { rows: filled, seconds: fillSeconds, secondsPerMillion: filled === 0 ? 0 : (fillSeconds * 1_000_000) / filled },
      prune: {
        deleted,
        seconds: pruneSeconds,
        perSecond: pruneSeconds === 0 ? 0 : deleted / pruneSeconds,
        stoppedByTimeLimit: pruneSeconds >= o.pruneSeconds,
      },
    };
  } finally {
    await api.stop();
    await pool.end();
  }
}

/** The long-history users' reminders and devices, made through the API, into fill_reminders. */
// The dead jobs the fill or the pruner made, folded into the gauge's counts
// and the fold's deleted rows vacuumed away: what a worker's reaper job (every
// few seconds) and autovacuum (within a minute, schema step deadCounts) do.
// And the success counts the fill's successes of the last two hours would
// have left (COMPLETE_MANY writes a row per flush and kind; here a row per
// instant and kind, the fill's flushes), what the pruner keeps of them.
async function settleCounts(pool: pg.Pool, now: number): Promise<void> {
  await foldDeadCounts(pool);
  await pool.query('VACUUM job_dead_changes');
  await pool.query('DELETE FROM job_success_counts');
  await pool.query(
    `INSERT INTO job_success_counts (finished_at, kind, succeeded)
     SELECT finished_at, kind, count(*) FROM jobs
     WHERE status = 'succeeded' AND finished_at >= $1::timestamptz - interval '2 hours' AND finished_at <= $1::timestamptz
     GROUP BY finished_at, kind`,
    [new Date(now)],
  );
}

async function longHistoryReminders(pool: pg.Pool): Promise<string> {
  await pool.query(`
    CREATE UNLOGGED TABLE fill_long AS
    SELECT (row_number() OVER (ORDER BY r.id) - 1)::integer AS ord, r.id AS reminder_id, r.user_id,
           d.id AS device1, d.platform AS platform1, NULL::uuid AS device2, NULL::text AS platform2
    FROM reminders r JOIN LATERAL (SELECT id, platform FROM devices WHERE user_id = r.user_id ORDER BY id LIMIT 1) d ON true`);
  return 'fill_long';
}

/** `count` users with one daily reminder and one or two devices each (every other user two), written directly. */
async function bulkReminders(pool: pg.Pool, count: number, now: number): Promise<string> {
  const created = new Date(now - (BULK_DAYS + 1) * DAY_MS);
  await pool.query(
    `INSERT INTO users (id, time_zone, created_at, updated_at)
     SELECT 'history-bulk-' || g, (ARRAY['Europe/Berlin', 'America/Chicago', 'Asia/Tokyo', 'UTC'])[1 + g % 4], $2, $2
     FROM generate_series(0, $1 - 1) g`,
    [count, created],
  );
  await pool.query(
    `INSERT INTO devices (id, user_id, installation_id, platform, push_token, created_at, updated_at, last_seen_at)
     SELECT md5('device-' || g || '-' || k)::uuid, 'history-bulk-' || g, 'install-' || k,
            CASE WHEN (g + k) % 2 = 0 THEN 'ios' ELSE 'android' END, 'sim-history-' || g || '-' || k, $2, $2, $2
     FROM generate_series(0, $1 - 1) g CROSS JOIN generate_series(1, 2) k
     WHERE k = 1 OR g % 2 = 0`,
    [count, created],
  );
  await pool.query(
    `INSERT INTO reminders (id, user_id, title, local_time, recurrence, start_date, created_at, updated_at)
     SELECT md5('reminder-' || g)::uuid, 'history-bulk-' || g, 'Take the pills', '08:00', 'FREQ=DAILY', to_char($2::timestamptz, 'YYYY-MM-DD'), $2, $2
     FROM generate_series(0, $1 - 1) g`,
    [count, created],
  );
  await pool.query(`
    CREATE UNLOGGED TABLE fill_bulk AS
    SELECT g AS ord, md5('reminder-' || g)::uuid AS reminder_id, 'history-bulk-' || g AS user_id,
           md5('device-' || g || '-1')::uuid AS device1, CASE WHEN (g + 1) % 2 = 0 THEN 'ios' ELSE 'android' END AS platform1,
           CASE WHEN g % 2 = 0 THEN md5('device-' || g || '-2')::uuid END AS device2,
           CASE WHEN g % 2 = 0 THEN 'ios' END AS platform2
    FROM generate_series(0, ${count} - 1) g`);
  await pool.query('CREATE UNIQUE INDEX ON fill_bulk (ord)');
  return 'fill_bulk';
}

/**
 * Writes `count` delivered occurrences (from `offset`) of the reminders in
 * `source` over the `days` before today: occurrence g is reminder g mod R on
 * day g div R. Each: a send_reminder job (succeeded; every 50th dead after
 * 10 attempts; every 25th with a failed first run), its job_runs, one
 * push_deliveries row per device, the reminder_occurrences row (sent, every
 * third done; dead: skipped/failed) and the reminder_jobs link. One
 * statement; returns the rows written.
 */
async function fill(pool: pg.Pool, source: string, days: number, count: number, now: number, offset = 0): Promise<number> {
  if (count <= 0) return 0;
  const firstDay = new Date(Math.floor(now / DAY_MS) * DAY_MS - days * DAY_MS);
  const { rows } = await pool.query<{ n: string }>(
    `WITH r AS (SELECT count(*)::bigint AS n FROM ${source}),
    src AS MATERIALIZED (
      SELECT g, nextval('jobs_id_seq') AS job_id, f.*, d.local_date, d.due_at, g % 50 = 0 AS dead, g % 25 = 0 AS retried
      FROM generate_series($1::bigint, $1::bigint + $2 - 1) g CROSS JOIN r
      JOIN ${source} f ON f.ord = g % r.n
      CROSS JOIN LATERAL (
        SELECT to_char($3::timestamptz + (g / r.n) * interval '1 day', 'YYYY-MM-DD') AS local_date,
               $3::timestamptz + (g / r.n) * interval '1 day' + (f.ord % 1440) * interval '1 minute' AS due_at
      ) d
    ), jobs_in AS (
      INSERT INTO jobs (id, kind, payload, idempotency_key, priority, run_at, attempts, max_attempts, status, last_error,
                        locked_at, locked_by, finished_at, created_at, updated_at, lease_token)
      SELECT job_id, 'send_reminder',
             jsonb_build_object('reminderId', reminder_id, 'userId', user_id, 'version', 1, 'localDate', local_date, 'at', due_at),
             'reminder:' || reminder_id || ':v1:' || local_date, 0, due_at,
             CASE WHEN dead THEN 10 WHEN retried THEN 2 ELSE 1 END, 10,
             CASE WHEN dead THEN 'dead' ELSE 'succeeded' END,
             CASE WHEN dead THEN 'apns: ServiceUnavailable' END,
             due_at + interval '40 ms', 'worker-' || g % 4,
             due_at + CASE WHEN dead THEN interval '3 hours' ELSE interval '300 ms' END,
             due_at - interval '1 day', due_at + interval '300 ms', g
      FROM src RETURNING 1
    ), runs_in AS (
      INSERT INTO job_runs (job_id, kind, attempt, worker, started_at, finished_at, outcome, error, next_run_at)
      SELECT job_id, 'send_reminder', 1, 'worker-' || g % 4, due_at, due_at + interval '1 s', 'failed', 'apns: ServiceUnavailable',
             due_at + interval '31 s'
      FROM src WHERE retried
      UNION ALL
      SELECT job_id, 'send_reminder', 10, 'worker-' || g % 4, due_at + interval '3 hours', due_at + interval '3 hours 1 s', 'dead',
             'apns: ServiceUnavailable', NULL
      FROM src WHERE dead
      RETURNING 1
    ), deliveries_in AS (
      INSERT INTO push_deliveries (job_id, device_id, user_id, platform, provider, status, provider_message_id, error, attempts,
                                   collapse_id, kind, created_at, updated_at)
      SELECT job_id, device, user_id, platform, CASE platform WHEN 'ios' THEN 'apns' ELSE 'fcm' END,
             CASE WHEN dead THEN 'failed' ELSE 'sent' END, CASE WHEN NOT dead THEN md5('message-' || g || platform) END,
             CASE WHEN dead THEN 'ServiceUnavailable' END, 1, reminder_id::text, 'send_reminder',
             due_at + interval '100 ms', due_at + interval '250 ms'
      FROM src CROSS JOIN LATERAL (VALUES (device1, platform1), (device2, platform2)) AS d(device, platform)
      WHERE device IS NOT NULL
      RETURNING 1
    ), occurrences_in AS (
      INSERT INTO reminder_occurrences (reminder_id, local_date, status, reason, due_at, earliest_at, version, sent_at, acted_at,
                                        created_at, updated_at)
      SELECT reminder_id, local_date,
             CASE WHEN dead THEN 'skipped' WHEN g % 3 = 0 THEN 'done' ELSE 'sent' END, CASE WHEN dead THEN 'failed' END,
             due_at, due_at, 1, CASE WHEN NOT dead THEN due_at + interval '250 ms' END,
             CASE WHEN NOT dead AND g % 3 = 0 THEN due_at + interval '20 min' END, due_at - interval '1 day', due_at + interval '250 ms'
      FROM src RETURNING 1
    ), links_in AS (
      INSERT INTO reminder_jobs (reminder_id, job_id, version, local_date, due_at, created_at, purpose)
      SELECT reminder_id, job_id, 1, local_date, due_at, due_at - interval '1 day', 'regular' FROM src RETURNING 1
    )
    SELECT (SELECT count(*) FROM jobs_in) + (SELECT count(*) FROM runs_in) + (SELECT count(*) FROM deliveries_in)
         + (SELECT count(*) FROM occurrences_in) + (SELECT count(*) FROM links_in) AS n`,
    [offset, count, firstDay],
  );
  return Number(rows[0]!.n);
}

type Users = { token: string; reminderId: string }[];

async function measure(
  pool: pg.Pool,
  base: string,
  users: Users,
  opsToken: string,
  label: string,
  samples: number,
  now: number,
): Promise<HistoryPoint> {
  const client = await pool.connect();
  const latency = {} as Record<Probe, Distribution>;
  try {
    let n = 0;
    const user = () => users[n++ % users.length]!;
    const get = (path: string, token: string) => async () => {
      const res = await fetch(base + path, { headers: { authorization: `Bearer ${token}` } });
      if (res.status !== 200) throw new Error(`GET ${path} answered ${res.status}: ${await res.text()}`);
      await res.arrayBuffer();
    };
    const before = new Date(now - 500 * DAY_MS).toISOString();
    const calls: Record<Probe, () => Promise<unknown>> = {
      claim: async () => {
        await client.query('BEGIN');
        try {
          const claimed = await client.query({ ...CLAIM, values: [null, CLAIM_KINDS, 100, 30_000, 'history-bench', 100] });
          if (claimed.rowCount !== 100) throw new Error(`the claim took ${claimed.rowCount} jobs, not 100`);
        } finally {
          await client.query('ROLLBACK');
        }
      },
      // The statement a scrape runs when the API's 1-second cache of it is stale (every scrape at a 15 s interval).
      gauges: () => queueGauges(pool, new Date()),
      scrape: get('/metrics', opsToken),
      opsQueue: get('/v1/ops/queue', opsToken),
      occurrencesBefore: () => {
        const u = user();
        return get(`/v1/reminders/${u.reminderId}/occurrences?count=20&before=${encodeURIComponent(before)}`, u.token)();
      },
      occurrencesAfter: () => {
        const u = user();
        return get(`/v1/reminders/${u.reminderId}/occurrences?count=20`, u.token)();
      },
      deliveries: () => {
        const u = user();
        return get(`/v1/reminders/${u.reminderId}/deliveries`, u.token)();
      },
    };
    // Interleaved, probe by probe, so that a burst of load elsewhere on the box lands on all of them.
    const times = Object.fromEntries(PROBES.map((p) => [p, [] as number[]])) as Record<Probe, number[]>;
    const warmup = Math.min(10, samples);
    for (let i = 0; i < samples + warmup; i++) {
      for (const p of PROBES) {
        const t = performance.now();
        await calls[p]();
        if (i >= warmup) times[p].push(performance.now() - t);
      }
    }
    for (const p of PROBES) latency[p] = distribution(times[p]);
  } finally {
    client.release();
  }
  const sizes = await tableSizes(pool);
  const { rows: runs } = await pool.query<{ n: string }>('SELECT count(*) AS n FROM job_runs');
  return { label, rows: 0, jobRuns: Number(runs[0]!.n), latency, opsStatements: await opsStatements(pool), sizes };
}

/** What each statement of GET /v1/ops/queue costs in the server (the gauges as queueGauges runs them: no seq scans). */
async function opsStatements(pool: pg.Pool): Promise<Record<string, number>> {
  const now = new Date();
  const hourAgo = new Date(now.getTime() - 3_600_000);
  const statements = {
    gauges: [GAUGES, now],
    scheduledByKind: [SCHEDULED_BY_KIND, now],
    succeededSince: [SUCCEEDED_SINCE, hourAgo],
    failedSince: [FAILED_SINCE, hourAgo],
  } as const;
  const out: Record<string, number> = {};
  const client = await pool.connect();
  try {
    for (const [name, [text, at]] of Object.entries(statements)) {
      await client.query(`BEGIN READ ONLY; SET LOCAL enable_seqscan = ${name === 'gauges' ? 'off' : 'on'}`);
      const { rows } = await client.query<{ 'QUERY PLAN': [{ 'Execution Time': number }] }>(`EXPLAIN (ANALYZE, FORMAT JSON) ${text}`, [at]);
      await client.query('COMMIT');
      out[name] = Number(rows[0]!['QUERY PLAN'][0]['Execution Time'].toFixed(2));
    }
  } finally {
    client.release();
  }
  return out;
}

async function tableSizes(pool: pg.Pool): Promise<HistoryPoint['sizes']> {
  const { rows } = await pool.query<{ name: string; table: string; indexes: string }>(
    `SELECT t AS name, pg_table_size(t::regclass) AS table, pg_indexes_size(t::regclass) AS indexes FROM unnest($1::text[]) t`,
    [HISTORY_TABLES],
  );
  return Object.fromEntries(rows.map((r) => [r.name, { table: Number(r.table), indexes: Number(r.indexes) }]));
}
