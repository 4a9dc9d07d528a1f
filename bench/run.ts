// `npm run bench` (`-- --quick` for CI): Nudge's queue against pg-boss 12 and
// graphile-worker 0.18 (installed on first use and run on Node 22, see
// queue/peers/runtime.ts), the reminder pipeline end to end, nextOccurrence, and the
// HTTP API. One PostgreSQL server for everything (embedded in a temporary
// folder, or BENCH_DATABASE_URL); every figure is the median of at least
// three runs, the systems interleaved run by run. Prints a markdown table,
// writes bench/results/latest.json (the figures) and
// bench/results/latest.runs.json (environment and every run).
//
//   npm run bench                      full sizes (about 15 minutes on 2 cores)
//   npm run bench -- --quick           small sizes, under two minutes
//   npm run bench -- --only=drain,api  a subset (drain, latency, enqueue, reminders, scheduling, api, clients)
//   npm run bench -- --only=reminders --reminders=5000   the pipeline at another size
//   npm run bench -- --only=history --history=50000000   history at scale at another size (issue 17's figure)
//   npm run bench -- --only=herd --herd=100000          the live herd (a million reminders in one minute) at another size
import { execFileSync } from 'node:child_process';
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { cpus, loadavg } from 'node:os';
import { resolve } from 'node:path';
import { apiBench, type ApiFigures } from './api/api.bench.js';
import { historyBench, PROBE_LABELS, PROBES, HISTORY_TABLES, type HistoryFigures } from './history/history.bench.js';
import { clientsBench, type ClientFigures } from './push/clients.bench.js';
import { drain, enqueueRates, latency, type DrainFigures, type EnqueueFigures, type LatencyFigures } from './queue/queue.bench.js';
import { peerRuntime, type PeerRuntime } from './queue/peers/runtime.js';
import {
  GRAPHILE,
  NUDGE,
  NUDGE_SYNC,
  openClient,
  PEERS,
  PGBOSS,
  type PeerName,
  type QueueClient,
  type SystemName,
  type Variant,
} from './queue/systems.js';
import { reminderPipeline, type PipelineFigures, type PipelineRun } from './reminders/pipeline.bench.js';
import type { SchedulingConfig, SchedulingResult } from './scheduling/next-occurrence.worker.js';
import { ROOT, spawnBenchScript } from './support/child.js';
import { freshDatabase, startServer } from './support/postgres.js';
import { median } from './support/stats.js';

const SECTIONS = ['drain', 'latency', 'enqueue', 'reminders', 'herd', 'scheduling', 'api', 'clients', 'history'] as const;
type Section = (typeof SECTIONS)[number];

const quick = process.argv.includes('--quick');
const onlyArg = process.argv.find((a) => a.startsWith('--only='));
const only = new Set<Section>(onlyArg ? (onlyArg.slice('--only='.length).split(',') as Section[]) : SECTIONS);
for (const s of only) if (!SECTIONS.includes(s)) throw new Error(`--only: unknown section ${s} (one of ${SECTIONS.join(', ')})`);

const RUNS = 3;
const SIZES = quick
  ? {
      drainJobs: 3_000,
      latencyJobs: 30,
      single: 200,
      bulk: 10_000,
      reminders: 400,
      schedulingCalls: 60_000,
      apiSeconds: 2,
      pushes: 300,
      history: 20_000,
      historySamples: 30,
      pruneSeconds: 10,
      herd: 2_000,
      herdJitter: 20,
    }
  : {
      drainJobs: 100_000,
      latencyJobs: 200,
      single: 2_000,
      bulk: 100_000,
      reminders: 100_000,
      schedulingCalls: 500_000,
      apiSeconds: 20,
      pushes: 5_000,
      history: 5_000_000,
      historySamples: 200,
      pruneSeconds: 60,
      herd: 1_000_000,
      herdJitter: 300,
    };
// `--reminders=N` overrides the pipeline's size (to profile it without a full run).
const remindersArg = process.argv.find((a) => a.startsWith('--reminders='));
if (remindersArg) SIZES.reminders = Number(remindersArg.slice('--reminders='.length));
// `--history=N` overrides the history rows the history section fills to (50,000,000 is issue 17's figure).
const historyArg = process.argv.find((a) => a.startsWith('--history='));
if (historyArg) SIZES.history = Number(historyArg.slice('--history='.length));
// `--herd=N` overrides the live herd's size (1,000,000 is issue 17's figure; about 15 minutes here).
const herdArg = process.argv.find((a) => a.startsWith('--herd='));
if (herdArg) SIZES.herd = Number(herdArg.slice('--herd='.length));
// `--pipeline=real` (or `simulated`) runs the pipeline in that mode only: to profile one of them.
const pipelineArg = process.argv.find((a) => a.startsWith('--pipeline='));
const PIPELINE_MODES = new Set(pipelineArg ? pipelineArg.slice('--pipeline='.length).split(',') : ['simulated', 'real']);
const LATENCY_GAP_MS = 20;
// The push clients: the fakes answer after 30 ms (a push service over the internet: 20–50 ms), 100 pushes in flight.
const SERVICE_LATENCY_MS = 30;
const PUSHES_IN_FLIGHT = 100;
const BULK_CHUNK = 1_000;
// The reminder pipeline's worker: three batches of 100 reminders in flight.
const WORKER_CONCURRENCY = 300;

const started = Date.now();
const log = (line: string) => process.stderr.write(`[${((Date.now() - started) / 1000).toFixed(0).padStart(4)} s] ${line}\n`);

/** One row of latest.json. */
export interface Figure {
  figure: string;
  unit: string;
  nudge: number;
  peers: Partial<Record<PeerName, number>>;
  target: string | null;
  met: boolean | null;
}

function packageVersion(name: string): string {
  const file = name === 'nudge' ? resolve(ROOT, 'package.json') : resolve(ROOT, 'node_modules', name, 'package.json');
  return (JSON.parse(readFileSync(file, 'utf8')) as { version: string }).version;
}

function gitCommit(): string | null {
  try {
    return execFileSync('git', ['rev-parse', '--short', 'HEAD'], { cwd: ROOT, encoding: 'utf8' }).trim();
  } catch {
    return null;
  }
}

async function main(): Promise<void> {
  const environment = {
    date: new Date().toISOString(),
    mode: quick ? 'quick' : 'full',
    cores: cpus().length,
    cpu: cpus()[0]?.model ?? 'unknown',
    loadAverageAtStart: loadavg().map((l) => Number(l.toFixed(2))),
    loadAverageAtEnd: [] as number[],
    node: process.version,
    /** The Node the peers run on (they need >= 22), in their own child processes. */
    peersNode: null as string | null,
    postgres: '',
    embeddedPostgres: true,
    versions: {
      nudge: packageVersion('nudge'),
      'pg-boss': 'not run',
      'graphile-worker': 'not run',
      autocannon: packageVersion('autocannon'),
    },
    commit: gitCommit(),
    sizes: SIZES,
    runs: RUNS,
  };
  const server = await startServer(log);
  environment.postgres = server.version;
  environment.embeddedPostgres = server.embedded;
  log(`${environment.cores} cores, load ${environment.loadAverageAtStart.join(' ')}, ${server.version}, Node ${process.version}`);

  const queueSections = only.has('drain') || only.has('latency') || only.has('enqueue');
  // The peers on Node 22 from their cache folder; null (logged) when they cannot be installed.
  const peers: PeerRuntime | null = queueSections ? peerRuntime(log) : null;
  if (peers) {
    Object.assign(environment.versions, peers.versions);
    environment.peersNode = peers.nodeVersion;
  } else if (queueSections) {
    environment.versions['pg-boss'] = environment.versions['graphile-worker'] = 'unavailable';
  }
  const systems: SystemName[] = ['nudge', ...(peers ? PEERS : [])];
  const available = (variants: Variant[]) => variants.filter((v) => systems.includes(v.system));
  const clients = new Map<SystemName, QueueClient>();
  let drainF: DrainFigures | undefined;
  let latencyF: LatencyFigures | undefined;
  let enqueueF: EnqueueFigures | undefined;
  let remindersF: PipelineFigures | undefined;
  let herdF: PipelineFigures | undefined;
  let schedulingF: SchedulingResult | undefined;
  let apiF: ApiFigures | undefined;
  let clientsF: ClientFigures | undefined;
  let historyF: HistoryFigures | undefined;
  try {
    if (queueSections) {
      for (const system of systems)
        clients.set(system, await openClient(system, await freshDatabase(server.adminUrl, `bench_${system.replace('-', '_')}`), peers));
    }
    if (only.has('drain')) {
      log(`drain: ${SIZES.drainJobs} no-op jobs, ${RUNS} runs per configuration`);
      drainF = await drain(clients, available([NUDGE, NUDGE_SYNC, PGBOSS, GRAPHILE]), SIZES.drainJobs, RUNS, peers, log);
    }
    if (only.has('latency')) {
      log(`latency: ${SIZES.latencyJobs} single enqueues ${LATENCY_GAP_MS} ms apart to an idle worker`);
      latencyF = await latency(clients, available([NUDGE, PGBOSS, GRAPHILE]), SIZES.latencyJobs, LATENCY_GAP_MS, RUNS, peers, log);
    }
    if (only.has('enqueue')) {
      log(`enqueue: ${SIZES.single} one at a time, ${SIZES.bulk} in calls of ${BULK_CHUNK}`);
      enqueueF = await enqueueRates(clients, systems, SIZES.single, SIZES.bulk, BULK_CHUNK, RUNS, log);
    }
    for (const client of clients.values()) await client.close();
    clients.clear();
    if (only.has('reminders')) {
      // Simulated provider at jitter 0 and 300, the real clients at jitter 0 (services answering in SERVICE_LATENCY_MS), interleaved.
      const plan = (
        [
          { mode: 'simulated', jitter: 0 },
          { mode: 'simulated', jitter: 300 },
          { mode: 'real', jitter: 0 },
        ] as const
      ).filter((run) => PIPELINE_MODES.has(run.mode));
      log(
        `reminders: ${SIZES.reminders} due in one minute across 50 zones, worker concurrency ${WORKER_CONCURRENCY}, services answering in ` +
          `${SERVICE_LATENCY_MS} ms; runs ${plan.map((run) => `${run.mode} jitter ${run.jitter}`).join(', ')}`,
      );
      remindersF = await reminderPipeline(
        {
          adminUrl: server.adminUrl,
          reminders: SIZES.reminders,
          concurrency: WORKER_CONCURRENCY,
          serviceLatencyMs: SERVICE_LATENCY_MS,
          log,
        },
        plan,
        RUNS,
      );
    }
    if (only.has('herd')) {
      // One live run: it waits for the clock (the jitter window and the drain), too long to repeat three times.
      log(`herd: ${SIZES.herd} reminders due in one minute, jitter ${SIZES.herdJitter} s, in real time; simulated provider, one run`);
      herdF = await reminderPipeline(
        { adminUrl: server.adminUrl, reminders: SIZES.herd, concurrency: WORKER_CONCURRENCY, serviceLatencyMs: SERVICE_LATENCY_MS, log },
        [{ mode: 'simulated', jitter: SIZES.herdJitter, live: true }],
        1,
      );
    }
    if (only.has('scheduling')) {
      log(`scheduling: nextOccurrence, ${SIZES.schedulingCalls} calls per age per round, one core`);
      const config: SchedulingConfig = { calls: SIZES.schedulingCalls, rounds: RUNS };
      schedulingF = await spawnBenchScript<SchedulingResult>('bench/scheduling/next-occurrence.worker.ts', config, 600_000).result;
      log(`scheduling: new ${schedulingF.new.map(Math.round).join(', ')}/s; old ${schedulingF.old.map(Math.round).join(', ')}/s`);
    }
    if (only.has('api')) {
      log(`api: autocannon, 50 connections, ${SIZES.apiSeconds} s per run`);
      apiF = await apiBench(server.adminUrl, SIZES.apiSeconds, RUNS, log);
    }
    if (only.has('clients')) {
      log(`clients: ${SIZES.pushes} pushes per client, ${PUSHES_IN_FLIGHT} in flight, services answering in ${SERVICE_LATENCY_MS} ms`);
      clientsF = await clientsBench({ messages: SIZES.pushes, inFlight: PUSHES_IN_FLIGHT, latencyMs: SERVICE_LATENCY_MS, runs: RUNS }, log);
    }
    if (only.has('history')) {
      log(`history: latencies with no history, then filled to ${SIZES.history} history rows, then after the pruner`);
      historyF = await historyBench({
        adminUrl: server.adminUrl,
        rows: SIZES.history,
        samples: SIZES.historySamples,
        pruneSeconds: SIZES.pruneSeconds,
        log,
      });
    }
  } finally {
    for (const client of clients.values()) await client.close().catch(() => undefined);
    await server.stop();
  }
  environment.loadAverageAtEnd = loadavg().map((l) => Number(l.toFixed(2)));

  const figures = buildFigures({ drainF, latencyF, enqueueF, remindersF, herdF, schedulingF, apiF, clientsF, historyF });
  const table = markdownTable(figures, environment);
  console.log(table);
  const dir = resolve(ROOT, 'bench/results');
  mkdirSync(dir, { recursive: true });
  const suffix = quick ? 'quick' : 'latest';
  writeFileSync(resolve(dir, `${suffix}.json`), `${JSON.stringify(figures, null, 2)}\n`);
  writeFileSync(
    resolve(dir, `${suffix}.runs.json`),
    `${JSON.stringify({ environment, drain: drainF, latency: latencyF, enqueue: enqueueF, reminders: remindersF, herd: herdF, scheduling: schedulingF, api: apiF, clients: clientsF, history: historyF }, null, 2)}\n`,
  );
  writeFileSync(resolve(dir, `${suffix}.md`), `${table}\n`);
  log(`wrote bench/results/${suffix}.json, ${suffix}.runs.json and ${suffix}.md`);
}

const round = (n: number, digits = 0) => Number(n.toFixed(digits));

// Issue 17 part 3: a million reminders due in one minute, jitter 300 s, drained with p99 lateness ≤ 360 s and
// bounded memory. One live run (it waits for the clock), so these figures are single runs, not medians.
function herdFigures(r: PipelineRun): Figure[] {
  const size = r.reminders >= 1_000_000 && r.reminders % 1_000_000 === 0 ? `${r.reminders / 1_000_000}M` : String(r.reminders);
  const head = `Live herd: ${size} reminders (${r.devices} devices) due in one minute, jitter ${r.jitterSeconds} s, in real time, one run`;
  const figure = (label: string, unit: string, nudge: number, target: string | null = null, met: boolean | null = null): Figure => ({
    figure: `${head}: ${label}`,
    unit,
    nudge,
    peers: {},
    target,
    met,
  });
  return [
    figure('lateness p50 (delivered − due, jitter included)', 's', round(r.lateness.p50, 1)),
    // 360 s at jitter 300: the jitter's window plus a minute.
    figure('lateness p99', 's', round(r.lateness.p99, 1), `≤ ${r.jitterSeconds + 60}`, r.lateness.p99 <= r.jitterSeconds + 60),
    figure('lateness max', 's', round(r.lateness.max, 1)),
    figure('from the first claim to the last delivery', 's', round(r.drainSeconds, 1)),
    figure('last delivery after the last job came due', 's', round(r.catchUpSeconds, 1)),
    figure('worker peak resident memory (VmHWM)', 'MiB', r.peakRssMiB === null ? NaN : round(r.peakRssMiB)),
    ...(r.lastHour
      ? [
          figure(
            'then "succeeded in the last hour" (GET /v1/ops/queue) from the completions\' counts',
            'ms',
            round(r.lastHour.countsMs, 2),
          ),
          figure(
            'the same count read from the jobs instead (one heap fetch per success; before the counts)',
            'ms',
            round(r.lastHour.jobsMs, 1),
          ),
        ]
      : []),
  ];
}

function buildFigures(f: {
  drainF?: DrainFigures;
  latencyF?: LatencyFigures;
  enqueueF?: EnqueueFigures;
  remindersF?: PipelineFigures;
  herdF?: PipelineFigures;
  schedulingF?: SchedulingResult;
  apiF?: ApiFigures;
  clientsF?: ClientFigures;
  historyF?: HistoryFigures;
}): Figure[] {
  const out: Figure[] = [];
  if (f.historyF) out.push(...historyFigures(f.historyF));
  if (f.clientsF) {
    const labels = {
      apns: 'APNs through @parse/node-apn (HTTP/2)',
      fcm: 'FCM through firebase-admin (sendEach, HTTP/2)',
      webpush: 'Web Push through web-push (VAPID, encrypted)',
      expo: 'Expo push API, 100 messages a request',
    } as const;
    for (const [client, label] of Object.entries(labels) as [keyof typeof labels, string][]) {
      out.push({
        figure: `Device pushes: ${label}, fake answering in ${f.clientsF.latencyMs} ms, ${f.clientsF.inFlight} in flight`,
        unit: 'pushes/s',
        nudge: round(f.clientsF.median[client]),
        peers: {},
        target: null,
        met: null,
      });
    }
  }
  if (f.drainF) {
    const m = f.drainF.median;
    const peers = peerFigures({ 'pg-boss': m[PGBOSS.id], 'graphile-worker': m[GRAPHILE.id] });
    const best = bestOf(peers, Math.max);
    const jobs = SIZES.drainJobs % 1000 === 0 ? `${SIZES.drainJobs / 1000}k` : String(SIZES.drainJobs);
    for (const [variant, figure] of [
      [NUDGE, `Drain ${jobs} no-op jobs, one worker process — Nudge default (worker commits with synchronous_commit off)`],
      [NUDGE_SYNC, `Drain ${jobs} no-op jobs — Nudge with synchronousCommit: true (like the peers)`],
    ] as const) {
      out.push({
        figure,
        unit: 'jobs/s',
        nudge: round(m[variant.id]!),
        peers,
        target: best === null ? null : `≥ 1.5× best peer (${Math.round(1.5 * best)})`,
        met: best === null ? null : m[variant.id]! >= 1.5 * best,
      });
    }
  }
  if (f.latencyF) {
    const m = f.latencyF.median;
    for (const p of ['p50', 'p95', 'p99', 'max'] as const) {
      const nudge = m[NUDGE.id]![p];
      const peers = peerFigures({ 'pg-boss': m[PGBOSS.id]?.[p], 'graphile-worker': m[GRAPHILE.id]?.[p] }, 1);
      const best = p === 'p50' || p === 'p99' ? bestOf(peers, Math.min) : null;
      out.push({
        figure: `Latency enqueue → handler start, ${p} (idle worker)`,
        unit: 'ms',
        nudge: round(nudge, 1),
        peers,
        target: best === null ? null : `< best peer (${best})`,
        met: best === null ? null : nudge < best,
      });
    }
  }
  if (f.enqueueF) {
    const e = f.enqueueF;
    out.push({
      figure: 'Enqueue one at a time (enqueue / send / addJob)',
      unit: 'jobs/s',
      nudge: round(e.single.nudge!),
      peers: peerFigures(e.single),
      target: null,
      met: null,
    });
    const bulkPeers = peerFigures(e.bulk);
    const best = bestOf(bulkPeers, Math.max);
    out.push({
      figure: `Enqueue in bulk, ${BULK_CHUNK} per call (enqueueMany / insert / addJobs)`,
      unit: 'jobs/s',
      nudge: round(e.bulk.nudge!),
      peers: bulkPeers,
      target: best === null ? null : `≥ 1.2× best peer (${Math.round(1.2 * best)})`,
      met: best === null ? null : e.bulk.nudge! >= 1.2 * best,
    });
  }
  if (f.remindersF) {
    for (const jitter of [0, 300]) {
      const r = f.remindersF.byJitter[jitter];
      if (!r) continue;
      out.push({
        figure: `Reminder pipeline, REMINDER_JITTER_SECONDS ${jitter}: delivered end to end`,
        unit: 'reminders/s',
        nudge: round(r.perSecond),
        peers: {},
        target: '≥ 3000',
        met: r.perSecond >= 3000,
      });
      for (const p of ['p50', 'p99', 'max'] as const) {
        const targeted = jitter === 300 && p === 'p99';
        out.push({
          figure:
            jitter === 0
              ? `Reminder pipeline, jitter 0: lateness ${p} (delivered − due, worker start taken off)`
              : `Reminder pipeline, jitter 300: lateness ${p} (jitter + wait in a burst drain: an upper bound)`,
          unit: 's',
          nudge: round(r.lateness[p], 1),
          peers: {},
          target: targeted ? '< 360' : null,
          met: targeted ? r.lateness[p] < 360 : null,
        });
      }
      if (jitter !== 0) {
        out.push({
          figure: `Reminder pipeline, jitter ${jitter}: wait p99 (delivered − max(runAt, start))`,
          unit: 's',
          nudge: round(r.wait.p99, 1),
          peers: {},
          target: null,
          met: null,
        });
      }
    }
    const real = f.remindersF.real;
    if (real) {
      out.push({
        figure: `Reminder pipeline through the real clients (APNs, FCM, Web Push, Expo; fakes answering in ${SERVICE_LATENCY_MS} ms), jitter 0: delivered end to end`,
        unit: 'reminders/s',
        nudge: round(real.perSecond),
        peers: {},
        target: null,
        met: null,
      });
      out.push({
        figure: 'Reminder pipeline through the real clients, jitter 0: device pushes',
        unit: 'pushes/s',
        nudge: round(real.pushesPerSecond),
        peers: {},
        target: null,
        met: null,
      });
      if (real.ratio !== undefined) {
        out.push({
          figure: 'Reminder pipeline, real clients / simulated provider (jitter 0, same devices, interleaved runs)',
          unit: '%',
          nudge: round(100 * real.ratio, 1),
          peers: {},
          target: '≥ 60',
          met: real.ratio >= 0.6,
        });
      }
      out.push({
        figure: 'Reminder pipeline through the real clients, jitter 0: lateness p99',
        unit: 's',
        nudge: round(real.lateness.p99, 1),
        peers: {},
        target: null,
        met: null,
      });
    }
  }
  if (f.herdF) out.push(...herdFigures(f.herdF.runs[0]!));
  if (f.schedulingF) {
    const s = f.schedulingF;
    const fresh = median(s.new);
    const old = median(s.old);
    out.push({
      figure: 'nextOccurrence, rules created today (daily, weekday, monthly, yearly × 25 zones)',
      unit: 'calls/s/core',
      nudge: round(fresh),
      peers: {},
      target: '≥ 100000',
      met: fresh >= 100_000,
    });
    out.push({
      figure: 'nextOccurrence, rules created five years ago',
      unit: 'calls/s/core',
      nudge: round(old),
      peers: {},
      target: '≥ 100000',
      met: old >= 100_000,
    });
    out.push({
      figure: 'nextOccurrence, time ratio old / new',
      unit: '×',
      nudge: round(fresh / old, 2),
      peers: {},
      target: '≤ 1.5',
      met: fresh / old <= 1.5,
    });
  }
  if (f.apiF) {
    // Issue 17's targets on a 2-core box, 50 connections.
    const targets = { get: { perSecond: 2000, p99: 50 }, post: { perSecond: 800, p99: 100 } };
    for (const [name, r, target] of [
      ['GET /v1/reminders/{id}', f.apiF.get, targets.get],
      ['POST /v1/reminders', f.apiF.post, targets.post],
    ] as const) {
      out.push({
        figure: `API ${name}, 50 connections: throughput`,
        unit: 'req/s',
        nudge: round(r.perSecond),
        peers: {},
        target: `≥ ${target.perSecond}`,
        met: r.perSecond >= target.perSecond,
      });
      out.push({ figure: `API ${name}: latency p50`, unit: 'ms', nudge: r.p50, peers: {}, target: null, met: null });
      out.push({
        figure: `API ${name}: latency p99`,
        unit: 'ms',
        nudge: r.p99,
        peers: {},
        target: `≤ ${target.p99}`,
        met: r.p99 <= target.p99,
      });
      // Where each request's CPU goes on this machine, and the rate those costs allow at most.
      for (const [what, ms] of [
        ['API process', r.cpuMsPerRequest],
        ['PostgreSQL (all its processes)', r.postgresCpuMsPerRequest],
        ['load generator (autocannon)', r.loadGeneratorCpuMsPerRequest],
      ] as const) {
        if (ms === null) continue;
        out.push({
          figure: `API ${name}: ${what} CPU per request (user + system)`,
          unit: 'ms',
          nudge: round(ms, 3),
          peers: {},
          target: null,
          met: null,
        });
      }
      if (r.cpuCeilingPerSecond !== null) {
        out.push({
          figure: `API ${name}: CPU ceiling of this machine (cores ÷ CPU per request)`,
          unit: 'req/s',
          nudge: r.cpuCeilingPerSecond,
          peers: {},
          target: null,
          met: null,
        });
      }
      out.push({
        figure: `API ${name}: errors (429s: ${r.throttled})`,
        unit: 'requests',
        nudge: r.errors,
        peers: {},
        target: '0',
        met: r.errors === 0,
      });
    }
  }
  return out;
}

// History at scale: each latency at N history rows over the same at the baseline (the long-history users' own
// rows only); flat is ≤ 1.5×. Also after the pruner (dead tuples, no vacuum yet), the tables' sizes, and the
// costs of filling and of pruning.
function historyFigures(h: HistoryFigures): Figure[] {
  const out: Figure[] = [];
  const [base, ...later] = h.points;
  const count = (n: number) => n.toLocaleString('en-US');
  for (const point of later) {
    for (const probe of PROBES) {
      for (const p of ['p50', 'p99'] as const) {
        const before = base!.latency[probe][p];
        const after = point.latency[probe][p];
        const ratio = after / before;
        out.push({
          figure:
            `History ${count(base!.rows)} → ${count(point.rows)} rows${point.label === 'after prune' ? ' (after the pruner, before vacuum)' : ''}: ` +
            `${PROBE_LABELS[probe]} ${p} ${round(before, 2)} → ${round(after, 2)} ms`,
          unit: '×',
          nudge: round(ratio, 2),
          peers: {},
          target: '≤ 1.5× (flat)',
          met: ratio <= 1.5,
        });
      }
    }
  }
  const filled = h.points[1]!;
  for (const table of HISTORY_TABLES) {
    const size = filled.sizes[table]!;
    out.push({
      figure: `History ${count(filled.rows)} rows: ${table} table (heap and TOAST)`,
      unit: 'MB',
      nudge: round(size.table / 2 ** 20, 1),
      peers: {},
      target: null,
      met: null,
    });
    out.push({
      figure: `History ${count(filled.rows)} rows: ${table} indexes`,
      unit: 'MB',
      nudge: round(size.indexes / 2 ** 20, 1),
      peers: {},
      target: null,
      met: null,
    });
  }
  out.push({
    figure: `History: filling ${count(h.fill.rows)} rows with set-based SQL (then ANALYZE)`,
    unit: 's per million rows',
    nudge: round(h.fill.secondsPerMillion, 1),
    peers: {},
    target: null,
    met: null,
  });
  out.push({
    figure: `History: the pruner (pruneFinishedJobs, 1,000 jobs a statement) deleting ${count(h.prune.deleted)} finished jobs with their runs${h.prune.stoppedByTimeLimit ? ' (stopped at its time limit)' : ''}`,
    unit: 'jobs/s',
    nudge: round(h.prune.perSecond),
    peers: {},
    target: null,
    met: null,
  });
  return out;
}

/** The peers' figures that were measured (a peer that did not run has none). */
function peerFigures(values: Partial<Record<string, number>>, digits = 0): Figure['peers'] {
  const out: Figure['peers'] = {};
  for (const peer of PEERS) if (values[peer] !== undefined) out[peer] = round(values[peer], digits);
  return out;
}

/** The best peer's figure (Math.max for rates, Math.min for latencies), null when no peer ran. */
function bestOf(peers: Figure['peers'], pick: (...values: number[]) => number): number | null {
  const values = Object.values(peers);
  return values.length === 0 ? null : pick(...values);
}

function markdownTable(
  figures: Figure[],
  env: {
    cores: number;
    loadAverageAtStart: number[];
    loadAverageAtEnd: number[];
    node: string;
    peersNode: string | null;
    postgres: string;
    versions: Record<string, string>;
    mode: string;
    date: string;
  },
): string {
  const fmt = (v: number | undefined) => (v === undefined ? '—' : v >= 1000 ? Math.round(v).toLocaleString('en-US') : String(v));
  const lines = [
    `Nudge ${env.versions.nudge} vs pg-boss ${env.versions['pg-boss']} and graphile-worker ${env.versions['graphile-worker']} — ${env.mode} run, ${env.date.slice(0, 16)}Z, ` +
      `${env.cores} cores, load average ${env.loadAverageAtStart.join('/')} at start and ${env.loadAverageAtEnd.join('/')} at end, Node ${env.node}` +
      `${env.peersNode ? ` (the peers on Node ${env.peersNode})` : ''}, ${env.postgres}. Medians of ${RUNS} interleaved runs.`,
    '',
    '| figure | unit | Nudge | pg-boss | graphile-worker | target | met |',
    '|---|---|---:|---:|---:|---|---|',
    ...figures.map(
      (f) =>
        `| ${f.figure} | ${f.unit} | ${fmt(f.nudge)} | ${fmt(f.peers['pg-boss'])} | ${fmt(f.peers['graphile-worker'])} | ${f.target ?? ''} | ${f.met === null ? '' : f.met ? 'yes' : '**no**'} |`,
    ),
  ];
  return lines.join('\n');
}

await main();
