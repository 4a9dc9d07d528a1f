// Drain, latency and enqueue: Nudge against pg-boss and graphile-worker,
// interleaved run by run (A B C A B C …) on one PostgreSQL server.
import type { PeerRuntime } from './peers/runtime.js';
import { distribution, median, type Distribution } from '../support/stats.js';
import type { DrainResult, LatencyResult } from './queue.worker.js';
import { spawnWorker, type QueueClient, type SystemName, type Variant } from './systems.js';

// Drain's bulk load: not timed, the calls as large as every system takes well.
const BULK_CHUNK = 5000;

export type Log = (line: string) => void;

export interface DrainFigures {
  /** Median jobs/s per variant id, and every run. */
  median: Record<string, number>;
  runs: Record<string, number[]>;
}

/**
 * N jobs bulk-enqueued, then one worker process (a fresh child per run)
 * started: time until the database records all N as done. Checked after each
 * run: N succeeded, none left, and each job's handler ran exactly once.
 */
export async function drain(
  clients: Map<SystemName, QueueClient>,
  variants: Variant[],
  n: number,
  runs: number,
  peers: PeerRuntime | null,
  log: Log,
): Promise<DrainFigures> {
  const rates: Record<string, number[]> = Object.fromEntries(variants.map((v) => [v.id, []]));
  for (let run = 1; run <= runs; run++) {
    for (const variant of variants) {
      const client = clients.get(variant.system)!;
      await client.reset();
      await client.enqueueBulk(n, BULK_CHUNK);
      await client.analyze();
      const result = await spawnWorker<DrainResult>(variant, 'drain', client.url, n, peers, 600_000).result;
      const counts = await client.counts();
      if (result.handled !== n || result.distinct !== n) {
        throw new Error(
          `${variant.id}: handlers ran ${result.handled} times for ${result.distinct} distinct jobs, expected ${n} each (duplicates or losses)`,
        );
      }
      if (counts.unfinished !== 0 || (counts.succeeded !== -1 && counts.succeeded !== n)) {
        throw new Error(`${variant.id}: after the drain ${JSON.stringify(counts)}, expected ${n} succeeded and none unfinished`);
      }
      const rate = n / (result.ms / 1000);
      rates[variant.id]!.push(rate);
      log(`drain run ${run}/${runs} ${variant.id}: ${n} jobs in ${(result.ms / 1000).toFixed(2)} s = ${Math.round(rate)} jobs/s`);
    }
  }
  return { median: Object.fromEntries(Object.entries(rates).map(([id, r]) => [id, median(r)])), runs: rates };
}

export interface LatencyFigures {
  median: Record<string, Distribution>;
  runs: Record<string, Distribution[]>;
}

/**
 * An idle worker (child process), then `count` single enqueues `gapMs` apart
 * from this process, each carrying its enqueue instant: enqueue→handler-start.
 */
export async function latency(
  clients: Map<SystemName, QueueClient>,
  variants: Variant[],
  count: number,
  gapMs: number,
  runs: number,
  peers: PeerRuntime | null,
  log: Log,
): Promise<LatencyFigures> {
  const all: Record<string, Distribution[]> = Object.fromEntries(variants.map((v) => [v.id, []]));
  for (let run = 1; run <= runs; run++) {
    for (const variant of variants) {
      const client = clients.get(variant.system)!;
      await client.reset();
      const child = spawnWorker<LatencyResult>(variant, 'latency', client.url, count, peers, 120_000);
      await child.ready;
      // Let the worker settle into its idle state (first poll done, listening).
      await sleep(500);
      const next = performance.now();
      for (let i = 0; i < count; i++) {
        const due = next + i * gapMs;
        const wait = due - performance.now();
        if (wait > 0) await sleep(wait);
        await client.enqueueStamped(i);
      }
      const result = await child.result;
      if (result.distinct !== count) throw new Error(`${variant.id}: latency run saw ${result.distinct} of ${count} jobs`);
      const d = distribution(result.latenciesMs);
      all[variant.id]!.push(d);
      log(`latency run ${run}/${runs} ${variant.id}: p50 ${d.p50.toFixed(1)} ms, p99 ${d.p99.toFixed(1)} ms, max ${d.max.toFixed(1)} ms`);
    }
  }
  const med = (ds: Distribution[]): Distribution => ({
    p50: median(ds.map((d) => d.p50)),
    p95: median(ds.map((d) => d.p95)),
    p99: median(ds.map((d) => d.p99)),
    max: median(ds.map((d) => d.max)),
  });
  return { median: Object.fromEntries(Object.entries(all).map(([id, ds]) => [id, med(ds)])), runs: all };
}

export interface EnqueueFigures {
  single: Partial<Record<SystemName, number>>;
  bulk: Partial<Record<SystemName, number>>;
  runs: { single: Record<string, number[]>; bulk: Record<string, number[]> };
}

/**
 * One at a time (each call awaited: one statement, one commit) and in bulk
 * (`chunk` jobs per call), through each system's own client API, with
 * synchronous commit as the server default (on) for all three.
 */
export async function enqueueRates(
  clients: Map<SystemName, QueueClient>,
  systems: SystemName[],
  single: number,
  bulk: number,
  chunk: number,
  runs: number,
  log: Log,
): Promise<EnqueueFigures> {
  const singleRuns: Record<string, number[]> = Object.fromEntries(systems.map((s) => [s, []]));
  const bulkRuns: Record<string, number[]> = Object.fromEntries(systems.map((s) => [s, []]));
  for (let run = 1; run <= runs; run++) {
    for (const system of systems) {
      const client = clients.get(system)!;
      await client.reset();
      const singleRate = single / ((await client.enqueueSeries(single)) / 1000);
      await client.reset();
      const bulkRate = bulk / ((await client.enqueueBulk(bulk, chunk)) / 1000);
      singleRuns[system]!.push(singleRate);
      bulkRuns[system]!.push(bulkRate);
      log(`enqueue run ${run}/${runs} ${system}: one at a time ${Math.round(singleRate)}/s, bulk ${Math.round(bulkRate)}/s`);
    }
  }
  const med = (r: Record<string, number[]>) =>
    Object.fromEntries(Object.entries(r).map(([k, v]) => [k, median(v)])) as Partial<Record<SystemName, number>>;
  return { single: med(singleRuns), bulk: med(bulkRuns), runs: { single: singleRuns, bulk: bulkRuns } };
}

function sleep(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms));
}
