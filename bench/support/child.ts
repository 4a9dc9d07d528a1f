import { spawn, type ChildProcess } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { dirname, resolve } from 'node:path';

export const ROOT = resolve(dirname(fileURLToPath(import.meta.url)), '..', '..');

// A child prints protocol lines on stdout: `READY` once it is listening for
// work, and `RESULT <json>` at the end. Everything else is passed through to
// stderr when it looks like an error, so a crash is visible.
export const READY = 'READY';
export const RESULT = 'RESULT ';

export interface BenchChild<T> {
  process: ChildProcess;
  /** Resolves when the child prints READY. */
  ready: Promise<void>;
  /** Resolves with the child's RESULT, rejects if it exits without one. */
  result: Promise<T>;
  /** Writes a line to the child's stdin. */
  send(line: string): void;
}

/** Runs a bench script in its own Node process (`node --import tsx`), so runs share no memory. */
export function spawnBenchScript<T>(script: string, config: unknown, timeoutMs: number, root = ROOT): BenchChild<T> {
  return spawnBenchProcess<T>(process.execPath, ['--import', 'tsx', resolve(root, script)], script, config, timeoutMs, root);
}

/**
 * Runs `command args` (a bench child speaking the READY / RESULT protocol) with
 * its config in BENCH_CONFIG; `name` names it in errors. spawnBenchScript for
 * our TypeScript children; the peers' children run another Node (queue/peers/runtime.ts).
 */
export function spawnBenchProcess<T>(
  command: string,
  args: string[],
  name: string,
  config: unknown,
  timeoutMs: number,
  cwd = ROOT,
): BenchChild<T> {
  const child = spawn(command, args, {
    cwd,
    env: { ...process.env, BENCH_CONFIG: JSON.stringify(config) },
    stdio: ['pipe', 'pipe', 'pipe'],
  });
  let stderr = '';
  let readyResolve!: () => void;
  const ready = new Promise<void>((r) => (readyResolve = r));
  const result = new Promise<T>((resolvePromise, reject) => {
    let value: T | undefined;
    const timer = setTimeout(() => {
      child.kill('SIGKILL');
      reject(new Error(`${name} timed out after ${timeoutMs} ms\n${stderr.slice(-2000)}`));
    }, timeoutMs);
    onLines(child.stdout!, (line) => {
      if (line === READY) readyResolve();
      else if (line.startsWith(RESULT)) value = JSON.parse(line.slice(RESULT.length)) as T;
    });
    child.stderr!.on('data', (chunk: Buffer) => {
      stderr += chunk.toString();
      if (stderr.length > 20_000) stderr = stderr.slice(-10_000);
    });
    child.on('exit', (code, signal) => {
      clearTimeout(timer);
      if (value !== undefined && code === 0) resolvePromise(value);
      else reject(new Error(`${name} exited with ${code ?? signal} and no result\n${stderr.slice(-3000)}`));
    });
  });
  // A child that dies before READY must not leave the caller waiting forever.
  result.catch(() => readyResolve());
  return { process: child, ready, result, send: (line) => child.stdin!.write(`${line}\n`) };
}

/** In a child: the config its parent passed. */
export function childConfig<T>(): T {
  const raw = process.env.BENCH_CONFIG;
  if (!raw) throw new Error('BENCH_CONFIG is not set: this script is run by bench/run.ts');
  return JSON.parse(raw) as T;
}

/** In a child: hands the result to the parent and exits once stdout has flushed. */
export function reportAndExit(value: unknown): void {
  process.stdout.write(`${RESULT}${JSON.stringify(value)}\n`, () => process.exit(0));
}

export function signalReady(): void {
  process.stdout.write(`${READY}\n`);
}

/** In a child: the lines the parent writes to stdin. */
export function onParentLine(handler: (line: string) => void): void {
  onLines(process.stdin, handler);
}

/** Calls handler with each complete line a stream yields. */
export function onLines(stream: NodeJS.ReadableStream, handler: (line: string) => void): void {
  let buffered = '';
  stream.on('data', (chunk: Buffer | string) => {
    buffered += chunk.toString();
    let nl: number;
    while ((nl = buffered.indexOf('\n')) >= 0) {
      const line = buffered.slice(0, nl);
      buffered = buffered.slice(nl + 1);
      handler(line);
    }
  });
}

/** Milliseconds since the epoch with sub-millisecond resolution, comparable across processes on one machine. */
export function epochMs(): number {
  return performance.timeOrigin + performance.now();
}
