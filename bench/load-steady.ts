// A steady-rate load run against the built API (`npm run bench:load`): a mix
// of reads and writes from many users at a fixed request rate for a fixed
// time, with the per-user rate limit on at its default. Prints p50/p99 and
// every error; exits 1 if any request failed or was answered outside 2xx.
//
//   LOAD_RATE=300 LOAD_SECONDS=30 LOAD_USERS=200 npm run bench:load
//   BENCH_DATABASE_URL=postgres://…/postgres npm run bench:load   (else an embedded PostgreSQL)
import { mkdirSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import pg from 'pg';
import { signToken } from '../apps/api/src/auth/jwt.js';
import { startTemporaryPostgres, withDatabase } from '../libs/database/src/embedded-postgres.js';
import { migrateUnderLock } from '../libs/database/src/migrate.js';
import { API_SECRET, startApi } from './api/api.bench.js';

interface Latency {
  p50: number;
  p90: number;
  p99: number;
  p99_9: number;
  max: number;
  average: number;
}
interface AutocannonResult {
  latency: Latency;
  requests: { average: number; total: number };
  errors: number;
  timeouts: number;
  non2xx: number;
  statusCodeStats: Record<string, { count: number }>;
  duration: number;
}
interface AutocannonRequest {
  method: string;
  path: string;
  headers?: Record<string, string>;
  body?: string;
  setupRequest?: (req: AutocannonRequest) => AutocannonRequest;
}
type Autocannon = (options: Record<string, unknown>) => Promise<AutocannonResult>;
// autocannon ships no types; the shapes above are the parts used here.
const autocannon = createRequire(import.meta.url)('autocannon') as Autocannon;

const ROOT = resolve(dirname(fileURLToPath(import.meta.url)), '..');
const RATE = Number(process.env.LOAD_RATE ?? 300);
const SECONDS = Number(process.env.LOAD_SECONDS ?? 30);
const USERS = Number(process.env.LOAD_USERS ?? 200);
const CONNECTIONS = Number(process.env.LOAD_CONNECTIONS ?? 20);
const log = (line: string) => process.stderr.write(`${line}\n`);

async function main(): Promise<void> {
  let adminUrl = process.env.BENCH_DATABASE_URL;
  let stopServer = async () => undefined as void;
  if (!adminUrl) {
    const server = await startTemporaryPostgres('nudge-load-pg-');
    adminUrl = server.url;
    stopServer = server.stop;
  }
  const admin = new pg.Client({ connectionString: adminUrl });
  await admin.connect();
  await admin.query('DROP DATABASE IF EXISTS nudge_load WITH (FORCE)');
  await admin.query('CREATE DATABASE nudge_load');
  await admin.end();
  const databaseUrl = withDatabase(adminUrl, 'nudge_load');
  await migrateUnderLock(databaseUrl);

  const api = await startApi(databaseUrl, { perUserRateLimit: true });
  const base = api.base;
  try {
    const tokens = await Promise.all(Array.from({ length: USERS }, (_, i) => signToken(API_SECRET, { userId: `load-${i}` })));
    const reminders: string[][] = [];
    log(`seeding ${USERS} users (profile, a device, 3 reminders each)`);
    for (const [i, token] of tokens.entries()) {
      const call = (method: string, path: string, body: unknown) =>
        fetch(base + path, {
          method,
          headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
          body: JSON.stringify(body),
        }).then(async (r) => {
          if (r.status >= 300) throw new Error(`seeding: ${method} ${path} → ${r.status} ${await r.text()}`);
          return r.json() as Promise<{ id: string }>;
        });
      await call('PUT', '/v1/me', { timeZone: ['Europe/Berlin', 'America/Chicago', 'Asia/Tokyo'][i % 3] });
      await call('PUT', '/v1/me/devices/phone', { platform: i % 2 ? 'ios' : 'android', pushToken: `sim-load-${i}` });
      const ids: string[] = [];
      for (const t of ['08:00', '12:30', '21:15'])
        ids.push((await call('POST', '/v1/reminders', { title: `at ${t}`, localTime: t, recurrence: 'FREQ=DAILY' })).id);
      reminders.push(ids);
    }

    let n = 0;
    const pick = () => {
      const user = n++ % USERS;
      return { user, headers: { authorization: `Bearer ${tokens[user]}`, 'content-type': 'application/json' } };
    };
    // The mix: mostly reads, some edits and new reminders, as an app's sync would do.
    const requests: AutocannonRequest[] = [
      { method: 'GET', path: '/v1/me', setupRequest: (r) => ({ ...r, headers: pick().headers }) },
      { method: 'GET', path: '/v1/reminders', setupRequest: (r) => ({ ...r, headers: pick().headers }) },
      {
        method: 'GET',
        path: '/',
        setupRequest: (r) => {
          const p = pick();
          return { ...r, path: `/v1/reminders/${reminders[p.user]![0]}/occurrences?count=10`, headers: p.headers };
        },
      },
      {
        method: 'PATCH',
        path: '/',
        setupRequest: (r) => {
          const p = pick();
          return {
            ...r,
            path: `/v1/reminders/${reminders[p.user]![1]}`,
            headers: p.headers,
            body: JSON.stringify({ title: `edited ${n}` }),
          };
        },
      },
      {
        method: 'PUT',
        path: '/v1/me/devices/phone',
        setupRequest: (r) => {
          const p = pick();
          return { ...r, headers: p.headers, body: JSON.stringify({ platform: 'ios', pushToken: `sim-load-${p.user}` }) };
        },
      },
      {
        method: 'POST',
        path: '/v1/reminders',
        setupRequest: (r) => ({
          ...r,
          headers: pick().headers,
          body: JSON.stringify({ title: 'new', localTime: '07:45', recurrence: 'FREQ=WEEKLY;BYDAY=MO' }),
        }),
      },
    ];
    log(`load: ${RATE} requests/s for ${SECONDS} s over ${CONNECTIONS} connections, ${USERS} users`);
    const result = await autocannon({ url: base, connections: CONNECTIONS, overallRate: RATE, duration: SECONDS, requests });

    const statuses = Object.fromEntries(Object.entries(result.statusCodeStats).map(([code, s]) => [code, s.count]));
    const report = {
      rateAsked: RATE,
      rateServed: Math.round(result.requests.average),
      seconds: SECONDS,
      requests: result.requests.total,
      latencyMs: {
        p50: result.latency.p50,
        p90: result.latency.p90,
        p99: result.latency.p99,
        p99_9: result.latency.p99_9,
        max: result.latency.max,
      },
      errors: result.errors,
      timeouts: result.timeouts,
      non2xx: result.non2xx,
      statuses,
    };
    mkdirSync(join(ROOT, 'bench/results'), { recursive: true });
    writeFileSync(join(ROOT, 'bench/results/load-steady.json'), JSON.stringify(report, null, 2));
    console.log(`\n| rate asked | served | requests | p50 ms | p90 ms | p99 ms | p99.9 ms | max ms | errors | timeouts | non-2xx |`);
    console.log(`|---|---|---|---|---|---|---|---|---|---|---|`);
    console.log(
      `| ${RATE}/s | ${report.rateServed}/s | ${report.requests} | ${report.latencyMs.p50} | ${report.latencyMs.p90} | ${report.latencyMs.p99} | ${report.latencyMs.p99_9} | ${report.latencyMs.max} | ${report.errors} | ${report.timeouts} | ${report.non2xx} |`,
    );
    console.log(`statuses: ${JSON.stringify(statuses)}  (bench/results/load-steady.json)`);
    process.exitCode = report.errors + report.timeouts + report.non2xx > 0 ? 1 : 0;
  } finally {
    await api.stop();
    await stopServer();
  }
}

await main();
