// One worker process of Nudge, spawned by bench/run.ts for each run (the
// peers' runs are peers/peer.mjs on Node 22, with the same modes and results).
//   drain:   the jobs are already enqueued; time from starting the worker
//            until the database records all of them as done.
//   latency: signal READY, then record enqueue→handler-start for each job
//            (the payload carries the enqueue instant).
import pg from 'pg';
import { childConfig, epochMs, reportAndExit, signalReady } from '../support/child.js';
import { NUDGE_COMPLETED, startNudgeWorker, type NudgeSettings } from './systems.js';

export interface QueueWorkerConfig {
  mode: 'drain' | 'latency';
  settings: NudgeSettings;
  url: string;
  jobs: number;
}

export interface DrainResult {
  ms: number;
  handled: number;
  distinct: number;
}

export interface LatencyResult {
  latenciesMs: number[];
  handled: number;
  distinct: number;
}

const config = childConfig<QueueWorkerConfig>();
const seen = new Set<string>();
let handled = 0;
let allSeen: () => void;
const everyJobSeen = new Promise<void>((resolve) => (allSeen = resolve));
const latencies: number[] = [];

const onJob = (id: string, payload: { sentAt?: number }) => {
  if (config.mode === 'latency' && typeof payload?.sentAt === 'number') latencies.push(epochMs() - payload.sentAt);
  handled++;
  seen.add(String(id));
  if (seen.size >= config.jobs) allSeen();
};

if (config.mode === 'drain') {
  const t0 = performance.now();
  await startNudgeWorker(config.settings, config.url, onJob);
  await everyJobSeen;
  // Handlers are done; the run ends when the database agrees.
  const client = new pg.Client({ connectionString: config.url });
  await client.connect();
  for (;;) {
    const n = (await client.query<{ n: number }>(NUDGE_COMPLETED)).rows[0]!.n;
    if (n >= config.jobs) break;
    await new Promise((r) => setTimeout(r, 5));
  }
  const ms = performance.now() - t0;
  await client.end();
  // No graceful stop: every job is done, and the process exits.
  reportAndExit({ ms, handled, distinct: seen.size } satisfies DrainResult);
} else {
  await startNudgeWorker(config.settings, config.url, onJob);
  signalReady();
  await everyJobSeen;
  reportAndExit({ latenciesMs: latencies, handled, distinct: seen.size } satisfies LatencyResult);
}
