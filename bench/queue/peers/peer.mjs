// The peers' side of the queue bench: pg-boss 12.x and graphile-worker 0.18.x
// want Node >= 22 while the bench runs on the project's Node, so every
// interaction with them happens here, in a child process started by
// bench/queue/peers/runtime.ts with Node 22, importing the peers from the cache
// folder it installed them in (BENCH_CONFIG.modules, by absolute path).
// Plain .mjs: it runs without tsx, on a Node that has none of our packages.
//
// BENCH_CONFIG = { role, system, url, modules, settings, jobs }
//   role 'client':  prints READY once open, then answers one JSON command per
//                   stdin line with `OK <json>` or `ERR <message>` on stdout.
//   role 'drain':   the jobs are already enqueued; the pool is opened first,
//                   then the clock starts, the worker starts, and the run ends
//                   when the database records every job as done.
//   role 'latency': starts the worker, prints READY, records enqueue→handler
//                   start for each job (its payload carries the enqueue instant).
// 'drain' and 'latency' end with `RESULT <json>` (bench/support/child.ts).
import { createRequire } from 'node:module';
import { join } from 'node:path';
import { performance } from 'node:perf_hooks';
import { setTimeout as sleep } from 'node:timers/promises';
import { pathToFileURL } from 'node:url';

const KIND = 'bench_noop';

const config = JSON.parse(process.env.BENCH_CONFIG ?? 'null');
if (!config) throw new Error('BENCH_CONFIG is not set: this script is run by bench/run.ts');

const requireFromCache = createRequire(join(config.modules, 'node_modules', 'noop.js'));
const load = async (name) => import(pathToFileURL(requireFromCache.resolve(name)).href);
const { default: pg } = await load('pg');

const epochMs = () => performance.timeOrigin + performance.now();
const write = (line) => new Promise((resolve) => process.stdout.write(`${line}\n`, resolve));

/** Everything the bench needs of one peer; see openPgBoss / openGraphile. */
const systems = {
  'pg-boss': {
    async openClient(url) {
      const { PgBoss } = await load('pg-boss');
      const boss = new PgBoss({ connectionString: url, schedule: false, supervise: false, max: 4 });
      boss.on('error', (err) => console.error('pg-boss (enqueue side):', err));
      await boss.start();
      // `notify`: each send/insert on this queue emits a NOTIFY that wakes the workers at once.
      if (!(await boss.getQueue(KIND))) await boss.createQueue(KIND, { notify: true });
      return {
        enqueueOne: (data) => boss.send(KIND, data),
        enqueueMany: (datas) =>
          boss.insert(
            KIND,
            datas.map((data) => ({ data })),
          ),
        reset: 'TRUNCATE pgboss.job',
        analyze: 'ANALYZE pgboss.job',
        counts: `SELECT count(*) FILTER (WHERE state = 'completed')::int AS succeeded,
                        count(*) FILTER (WHERE state <> 'completed')::int AS unfinished
                   FROM pgboss.job WHERE name = '${KIND}'`,
        close: () => boss.stop({ graceful: false, wait: true }),
      };
    },
    // Before the clock starts: the instance and its pool are open (and the LISTEN connection).
    async prepareWorker(url, s) {
      const { PgBoss } = await load('pg-boss');
      const boss = new PgBoss({
        connectionString: url,
        schedule: false,
        supervise: false,
        migrate: false,
        useListenNotify: true,
        max: s.maxPoolSize,
      });
      boss.on('error', (err) => console.error('pg-boss:', err));
      await boss.start();
      return async (onJob) => {
        await boss.work(
          KIND,
          {
            batchSize: s.batchSize,
            localConcurrency: s.localConcurrency,
            burstWhenBatchFull: true,
            perJobResults: true,
            pollingIntervalSeconds: s.pollingIntervalSeconds,
          },
          async (jobs) =>
            jobs.map((job) => {
              onJob(job.id, job.data);
              return { id: job.id, status: 'completed' };
            }),
        );
      };
    },
    completedQuery: `SELECT count(*)::int AS n FROM pgboss.job WHERE name = '${KIND}' AND state = 'completed'`,
    // n is the count of completed jobs.
    done: (n, jobs) => n >= jobs,
  },
  'graphile-worker': {
    async openClient(url) {
      const { makeWorkerUtils } = await load('graphile-worker');
      const utils = await makeWorkerUtils({ connectionString: url });
      await utils.migrate();
      return {
        enqueueOne: (payload) => utils.addJob(KIND, payload),
        enqueueMany: (payloads) => utils.addJobs(payloads.map((payload) => ({ identifier: KIND, payload }))),
        reset: 'TRUNCATE graphile_worker._private_jobs CASCADE',
        analyze: 'ANALYZE graphile_worker._private_jobs',
        // A finished graphile-worker job is deleted; a failed one stays with its error.
        counts: 'SELECT -1 AS succeeded, count(*)::int AS unfinished FROM graphile_worker._private_jobs',
        close: () => utils.release(),
      };
    },
    // Before the clock starts: the pool is open with all its connections.
    async prepareWorker(url, s) {
      const { run, Logger } = await load('graphile-worker');
      const pgPool = new pg.Pool({ connectionString: url, max: s.maxPoolSize });
      const clients = await Promise.all(Array.from({ length: s.maxPoolSize }, () => pgPool.connect()));
      for (const client of clients) client.release();
      // graphile-worker logs every job at info through its console logger; errors only.
      const logger = new Logger(() => (level, message, meta) => {
        if (level === 'error') console.error('graphile-worker:', message, meta ?? '');
      });
      return async (onJob) => {
        await run({
          pgPool,
          noHandleSignals: true,
          logger,
          taskList: { [KIND]: async (payload, helpers) => onJob(helpers.job.id, payload) },
          preset: {
            worker: {
              concurrentJobs: s.concurrentJobs,
              maxPoolSize: s.maxPoolSize,
              localQueue: { size: s.localQueueSize },
              completeJobBatchDelay: s.completeJobBatchDelay,
              failJobBatchDelay: s.failJobBatchDelay,
            },
          },
        });
      };
    },
    // Done jobs are deleted: n is the count of the others.
    completedQuery: 'SELECT count(*)::int AS n FROM graphile_worker._private_jobs',
    done: (n) => n === 0,
  },
};

const system = systems[config.system];
if (!system) throw new Error(`unknown peer ${config.system}`);

if (config.role === 'client') await serveClient();
else await runWorker();

async function serveClient() {
  const peer = await system.openClient(config.url);
  const pool = new pg.Pool({ connectionString: config.url, max: 2 });
  const sql = async (text) => (await pool.query(text)).rows;
  const commands = {
    // The enqueue instant is taken here, just before the call, as on Nudge's side.
    enqueueStamped: async ({ i }) => void (await peer.enqueueOne({ i, sentAt: epochMs() })),
    // `count` calls of one job each, each awaited; the elapsed milliseconds.
    enqueueSeries: async ({ count }) => {
      const t0 = performance.now();
      for (let i = 0; i < count; i++) await peer.enqueueOne({ i });
      return performance.now() - t0;
    },
    // `count` jobs in calls of `chunk`; the elapsed milliseconds.
    enqueueBulk: async ({ count, chunk }) => {
      const t0 = performance.now();
      for (let done = 0; done < count; done += chunk) {
        const size = Math.min(chunk, count - done);
        await peer.enqueueMany(Array.from({ length: size }, (_, i) => ({ i: done + i })));
      }
      return performance.now() - t0;
    },
    reset: async () => void (await sql(peer.reset)),
    analyze: async () => void (await sql(peer.analyze)),
    counts: async () => (await sql(peer.counts))[0],
    close: async () => {
      await peer.close();
      await pool.end();
    },
  };
  // One command at a time, in order: the parent awaits each answer.
  let queue = Promise.resolve();
  let buffered = '';
  process.stdin.on('data', (chunk) => {
    buffered += chunk.toString();
    let nl;
    while ((nl = buffered.indexOf('\n')) >= 0) {
      const line = buffered.slice(0, nl);
      buffered = buffered.slice(nl + 1);
      queue = queue.then(() => answer(line));
    }
  });
  process.stdin.on('end', () => queue.then(() => process.exit(0)));
  const answer = async (line) => {
    const { op, ...args } = JSON.parse(line);
    try {
      const value = await commands[op](args);
      await write(`OK ${JSON.stringify(value ?? null)}`);
      if (op === 'close') process.exit(0);
    } catch (err) {
      await write(`ERR ${JSON.stringify(String(err?.stack ?? err))}`);
    }
  };
  await write('READY');
}

async function runWorker() {
  const seen = new Set();
  let handled = 0;
  let allSeen;
  const everyJobSeen = new Promise((resolve) => (allSeen = resolve));
  const latencies = [];
  const onJob = (id, payload) => {
    if (config.role === 'latency' && typeof payload?.sentAt === 'number') latencies.push(epochMs() - payload.sentAt);
    handled++;
    seen.add(String(id));
    if (seen.size >= config.jobs) allSeen();
  };
  const start = await system.prepareWorker(config.url, config.settings);
  const report = (value) => process.stdout.write(`RESULT ${JSON.stringify(value)}\n`, () => process.exit(0));
  if (config.role === 'drain') {
    const t0 = performance.now();
    await start(onJob);
    await everyJobSeen;
    // Handlers are done; the run ends when the database agrees.
    const client = new pg.Client({ connectionString: config.url });
    await client.connect();
    for (;;) {
      const n = (await client.query(system.completedQuery)).rows[0].n;
      if (system.done(n, config.jobs)) break;
      await sleep(5);
    }
    const ms = performance.now() - t0;
    // No graceful stop: every job is done, and the process exits.
    report({ ms, handled, distinct: seen.size });
  } else {
    await start(onJob);
    await write('READY');
    await everyJobSeen;
    report({ latenciesMs: latencies, handled, distinct: seen.size });
  }
}
