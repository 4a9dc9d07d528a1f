import { spawn, type ChildProcess } from 'node:child_process';
import { chmodSync, existsSync, mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { freePort } from '@nudge/database';

// These tests start the built app (`npm run build`, which `npm test` runs first)
// the way a newcomer does, and watch it from outside.
const MAIN = resolve('dist/apps/api/src/main.js');

interface Started {
  child: ChildProcess;
  output: () => string;
  exited: Promise<number | null>;
}

function start(env: Record<string, string>, cwd = process.cwd()): Started {
  const cleanEnv = { ...process.env };
  delete cleanEnv.DATABASE_URL;
  delete cleanEnv.NODE_ENV;
  // detached: its own process group, so a "Ctrl-C" can reach the app and its PostgreSQL together.
  const child = spawn(process.execPath, [MAIN], { cwd, env: { ...cleanEnv, LOG_LEVEL: 'info', ...env }, detached: true, stdio: ['ignore', 'pipe', 'pipe'] });
  let output = '';
  child.stdout!.on('data', (chunk) => (output += chunk));
  child.stderr!.on('data', (chunk) => (output += chunk));
  const exited = new Promise<number | null>((done) => child.on('exit', (code) => done(code)));
  return { child, output: () => output, exited };
}

async function waitForReady(port: number, app: Started, timeoutMs = 60_000): Promise<void> {
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

function postgresProcessesFor(dataDir: string): number[] {
  return readdirSync('/proc')
    .filter((entry) => /^\d+$/.test(entry))
    .filter((pid) => {
      try {
        const cmdline = readFileSync(`/proc/${pid}/cmdline`, 'utf8');
        return cmdline.includes('postgres') && cmdline.includes(dataDir);
      } catch {
        return false;
      }
    })
    .map(Number);
}

describe('booting the app', () => {
  const folders: string[] = [];
  afterAll(() => folders.forEach((f) => rmSync(f, { recursive: true, force: true })));

  it('refuses a bad PORT, naming the variable', async () => {
    const app = start({ PORT: 'abc' });
    expect(await app.exited).toBe(78);
    expect(app.output()).toMatch(/PORT must be a whole number/);
  });

  it('refuses NODE_ENV=production without AUTH_JWT_SECRET', async () => {
    const app = start({ NODE_ENV: 'production', DATABASE_URL: 'postgres://nowhere/x' });
    expect(await app.exited).toBe(78);
    expect(app.output()).toMatch(/AUTH_JWT_SECRET is required when NODE_ENV=production/);
  });

  it('prints a token with `npm run token` that the API accepts, scoped as asked', async () => {
    const { execFileSync } = await import('node:child_process');
    const { verifyToken } = await import('../../apps/api/src/auth/jwt.js');
    const secret = 's'.repeat(40);
    const out = execFileSync('npm', ['run', '-s', 'token', '--', 'admin', '--scope', 'ops'], {
      env: { ...process.env, AUTH_JWT_SECRET: secret },
      encoding: 'utf8',
    });
    const claims = await verifyToken(secret, out.trim(), new Date());
    expect(claims).toEqual({ userId: 'admin', scopes: ['ops'] });
  });

  it('boots an embedded PostgreSQL, stops it on Ctrl-C, reuses the data, and refuses a second instance', async () => {
    const cwd = mkdtempSync(join(tmpdir(), 'nudge-boot-'));
    chmodSync(cwd, 0o755);
    folders.push(cwd);
    const dataDir = join(cwd, '.data', 'postgres');

    const port = await freePort();
    const first = start({ PORT: String(port) }, cwd);
    await waitForReady(port, first);
    expect(first.output()).toContain(`Nudge API: http://localhost:${port}`);
    expect(first.output()).toContain('npm run token');
    expect(existsSync(join(dataDir, 'PG_VERSION'))).toBe(true);
    expect(postgresProcessesFor(dataDir).length).toBeGreaterThan(0);

    // A second instance on the same data folder explains itself instead of corrupting it.
    const second = start({ PORT: String(await freePort()) }, cwd);
    expect(await second.exited).not.toBe(0);
    expect(second.output()).toMatch(/in use by another running PostgreSQL/);

    // Ctrl-C in a terminal signals the whole process group.
    process.kill(-first.child.pid!, 'SIGINT');
    expect(await first.exited).toBe(0);
    await new Promise((r) => setTimeout(r, 500));
    expect(postgresProcessesFor(dataDir)).toEqual([]);

    const third = start({ PORT: String(port) }, cwd);
    await waitForReady(port, third);
    expect(third.output()).toContain('database schema is up to date');
    expect(third.output()).not.toContain('initdb');
    process.kill(-third.child.pid!, 'SIGTERM');
    expect(await third.exited).toBe(0);
    expect(postgresProcessesFor(dataDir)).toEqual([]);
  }, 120_000);
});
