// The reminder pipeline end to end: N reminders due in the same minute across
// 50 zones, users with 1–3 simulated devices, drained by the real worker
// (`node dist/apps/worker/src/main.js`: the real send_reminder handler, the
// delivery ledger, the simulated provider, the next occurrence enqueued).
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
import { spawn } from 'node:child_process';
import { existsSync } from 'node:fs';
import { resolve } from 'node:path';
import { DateTime } from 'luxon';
import pg from 'pg';
import { migrateUnderLock } from '../../libs/database/src/migrate.js';
import { enqueueMany } from '../../libs/queue/src/index.js';
import { planChain, SEND_REMINDER } from '../../libs/reminders/src/reminder-plan.js';
import { SEND_REMINDER_ATTEMPTS } from '../../libs/reminders/src/occurrence-scheduler.js';
import { ROOT } from '../support/child.js';
import { freshDatabase } from '../support/postgres.js';
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

export interface PipelineRun {
  jitterSeconds: number;
  reminders: number;
  devices: number;
  /** Reminders delivered per second, from the worker's first claim to the last delivery. */
  perSecond: number;
  drainSeconds: number;
  lateness: { p50: number; p95: number; p99: number; max: number };
  wait: { p50: number; p95: number; p99: number; max: number };
}

export interface PipelineOptions {
  adminUrl: string;
  reminders: number;
  concurrency: number;
  log: (line: string) => void;
}

export class ReminderPipeline {
  private pool!: pg.Pool;
  private url!: string;
  private devices = 0;

  constructor(private readonly options: PipelineOptions) {}

  /** One database with N users (1–3 devices each) and one daily reminder per user, round-robin over 50 zones. */
  async setup(): Promise<void> {
    if (!existsSync(resolve(ROOT, 'dist/apps/worker/src/main.js'))) {
      throw new Error('dist/apps/worker/src/main.js is missing: run `npm run build` first (npm run bench does)');
    }
    this.url = await freshDatabase(this.options.adminUrl, 'bench_reminders');
    await migrateUnderLock(this.url);
    this.pool = new pg.Pool({ connectionString: this.url, max: 4 });
    const n = this.options.reminders;
    await this.pool.query(
      `INSERT INTO users (id, time_zone) SELECT 'user-' || i, ($2::text[])[1 + i % 50] FROM generate_series(1, $1) AS i`,
      [n, ZONES],
    );
    // 1, 2 or 3 devices per user (2 on average), tokens the simulated provider answers with `sent`.
    await this.pool.query(
      `INSERT INTO devices (user_id, installation_id, platform, push_token)
       SELECT 'user-' || i, 'phone-' || d, CASE WHEN (i + d) % 2 = 0 THEN 'ios' ELSE 'android' END, 'sim-device-' || i || '-' || d
         FROM generate_series(1, $1) AS i CROSS JOIN LATERAL generate_series(1, 1 + (i * 7) % 3) AS d`,
      [n],
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

  async run(jitterSeconds: number): Promise<PipelineRun> {
    const { log } = this.options;
    const n = this.options.reminders;
    await this.pool.query(
      'TRUNCATE jobs, job_runs, reminder_occurrences, reminder_jobs, push_deliveries, simulated_pushes RESTART IDENTITY',
    );

    // The minute every reminder is due in: far enough back that jitter
    // included every job is due now, close enough that none is stale.
    const now = new Date();
    const due = new Date(Math.floor((now.getTime() - (jitterSeconds + 90) * 1000) / 60_000) * 60_000);
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

    await this.runWorker(jitterSeconds, n);
    return this.measure(jitterSeconds);
  }

  private async runWorker(jitterSeconds: number, n: number): Promise<void> {
    // BENCH_WORKER_ARGS: node flags for the worker, e.g. `--cpu-prof --cpu-prof-dir=/tmp/prof` to profile it.
    const nodeArgs = (process.env.BENCH_WORKER_ARGS ?? '').split(' ').filter(Boolean);
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
      },
      stdio: ['ignore', 'ignore', 'pipe'],
    });
    let stderr = '';
    child.stderr!.on('data', (c: Buffer) => (stderr = (stderr + c.toString()).slice(-5000)));
    const exited = new Promise<number | null>((r) => child.on('exit', (code) => r(code)));
    let crashed = false;
    void exited.then(() => (crashed = true));
    const deadline = Date.now() + 15 * 60_000;
    try {
      for (;;) {
        // Not more often: this count competes with the worker for the same two cores.
        await new Promise((r) => setTimeout(r, 1000));
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
        if (Date.now() > deadline) throw new Error(`the worker delivered ${row.done} of ${n} in 15 minutes`);
      }
    } finally {
      child.kill('SIGTERM');
      await Promise.race([exited, new Promise((r) => setTimeout(r, 20_000))]);
      if (child.exitCode === null) child.kill('SIGKILL');
    }
  }

  private async measure(jitterSeconds: number): Promise<PipelineRun> {
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
      simulated: this.devices,
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
                max(wait)::float8 AS wait_max
           FROM late`,
        [SEND_REMINDER],
      )
    ).rows;
    if (m.n !== n) throw new Error(`reminder pipeline: ${m.n} delivered jobs measured, expected ${n}`);
    return {
      jitterSeconds,
      reminders: n,
      devices: this.devices,
      perSecond: n / m.drain,
      drainSeconds: m.drain,
      lateness: { p50: m.p50, p95: m.p95, p99: m.p99, max: m.max },
      wait: { p50: m.wait_p50, p95: m.wait_p95, p99: m.wait_p99, max: m.wait_max },
    };
  }

  async close(): Promise<void> {
    await this.pool?.end();
  }
}

export interface PipelineFigures {
  byJitter: Record<number, { perSecond: number; lateness: PipelineRun['lateness']; wait: PipelineRun['wait'] }>;
  runs: PipelineRun[];
}

/** Runs alternate between the jitter settings (0, 300, 0, 300, …). */
export async function reminderPipeline(options: PipelineOptions, jitters: number[], runs: number): Promise<PipelineFigures> {
  const pipeline = new ReminderPipeline(options);
  const all: PipelineRun[] = [];
  try {
    await pipeline.setup();
    for (let run = 1; run <= runs; run++) {
      for (const jitter of jitters) {
        const r = await pipeline.run(jitter);
        all.push(r);
        options.log(
          `reminders run ${run}/${runs} jitter ${jitter}: ${r.reminders} reminders (${r.devices} devices) in ${r.drainSeconds.toFixed(1)} s = ` +
            `${Math.round(r.perSecond)}/s; lateness p50 ${r.lateness.p50.toFixed(1)} s, p99 ${r.lateness.p99.toFixed(1)} s, max ${r.lateness.max.toFixed(1)} s; ` +
            `wait p99 ${r.wait.p99.toFixed(1)} s`,
        );
      }
    }
  } finally {
    await pipeline.close();
  }
  const byJitter: PipelineFigures['byJitter'] = {};
  for (const jitter of jitters) {
    const rs = all.filter((r) => r.jitterSeconds === jitter);
    const dist = (pick: (r: PipelineRun) => PipelineRun['wait']) => ({
      p50: median(rs.map((r) => pick(r).p50)),
      p95: median(rs.map((r) => pick(r).p95)),
      p99: median(rs.map((r) => pick(r).p99)),
      max: median(rs.map((r) => pick(r).max)),
    });
    byJitter[jitter] = { perSecond: median(rs.map((r) => r.perSecond)), lateness: dist((r) => r.lateness), wait: dist((r) => r.wait) };
  }
  return { byJitter, runs: all };
}
