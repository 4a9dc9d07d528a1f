import { spawn } from 'node:child_process';
import { resolve } from 'node:path';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { freePort } from '@nudge/database';
import { enqueue } from '@nudge/queue';
import { createTestDatabase, type TestDatabase } from '../support/database.js';

// A worker process has no API; with WORKER_METRICS_PORT it serves its own
// per-process counters for Prometheus.
let db: TestDatabase;
beforeAll(async () => {
  db = await createTestDatabase();
});
afterAll(async () => db?.drop());

it('serves the worker process counters on WORKER_METRICS_PORT and nothing else', async () => {
  // A job the worker runs at once: a daily token cleanup with nothing to remove.
  await enqueue(db.pool, { kind: 'token_cleanup', payload: { inactiveDays: 60 }, idempotencyKey: 'worker-metrics-probe' });
  const port = await freePort();
  const child = spawn(process.execPath, [resolve('dist/apps/worker/src/main.js')], {
    env: {
      ...process.env,
      DATABASE_URL: db.url,
      SKIP_MIGRATIONS: '1',
      WORKER_METRICS_PORT: String(port),
      LOG_LEVEL: 'warn',
      ROLE: 'worker',
    },
    stdio: 'ignore',
  });
  const exited = new Promise<number | null>((r) => child.once('exit', (code) => r(code)));
  try {
    let text = '';
    for (let i = 0; i < 300 && !/queue_jobs_completed_total\{kind="token_cleanup"\} [1-9]/.test(text); i++) {
      await new Promise((r) => setTimeout(r, 100));
      text = await fetch(`http://127.0.0.1:${port}/metrics`).then(
        (r) => r.text(),
        () => '',
      );
    }
    expect(text).toMatch(/queue_jobs_completed_total\{kind="token_cleanup"\} [1-9]/);
    expect(text).toMatch(/process_cpu_user_seconds_total/);
    expect((await fetch(`http://127.0.0.1:${port}/v1/me`)).status).toBe(404);
  } finally {
    child.kill('SIGTERM');
  }
  expect(await exited).toBe(0);
}, 60_000);
