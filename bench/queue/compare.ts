// Two builds of Nudge's worker draining the same jobs, interleaved run by
// run, so a noisy shared box weighs on both alike: for a change to the
// queue's statements, the drain before and after it.
//
//   git worktree add /tmp/before <commit> && ln -s "$PWD/node_modules" /tmp/before/node_modules
//   npx tsx bench/queue/compare.ts --before=/tmp/before [--rounds=6] [--jobs=100000]
//
// "after" is this tree. One database, migrated by this tree (a later schema
// that the earlier build's statements still run on); each run starts from an
// empty jobs table, bulk-enqueues the jobs, and times a fresh worker process
// of one build (queue.worker.ts of that tree, NUDGE's settings) until every
// job is recorded as done; the order of the two builds alternates from round
// to round. Prints every run, the medians and after / before.
import { resolve } from 'node:path';
import { ROOT, spawnBenchScript } from '../support/child.js';
import { freshDatabase, startServer } from '../support/postgres.js';
import { median } from '../support/stats.js';
import type { DrainResult, QueueWorkerConfig } from './queue.worker.js';
import { NUDGE, openClient, type NudgeSettings } from './systems.js';

const arg = (name: string) => process.argv.find((a) => a.startsWith(`--${name}=`))?.slice(name.length + 3);
const before = arg('before');
if (!before) throw new Error('--before=<another checkout of Nudge, with node_modules>');
const rounds = Number(arg('rounds') ?? 6);
const jobs = Number(arg('jobs') ?? 100_000);
const roots = { before: resolve(before), after: ROOT } as const;
const log = (line: string) => process.stderr.write(`${line}\n`);

const server = await startServer(log);
try {
  const url = await freshDatabase(server.adminUrl, 'nudge_queue_compare');
  const client = await openClient('nudge', url, null);
  const rates: Record<keyof typeof roots, number[]> = { before: [], after: [] };
  try {
    for (let round = 0; round < rounds; round++) {
      const order = round % 2 === 0 ? (['before', 'after'] as const) : (['after', 'before'] as const);
      for (const build of order) {
        await client.reset();
        await client.enqueueBulk(jobs, 5000);
        await client.analyze();
        const config: QueueWorkerConfig = { mode: 'drain', settings: NUDGE.settings as NudgeSettings, url, jobs };
        const result = await spawnBenchScript<DrainResult>('bench/queue/queue.worker.ts', config, 600_000, roots[build]).result;
        const counts = await client.counts();
        if (result.handled !== jobs || result.distinct !== jobs || counts.succeeded !== jobs || counts.unfinished !== 0) {
          throw new Error(
            `${build}: handled ${result.handled} (${result.distinct} distinct), then ${JSON.stringify(counts)}; expected ${jobs}`,
          );
        }
        const rate = jobs / (result.ms / 1000);
        rates[build].push(rate);
        log(`round ${round + 1} ${build}: ${jobs} jobs in ${(result.ms / 1000).toFixed(2)} s = ${Math.round(rate)} jobs/s`);
      }
    }
  } finally {
    await client.close();
  }
  const b = median(rates.before);
  const a = median(rates.after);
  console.log(
    [
      '| drain, jobs/s | before | after | after / before |',
      '|---|---:|---:|---:|',
      `| median of ${rounds} | ${Math.round(b)} | ${Math.round(a)} | ${(a / b).toFixed(3)} |`,
      `| runs | ${rates.before.map(Math.round).join(', ')} | ${rates.after.map(Math.round).join(', ')} | |`,
    ].join('\n'),
  );
} finally {
  await server.stop();
}
