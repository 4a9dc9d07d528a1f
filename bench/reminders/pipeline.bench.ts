// The reminder pipeline end to end: N reminders due in the same minute across
// 50 zones, users with 1–3 devices (iOS, Android, Expo and web), drained by
// the real worker (`node dist/apps/worker/src/main.js`: the real send_reminder
// handler, the delivery ledger, the next occurrence enqueued) in one of two
// modes, the same devices in both:
//   simulated  no push credentials: every push goes to the simulated provider
//              (one INSERT into simulated_pushes per batch);
//   real       credentials for all four platforms: the real clients
//              (@parse/node-apn, firebase-admin, web-push, the Expo client)
//              send to the local fakes of the services (bench/push), which
//              answer after SERVICE_LATENCY_MS. The worker's code and
//              configuration are production's; only its TLS connections to
//              Apple's and Google's hosts are redirected to the fakes
//              (bench/push/redirect-hosts.mjs, preloaded in both modes).
//
// The jobs are planned by the real scheduling code (planChain, the function
// OccurrenceScheduler calls, as the day before) and enqueued with the same
// kind, payload, key and maxAttempts, plus their occurrence rows.
//
// Time is not waited for. The minute M the reminders are due in is put far
// enough in the past that every job, jitter included, is already due when the
// worker starts; the worker then drains them all at once. Two measures per
// reminder, `start` being the worker's first claim:
//   wait     = delivered − max(runAt, start): its time in the queue behind
//              the others once it was due and the worker was running;
//   lateness = delivered − due − max(0, start − runAt) = (runAt − due) + wait:
//              its jitter plus that wait (the time it was due only because
//              the worker had not started yet is taken off).
// With jitter 0 the two are equal. With jitter the lateness is an upper
// bound: the herd is drained all at once here, whereas in real time the
// jitter spreads it over its window.
//
// A live run (the `herd` section: a million reminders in one minute) waits
// for the clock instead: the minute is put just far enough ahead that the
// whole herd is planned and enqueued, the worker is started and idles, and the
// jobs come due as the clock reaches them (jitter spread over its window, as
// in production). Its lateness is delivered − due, jitter included; it also
// reports the worker's peak resident memory (VmHWM) and how long after the
// last job came due the last push went out.
import { spawn } from 'node:child_process';
import { generateKeyPairSync } from 'node:crypto';
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { pathToFileURL } from 'node:url';
import { DateTime } from 'luxon';
import pg from 'pg';
import { migrateUnderLock } from '../../libs/database/src/migrate.js';
import { enqueueMany } from '../../libs/queue/src/index.js';
import { SUCCEEDED_SINCE } from '../../libs/queue/src/ops-sql.js';
import { planChain, SEND_REMINDER } from '../../libs/reminders/src/reminder-plan.js';
import { SEND_REMINDER_ATTEMPTS } from '../../libs/reminders/src/occurrence-scheduler.js';
import type { FakeServices } from '../push/fake-services.js';
import { startFakeServices, type RunningServices } from '../push/services.js';
import { ROOT } from '../support/child.js';
import { benchPool, freshDatabase } from '../support/postgres.js';
import { median } from '../support/stats.js';

export const ZONES = [
  'UTC',
  'Europe/London',
  'Europe/Paris',
  'Europe/Berlin',
  'Europe/Madrid',
  'Europe/Rome',
  'Europe/Warsaw',
  'Europe/Athens',
  'Europe/Helsinki',
  'Europe/Istanbul',
  'Europe/Moscow',
  'Europe/Lisbon',
  'Europe/Dublin',
  'Africa/Cairo',
  'Africa/Lagos',
  'Africa/Johannesburg',
  'Africa/Nairobi',
  'Asia/Dubai',
  'Asia/Tehran',
  'Asia/Karachi',
  'Asia/Kolkata',
  'Asia/Kathmandu',
  'Asia/Dhaka',
  'Asia/Bangkok',
  'Asia/Jakarta',
  'Asia/Shanghai',
  'Asia/Singapore',
  'Asia/Manila',
  'Asia/Tokyo',
  'Asia/Seoul',
  'Australia/Perth',
  'Australia/Adelaide',
  'Australia/Sydney',
  'Australia/Brisbane',
  'Pacific/Auckland',
  'Pacific/Honolulu',
  'Pacific/Chatham',
  'America/Anchorage',
  'America/Los_Angeles',
  'America/Denver',
  'America/Phoenix',
  'America/Chicago',
  'America/Mexico_City',
  'America/New_York',
  'America/Toronto',
  'America/Bogota',
  'America/Lima',
  'America/Caracas',
  'America/Sao_Paulo',
  'America/St_Johns',
] as const;

/** Where the worker's pushes go: the simulated provider, or the real clients to the services' fakes. */
export type PushMode = 'simulated' | 'real';

export interface PipelineRun {
  mode: PushMode;
  jitterSeconds: number;
  reminders: number;
  devices: number;
  /** Reminders delivered per second, from the worker's first claim to the last delivery. */
  perSecond: number;
  /** Device pushes per second over the same span. */
  pushesPerSecond: number;
  drainSeconds: number;
  lateness: { p50: number; p95: number; p99: number; max: number };
  wait: { p50: number; p95: number; p99: number; max: number };
  /** Live runs: the jobs came due as the clock reached them, with the worker started before. */
  live: boolean;
  /** The worker process's peak resident set (VmHWM), MiB. */
  peakRssMiB: number | null;
  /** Last delivery − the latest run_at of the herd: how long the worker took to catch up once every job was due. */
  catchUpSeconds: number;
  /** Live runs: "succeeded in the last hour" (GET /v1/ops/queue) right after the herd. */
  lastHour?: LastHourCount;
}

/** What counting the last hour's successes costs once a herd has drained (EXPLAIN ANALYZE, warm, ms). */
export interface LastHourCount {
  /** SUCCEEDED_SINCE as GET /v1/ops/queue runs it: the completions' counts. */
  countsMs: number;
  /** job_success_counts rows it read (one per completion statement and kind). */
  countRows: number;
  /** The same count read from the jobs (jobs_succeeded_idx and a heap fetch per success), as before the counts. */
  jobsMs: number;
  /** The herd's successes it counted (checked: the herd's size). */
  counted: number;
}

// "Succeeded in the last hour" as it was read before job_success_counts: every
// success of the hour through jobs_succeeded_idx, each fetched for its kind.
const SUCCEEDED_SINCE_FROM_JOBS = `
SELECT kind, count(*)::integer AS succeeded FROM jobs WHERE status = 'succeeded' AND finished_at >= $1 GROUP BY kind`;

async function lastHourCount(pool: pg.Pool): Promise<LastHourCount> {
  const hourAgo = new Date(Date.now() - 3_600_000);
  // Run once to warm (as an operator's second look would be: its rows are the answer), then timed by EXPLAIN.
  const explain = async (text: string) => {
    const { rows: answer } = await pool.query<{ kind: string; succeeded: number }>(text, [hourAgo]);
    const { rows } = await pool.query(`EXPLAIN (ANALYZE, FORMAT JSON) ${text}`, [hourAgo]);
    return { answer, ...(rows[0]['QUERY PLAN'][0] as { 'Execution Time': number; Plan: Record<string, unknown> }) };
  };
  const scanned = (plan: Record<string, unknown>): number =>
    plan['Relation Name'] === 'job_success_counts'
      ? Number(plan['Actual Rows'])
      : ((plan.Plans as Record<string, unknown>[] | undefined) ?? []).reduce((sum, p) => sum + scanned(p), 0);
  const counts = await explain(SUCCEEDED_SINCE);
  const jobs = await explain(SUCCEEDED_SINCE_FROM_JOBS);
  return {
    countsMs: counts['Execution Time'],
    countRows: scanned(counts.Plan),
    jobsMs: jobs['Execution Time'],
    counted: counts.answer.find((r) => r.kind === SEND_REMINDER)?.succeeded ?? 0,
  };
}

export interface PipelineOptions {
  adminUrl: string;
  reminders: number;
  concurrency: number;
  /** How long the services' fakes take to answer (real mode). */
  serviceLatencyMs: number;
  log: (line: string) => void;
}

export class ReminderPipeline {
  private pool!: pg.Pool;
  private url!: string;
  private devices = 0;
  private fakes?: RunningServices;
  private folder?: string;
  private realEnv: Record<string, string> = {};

  constructor(private readonly options: PipelineOptions) {}

  /**
   * One database with N users (1–3 devices each: 40 % iOS, 40 % Android, 10 %
   * Expo, 10 % web) and one daily reminder per user, round-robin over 50
   * zones; the services' fakes, and the credentials that reach them.
   */
  async setup(): Promise<void> {
    if (!existsSync(resolve(ROOT, 'dist/apps/worker/src/main.js'))) {
      throw new Error('dist/apps/worker/src/main.js is missing: run `npm run build` first (npm run bench does)');
    }
    this.url = await freshDatabase(this.options.adminUrl, 'bench_reminders');
    await migrateUnderLock(this.url);
    this.pool = benchPool(this.url, 4);
    this.fakes = await startFakeServices(this.options.serviceLatencyMs);
    this.folder = mkdtempSync(join(tmpdir(), 'nudge-bench-push-'));
    this.realEnv = credentialsFor(this.fakes.services, this.folder);
    const n = this.options.reminders;
    await this.pool.query(
      `INSERT INTO users (id, time_zone) SELECT 'user-' || i, ($2::text[])[1 + i % 50] FROM generate_series(1, $1) AS i`,
      [n, ZONES],
    );
    // 1, 2 or 3 devices per user (2 on average), each with a token of its platform's form, which
    // the simulated provider answers with `sent` as the fakes do. Web devices are subscriptions
    // to one fake browser (`<endpoint>.<n>`: the fake's aliases), each its own token.
    const { endpoint } = JSON.parse(this.fakes.services.web.subscription) as { endpoint: string };
    await this.pool.query(
      `INSERT INTO devices (user_id, installation_id, platform, push_token)
       SELECT 'user-' || i, 'phone-' || d, p.platform,
              CASE p.platform
                WHEN 'ios' THEN lpad(to_hex(i), 56, '0') || lpad(to_hex(d), 8, '0')
                WHEN 'android' THEN 'bench-fcm-' || i || '-' || d
                WHEN 'expo' THEN 'ExponentPushToken[bench-' || i || '-' || d || ']'
                ELSE replace($2, $3, $3 || '.' || (i * 4 + d))
              END
         FROM generate_series(1, $1) AS i
        CROSS JOIN LATERAL generate_series(1, 1 + (i * 7) % 3) AS d
        CROSS JOIN LATERAL (SELECT CASE WHEN (i + d) % 10 < 4 THEN 'ios' WHEN (i + d) % 10 < 8 THEN 'android'
                                        WHEN (i + d) % 10 = 8 THEN 'expo' ELSE 'web' END AS platform) AS p`,
      [n, this.fakes.services.web.subscription, endpoint],
    );
    await this.pool.query(
      `INSERT INTO reminders (user_id, title, body, local_time, recurrence, start_date)
       SELECT 'user-' || i, 'Stretch', 'Two minutes, away from the screen', '08:00', 'FREQ=DAILY', '2026-01-01'
         FROM generate_series(1, $1) AS i`,
      [n],
    );
    this.devices = Number((await this.pool.query(`SELECT count(*) AS n FROM devices`)).rows[0].n);
    await this.pool.query('VACUUM ANALYZE');
  }

  async run(jitterSeconds: number, mode: PushMode, live = false): Promise<PipelineRun> {
    const { log } = this.options;
    const n = this.options.reminders;
    await this.pool.query(
      'TRUNCATE jobs, job_runs, reminder_occurrences, reminder_jobs, push_deliveries, simulated_pushes RESTART IDENTITY',
    );

    // The minute every reminder is due in. Burst: far enough back that jitter
    // included every job is due now, close enough that none is stale. Live:
    // ahead by the time planning and enqueueing take (about 4,000 reminders a
    // second here, with room to spare), rounded up to a whole minute.
    const now = new Date();
    const due = live
      ? new Date(Math.ceil((now.getTime() + (20 + n / 4000) * 1000) / 60_000) * 60_000)
      : new Date(Math.floor((now.getTime() - (jitterSeconds + 90) * 1000) / 60_000) * 60_000);
    const byZone = ZONES.map((zone) => {
      const local = DateTime.fromJSDate(due, { zone });
      return { zone, localTime: local.toFormat('HH:mm'), startDate: local.minus({ days: 7 }).toISODate()! };
    });
    await this.pool.query(
      `UPDATE reminders r SET local_time = z.local_time, start_date = z.start_date
         FROM users u, jsonb_to_recordset($1::jsonb) AS z(zone text, local_time text, start_date text)
        WHERE u.id = r.user_id AND u.time_zone = z.zone`,
      [JSON.stringify(byZone.map((z) => ({ zone: z.zone, local_time: z.localTime, start_date: z.startDate })))],
    );

    const t0 = performance.now();
    const { rows } = await this.pool.query(
      `SELECT r.id, r.user_id AS "userId", r.version, r.local_time AS "localTime", r.time_zone AS "timeZone",
              r.recurrence, r.start_date AS "startDate", r.time_sensitive AS "timeSensitive", u.time_zone AS "userTimeZone",
              u.quiet_hours_start AS "quietHoursStart", u.quiet_hours_end AS "quietHoursEnd"
         FROM reminders r JOIN users u ON u.id = r.user_id`,
    );
    // Planned as the chain does after the day before's occurrence, a moment before it is due.
    const planningTime = new Date(due.getTime() - 1000);
    const plans = rows.map((r) => {
      const { next } = planChain({
        reminder: r,
        user: { timeZone: r.userTimeZone, quietHoursStart: r.quietHoursStart, quietHoursEnd: r.quietHoursEnd },
        now: planningTime,
        jitterSeconds,
        mode: 'chain',
        afterDate: DateTime.fromJSDate(due, { zone: r.timeZone ?? r.userTimeZone })
          .minus({ days: 1 })
          .toISODate(),
        settled: new Set(),
      });
      if (!next || next.occurrence.at.getTime() !== due.getTime())
        throw new Error(`reminder ${r.id}: planned ${next?.occurrence.at.toISOString()}, expected ${due.toISOString()}`);
      return next;
    });
    const specs = plans.map((plan) => ({
      kind: SEND_REMINDER,
      payload: plan.payload,
      runAt: plan.runAt,
      idempotencyKey: plan.idempotencyKey,
      maxAttempts: SEND_REMINDER_ATTEMPTS,
    }));
    for (let i = 0; i < specs.length; i += 5000) await enqueueMany(this.pool, specs.slice(i, i + 5000), { now });
    await this.pool.query(
      `INSERT INTO reminder_jobs (reminder_id, job_id, version, local_date, due_at, created_at)
       SELECT (payload->>'reminderId')::uuid, id, (payload->>'version')::int, payload->>'localDate', (payload->>'at')::timestamptz, created_at
         FROM jobs WHERE kind = $1`,
      [SEND_REMINDER],
    );
    await this.pool.query(
      `INSERT INTO reminder_occurrences (reminder_id, local_date, status, due_at, earliest_at, job_id, version, created_at, updated_at)
       SELECT (payload->>'reminderId')::uuid, payload->>'localDate', 'scheduled', (payload->>'at')::timestamptz, run_at, id,
              (payload->>'version')::int, created_at, created_at
         FROM jobs WHERE kind = $1`,
      [SEND_REMINDER],
    );
    await this.pool.query('ANALYZE jobs; ANALYZE reminder_occurrences; ANALYZE reminder_jobs');
    log(
      `reminders: ${n} occurrences due at ${due.toISOString()} planned and enqueued in ${((performance.now() - t0) / 1000).toFixed(1)} s (jitter ${jitterSeconds} s)`,
    );
    if (live && Date.now() >= due.getTime()) {
      throw new Error(`live herd: planning and enqueueing ended after the herd came due (${due.toISOString()}); give it a longer lead`);
    }

    const peakRssMiB = await this.runWorker(jitterSeconds, n, mode, live ? due.getTime() + jitterSeconds * 1000 : Date.now());
    const measured = await this.measure(jitterSeconds, mode);
    if (!live) return { ...measured, live, peakRssMiB };
    const lastHour = await lastHourCount(this.pool);
    if (lastHour.counted !== n) throw new Error(`live herd: the last hour's success count says ${lastHour.counted}, expected ${n}`);
    log(`herd: succeeded in the last hour ${JSON.stringify(lastHour)}`);
    return { ...measured, live, peakRssMiB, lastHour };
  }

  /** Runs the worker until the herd is delivered (the last job comes due at `lastDueMs`); returns its peak RSS in MiB. */
  private async runWorker(jitterSeconds: number, n: number, mode: PushMode, lastDueMs: number): Promise<number | null> {
    // BENCH_WORKER_ARGS: node flags for the worker, e.g. `--cpu-prof --cpu-prof-dir=/tmp/prof` to profile it.
    // The redirect preload in both modes, so that the two workers differ by their credentials alone.
    const nodeArgs = [
      '--import',
      pathToFileURL(resolve(ROOT, 'bench/push/redirect-hosts.mjs')).href,
      ...(process.env.BENCH_WORKER_ARGS ?? '').split(' ').filter(Boolean),
    ];
    const child = spawn(process.execPath, [...nodeArgs, resolve(ROOT, 'dist/apps/worker/src/main.js')], {
      cwd: ROOT,
      env: {
        ...process.env,
        DATABASE_URL: this.url,
        SKIP_MIGRATIONS: '1',
        WORKER_CONCURRENCY: String(this.options.concurrency),
        REMINDER_JITTER_SECONDS: String(jitterSeconds),
        LOG_LEVEL: 'warn',
        NODE_ENV: 'production',
        AUTH_JWT_SECRET: 'bench-secret-bench-secret-bench-secret!',
        // The bench measures Nudge and the clients, not the services' quotas (Expo's is 600 a second).
        FCM_MAX_PER_SECOND: '1000000',
        EXPO_MAX_PER_SECOND: '1000000',
        ...(mode === 'real' ? this.realEnv : {}),
      },
      stdio: ['ignore', 'ignore', 'pipe'],
    });
    let stderr = '';
    child.stderr!.on('data', (c: Buffer) => (stderr = (stderr + c.toString()).slice(-5000)));
    const exited = new Promise<number | null>((r) => child.on('exit', (code) => r(code)));
    let crashed = false;
    void exited.then(() => (crashed = true));
    // 15 minutes after the last job came due, or 2 ms a reminder past that when the herd is larger.
    const deadline = lastDueMs + Math.max(15 * 60_000, 2 * n);
    // Not more often: this count competes with the worker for the same two cores (it reads every due job).
    const pollMs = Math.max(1000, n / 100);
    let peakRssMiB: number | null;
    try {
      for (;;) {
        await new Promise((r) => setTimeout(r, pollMs));
        if (crashed) throw new Error(`the worker exited early:\n${stderr}`);
        const [row] = (
          await this.pool.query(
            `SELECT count(*) FILTER (WHERE status = 'succeeded')::int AS done,
                    count(*) FILTER (WHERE status = 'dead' OR (status = 'queued' AND attempts > 0))::int AS failing
               FROM jobs WHERE kind = $1 AND run_at <= now()`,
            [SEND_REMINDER],
          )
        ).rows;
        if (row.failing > 0) {
          const { rows: errors } = await this.pool.query(
            `SELECT last_error, count(*)::int AS n FROM jobs WHERE kind = $1 AND last_error IS NOT NULL GROUP BY 1 ORDER BY 2 DESC LIMIT 5`,
            [SEND_REMINDER],
          );
          throw new Error(`${row.failing} reminder jobs failed or were retried: ${JSON.stringify(errors)}\n${stderr}`);
        }
        if (row.done >= n) break;
        if (Date.now() > deadline) throw new Error(`the worker delivered ${row.done} of ${n} by ${new Date(deadline).toISOString()}`);
      }
      peakRssMiB = peakRss(child.pid);
    } finally {
      child.kill('SIGTERM');
      await Promise.race([exited, new Promise((r) => setTimeout(r, 20_000))]);
      if (child.exitCode === null) child.kill('SIGKILL');
    }
    return peakRssMiB;
  }

  private async measure(jitterSeconds: number, mode: PushMode): Promise<Omit<PipelineRun, 'live' | 'peakRssMiB'>> {
    const n = this.options.reminders;
    // The statistics still say every job is queued: without this the planner nests loops over 100,000 rows.
    await this.pool.query('ANALYZE jobs, push_deliveries, reminder_occurrences, reminder_jobs');
    const [check] = (
      await this.pool.query(
        `SELECT (SELECT count(*) FROM jobs WHERE kind = $1 AND status = 'succeeded')::int AS succeeded,
                (SELECT count(*) FROM jobs WHERE kind = $1 AND status = 'queued' AND attempts = 0 AND run_at > now())::int AS next_queued,
                (SELECT count(*) FROM push_deliveries WHERE status = 'sent')::int AS sent,
                (SELECT count(*) FROM push_deliveries WHERE status <> 'sent')::int AS not_sent,
                (SELECT count(*) FROM simulated_pushes)::int AS simulated,
                (SELECT count(*) FROM reminder_jobs)::int AS occurrences,
                (SELECT count(*) FROM reminder_occurrences WHERE status = 'sent')::int AS sent_occurrences`,
        [SEND_REMINDER],
      )
    ).rows;
    const expected = {
      succeeded: n,
      next_queued: n,
      sent: this.devices,
      not_sent: 0,
      simulated: mode === 'simulated' ? this.devices : 0,
      occurrences: 2 * n,
      sent_occurrences: n,
    };
    for (const [k, v] of Object.entries(expected)) {
      if (check[k] !== v) throw new Error(`reminder pipeline: ${k} = ${check[k]}, expected ${v} (${JSON.stringify(check)})`);
    }
    const [m] = (
      await this.pool.query(
        `WITH start AS (SELECT min(locked_at) AS t FROM jobs WHERE kind = $1 AND status = 'succeeded'),
         delivered AS (SELECT job_id, max(updated_at) AS t FROM push_deliveries WHERE status = 'sent' GROUP BY job_id),
         late AS (
           SELECT extract(epoch FROM d.t - o.due_at) - greatest(0, extract(epoch FROM s.t - j.run_at)) AS seconds,
                  extract(epoch FROM d.t - greatest(j.run_at, s.t)) AS wait, d.t AS delivered
             FROM jobs j
             JOIN reminder_jobs o ON o.job_id = j.id
             JOIN delivered d ON d.job_id = j.id
             CROSS JOIN start s
            WHERE j.kind = $1 AND j.status = 'succeeded')
         SELECT count(*)::int AS n,
                extract(epoch FROM max(delivered) - (SELECT t FROM start))::float8 AS drain,
                percentile_disc(0.5) WITHIN GROUP (ORDER BY seconds)::float8 AS p50,
                percentile_disc(0.95) WITHIN GROUP (ORDER BY seconds)::float8 AS p95,
                percentile_disc(0.99) WITHIN GROUP (ORDER BY seconds)::float8 AS p99,
                max(seconds)::float8 AS max,
                percentile_disc(0.5) WITHIN GROUP (ORDER BY wait)::float8 AS wait_p50,
                percentile_disc(0.95) WITHIN GROUP (ORDER BY wait)::float8 AS wait_p95,
                percentile_disc(0.99) WITHIN GROUP (ORDER BY wait)::float8 AS wait_p99,
                max(wait)::float8 AS wait_max,
                extract(epoch FROM max(delivered) - (SELECT max(run_at) FROM jobs WHERE kind = $1 AND status = 'succeeded'))::float8 AS catch_up
           FROM late`,
        [SEND_REMINDER],
      )
    ).rows;
    if (m.n !== n) throw new Error(`reminder pipeline: ${m.n} delivered jobs measured, expected ${n}`);
    // A run that did not go straight through (a snooze for the pace or for an app's credentials, an expired
    // lease) explains a long tail: said in the log.
    const { rows: detours } = await this.pool.query(
      `SELECT outcome, left(coalesce(error, ''), 160) AS error, count(*)::int AS n
         FROM job_runs WHERE kind = $1 AND outcome <> 'succeeded' GROUP BY 1, 2 ORDER BY 3 DESC LIMIT 5`,
      [SEND_REMINDER],
    );
    if (detours.length > 0) this.options.log(`reminders ${mode}: job runs that did not succeed: ${JSON.stringify(detours)}`);
    return {
      mode,
      jitterSeconds,
      reminders: n,
      devices: this.devices,
      perSecond: n / m.drain,
      pushesPerSecond: this.devices / m.drain,
      drainSeconds: m.drain,
      lateness: { p50: m.p50, p95: m.p95, p99: m.p99, max: m.max },
      wait: { p50: m.wait_p50, p95: m.wait_p95, p99: m.wait_p99, max: m.wait_max },
      catchUpSeconds: m.catch_up,
    };
  }

  async close(): Promise<void> {
    await this.pool?.end();
    await this.fakes?.stop();
    if (this.folder) rmSync(this.folder, { recursive: true, force: true });
  }
}

/** A process's peak resident set (VmHWM in /proc), MiB; null where /proc is not there. */
function peakRss(pid: number | undefined): number | null {
  if (pid === undefined) return null;
  try {
    const match = /VmHWM:\s+(\d+) kB/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'));
    return match ? Number(match[1]) / 1024 : null;
  } catch {
    return null;
  }
}

/**
 * The worker's environment for the real clients, as an operator would set it:
 * the APNs `.p8` key, a Firebase service-account file (its key signs the OAuth
 * grant the token fake answers), the VAPID keys, Expo switched on; the fakes'
 * certificate trusted and Apple's and Google's hosts redirected to the fakes.
 */
function credentialsFor(services: FakeServices, folder: string): Record<string, string> {
  const file = (name: string, text: string) => {
    const path = join(folder, name);
    writeFileSync(path, text);
    return path;
  };
  const { privateKey } = generateKeyPairSync('rsa', { modulusLength: 2048 });
  const account = {
    type: 'service_account',
    project_id: services.fcm.projectId,
    client_email: `bench@${services.fcm.projectId}.iam.gserviceaccount.com`,
    private_key: privateKey.export({ type: 'pkcs8', format: 'pem' }).toString(),
  };
  const vapid = services.web.vapid;
  return {
    APNS_KEY_FILE: file('AuthKey.p8', services.apns.key),
    APNS_KEY_ID: services.apns.keyId,
    APNS_TEAM_ID: services.apns.teamId,
    APNS_TOPIC: 'com.example.bench',
    FCM_SERVICE_ACCOUNT_FILE: file('service-account.json', JSON.stringify(account)),
    VAPID_PUBLIC_KEY: vapid.publicKey,
    VAPID_PRIVATE_KEY: vapid.privateKey,
    VAPID_SUBJECT: 'mailto:bench@example.com',
    EXPO_PUSH_ENABLED: '1',
    EXPO_BASE_URL: services.expo.baseUrl,
    NODE_EXTRA_CA_CERTS: file('fakes-ca.pem', services.ca),
    BENCH_REDIRECTS: JSON.stringify(services.redirects),
  };
}

export interface PipelineFigures {
  /** The simulated provider's runs, by jitter. */
  byJitter: Record<number, { perSecond: number; lateness: PipelineRun['lateness']; wait: PipelineRun['wait'] }>;
  /** The real clients' runs (jitter 0), and their rate over the simulated runs' at jitter 0 when those ran. */
  real?: { perSecond: number; pushesPerSecond: number; lateness: PipelineRun['lateness']; ratio?: number };
  runs: PipelineRun[];
}

export interface PipelineRunPlan {
  mode: PushMode;
  jitter: number;
  /** Wait for the clock: the herd comes due in real time (see the top of this file). */
  live?: boolean;
}

/** `runs` rounds of the plan's runs in its order (simulated 0, simulated 300, real 0, …): interleaved. */
export async function reminderPipeline(options: PipelineOptions, plan: PipelineRunPlan[], runs: number): Promise<PipelineFigures> {
  const pipeline = new ReminderPipeline(options);
  const all: PipelineRun[] = [];
  try {
    await pipeline.setup();
    for (let run = 1; run <= runs; run++) {
      for (const { mode, jitter, live } of plan) {
        const r = await pipeline.run(jitter, mode, live);
        all.push(r);
        options.log(
          `reminders run ${run}/${runs} ${mode} jitter ${jitter}${live ? ' live' : ''}: ${r.reminders} reminders (${r.devices} devices) in ${r.drainSeconds.toFixed(1)} s = ` +
            `${Math.round(r.perSecond)}/s (${Math.round(r.pushesPerSecond)} pushes/s); lateness p50 ${r.lateness.p50.toFixed(1)} s, ` +
            `p99 ${r.lateness.p99.toFixed(1)} s, max ${r.lateness.max.toFixed(1)} s; wait p99 ${r.wait.p99.toFixed(1)} s; ` +
            `caught up ${r.catchUpSeconds.toFixed(1)} s after the last came due; worker peak RSS ${r.peakRssMiB?.toFixed(0) ?? '?'} MiB`,
        );
      }
    }
  } finally {
    await pipeline.close();
  }
  const dist = (rs: PipelineRun[], pick: (r: PipelineRun) => PipelineRun['wait']) => ({
    p50: median(rs.map((r) => pick(r).p50)),
    p95: median(rs.map((r) => pick(r).p95)),
    p99: median(rs.map((r) => pick(r).p99)),
    max: median(rs.map((r) => pick(r).max)),
  });
  const byJitter: PipelineFigures['byJitter'] = {};
  for (const jitter of new Set(plan.filter((p) => p.mode === 'simulated' && !p.live).map((p) => p.jitter))) {
    const rs = all.filter((r) => r.mode === 'simulated' && r.jitterSeconds === jitter && !r.live);
    byJitter[jitter] = {
      perSecond: median(rs.map((r) => r.perSecond)),
      lateness: dist(rs, (r) => r.lateness),
      wait: dist(rs, (r) => r.wait),
    };
  }
  const real = all.filter((r) => r.mode === 'real' && r.jitterSeconds === 0 && !r.live);
  const figures: PipelineFigures = { byJitter, runs: all };
  if (real.length > 0) {
    const perSecond = median(real.map((r) => r.perSecond));
    figures.real = {
      perSecond,
      pushesPerSecond: median(real.map((r) => r.pushesPerSecond)),
      lateness: dist(real, (r) => r.lateness),
      ...(byJitter[0] ? { ratio: perSecond / byJitter[0].perSecond } : {}),
    };
  }
  return figures;
}
