import { resolve } from 'node:path';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { freePort } from '@nudge/database';
import { signToken } from '../../apps/api/src/auth/jwt.js';
import { start, type Started, waitForReady } from '../support/app-process.js';
import { eventually, TEST_SECRET } from '../support/api-app.js';
import { createTestDatabase, type TestDatabase } from '../support/database.js';
import { type OtlpCollector, type OtlpSpan, startOtlpCollector } from '../support/otlp-collector.js';

// The built apps with OTEL_EXPORTER_OTLP_ENDPOINT pointed at a fake collector:
// an event notification's spans, from the request to the provider call, arrive
// over OTLP/HTTP (flushed at the latest on SIGTERM), from one process as
// `npm start` runs it, and across an API process and a worker process.

let db: TestDatabase;
let collector: OtlpCollector;
beforeAll(async () => {
  db = await createTestDatabase();
  collector = await startOtlpCollector();
});
afterAll(async () => {
  await collector?.close();
  await db?.drop();
});

const NOW = new Date('2020-01-01T00:00:00Z');

/** A user with a simulated iPhone, then a notification to them; resolves with its job id once the worker has sent it. */
async function notify(port: number, userId: string): Promise<string> {
  const user = await signToken(TEST_SECRET, { userId, scopes: [], now: NOW });
  const ops = await signToken(TEST_SECRET, { userId: 'otlp-service', scopes: ['ops'], now: NOW });
  const call = (method: string, path: string, token: string, body: unknown) =>
    fetch(`http://127.0.0.1:${port}${path}`, {
      method,
      headers: { 'content-type': 'application/json', authorization: `Bearer ${token}` },
      body: JSON.stringify(body),
    });
  expect((await call('PUT', '/v1/me', user, { timeZone: 'UTC' })).status).toBe(201);
  expect((await call('PUT', '/v1/me/devices/phone', user, { platform: 'ios', pushToken: `sim-${userId}-secret-token` })).status).toBe(201);
  const sent = await call('POST', '/v1/notifications', ops, { userId, title: 'Traced', idempotencyKey: userId });
  expect(sent.status).toBe(202);
  const { jobId } = (await sent.json()) as { jobId: string };
  await eventually(
    async () => (await db.pool.query(`SELECT 1 FROM jobs WHERE id = $1 AND status = 'succeeded'`, [jobId])).rowCount,
    'the notification to be sent',
  );
  return jobId;
}

async function stop(...apps: Started[]): Promise<void> {
  for (const app of apps) app.child.kill('SIGTERM');
  // A graceful shutdown flushes what the batch processor still holds.
  for (const app of apps) expect(await app.exited).toBe(0);
}

/** The notification's four spans, each exactly once, parent to child in one trace. */
function chainOf(jobId: string) {
  const spans = collector.spans();
  const traceId = spans.find((s) => s.name === 'job send_notification' && attribute(s, 'nudge.job.id')?.stringValue === jobId)?.traceId;
  const inTrace = spans.filter((s) => s.traceId === traceId);
  const one = (name: string) => {
    const found = inTrace.filter((s) => s.name === name);
    expect(found, `${name} of job ${jobId}`).toHaveLength(1);
    return found[0]!;
  };
  const chain = {
    http: one('HTTP POST /v1/notifications'),
    enqueue: one('enqueue send_notification'),
    job: one('job send_notification'),
    push: one('push simulated'),
  };
  expect(chain.enqueue.parentSpanId).toBe(chain.http.spanId);
  expect(chain.job.parentSpanId).toBe(chain.enqueue.spanId);
  expect(chain.push.parentSpanId).toBe(chain.job.spanId);
  expect(attribute(chain.job, 'nudge.job.kind')).toEqual({ stringValue: 'send_notification' });
  expect(attribute(chain.job, 'nudge.job.attempt')).toEqual({ intValue: 1 });
  expect(attribute(chain.push, 'nudge.push.outcome')).toEqual({ stringValue: 'sent' });
  return chain;
}

const attribute = (span: OtlpSpan, key: string) => span.attributes.find((a) => a.key === key)?.value;

const env = (port: number): Record<string, string> => ({
  DATABASE_URL: db.url,
  SKIP_MIGRATIONS: '1',
  PORT: String(port),
  AUTH_JWT_SECRET: TEST_SECRET,
  OTEL_EXPORTER_OTLP_ENDPOINT: collector.endpoint,
});

it('exports a notification from request to provider call, from the one process of npm start', async () => {
  const port = await freePort();
  const app = start({ ...env(port), ROLE: 'all' });
  let jobId: string;
  try {
    await waitForReady(port, app);
    jobId = await notify(port, 'otlp-all');
  } finally {
    await stop(app);
  }
  expect(app.output()).toMatch(/"collector":"http:\/\/127\.0\.0\.1:\d+","service":"nudge".*tracing: spans are exported over OTLP\/HTTP/);
  expect(collector.contentTypes.every((type) => type?.startsWith('application/json'))).toBe(true);
  const chain = chainOf(jobId);
  expect(new Set(Object.values(chain).map((s) => s.service))).toEqual(new Set(['nudge']));
  expect(collector.text()).not.toContain('secret-token');
}, 90_000);

it('carries the trace from an API process through the database to a worker process', async () => {
  const port = await freePort();
  const api = start({ ...env(port), ROLE: 'api' });
  const worker = start({ ...env(await freePort()), ROLE: 'worker' }, process.cwd(), resolve('dist/apps/worker/src/main.js'));
  let jobId: string;
  try {
    await waitForReady(port, api);
    jobId = await notify(port, 'otlp-split');
  } finally {
    await stop(api, worker);
  }
  const chain = chainOf(jobId);
  expect([chain.http.service, chain.enqueue.service, chain.job.service, chain.push.service]).toEqual([
    'nudge-api',
    'nudge-api',
    'nudge-worker',
    'nudge-worker',
  ]);
  expect(collector.text()).not.toContain('secret-token');
}, 90_000);
