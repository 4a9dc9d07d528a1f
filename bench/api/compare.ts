// Two builds of the API under the same load, interleaved round by round, so a
// noisy shared box weighs on both alike; or one build under a CPU profile.
//
//   npx tsx bench/api/compare.ts --before=/tmp/api-before/dist/apps/api/src/main.js [--rounds=5] [--seconds=10]
//   npx tsx bench/api/compare.ts --profile=/tmp/prof [--only=get|post] [--seconds=20]
//
// "after" is this tree's dist (npm run build first). Each round starts each
// build on a fresh database, seeds it and runs GET then POST once; the order
// of the two builds alternates from round to round. Prints every run, the
// medians and the ratios after / before.
import { resolve } from 'node:path';
import { ROOT } from '../support/child.js';
import { startServer } from '../support/postgres.js';
import { median } from '../support/stats.js';
import { apiBench, type ApiBenchOptions, type EndpointRun } from './api.bench.js';

const arg = (name: string) => process.argv.find((a) => a.startsWith(`--${name}=`))?.slice(name.length + 3);
const seconds = Number(arg('seconds') ?? 10);
const rounds = Number(arg('rounds') ?? 5);
const only = arg('only') as ApiBenchOptions['only'];
const before = arg('before');
const profile = arg('profile');
const after = resolve(ROOT, 'dist/apps/api/src/main.js');
const log = (line: string) => process.stderr.write(`${line}\n`);

const server = await startServer(log);
try {
  if (profile) {
    const nodeArgs = ['--cpu-prof', `--cpu-prof-dir=${profile}`];
    await apiBench(server.adminUrl, seconds, 1, log, { nodeArgs, only });
    log(`the profile is in ${profile} (written when the API exited)`);
  } else {
    if (!before) throw new Error('--before=<another build’s dist/apps/api/src/main.js> or --profile=<dir>');
    const builds = { before, after } as const;
    const runs: Record<keyof typeof builds, { get: EndpointRun[]; post: EndpointRun[] }> = {
      before: { get: [], post: [] },
      after: { get: [], post: [] },
    };
    for (let round = 0; round < rounds; round++) {
      const order = round % 2 === 0 ? (['before', 'after'] as const) : (['after', 'before'] as const);
      for (const build of order) {
        const figures = await apiBench(server.adminUrl, seconds, 1, (line) => log(`round ${round + 1} ${build}: ${line}`), {
          main: builds[build],
          only,
        });
        runs[build].get.push(...figures.runs.get);
        runs[build].post.push(...figures.runs.post);
      }
    }
    const row = (name: string, pick: (r: EndpointRun) => number | null) => {
      const m = (xs: EndpointRun[]) => median(xs.map(pick).filter((x): x is number => x !== null));
      const cells = (['get', 'post'] as const).flatMap((endpoint) => {
        const b = m(runs.before[endpoint]);
        const a = m(runs.after[endpoint]);
        return [b, a, a / b].map((x) => (Number.isNaN(x) ? '—' : String(Number(x.toFixed(x < 10 ? 3 : 0)))));
      });
      return `| ${name} | ${cells.join(' | ')} |`;
    };
    console.log(
      [
        `Medians of ${rounds} interleaved rounds, ${seconds} s per endpoint per round, 50 connections.`,
        '',
        '| figure | GET before | GET after | after/before | POST before | POST after | after/before |',
        '|---|---:|---:|---:|---:|---:|---:|',
        row('req/s', (r) => r.perSecond),
        row('p50 ms', (r) => r.p50),
        row('p99 ms', (r) => r.p99),
        row('API CPU ms/request', (r) => r.cpuMsPerRequest),
        row('PostgreSQL CPU ms/request', (r) => r.postgresCpuMsPerRequest),
        row('load generator CPU ms/request', (r) => r.loadGeneratorCpuMsPerRequest),
      ].join('\n'),
    );
  }
} finally {
  await server.stop();
}
