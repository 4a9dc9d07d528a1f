import { execFileSync } from 'node:child_process';
import { cpSync, mkdirSync, mkdtempSync, realpathSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir, userInfo } from 'node:os';
import { join, resolve } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { freePort } from '@nudge/database';
import { stackLines, start, waitForReady } from '../support/app-process.js';

// A newcomer's first run: `npm ci && npm start` in a clone inside a private
// folder (mode 0700, like a clone under /root). As root, the embedded
// PostgreSQL runs as the `postgres` user, who must reach the binaries in the
// clone's node_modules and its ./.data folder.

describe('the first run', () => {
  const folders: string[] = [];
  afterAll(() => folders.forEach((f) => rmSync(f, { recursive: true, force: true })));

  it('starts from a clone inside a private (0700) folder, opening only what PostgreSQL must pass through', async () => {
    const home = mkdtempSync(join(tmpdir(), 'nudge-first-run-')); // 0700, as mkdtemp makes it
    folders.push(home);
    expect(statSync(home).mode & 0o777).toBe(0o700);
    const clone = join(home, 'nudge');
    mkdirSync(clone);
    // What `npm ci` and the build in `npm start` leave in a clone: node_modules
    // (hard links: the same files, at paths inside the private folder) and dist/.
    execFileSync('cp', ['-al', realpathSync('node_modules'), join(clone, 'node_modules')]);
    cpSync(resolve('dist'), join(clone, 'dist'), { recursive: true });
    cpSync(resolve('package.json'), join(clone, 'package.json'));

    const port = await freePort();
    const app = start({ PORT: String(port) }, clone, join(clone, 'dist/apps/api/src/main.js'));
    try {
      await waitForReady(port, app, 90_000);
      expect(app.output()).toContain(`Nudge API: http://localhost:${port}`);
      if (userInfo().uid === 0) {
        // Only the search bit for others was added, and the log says where.
        expect(statSync(home).mode & 0o777).toBe(0o701);
        expect(app.output()).toContain(`opened ${home}`);
      }
      expect(stackLines(app.output())).toEqual([]);
    } finally {
      if (app.child.exitCode === null) process.kill(-app.child.pid!, 'SIGTERM');
    }
    expect(await app.exited).toBe(0);
  }, 180_000);

  it('stops with one line naming the cause and the fix when the embedded PostgreSQL cannot run', async () => {
    const cwd = mkdtempSync(join(tmpdir(), 'nudge-first-run-'));
    folders.push(cwd);
    // Where the data folder should go, a file is in the way.
    writeFileSync(join(cwd, '.data'), 'not a folder');
    const app = start({ PORT: String(await freePort()) }, cwd);
    expect(await app.exited).toBe(1);
    const output = app.output();
    expect(stackLines(output)).toEqual([]);
    const plain = output.split('\n').filter((line) => line.trim() && !line.startsWith('{'));
    expect(plain).toHaveLength(1);
    expect(plain[0]).toMatch(/data folder .*\.data\/postgres cannot be created \(\w+\): .*or set DATABASE_URL\.$/);
  }, 60_000);
});
