import { spawn, type ChildProcess } from 'node:child_process';
import { resolve } from 'node:path';

// The built app (`npm run build`, which `npm test` runs first) started the way
// a newcomer does, and watched from outside.
export const MAIN = resolve('dist/apps/api/src/main.js');

export interface Started {
  child: ChildProcess;
  output: () => string;
  exited: Promise<number | null>;
}

export function start(env: Record<string, string>, cwd = process.cwd(), main = MAIN): Started {
  const cleanEnv = { ...process.env };
  delete cleanEnv.DATABASE_URL;
  delete cleanEnv.NODE_ENV;
  // detached: its own process group, so a "Ctrl-C" can reach the app and its PostgreSQL together.
  const child = spawn(process.execPath, [main], {
    cwd,
    env: { ...cleanEnv, LOG_LEVEL: 'info', ...env },
    detached: true,
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let output = '';
  child.stdout!.on('data', (chunk) => (output += chunk));
  child.stderr!.on('data', (chunk) => (output += chunk));
  const exited = new Promise<number | null>((done) => child.on('exit', (code) => done(code)));
  return { child, output: () => output, exited };
}

export async function waitForReady(port: number, app: Started, timeoutMs = 60_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (Date.now() < deadline) {
    if (app.child.exitCode !== null) throw new Error(`the app exited early:\n${app.output()}`);
    try {
      const res = await fetch(`http://127.0.0.1:${port}/health/ready`);
      if (res.status === 200) return;
    } catch {
      // not listening yet
    }
    await new Promise((r) => setTimeout(r, 250));
  }
  throw new Error(`not ready after ${timeoutMs} ms:\n${app.output()}`);
}

/** Lines of a stack trace in the output (`    at fn (file:line)`). */
export const stackLines = (output: string) => output.split('\n').filter((line) => /^\s+at .+[:(]/.test(line));
