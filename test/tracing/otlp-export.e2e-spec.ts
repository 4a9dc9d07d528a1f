import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { freePort } from '@nudge/database';
import { signToken } from '../../apps/api/src/auth/jwt.js';
import { start, waitForReady } from '../support/app-process.js';
import { eventually, TEST_SECRET } from '../support/api-app.js';
import { createTestDatabase, type TestDatabase } from '../support/database.js';

// The built app (ROLE=all, as `npm start` runs it) with OTEL_EXPORTER_OTLP_ENDPOINT
// pointed at a fake collector: an event notification's spans, from the request to
// the provider call, arrive over OTLP/HTTP, flushed at the latest on SIGTERM.

interface OtlpSpan {
  traceId: string;
  spanId: string;
  parentSpanId?: string;
  name: string;
  attributes: { key: string; value: Record<string, unknown> }[];
}
interface OtlpRequest {
  contentType: string | undefined;
  body: {
    resourceSpans: { resource: { attributes: { key: string; value: { stringValue?: string } }[] }; scopeSpans: { spans: OtlpSpan[] }[] }[];
  };
}

let db: TestDatabase;
let collector: Server;
const received: OtlpRequest[] = [];

beforeAll(async () => {
  db = await createTestDatabase();
  collector = createServer((request, response) => {
    const chunks: Buffer[] = [];
    request.on('data', (chunk: Buffer) => chunks.push(chunk));
    request.on('end', () => {
      if (request.method === 'POST' && request.url === '/v1/traces') {
        received.push({ contentType: request.headers['content-type'], body: JSON.parse(Buffer.concat(chunks).toString('utf8')) });
      }
      response.writeHead(200, { 'content-type': 'application/json' }).end('{}');
    });
  });
  await new Promise<void>((done) => collector.listen(0, '127.0.0.1', done));
});
afterAll(async () => {
  await new Promise((done) => collector?.close(done));
  await db?.drop();
});

it('exports the spans of a notification, request to provider call, to the OTLP endpoint', async () => {
  const port = await freePort();
  const app = start({
    DATABASE_URL: db.url,
    SKIP_MIGRATIONS: '1',
    PORT: String(port),
    ROLE: 'all',
    AUTH_JWT_SECRET: TEST_SECRET,
    OTEL_EXPORTER_OTLP_ENDPOINT: `http://127.0.0.1:${(collector.address() as AddressInfo).port}/`,
  });
  try {
    await waitForReady(port, app);
    const now = new Date('2020-01-01T00:00:00Z');
    const user = await signToken(TEST_SECRET, { userId: 'otlp-user', scopes: [], now });
    const ops = await signToken(TEST_SECRET, { userId: 'otlp-service', scopes: ['ops'], now });
    const call = (method: string, path: string, token: string, body: unknown) =>
      fetch(`http://127.0.0.1:${port}${path}`, {
        method,
        headers: { 'content-type': 'application/json', authorization: `Bearer ${token}` },
        body: JSON.stringify(body),
      });
    expect((await call('PUT', '/v1/me', user, { timeZone: 'UTC' })).status).toBe(201);
    expect((await call('PUT', '/v1/me/devices/phone', user, { platform: 'ios', pushToken: 'sim-otlp-secret-token' })).status).toBe(201);
    const sent = await call('POST', '/v1/notifications', ops, { userId: 'otlp-user', title: 'Traced', idempotencyKey: 'otlp-1' });
    expect(sent.status).toBe(202);
    const { jobId } = (await sent.json()) as { jobId: string };
    await eventually(
      async () => (await db.pool.query(`SELECT 1 FROM jobs WHERE id = $1 AND status = 'succeeded'`, [jobId])).rowCount,
      'the notification to be sent',
    );
  } finally {
    app.child.kill('SIGTERM');
  }
  // Graceful shutdown flushes what the batch processor still holds.
  expect(await app.exited).toBe(0);

  expect(received.length).toBeGreaterThan(0);
  expect(received.every((r) => r.contentType?.startsWith('application/json'))).toBe(true);
  const services = new Set(
    received.flatMap((r) =>
      r.body.resourceSpans.map((rs) => rs.resource.attributes.find((a) => a.key === 'service.name')?.value.stringValue),
    ),
  );
  expect([...services]).toEqual(['nudge']);
  const spans = received.flatMap((r) => r.body.resourceSpans.flatMap((rs) => rs.scopeSpans.flatMap((ss) => ss.spans)));
  const one = (name: string) => {
    const found = spans.filter((s) => s.name === name);
    expect(found, name).toHaveLength(1);
    return found[0]!;
  };
  const http = one('HTTP POST /v1/notifications');
  const enqueue = one('enqueue send_notification');
  const job = one('job send_notification');
  const push = one('push simulated');
  expect(enqueue.parentSpanId).toBe(http.spanId);
  expect(job.parentSpanId).toBe(enqueue.spanId);
  expect(push.parentSpanId).toBe(job.spanId);
  expect(new Set([http, enqueue, job, push].map((s) => s.traceId)).size).toBe(1);
  const attribute = (span: OtlpSpan, key: string) => span.attributes.find((a) => a.key === key)?.value;
  expect(attribute(job, 'nudge.job.kind')).toEqual({ stringValue: 'send_notification' });
  expect(attribute(job, 'nudge.job.attempt')).toEqual({ intValue: 1 });
  expect(attribute(push, 'nudge.push.outcome')).toEqual({ stringValue: 'sent' });
  expect(JSON.stringify(received)).not.toContain('secret-token');
}, 90_000);
