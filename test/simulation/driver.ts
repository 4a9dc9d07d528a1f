import type pg from 'pg';
import { FixedClock } from '@nudge/config';
import { Worker } from '@nudge/queue';
import { ReminderSweep } from '@nudge/reminders';
import { startTestApi, type TestApi } from '../support/api-app.js';
import { DAY, formatLocal, HOUR, iso, MINUTE, resolveLocal } from './local-time.js';
import { type ApiResponse, type OracleEnv, UserOracle, type Violation } from './oracle.js';
import { generateScenario, type Scenario, type ScriptEvent, type TimedEvent, type UserScript } from './scenario.js';

// Drives the real application through a generated calendar: the HTTP API on
// a pinned FixedClock, the worker built but never started (QueueModule's
// runWorker: false) and run with runOnce() at each instant something is
// due, the simulated push provider, a real PostgreSQL. The clock moves
// event to event: to the next due job or the next scripted event, whichever
// comes first; never minute by minute.

export interface SimOptions {
  seed: number;
  users: number;
  days: number;
  jitterSeconds: number;
  /** A step runs every job due within this much after the first one (never across a quarter hour, where quiet hours and nominal times fall). */
  slackMs: number;
  /** ReminderSweep.sweep() this often (simulated) while the worker is up. */
  sweepEveryMs: number;
  /** Pushes are read and the oracles advanced at least this often (simulated), besides before every event. */
  syncEveryMs: number;
  /** Requests in flight at once for events at one instant. */
  concurrency: number;
  log(line: string): void;
}

export interface Figures {
  seed: number;
  users: number;
  days: number;
  zones: number;
  remindersCreated: number;
  events: Record<string, number>;
  steps: number;
  workerRuns: number;
  jobsClaimed: number;
  sweepRepairs: number;
  pushesVisible: number;
  pushAttemptsFailed: number;
  settled: Record<string, number>;
  apiStatuses: Record<string, number>;
  occurrencesChecked: number;
  violations: Record<string, number>;
  outages: string[];
  durationMs: number;
  simulatedHours: number;
  /** Wall time by phase, ms. */
  timing: Record<string, number>;
}

export interface SimResult {
  scenario: Scenario;
  oracles: Map<string, UserOracle>;
  violations: Violation[];
  figures: Figures;
  /** The timeline of a user, in their local time, with the database's view of their reminders. */
  timeline(userId: string): Promise<string>;
}

interface PushRow {
  pid: string;
  push_token: string;
  collapse_id: string | null;
  title: string;
  data: { reminderId?: string; occurrence?: string } | null;
  outcome: string;
  created_at: Date;
}

/**
 * Runs the population in as many shards as databases given, at once: each
 * shard is an application of its own (API, worker, clock) on a database of its
 * own with its own users and outages. Steps are latency-bound (a few round
 * trips each), so shards side by side use the machine's cores.
 */
export async function runSimulation(dbs: { url: string; pool: pg.Pool }[], options: SimOptions): Promise<SimResult> {
  const began = Date.now();
  const per = Math.ceil(options.users / dbs.length);
  const shards = await Promise.all(
    dbs.map((db, i) =>
      runShard(
        db,
        generateScenario({
          seed: options.seed,
          shard: i,
          firstUser: i * per,
          users: Math.min(per, options.users - i * per),
          days: options.days,
          jitterSeconds: options.jitterSeconds,
        }),
        { ...options, log: (line) => options.log(dbs.length > 1 ? `[shard ${i}] ${line}` : line) },
      ),
    ),
  );
  const figures = mergeFigures(shards.map((s) => s.figures));
  figures.users = options.users;
  figures.durationMs = Date.now() - began;
  return {
    scenario: shards[0]!.scenario,
    oracles: new Map(shards.flatMap((s) => [...s.oracles])),
    violations: shards.flatMap((s) => s.violations),
    figures,
    timeline: (userId) => (shards.find((s) => s.oracles.has(userId)) ?? shards[0]!).timeline(userId),
  };
}

function mergeFigures(list: Figures[]): Figures {
  const sum = (a: Record<string, number>, b: Record<string, number>) => {
    for (const [k, v] of Object.entries(b)) a[k] = (a[k] ?? 0) + v;
    return a;
  };
  const out = { ...list[0]!, events: {}, settled: {}, apiStatuses: {}, violations: {}, timing: {}, outages: [] as string[] } as Figures;
  for (const key of [
    'remindersCreated',
    'steps',
    'workerRuns',
    'jobsClaimed',
    'sweepRepairs',
    'pushesVisible',
    'pushAttemptsFailed',
    'occurrencesChecked',
  ] as const) {
    out[key] = list.reduce((n, f) => n + f[key], 0);
  }
  for (const f of list) {
    sum(out.events, f.events);
    sum(out.settled, f.settled);
    sum(out.apiStatuses, f.apiStatuses);
    sum(out.violations, f.violations);
    out.outages.push(...f.outages);
    for (const [k, v] of Object.entries(f.timing)) out.timing[k] = Math.max(out.timing[k] ?? 0, v);
  }
  out.zones = Math.max(...list.map((f) => f.zones));
  return out;
}

async function runShard(db: { url: string; pool: pg.Pool }, scenario: Scenario, options: SimOptions): Promise<SimResult> {
  const began = Date.now();
  const { start, end, outages, jitterSwitch } = scenario;
  const env: OracleEnv = {
    outages,
    jitterSecondsAt: (ms) => (ms >= jitterSwitch - 2 * DAY ? Math.max(...scenario.jitterSeconds) : scenario.jitterSeconds[0]),
    slackMs: options.slackMs,
    horizon: new Date(end + 800 * DAY).toISOString().slice(0, 10),
  };
  const figures: Figures = {
    seed: options.seed,
    users: scenario.users.length,
    days: options.days,
    zones: new Set(scenario.users.map((u) => u.zone)).size,
    remindersCreated: 0,
    events: {},
    steps: 0,
    workerRuns: 0,
    jobsClaimed: 0,
    sweepRepairs: 0,
    pushesVisible: 0,
    pushAttemptsFailed: 0,
    settled: {},
    apiStatuses: {},
    occurrencesChecked: 0,
    violations: {},
    outages: outages.map((o) => `${iso(o.from)} for ${fmtSpan(o.to - o.from)}`),
    durationMs: 0,
    simulatedHours: (end - start) / HOUR,
    timing: {},
  };
  const timed = async <T>(what: string, fn: () => Promise<T>): Promise<T> => {
    const t0 = performance.now();
    try {
      return await fn();
    } finally {
      figures.timing[what] = Math.round((figures.timing[what] ?? 0) + performance.now() - t0);
    }
  };
  options.log(
    `simulation seed=${options.seed}: ${options.users} users × ${options.days} days from ${iso(start)}, jitter ${scenario.jitterSeconds.join('→')} s at ${iso(jitterSwitch)}, ${outages.length} worker outages`,
  );

  const clock = new FixedClock(new Date(start - HOUR));
  let api: TestApi;
  let worker: Worker;
  const boot = async (jitter: number) => {
    api = await startTestApi({
      databaseUrl: db.url,
      clock,
      env: { REMINDER_JITTER_SECONDS: String(jitter) },
      // Built but not started: the simulation runs it with runOnce().
      // flushIntervalMs: a step waits for its batch's completions; no reason to let them linger.
      worker: { runWorker: false, flushIntervalMs: 1 },
    });
    worker = api.app.get(Worker);
  };
  await boot(scenario.jitterSeconds[0]);
  const bearer = new Map<string, string>();
  const oracles = new Map<string, UserOracle>();
  const scripts = new Map<string, UserScript>();
  const userByToken = new Map<string, UserOracle>();
  const violations: Violation[] = [];
  const driverViolation = (v: Violation) => violations.push(v);

  let loggedServerError = false;
  const request = async (userId: string, method: string, path: string, body?: unknown): Promise<ApiResponse> => {
    const res = await api.request(method, path, { token: bearer.get(userId), body });
    if (res.status >= 500) {
      driverViolation({
        userId,
        at: clock.now().getTime(),
        kind: 'http-5xx',
        message: `${method} ${path} → ${res.status} ${JSON.stringify(res.body)}`,
      });
      if (!loggedServerError) {
        loggedServerError = true;
        options.log(`first 5xx (${method} ${path}); the server's log ends:\n${api.logs.lines.slice(-8).join('\n')}`);
      }
    }
    return { status: res.status, body: res.body };
  };

  // ——— the population ————————————————————————————————————————————
  const t0 = start - 30 * MINUTE;
  clock.set(new Date(t0));
  await inParallel(scenario.users, options.concurrency, async (u) => {
    bearer.set(u.userId, await api.token(u.userId));
    scripts.set(u.userId, u);
    const o = new UserOracle(u.userId, env, { zone: u.zone, quiet: u.quiet }, t0);
    oracles.set(u.userId, o);
    const me = await request(u.userId, 'PUT', '/v1/me', { timeZone: u.zone, quietHours: u.quiet });
    if (me.status !== 201) o.violate(t0, 'status', `PUT /v1/me answered ${me.status}, expected 201`);
    const dev = await request(u.userId, 'PUT', '/v1/me/devices/phone', { platform: 'ios', pushToken: u.initialToken, timeZone: u.zone });
    o.device(t0, { token: u.initialToken, timeZone: u.zone }, dev);
    userByToken.set(u.initialToken, o);
  });

  // ——— the loop ——————————————————————————————————————————————————
  const events: (TimedEvent & { userId: string })[] = scenario.users
    .flatMap((u) => u.events.map((e) => ({ ...e, userId: u.userId })))
    .sort((a, b) => a.t - b.t || (a.userId < b.userId ? -1 : a.userId > b.userId ? 1 : a.seq - b.seq));
  const boundaries = [...outages.flatMap((o) => [o.from, o.to]), jitterSwitch, end].sort((a, b) => a - b);
  // Down from `from` (nothing is due exactly then: outage bounds sit at .5 s) until `to`, when the backlog runs.
  const workerUp = (t: number) => !outages.some((o) => t >= o.from && t < o.to);
  let lastPushId = '0';
  let now = t0;
  let lastSweep = start;
  let switched = false;
  let ev = 0;
  const users = [...oracles.values()];

  // Pushes are read in batches (each carries the simulated instant it was sent at:
  // the simulated provider stamps created_at with the injected clock) and fed to
  // the oracles in order, before anything the oracles must judge: before each
  // group of events, at outage bounds, every few simulated hours, and at the end.
  const collectPushes = async () => {
    const { rows } = await db.pool.query<PushRow>(
      `SELECT id::text AS pid, push_token, collapse_id, title, data, outcome, created_at FROM simulated_pushes WHERE id > $1::bigint ORDER BY id`,
      [lastPushId],
    );
    for (const row of rows) {
      lastPushId = row.pid;
      const at = row.created_at.getTime();
      const o = userByToken.get(row.push_token);
      if (row.outcome === 'sent') figures.pushesVisible++;
      else figures.pushAttemptsFailed++;
      if (!o) {
        driverViolation({
          userId: '?',
          at,
          kind: 'unknown-token',
          message: `push to ${row.push_token} ("${row.title}"), a token no user holds`,
        });
        continue;
      }
      // Whatever had to happen before this push is settled first.
      if (o.wakeAt < at) o.advance(at - 1);
      o.observePush({
        at,
        token: row.push_token,
        reminderId: row.data?.reminderId,
        date: row.data?.occurrence,
        title: row.title,
        collapseId: row.collapse_id,
        outcome: row.outcome,
      });
      o.advance(at);
    }
  };

  const sync = async (t: number) => {
    await timed('pushes', collectPushes);
    const t0 = performance.now();
    for (const o of users) if (o.wakeAt <= t) o.advance(t);
    figures.timing.oracle = Math.round((figures.timing.oracle ?? 0) + performance.now() - t0);
    lastSync = t;
  };
  let lastSync = now;

  // One batch per step: jobs the batch makes due at once (a chain catching up) are
  // found by the loop's next look at the queue, at the same instant.
  let roundsAtInstant = 0;
  let lastInstant = -1;
  const drain = async (t: number): Promise<number> => {
    roundsAtInstant = t === lastInstant ? roundsAtInstant + 1 : 0;
    lastInstant = t;
    if (roundsAtInstant === 500)
      driverViolation({ userId: '?', at: t, kind: 'runaway', message: `the worker still finds due jobs after 500 rounds at ${iso(t)}` });
    const claimed = roundsAtInstant > 500 ? 0 : await timed('worker', () => worker.runOnce());
    figures.workerRuns++;
    figures.jobsClaimed += claimed;
    return claimed;
  };

  let stuckAt = -1;
  for (;;) {
    const nextEvent = events[ev]?.t ?? Infinity;
    const nextBoundary = boundaries.find((b) => b > now) ?? Infinity;
    const limit = Math.min(nextEvent, nextBoundary, end);
    const up = workerUp(now);
    if (up && (now - lastSweep >= options.sweepEveryMs || outages.some((o) => o.to === now))) {
      lastSweep = now;
      figures.sweepRepairs += await timed('sweep', () => api!.app.get(ReminderSweep).sweep());
    }
    if (now - lastSync >= options.syncEveryMs) await sync(now);
    let nextJob = Infinity;
    if (up && stuckAt !== now) {
      // (Only reminder jobs are ever queued here: the worker was not started, so no housekeeping or recurring kinds.)
      const { rows } = await timed('next-job', () =>
        db.pool.query<{ at: Date }>(`SELECT run_at AS at FROM jobs WHERE status = 'queued' ORDER BY priority, run_at LIMIT 1`),
      );
      nextJob = rows[0] ? rows[0].at.getTime() : Infinity;
    }
    if (nextJob <= limit) {
      // A backlog (jobs already due) runs now. Otherwise the step goes to the first due job and takes
      // along those due within the slack after it, never past a quarter hour (where quiet hours begin
      // and nominal instants fall) nor past the next event.
      let t = now;
      if (nextJob > now) {
        const quarter = Math.floor(nextJob / (15 * MINUTE)) * 15 * MINUTE + 15 * MINUTE;
        const cap = Math.min(nextJob + options.slackMs, quarter - 1, limit);
        t = nextJob;
        // With jitter the herd of an instant is spread over the spread: one step takes it.
        if (cap > nextJob && (now >= jitterSwitch ? scenario.jitterSeconds[1] : scenario.jitterSeconds[0]) > 0) {
          const { rows: last } = await timed('next-job', () =>
            db.pool.query<{ at: Date | null }>(`SELECT max(run_at) AS at FROM jobs WHERE status = 'queued' AND run_at <= $1`, [
              new Date(cap),
            ]),
          );
          if (last[0]?.at) t = Math.max(t, last[0].at.getTime());
        }
      }
      clock.set(new Date(t));
      now = t;
      figures.steps++;
      const stepKind = t % (15 * MINUTE) === 0 ? 'quarter' : t % MINUTE === 0 ? 'minute' : t % 1000 === 0 ? 'second' : 'other';
      figures.timing[`steps:${stepKind}`] = (figures.timing[`steps:${stepKind}`] ?? 0) + 1;
      const claimed = await drain(t);
      // A due job nobody can claim (e.g. a kind without a handler): move on to the next event.
      if (claimed === 0 && nextJob <= now) stuckAt = now;
      continue;
    }
    if (limit >= end) break;
    clock.set(new Date(limit));
    now = limit;
    await sync(now);
    if (limit === jitterSwitch && !switched) {
      switched = true;
      options.log(`restart with REMINDER_JITTER_SECONDS=${scenario.jitterSeconds[1]} at ${iso(now)}`);
      await api!.close();
      await boot(scenario.jitterSeconds[1]);
    }
    if (limit === nextEvent) {
      const group: typeof events = [];
      while (events[ev] && events[ev]!.t === limit) group.push(events[ev++]!);
      const perUser = new Map<string, typeof events>();
      for (const e of group) perUser.set(e.userId, [...(perUser.get(e.userId) ?? []), e]);
      await timed('events', () =>
        inParallel([...perUser.entries()], options.concurrency, async ([userId, list]) => {
          const o = oracles.get(userId)!;
          for (const e of list) {
            figures.events[eventName(e.ev)] = (figures.events[eventName(e.ev)] ?? 0) + 1;
            await apply(o, e.ev, limit);
          }
          o.advance(limit);
        }),
      );
    }
  }
  clock.set(new Date(end));
  if (workerUp(end)) await drain(end);
  await sync(end);

  async function apply(o: UserOracle, e: ScriptEvent, t: number): Promise<void> {
    const userId = o.userId;
    switch (e.kind) {
      case 'device': {
        const token = e.token ?? o.token ?? scripts.get(userId)!.initialToken;
        const res = await request(userId, 'PUT', '/v1/me/devices/phone', {
          platform: 'ios',
          pushToken: token,
          ...(e.timeZone ? { timeZone: e.timeZone } : {}),
        });
        const zoneBefore = o.zone;
        o.device(t, { token, timeZone: e.timeZone }, res);
        userByToken.set(token, o);
        if (e.timeZone && o.zone === zoneBefore) {
          // An alias (or the same zone): never travel. The profile keeps the canonical name.
          const me = await request(userId, 'GET', '/v1/me');
          if (me.body?.timeZone !== o.zone)
            o.violate(
              t,
              'alias-travel',
              `after a device PUT with "${e.timeZone}" the user's zone is "${me.body?.timeZone}", expected "${o.zone}"`,
            );
        }
        return;
      }
      case 'deviceDelete':
        return o.deviceDelete(t, await request(userId, 'DELETE', '/v1/me/devices/phone'));
      case 'profile': {
        const body: Record<string, unknown> = {};
        if (e.quietHours !== undefined) body.quietHours = e.quietHours;
        if (e.notificationsEnabled !== undefined) body.notificationsEnabled = e.notificationsEnabled;
        return o.profile(t, body, await request(userId, 'PATCH', '/v1/me', body));
      }
      case 'create': {
        const res = await request(userId, 'POST', '/v1/reminders', e.input);
        if (o.create(t, e.ref, e.input, res)) figures.remindersCreated++;
        return;
      }
      case 'patch': {
        const r = o.reminders.get(e.ref);
        if (!r) return;
        return o.patch(t, e.ref, e.patch, await request(userId, 'PATCH', `/v1/reminders/${r.id}`, e.patch));
      }
      case 'delete': {
        const r = o.reminders.get(e.ref);
        if (!r) return;
        return o.remove(t, e.ref, await request(userId, 'DELETE', `/v1/reminders/${r.id}`));
      }
      case 'action': {
        const r = o.reminders.get(e.ref);
        if (!r) return;
        const date = o.actionDate(t, e.ref, e.target);
        if (!date) return;
        const res = await request(
          userId,
          'POST',
          `/v1/reminders/${r.id}/occurrences/${date}/${e.action}`,
          e.action === 'snooze' ? { minutes: e.minutes } : undefined,
        );
        return o.action(t, e.ref, e.action, date, e.minutes, res);
      }
    }
  }

  // ——— what the API says about every date ——————————————————————————
  const checkStarted = performance.now();
  await inParallel(users, options.concurrency, async (o) => {
    for (const r of o.reminders.values()) {
      if (r.deleted) continue;
      let after = start - 3 * DAY;
      for (let page = 0; page < 20; page++) {
        const res = await request(o.userId, 'GET', `/v1/reminders/${r.id}/occurrences?after=${iso(after)}&count=100`);
        if (res.status !== 200) {
          o.violate(end, 'status', `GET occurrences answered ${res.status}`, r);
          break;
        }
        const list: { localDate: string; at: string; local: string; status: string; reason?: string }[] = res.body.occurrences ?? [];
        for (const occ of list) {
          const key = occ.status === 'skipped' ? `skipped:${occ.reason}` : occ.status;
          if (Date.parse(occ.at) < end) figures.apiStatuses[key] = (figures.apiStatuses[key] ?? 0) + 1;
          const expected = o.expectedStatus(r, occ.localDate);
          if (expected) {
            figures.occurrencesChecked++;
            if (!expected.ok(occ.status, occ.reason)) {
              o.violate(end, 'api-status', `occurrences API says ${occ.localDate} is ${key}, expected ${expected.text}`, r, occ.localDate);
            }
          }
          // No occurrence silently disappears: a date whose time has passed ends sent, done or skipped.
          const settled = r.settled.get(occ.localDate);
          if (
            occ.status === 'scheduled' &&
            settled &&
            !settled.beforeCreation &&
            r.everPlanned.has(occ.localDate) &&
            Date.parse(occ.at) > r.createdAt &&
            (settled.how === 'notOwed' || settled.how === 'optional') &&
            Date.parse(occ.at) < end - 7 * HOUR &&
            settled.at < end - 7 * HOUR
          ) {
            o.violate(
              end,
              'unrecorded',
              `occurrences API still says ${occ.localDate} (${occ.local}) is scheduled; it was planned, then passed undelivered with no record (${settled.how})`,
              r,
              occ.localDate,
            );
          }
          // Dates ahead of the end: the nominal instant by the oracle's own arithmetic.
          const nominal = resolveLocal(r.pinnedZone ?? o.zone, occ.localDate, r.localTime);
          if (nominal > end + DAY && occ.status === 'scheduled' && Date.parse(occ.at) !== nominal) {
            o.violate(
              end,
              'api-at',
              `occurrences API puts ${occ.localDate} at ${occ.at} (${occ.local}), expected ${iso(nominal)} (${formatLocal(r.pinnedZone ?? o.zone, nominal)})`,
              r,
              occ.localDate,
            );
          }
        }
        if (list.length < 100) break;
        after = Date.parse(list[list.length - 1]!.at);
        if (after > end + 30 * DAY) break;
      }
    }
  });

  figures.timing.apiCheck = Math.round(performance.now() - checkStarted);
  for (const o of users) {
    violations.push(...o.violations);
    for (const r of o.reminders.values()) for (const s of r.settled.values()) figures.settled[s.how] = (figures.settled[s.how] ?? 0) + 1;
  }
  for (const v of violations) figures.violations[v.kind] = (figures.violations[v.kind] ?? 0) + 1;
  figures.durationMs = Date.now() - began;

  const timeline = async (userId: string): Promise<string> => {
    const o = oracles.get(userId);
    if (!o) return `(no user ${userId})`;
    const lines = [`user ${userId}: home ${scripts.get(userId)?.zone}, quiet hours ${JSON.stringify(scripts.get(userId)?.quiet)}`];
    for (const { t, text } of o.timeline) lines.push(`  ${iso(t)}  ${o.local(t)}  ${text}`);
    const ids = [...o.reminders.values()].map((r) => r.id);
    if (ids.length) {
      const refs = new Map([...o.reminders.values()].map((r) => [r.id, r.ref]));
      const occ = await db.pool
        .query(
          `SELECT reminder_id, local_date, status, reason, due_at, earliest_at, sent_at, acted_at, version FROM reminder_occurrences WHERE reminder_id = ANY($1::uuid[]) ORDER BY reminder_id, local_date`,
          [ids],
        )
        .catch((err: Error) => ({ rows: [{ error: err.message }] as any[] }));
      lines.push('  reminder_occurrences:');
      for (const row of occ.rows) {
        if (row.error) lines.push(`    (${row.error})`);
        else
          lines.push(
            `    ${refs.get(row.reminder_id)} ${row.local_date} ${row.status}${row.reason ? `(${row.reason})` : ''} due ${row.due_at?.toISOString()} earliest ${row.earliest_at?.toISOString()} sent ${row.sent_at?.toISOString() ?? '-'} acted ${row.acted_at?.toISOString() ?? '-'} v${row.version}`,
          );
      }
    }
    if (ids.length) {
      const refs = new Map([...o.reminders.values()].map((r) => [r.id, r.ref]));
      const jobs = await db.pool
        .query(
          `SELECT rj.reminder_id, rj.local_date, rj.purpose, rj.version, j.id, j.status, j.run_at, j.attempts, j.last_error, j.finished_at,
                (SELECT string_agg(jr.outcome || '@' || to_char(jr.finished_at AT TIME ZONE 'UTC', 'MM-DD"T"HH24:MI:SS') || coalesce(':' || left(jr.error, 60), ''), ', ' ORDER BY jr.id)
                   FROM job_runs jr WHERE jr.job_id = j.id) AS runs
           FROM reminder_jobs rj JOIN jobs j ON j.id = rj.job_id WHERE rj.reminder_id = ANY($1::uuid[]) ORDER BY rj.reminder_id, j.id`,
          [ids],
        )
        .catch((err: Error) => ({ rows: [{ error: err.message }] as any[] }));
      lines.push('  jobs:');
      for (const row of jobs.rows) {
        if (row.error) lines.push(`    (${row.error})`);
        else
          lines.push(
            `    ${refs.get(row.reminder_id)} ${row.local_date} ${row.purpose} v${row.version} job ${row.id} ${row.status} run_at ${row.run_at?.toISOString()} attempts ${row.attempts} finished ${row.finished_at?.toISOString() ?? '-'}${row.last_error ? ` error ${String(row.last_error).slice(0, 80)}` : ''}${row.runs ? ` runs [${row.runs}]` : ''}`,
          );
      }
    }
    const tokens = [...userByToken.entries()].filter(([, u]) => u === o).map(([token]) => token);
    const sent = await db.pool.query(
      `SELECT id, push_token, title, data, outcome, created_at FROM simulated_pushes WHERE push_token = ANY($1::text[]) ORDER BY id`,
      [tokens],
    );
    lines.push('  simulated_pushes:');
    for (const row of sent.rows) {
      lines.push(
        `    #${row.id} ${row.created_at?.toISOString()} ${row.push_token} ${row.outcome} "${row.title}" ${JSON.stringify(row.data)}`,
      );
    }
    return lines.join('\n');
  };

  await api!.close();
  return { scenario, oracles, violations, figures, timeline };
}

function eventName(e: ScriptEvent): string {
  switch (e.kind) {
    case 'device':
      return `device:${e.note ?? 'put'}`;
    case 'profile':
      return e.quietHours !== undefined ? 'profile:quiet' : `profile:notifications-${e.notificationsEnabled ? 'on' : 'off'}`;
    case 'patch':
      return `patch:${Object.keys(e.patch).join('+')}`;
    case 'action':
      return `action:${e.action}:${e.target}`;
    default:
      return e.kind;
  }
}

function fmtSpan(ms: number): string {
  if (ms >= DAY) return `${(ms / DAY).toFixed(1)} d`;
  if (ms >= HOUR) return `${(ms / HOUR).toFixed(1)} h`;
  return `${Math.round(ms / MINUTE)} min`;
}

async function inParallel<T>(items: readonly T[], limit: number, fn: (item: T) => Promise<void>): Promise<void> {
  let next = 0;
  const run = async () => {
    while (next < items.length) {
      const item = items[next++]!;
      await fn(item);
    }
  };
  await Promise.all(Array.from({ length: Math.min(limit, items.length) }, run));
}
