import { chmodSync, existsSync, mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { freePort } from '@nudge/database';
import { stackLines, start, waitForReady } from '../support/app-process.js';

// These tests start the built app (`npm run build`, which `npm test` runs first)
// the way a newcomer does, and watch it from outside.

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
    expect(stackLines(second.output())).toEqual([]);

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
