// The three queues under test, behind one small interface: how to enqueue,
// how to empty the tables between runs, how to count finished jobs, and how
// to start a worker in a child process. Nudge runs here and in queue.worker.ts;
// the peers run on Node 22 in peers/peer.mjs (see peers/runtime.ts).
import { migrateUnderLock } from '../../libs/database/src/migrate.js';
import { enqueue, enqueueMany, Worker as NudgeWorker } from '../../libs/queue/src/index.js';
import { spawnBenchScript, epochMs, type BenchChild } from '../support/child.js';
import { benchPool } from '../support/postgres.js';
import { openPeerClient, spawnPeerWorker, type PeerRuntime } from './peers/runtime.js';
import type { QueueWorkerConfig } from './queue.worker.js';

export type PeerName = 'pg-boss' | 'graphile-worker';
export type SystemName = 'nudge' | PeerName;
export const PEERS: readonly PeerName[] = ['pg-boss', 'graphile-worker'];

export const KIND = 'bench_noop';

export interface NudgeSettings {
  concurrency: number;
  batchSize: number;
  flushIntervalMs: number;
  synchronousCommit: boolean;
}

export interface PgBossSettings {
  batchSize: number;
  /** work() fetch loops in the one process (pg-boss's localConcurrency). */
  localConcurrency: number;
  pollingIntervalSeconds: number;
  maxPoolSize: number;
}

export interface GraphileSettings {
  concurrentJobs: number;
  maxPoolSize: number;
  localQueueSize: number;
  completeJobBatchDelay: number;
  failJobBatchDelay: number;
}

export type Variant =
  | { id: string; label: string; system: 'nudge'; settings: NudgeSettings }
  | { id: string; label: string; system: 'pg-boss'; settings: PgBossSettings }
  | { id: string; label: string; system: 'graphile-worker'; settings: GraphileSettings };

// Nudge as its README recommends for no-op throughput. synchronous_commit is
// off on the worker's own connections by default; the `sync` variant turns it
// on so the comparison with the peers (which commit synchronously) is like
// for like.
export const NUDGE: Variant = {
  id: 'nudge',
  label: 'Nudge (concurrency 1000, batchSize 1000, flush 10 ms; worker synchronous_commit off, the default)',
  system: 'nudge',
  settings: { concurrency: 1000, batchSize: 1000, flushIntervalMs: 10, synchronousCommit: false },
};
export const NUDGE_SYNC: Variant = {
  id: 'nudge-sync',
  label: 'Nudge, same with synchronousCommit: true',
  system: 'nudge',
  settings: { ...NUDGE.settings, synchronousCommit: true } as NudgeSettings,
};
// pg-boss 12 as its docs describe for throughput (pgboss.io/api/workers,
// the JobPollingOptions of its types): batches of 1000, the queue created with
// `notify` and the instance with `useListenNotify` (a new job wakes a worker at
// once), `burstWhenBatchFull` (fetch again at once while batches come back
// full), `perJobResults` (the handler settles each job of the batch). 16 fetch
// loops (localConcurrency) were pg-boss 10's best here; 0.5 s, the smallest
// polling interval, is only the backstop when NOTIFY is lost.
export const PGBOSS: Variant = {
  id: 'pg-boss',
  label: 'pg-boss 12, batchSize 1000, localConcurrency 16, useListenNotify + queue notify, burstWhenBatchFull, perJobResults, pool 20',
  system: 'pg-boss',
  settings: { batchSize: 1000, localConcurrency: 16, pollingIntervalSeconds: 0.5, maxPoolSize: 20 },
};
// The configuration of graphile-worker's own performance page
// (worker.graphile.org/docs/performance): concurrentJobs 24, maxPoolSize 25,
// localQueue 500, completion and failure batching with no added delay (0).
// Its pool is opened (all 25 connections) before the clock starts.
export const GRAPHILE: Variant = {
  id: 'graphile-worker',
  label:
    'graphile-worker 0.18, its performance preset (concurrentJobs 24, maxPoolSize 25, localQueue 500, completeJobBatchDelay 0), pool opened before timing',
  system: 'graphile-worker',
  settings: { concurrentJobs: 24, maxPoolSize: 25, localQueueSize: 500, completeJobBatchDelay: 0, failJobBatchDelay: 0 },
};

/** Where the parent enqueues, resets and verifies. One per system, each in its own database. */
export interface QueueClient {
  system: SystemName;
  url: string;
  /** One job `{ i, sentAt }`, sentAt the enqueue instant (epochMs) taken just before the call. */
  enqueueStamped(i: number): Promise<void>;
  /** `count` jobs one at a time, each call awaited: the elapsed milliseconds. */
  enqueueSeries(count: number): Promise<number>;
  /** `count` jobs `{ i }` in calls of `chunk`: the elapsed milliseconds. */
  enqueueBulk(count: number, chunk: number): Promise<number>;
  /** Removes every job (and history) so each run starts from an empty table. */
  reset(): Promise<void>;
  /** Fresh planner statistics after a bulk load, for every system alike. */
  analyze(): Promise<void>;
  /** Jobs finished successfully (-1: not kept), and jobs not finished (queued, running, failed). */
  counts(): Promise<{ succeeded: number; unfinished: number }>;
  close(): Promise<void>;
}

/** The client of a system; a peer's needs its runtime (null: the peers are unavailable). */
export async function openClient(system: SystemName, url: string, peers: PeerRuntime | null): Promise<QueueClient> {
  if (system !== 'nudge') {
    if (!peers) throw new Error(`${system} is unavailable`);
    return openPeerClient(peers, system, url);
  }
  const pool = benchPool(url, 4);
  const sql = async (text: string) => (await pool.query(text)).rows;
  await migrateUnderLock(url);
  return {
    system,
    url,
    enqueueStamped: async (i) => void (await enqueue(pool, { kind: KIND, payload: { i, sentAt: epochMs() } })),
    enqueueSeries: async (count) => {
      const t0 = performance.now();
      for (let i = 0; i < count; i++) await enqueue(pool, { kind: KIND, payload: { i } });
      return performance.now() - t0;
    },
    enqueueBulk: async (count, chunk) => {
      const t0 = performance.now();
      for (let done = 0; done < count; done += chunk) {
        const size = Math.min(chunk, count - done);
        await enqueueMany(
          pool,
          Array.from({ length: size }, (_, i) => ({ kind: KIND, payload: { i: done + i } })),
        );
      }
      return performance.now() - t0;
    },
    reset: async () => void (await sql('TRUNCATE jobs, job_runs RESTART IDENTITY')),
    analyze: async () => void (await sql('ANALYZE jobs')),
    counts: async () => {
      const [row] = await sql(`SELECT count(*) FILTER (WHERE status = 'succeeded')::int AS succeeded,
                                      count(*) FILTER (WHERE status <> 'succeeded')::int AS unfinished
                                 FROM jobs WHERE kind = '${KIND}'`);
      return row;
    },
    close: () => pool.end(),
  };
}

/** SQL Nudge's worker process polls after its handlers have seen every job: how many are recorded as done. */
export const NUDGE_COMPLETED = `SELECT count(*)::int AS n FROM jobs WHERE kind = '${KIND}' AND status = 'succeeded'`;

/** Each job the handler sees: its id and payload. */
export type OnJob = (id: string, payload: any) => void;

/**
 * Starts one Nudge worker in this process, calling onJob for each job at
 * handler start. It is never stopped: the process exits after its run.
 */
export async function startNudgeWorker(settings: NudgeSettings, url: string, onJob: OnJob): Promise<void> {
  const worker = new NudgeWorker({
    connectionString: url,
    ...settings,
    handlers: {
      [KIND]: async (job) => onJob(job.id, job.payload),
    },
  });
  await worker.start();
}

/**
 * One worker run of a variant in a fresh child process: queue.worker.ts for
 * Nudge, peer.mjs on Node 22 for a peer. Both speak READY / RESULT.
 */
export function spawnWorker<T>(
  variant: Variant,
  mode: 'drain' | 'latency',
  url: string,
  jobs: number,
  peers: PeerRuntime | null,
  timeoutMs: number,
): BenchChild<T> {
  if (variant.system === 'nudge') {
    const config: QueueWorkerConfig = { mode, settings: variant.settings, url, jobs };
    return spawnBenchScript<T>('bench/queue/queue.worker.ts', config, timeoutMs);
  }
  if (!peers) throw new Error(`${variant.id} is unavailable`);
  return spawnPeerWorker<T>(peers, { role: mode, system: variant.system, url, jobs, settings: variant.settings }, timeoutMs);
}
