// The HTTP API under autocannon: GET /v1/reminders/{id} and POST
// /v1/reminders, 50 connections, runs alternating GET, POST, GET, POST, …
// against the built API (`node dist/apps/api/src/main.js`, ROLE=api) on its
// own database. Requests rotate over 50 users so the per-user row lock that
// POST takes is not the whole story. Rate limits are switched off for the run
// (RATE_LIMIT_PER_MINUTE=0, RATE_LIMIT_PER_IP_PER_MINUTE=0); any 429 is still
// counted apart from other errors. A discarded warm-up run of each endpoint
// comes first, so that the first measured run does not pay for V8's JIT and
// the pool's connections. Each run splits its CPU per request between the API
// process, PostgreSQL (when it runs on this machine) and the load generator
// (autocannon, in this process), and states the ceiling those costs put on
// this machine: cores ÷ CPU per request.
import { spawn, type ChildProcess } from 'node:child_process';
import { existsSync } from 'node:fs';
import { createRequire } from 'node:module';
import { resolve } from 'node:path';
import { signToken } from '../../apps/api/src/auth/jwt.js';
import { freePort } from '../../libs/database/src/embedded-postgres.js';
import { migrateUnderLock } from '../../libs/database/src/migrate.js';
import { ROOT } from '../support/child.js';
import { CORES, cpuMsOf, processGroupCpu } from '../support/process-cpu.js';
import { freshDatabase } from '../support/postgres.js';
import { median } from '../support/stats.js';

interface AutocannonRequest {
  method: string;
  path: string;
  headers?: Record<string, string>;
  body?: string;
  setupRequest?: (req: AutocannonRequest) => AutocannonRequest;
}
interface AutocannonResult {
  latency: { p50: number; p99: number };
  requests: { average: number; total: number };
  errors: number;
  timeouts: number;
  non2xx: number;
  statusCodeStats: Record<string, { count: number }>;
}
// autocannon ships no types; these are the parts used here.
const autocannon = createRequire(import.meta.url)('autocannon') as (options: Record<string, unknown>) => Promise<AutocannonResult>;

export const API_SECRET = 'bench-secret-bench-secret-bench-secret!';
const USERS = 50;

export interface EndpointRun {
  perSecond: number;
  p50: number;
  p99: number;
  /** Socket errors, timeouts and answers outside 2xx other than 429. */
  errors: number;
  throttled: number;
  requests: number;
  /** The API process's CPU time (user + system, all threads) per request, ms; null where /proc is missing. */
  cpuMsPerRequest: number | null;
  /** PostgreSQL's (all its processes on this machine) per request, ms; null when the server is elsewhere. */
  postgresCpuMsPerRequest: number | null;
  /** The load generator's (this process: autocannon) per request, ms; null where /proc is missing. */
  loadGeneratorCpuMsPerRequest: number | null;
  /** CORES × 1000 ÷ the three CPU costs above: the rate at which they alone would fill every core. */
  cpuCeilingPerSecond: number | null;
}

export interface ApiFigures {
  get: EndpointRun;
  post: EndpointRun;
  runs: { get: EndpointRun[]; post: EndpointRun[] };
}

export interface ApiBenchOptions {
  /** The API entry point to run (default: this tree's dist); bench/api/compare.ts passes another build's. */
  main?: string;
  /** Extra Node flags for the API process, e.g. `--cpu-prof`. */
  nodeArgs?: string[];
  /** The database's name on the bench server. */
  database?: string;
  /** One endpoint only (a profile of one), else GET and POST alternately. */
  only?: 'get' | 'post';
  /** Keep the per-user rate limit at its default (bench:load); the per-IP one is always off (one load generator, one IP). */
  perUserRateLimit?: boolean;
}

export async function apiBench(
  adminUrl: string,
  seconds: number,
  runs: number,
  log: (line: string) => void,
  options: ApiBenchOptions = {},
): Promise<ApiFigures> {
  const url = await freshDatabase(adminUrl, options.database ?? 'bench_api');
  await migrateUnderLock(url);
  const api = await startApi(url, options);
  const base = api.base;
  try {
    const users = await seedUsers(base);
    let n = 0;
    const body = JSON.stringify({ title: 'Water the plants', localTime: '07:45', recurrence: 'FREQ=WEEKLY;BYDAY=MO,TH' });
    // Each request goes out as the next of the 50 users.
    const endpoint = (name: string, method: string, path: string, as: (u: (typeof users)[number]) => Partial<AutocannonRequest>) => ({
      name,
      runs: [] as EndpointRun[],
      request: { method, path, setupRequest: (r: AutocannonRequest) => ({ ...r, ...as(users[n++ % USERS]!) }) },
    });
    const endpoints = [
      ...(options.only === 'post'
        ? []
        : [
            endpoint('GET /v1/reminders/{id}', 'GET', '/', (u) => ({
              path: `/v1/reminders/${u.reminderId}`,
              headers: { authorization: `Bearer ${u.token}` },
            })),
          ]),
      ...(options.only === 'get'
        ? []
        : [
            endpoint('POST /v1/reminders', 'POST', '/v1/reminders', (u) => ({
              body,
              headers: { authorization: `Bearer ${u.token}`, 'content-type': 'application/json' },
            })),
          ]),
    ];
    const measured: Measured = { pid: api.pid, postgresLocal: onThisMachine(url) };
    const warmUp = Math.min(seconds, WARM_UP_SECONDS);
    for (const e of endpoints) log(`api warm-up (discarded) ${e.name}: ${describe(await load(base, warmUp, measured, e.request))}`);
    for (let run = 1; run <= runs; run++) {
      for (const e of endpoints) {
        const r = await load(base, seconds, measured, e.request);
        e.runs.push(r);
        log(`api run ${run}/${runs} ${e.name}: ${describe(r)}`);
      }
    }
    const [get, post] = [
      endpoints.find((e) => e.name.startsWith('GET'))?.runs ?? [],
      endpoints.find((e) => e.name.startsWith('POST'))?.runs ?? [],
    ];
    return { get: medianRun(get), post: medianRun(post), runs: { get, post } };
  } finally {
    await api.stop();
  }
}

const WARM_UP_SECONDS = 5;

interface Measured {
  pid: number;
  /** PostgreSQL runs on this machine, so its processes' CPU can be read. */
  postgresLocal: boolean;
}

/** A URL whose server is this machine: a loopback address or a Unix socket folder. */
function onThisMachine(url: string): boolean {
  const parsed = new URL(url);
  const host = parsed.searchParams.get('host') ?? parsed.hostname;
  return host.startsWith('/') || ['localhost', '127.0.0.1', '[::1]', '::1'].includes(host);
}

export interface RunningApi {
  base: string;
  pid: number;
  stop(): Promise<void>;
}

/**
 * The built API (ROLE=api) on `url` (already migrated), ready to answer; rate
 * limits off (or the per-user one on), tokens signed with API_SECRET
 * (signToken). Also used by the history bench and bench:load.
 */
export async function startApi(
  url: string,
  options: Pick<ApiBenchOptions, 'main' | 'nodeArgs' | 'perUserRateLimit'> = {},
): Promise<RunningApi> {
  const main = options.main ?? resolve(ROOT, 'dist/apps/api/src/main.js');
  if (!existsSync(main)) throw new Error(`${main} is missing: run \`npm run build\` first`);
  const port = await freePort();
  const api = spawn(process.execPath, [...(options.nodeArgs ?? []), main], {
    cwd: ROOT,
    env: {
      ...process.env,
      DATABASE_URL: url,
      ROLE: 'api',
      PORT: String(port),
      SKIP_MIGRATIONS: '1',
      NODE_ENV: 'production',
      AUTH_JWT_SECRET: API_SECRET,
      LOG_LEVEL: 'warn',
      ...(options.perUserRateLimit ? {} : { RATE_LIMIT_PER_MINUTE: '0' }),
      RATE_LIMIT_PER_IP_PER_MINUTE: '0',
    },
    stdio: ['ignore', 'ignore', 'pipe'],
  });
  let stderr = '';
  api.stderr!.on('data', (c: Buffer) => (stderr = (stderr + c.toString()).slice(-5000)));
  const base = `http://127.0.0.1:${port}`;
  const stop = async (): Promise<void> => {
    api.kill('SIGTERM');
    await Promise.race([new Promise((r) => api.once('exit', r)), new Promise((r) => setTimeout(r, 15_000))]);
    if (api.exitCode === null) api.kill('SIGKILL');
  };
  try {
    await waitForReady(base, api, () => stderr);
  } catch (err) {
    await stop();
    throw err;
  }
  return { base, pid: api.pid!, stop };
}

export function describe(r: EndpointRun): string {
  const cpu =
    r.cpuMsPerRequest === null
      ? ''
      : `, CPU ms/request: API ${r.cpuMsPerRequest}, PostgreSQL ${r.postgresCpuMsPerRequest ?? '?'}, load generator ` +
        `${r.loadGeneratorCpuMsPerRequest ?? '?'} (ceiling ${r.cpuCeilingPerSecond ?? '?'} req/s on ${CORES} cores)`;
  return `${Math.round(r.perSecond)} req/s, p50 ${r.p50} ms, p99 ${r.p99} ms${cpu}, errors ${r.errors}, 429 ${r.throttled}`;
}

async function load(base: string, seconds: number, api: Measured, request: AutocannonRequest): Promise<EndpointRun> {
  const postgres = api.postgresLocal ? processGroupCpu('postgres') : null;
  postgres?.start();
  const cpuBefore = cpuMsOf(api.pid);
  const ownBefore = cpuMsOf(process.pid);
  const result = await autocannon({ url: base, connections: 50, duration: seconds, requests: [request] });
  const cpuAfter = cpuMsOf(api.pid);
  const ownAfter = cpuMsOf(process.pid);
  const postgresMs = postgres?.stop() ?? null;
  const throttled = result.statusCodeStats['429']?.count ?? 0;
  const n = result.requests.total;
  const perRequest = (before: number | null, after: number | null) =>
    before === null || after === null || n === 0 ? null : Number(((after - before) / n).toFixed(3));
  const cpu = perRequest(cpuBefore, cpuAfter);
  const postgresCpu = perRequest(postgresMs === null ? null : 0, postgresMs);
  const loadGeneratorCpu = perRequest(ownBefore, ownAfter);
  return {
    cpuMsPerRequest: cpu,
    postgresCpuMsPerRequest: postgresCpu,
    loadGeneratorCpuMsPerRequest: loadGeneratorCpu,
    cpuCeilingPerSecond: cpuCeiling(cpu, postgresCpu, loadGeneratorCpu),
    perSecond: result.requests.total / seconds,
    p50: result.latency.p50,
    p99: result.latency.p99,
    errors: result.errors + result.timeouts + result.non2xx - throttled,
    throttled,
    requests: result.requests.total,
  };
}

function medianRun(runs: EndpointRun[]): EndpointRun {
  const m = (f: (r: EndpointRun) => number) => median(runs.map(f));
  const medianOrNull = (f: (r: EndpointRun) => number | null) => (runs.some((r) => f(r) === null) ? null : m((r) => f(r)!));
  const sum = (f: (r: EndpointRun) => number) => runs.reduce((s, r) => s + f(r), 0);
  // Rates and latencies: medians of the runs. Errors and 429s: totals over all runs.
  return {
    perSecond: m((r) => r.perSecond),
    p50: m((r) => r.p50),
    p99: m((r) => r.p99),
    errors: sum((r) => r.errors),
    throttled: sum((r) => r.throttled),
    requests: sum((r) => r.requests),
    cpuMsPerRequest: medianOrNull((r) => r.cpuMsPerRequest),
    postgresCpuMsPerRequest: medianOrNull((r) => r.postgresCpuMsPerRequest),
    loadGeneratorCpuMsPerRequest: medianOrNull((r) => r.loadGeneratorCpuMsPerRequest),
    cpuCeilingPerSecond: medianOrNull((r) => r.cpuCeilingPerSecond),
  };
}

/** Requests a second at which these CPU costs alone keep every core of this machine busy; null when the API's is unknown. */
function cpuCeiling(...msPerRequest: (number | null)[]): number | null {
  if (msPerRequest[0] === null) return null;
  const total = msPerRequest.reduce<number>((sum, ms) => sum + (ms ?? 0), 0);
  return total > 0 ? Math.round((CORES * 1000) / total) : null;
}

/** `count` users, each with a profile, a simulated device and one daily reminder, through the API itself. */
export async function seedUsers(base: string, count = USERS, prefix = 'bench-user'): Promise<{ token: string; reminderId: string }[]> {
  return Promise.all(
    Array.from({ length: count }, async (_, i) => {
      const token = await signToken(API_SECRET, { userId: `${prefix}-${i}` });
      const call = async (method: string, path: string, body: unknown) => {
        const res = await fetch(base + path, {
          method,
          headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
          body: JSON.stringify(body),
        });
        if (res.status >= 300) throw new Error(`seeding the API: ${method} ${path} answered ${res.status} ${await res.text()}`);
        return (await res.json()) as { id: string };
      };
      await call('PUT', '/v1/me', { timeZone: ['Europe/Berlin', 'America/Chicago', 'Asia/Tokyo'][i % 3] });
      await call('PUT', '/v1/me/devices/phone', { platform: i % 2 ? 'ios' : 'android', pushToken: `sim-${prefix}-${i}` });
      const { id } = await call('POST', '/v1/reminders', { title: 'Stretch', localTime: '08:00', recurrence: 'FREQ=DAILY' });
      return { token, reminderId: id };
    }),
  );
}

async function waitForReady(base: string, api: ChildProcess, stderr: () => string): Promise<void> {
  const deadline = Date.now() + 60_000;
  while (Date.now() < deadline) {
    if (api.exitCode !== null) throw new Error(`the API exited with ${api.exitCode}:\n${stderr()}`);
    try {
      if ((await fetch(`${base}/health/ready`)).status === 200) return;
    } catch {
      // not listening yet
    }
    await new Promise((r) => setTimeout(r, 200));
  }
  throw new Error(`the API did not become ready within 60 s:\n${stderr()}`);
}
