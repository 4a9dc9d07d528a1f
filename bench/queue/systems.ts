// The three queues under test, behind one small interface: how to enqueue,
// how to empty the tables between runs, how to count finished jobs, and how
// to start a worker (in a child process, see queue.worker.ts).
import { Logger as GraphileLogger, makeWorkerUtils, run as runGraphile } from 'graphile-worker';
import pg from 'pg';
import PgBoss from 'pg-boss';
import { migrateUnderLock } from '../../libs/database/src/migrate.js';
import { enqueue, enqueueMany, Worker as NudgeWorker } from '../../libs/queue/src/index.js';

export type SystemName = 'nudge' | 'pg-boss' | 'graphile-worker';
export const SYSTEMS: readonly SystemName[] = ['nudge', 'pg-boss', 'graphile-worker'];

export const KIND = 'bench_noop';

export interface NudgeSettings {
  concurrency: number;
  batchSize: number;
  flushIntervalMs: number;
  synchronousCommit: boolean;
}

export interface PgBossSettings {
  batchSize: number;
  pollingIntervalSeconds: number;
  /** work() registrations in the one process; each is its own fetch loop. */
  workers: number;
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
// pg-boss 10 has no LISTEN: each work() loop fetches a batch, awaits the
// handler, completes the batch without awaiting it, and then sleeps for the
// rest of its polling interval unless the fetch took longer. 0.5 s is the
// smallest interval it accepts; several work() loops in the one process are
// how it runs batches concurrently. 16 loops drained 100k jobs 1.5× (batch
// 1000) and 2.7× (batch 100) faster than 4 here: its best configuration we
// found, so the one compared.
export const PGBOSS_LOOPS = 16;
export const PGBOSS_100: Variant = {
  id: 'pg-boss-100',
  label: `pg-boss 10.4.2, batchSize 100, ${PGBOSS_LOOPS} work() loops, polling 0.5 s`,
  system: 'pg-boss',
  settings: { batchSize: 100, pollingIntervalSeconds: 0.5, workers: PGBOSS_LOOPS },
};
export const PGBOSS_1000: Variant = {
  id: 'pg-boss-1000',
  label: `pg-boss 10.4.2, batchSize 1000, ${PGBOSS_LOOPS} work() loops, polling 0.5 s`,
  system: 'pg-boss',
  settings: { batchSize: 1000, pollingIntervalSeconds: 0.5, workers: PGBOSS_LOOPS },
};
// The configuration of graphile-worker's own performance page
// (worker.graphile.org/docs/performance): concurrentJobs 24, maxPoolSize 25,
// localQueue 500, completion and failure batching with no added delay (0).
export const GRAPHILE: Variant = {
  id: 'graphile-worker',
  label: 'graphile-worker 0.17.3, its performance preset (concurrentJobs 24, maxPoolSize 25, localQueue 500, completeJobBatchDelay 0)',
  system: 'graphile-worker',
  settings: { concurrentJobs: 24, maxPoolSize: 25, localQueueSize: 500, completeJobBatchDelay: 0, failJobBatchDelay: 0 },
};

/** Where the parent enqueues, resets and verifies. One per system, each in its own database. */
export interface QueueClient {
  system: SystemName;
  url: string;
  enqueueOne(payload: object): Promise<void>;
  enqueueBulk(payloads: object[]): Promise<void>;
  /** Removes every job (and history) so each run starts from an empty table. */
  reset(): Promise<void>;
  /** Fresh planner statistics after a bulk load, for every system alike. */
  analyze(): Promise<void>;
  /** Jobs finished successfully, and jobs not finished (queued, running, failed). */
  counts(): Promise<{ succeeded: number; unfinished: number }>;
  close(): Promise<void>;
}

export async function openClient(system: SystemName, url: string): Promise<QueueClient> {
  const pool = new pg.Pool({ connectionString: url, max: 4 });
  const sql = async (text: string) => (await pool.query(text)).rows;
  if (system === 'nudge') {
    await migrateUnderLock(url);
    return {
      system,
      url,
      enqueueOne: async (payload) => void (await enqueue(pool, { kind: KIND, payload })),
      enqueueBulk: async (payloads) =>
        void (await enqueueMany(
          pool,
          payloads.map((payload) => ({ kind: KIND, payload })),
        )),
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
  if (system === 'pg-boss') {
    const boss = new PgBoss({ connectionString: url, schedule: false, supervise: false, max: 4 });
    boss.on('error', (err) => console.error('pg-boss (enqueue side):', err));
    await boss.start();
    await boss.createQueue(KIND);
    return {
      system,
      url,
      enqueueOne: async (payload) => void (await boss.send(KIND, payload)),
      enqueueBulk: async (payloads) => void (await boss.insert(payloads.map((data) => ({ name: KIND, data })))),
      reset: async () => void (await sql('TRUNCATE pgboss.job, pgboss.archive')),
      analyze: async () => void (await sql('ANALYZE pgboss.job')),
      counts: async () => {
        const [row] = await sql(`SELECT count(*) FILTER (WHERE state = 'completed')::int AS succeeded,
                                        count(*) FILTER (WHERE state <> 'completed')::int AS unfinished
                                   FROM pgboss.job WHERE name = '${KIND}'`);
        return row;
      },
      close: async () => {
        await boss.stop({ graceful: false, wait: true });
        await pool.end();
      },
    };
  }
  const utils = await makeWorkerUtils({ connectionString: url });
  await utils.migrate();
  return {
    system,
    url,
    enqueueOne: async (payload) => void (await utils.addJob(KIND, payload)),
    enqueueBulk: async (payloads) => void (await utils.addJobs(payloads.map((payload) => ({ identifier: KIND, payload })))),
    reset: async () => void (await sql('TRUNCATE graphile_worker._private_jobs CASCADE')),
    analyze: async () => void (await sql('ANALYZE graphile_worker._private_jobs')),
    // A finished graphile-worker job is deleted; a failed one stays with its error.
    counts: async () => {
      const [row] = await sql(`SELECT count(*)::int AS unfinished FROM graphile_worker._private_jobs`);
      return { succeeded: -1, unfinished: row.unfinished };
    },
    close: async () => {
      await utils.release();
      await pool.end();
    },
  };
}

/** SQL a worker process polls after its handlers have seen every job: how many are recorded as done. */
export function completedQuery(system: SystemName): string {
  switch (system) {
    case 'nudge':
      return `SELECT count(*)::int AS n FROM jobs WHERE kind = '${KIND}' AND status = 'succeeded'`;
    case 'pg-boss':
      return `SELECT count(*)::int AS n FROM pgboss.job WHERE name = '${KIND}' AND state = 'completed'`;
    case 'graphile-worker':
      // Done jobs are deleted: the count of the others, subtracted by the caller.
      return `SELECT count(*)::int AS n FROM graphile_worker._private_jobs`;
  }
}

/** Each job the handler sees: its id and payload. */
export type OnJob = (id: string, payload: any) => void;

/**
 * Starts one worker of the variant in this process, calling onJob for each
 * job at handler start. It is never stopped: the process exits after its run.
 */
export async function startWorker(variant: Variant, url: string, onJob: OnJob): Promise<void> {
  switch (variant.system) {
    case 'nudge': {
      const worker = new NudgeWorker({
        connectionString: url,
        ...variant.settings,
        handlers: {
          [KIND]: async (job) => onJob(job.id, job.payload),
        },
      });
      await worker.start();
      return;
    }
    case 'pg-boss': {
      const s = variant.settings;
      const boss = new PgBoss({ connectionString: url, schedule: false, supervise: false, migrate: false });
      boss.on('error', (err) => console.error('pg-boss:', err));
      await boss.start();
      for (let i = 0; i < s.workers; i++) {
        await boss.work<any>(KIND, { batchSize: s.batchSize, pollingIntervalSeconds: s.pollingIntervalSeconds }, async (jobs) => {
          for (const job of jobs) onJob(job.id, job.data);
        });
      }
      return;
    }
    case 'graphile-worker': {
      const s = variant.settings;
      await runGraphile({
        noHandleSignals: true,
        taskList: {
          [KIND]: async (payload, helpers) => onJob(helpers.job.id, payload),
        },
        logger: quietGraphileLogger,
        preset: {
          worker: {
            connectionString: url,
            concurrentJobs: s.concurrentJobs,
            maxPoolSize: s.maxPoolSize,
            localQueue: { size: s.localQueueSize },
            completeJobBatchDelay: s.completeJobBatchDelay,
            failJobBatchDelay: s.failJobBatchDelay,
          },
        },
      });
      return;
    }
  }
}

// graphile-worker logs every job at info through its console logger; errors only.
const quietGraphileLogger = new GraphileLogger(() => (level, message, meta) => {
  if (level === 'error') console.error('graphile-worker:', message, meta ?? '');
});
