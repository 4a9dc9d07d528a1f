import { spawn, type ChildProcess } from 'node:child_process';
import { resolve } from 'node:path';

// The built apps (`npm run build`, which `npm test` runs first), started as
// production starts them: `node dist/apps/…/main.js` with the environment only.
export const API_MAIN = resolve('dist/apps/api/src/main.js');
export const WORKER_MAIN = resolve('dist/apps/worker/src/main.js');

export interface AppProcess {
  child: ChildProcess;
  /** Everything it wrote to stdout and stderr so far. */
  output(): string;
  exited: Promise<number | null>;
  /** Resolves when the output contains `text` (rejects if the process exits first). */
  waitFor(text: string, timeoutMs?: number): Promise<void>;
  alive(): boolean;
  kill(signal?: NodeJS.Signals): Promise<void>;
}

export function startApp(main: string, env: Record<string, string>): AppProcess {
  const clean = { ...process.env };
  delete clean.DATABASE_URL;
  delete clean.NODE_ENV;
  const child = spawn(process.execPath, [main], { env: { ...clean, LOG_LEVEL: 'info', ...env }, stdio: ['ignore', 'pipe', 'pipe'] });
  let output = '';
  const watchers = new Set<() => void>();
  const append = (chunk: Buffer) => {
    output += chunk;
    for (const watch of watchers) watch();
  };
  child.stdout!.on('data', append);
  child.stderr!.on('data', append);
  const exited = new Promise<number | null>((done) => child.on('exit', (code) => done(code)));
  const alive = () => child.exitCode === null && child.signalCode === null;
  return {
    child,
    output: () => output,
    exited,
    alive,
    waitFor(text, timeoutMs = 60_000) {
      return new Promise<void>((resolvePromise, reject) => {
        const timer = setTimeout(() => finish(new Error(`no "${text}" within ${timeoutMs} ms:\n${output.slice(-3000)}`)), timeoutMs);
        const finish = (error?: Error) => {
          clearTimeout(timer);
          watchers.delete(check);
          if (error) reject(error);
          else resolvePromise();
        };
        const check = () => {
          if (output.includes(text)) finish();
          else if (!alive()) finish(new Error(`exited before "${text}":\n${output.slice(-3000)}`));
        };
        watchers.add(check);
        void exited.then(check);
        check();
      });
    },
    async kill(signal = 'SIGTERM') {
      if (!alive()) return;
      child.kill(signal);
      await exited;
    },
  };
}

export async function waitForHttp(url: string, status: number, timeoutMs = 60_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    try {
      if ((await fetch(url, { signal: AbortSignal.timeout(2000) })).status === status) return;
    } catch {
      // not listening yet
    }
    if (Date.now() > deadline) throw new Error(`${url} did not answer ${status} within ${timeoutMs} ms`);
    await new Promise((r) => setTimeout(r, 100));
  }
}

/** Lines of pino JSON output that are errors or worse, or that are not JSON at all (stack traces, crashes). */
export function errorLines(output: string): string[] {
  return output.split('\n').filter((line) => {
    if (!line.trim()) return false;
    try {
      return (JSON.parse(line) as { level?: number }).level! >= 50;
    } catch {
      return true;
    }
  });
}
