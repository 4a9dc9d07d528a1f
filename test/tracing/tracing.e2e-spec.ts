import { SpanKind, SpanStatusCode } from '@opentelemetry/api';
import { InMemorySpanExporter, type ReadableSpan, SimpleSpanProcessor } from '@opentelemetry/sdk-trace-base';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTracing, type Tracing } from '@nudge/config';
import { tracingEnabled } from '@nudge/queue';
import { userWithDevice } from '../factories/user-with-device.js';
import { eventually, startTestApi, type TestApi } from '../support/api-app.js';
import { createTestDatabase, type TestDatabase } from '../support/database.js';

// One reminder followed end to end with an in-memory exporter: the API
// request, the enqueue inside it, the trace context stored with the job, the
// worker's job span (late by a pinned 7 minutes), the provider call; then the
// next occurrence, which starts a trace of its own linked to the job that
// planned it.

const CALLER_TRACE = '4bf92f3577b34da6a3ce929d0e0e4736';
const CALLER_SPAN = '00f067aa0ba902b7';
const TOKEN = 'sim-tracing-token-do-not-leak-0001';

interface JobRow {
  id: string;
  status: string;
  trace_parent: string | null;
  trace_link: string | null;
}

describe('tracing from the API request to the provider call', () => {
  const exporter = new InMemorySpanExporter();
  let tracing: Tracing | undefined;
  let db: TestDatabase;
  let api: TestApi;

  beforeAll(async () => {
    tracing = startTracing(
      { tracing: { otlpEndpoint: undefined, serviceName: undefined } },
      { serviceName: 'nudge-test', spanProcessors: [new SimpleSpanProcessor(exporter)] },
    );
    db = await createTestDatabase();
    api = await startTestApi({ databaseUrl: db.url, worker: { pollIntervalMs: 20 } });
  });
  afterAll(async () => {
    await api?.close();
    await tracing?.shutdown();
    await db?.drop();
  });

  const spans = () => exporter.getFinishedSpans();
  const named = (name: string) => spans().filter((s) => s.name === name);
  const traceparentOf = (span: ReadableSpan) => `00-${span.spanContext().traceId}-${span.spanContext().spanId}-01`;

  async function jobsOf(reminderId: string): Promise<JobRow[]> {
    return (
      await db.pool.query<JobRow>(
        `SELECT j.id::text, j.status, j.trace_parent, j.trace_link
           FROM reminder_jobs o JOIN jobs j ON j.id = o.job_id WHERE o.reminder_id = $1 ORDER BY j.id`,
        [reminderId],
      )
    ).rows;
  }

  async function finished(jobId: string): Promise<void> {
    await eventually(
      async () => (await db.pool.query(`SELECT 1 FROM jobs WHERE id = $1 AND status = 'succeeded'`, [jobId])).rowCount,
      `job ${jobId} to succeed`,
    );
    // The job's span ends when its handler returns, just after the completion commits.
    await eventually(async () => spans().find((s) => s.name === 'job send_reminder' && s.attributes['nudge.job.id'] === jobId), 'its span');
  }

  it('is on: a tracer provider is registered', () => {
    expect(tracingEnabled()).toBe(true);
  });

  it('links HTTP → enqueue → job → push, carries job id, kind, attempt and queue wait, and never the push token', async () => {
    api.clock.set('2026-03-02T12:00:00Z');
    const bearer = await userWithDevice(api, 'tracing-user', { platform: 'ios', pushToken: TOKEN });
    const created = await api.request('POST', '/v1/reminders', {
      token: bearer,
      headers: { traceparent: `00-${CALLER_TRACE}-${CALLER_SPAN}-01` },
      body: { title: 'Stretch', localTime: '08:00', recurrence: 'FREQ=DAILY', startDate: '2026-03-03' },
    });
    expect(created.status).toBe(201);

    // The request's span: a child of the caller's traceparent, named by its route.
    const http = await eventually(async () => named('HTTP POST /v1/reminders')[0], 'the request span');
    expect(http.kind).toBe(SpanKind.SERVER);
    expect(http.spanContext().traceId).toBe(CALLER_TRACE);
    expect(http.parentSpanContext?.spanId).toBe(CALLER_SPAN);
    expect(http.attributes['http.route']).toBe('/v1/reminders');
    expect(http.attributes['http.response.status_code']).toBe(201);

    // The enqueue inside it, and the context stored with the job.
    const [first] = await jobsOf(created.body.id);
    const enqueue = named('enqueue send_reminder').find((s) => s.attributes['nudge.job.id'] === first!.id)!;
    expect(enqueue.parentSpanContext?.spanId).toBe(http.spanContext().spanId);
    expect(enqueue.spanContext().traceId).toBe(CALLER_TRACE);
    expect(first!.trace_parent).toBe(traceparentOf(enqueue));
    expect(first!.trace_link).toBeNull();

    // 08:07: the worker claims it seven minutes late.
    api.clock.set('2026-03-03T08:07:00Z');
    await finished(first!.id);
    const job = named('job send_reminder').find((s) => s.attributes['nudge.job.id'] === first!.id)!;
    expect(job.kind).toBe(SpanKind.CONSUMER);
    expect(job.spanContext().traceId).toBe(CALLER_TRACE);
    expect(job.parentSpanContext?.spanId).toBe(enqueue.spanContext().spanId);
    expect(job.attributes).toMatchObject({
      'nudge.job.id': first!.id,
      'nudge.job.kind': 'send_reminder',
      'nudge.job.attempt': 1,
      'nudge.queue.wait_ms': 7 * 60_000,
    });
    expect(job.status.code).not.toBe(SpanStatusCode.ERROR);

    const push = named('push simulated').find((s) => s.attributes['nudge.job.id'] === first!.id)!;
    expect(push.kind).toBe(SpanKind.CLIENT);
    expect(push.parentSpanContext?.spanId).toBe(job.spanContext().spanId);
    expect(push.spanContext().traceId).toBe(CALLER_TRACE);
    expect(push.attributes).toMatchObject({
      'nudge.push.provider': 'simulated',
      'nudge.push.platform': 'ios',
      'nudge.push.outcome': 'sent',
    });

    // The next occurrence was planned by the job: its job links to it instead of joining the request's trace.
    const next = (await jobsOf(created.body.id)).find((j) => j.id !== first!.id)!;
    expect(next.status).toBe('queued');
    expect(next.trace_parent).toBeNull();
    const planned = named('enqueue send_reminder').find((s) => s.attributes['nudge.job.id'] === next.id)!;
    expect(planned.parentSpanContext?.spanId).toBe(job.spanContext().spanId);
    expect(next.trace_link).toBe(traceparentOf(planned));

    api.clock.set('2026-03-04T08:00:00Z');
    await finished(next.id);
    const nextJob = named('job send_reminder').find((s) => s.attributes['nudge.job.id'] === next.id)!;
    expect(nextJob.spanContext().traceId).not.toBe(CALLER_TRACE);
    expect(nextJob.parentSpanContext).toBeUndefined();
    expect(nextJob.links.map((l) => l.context.spanId)).toEqual([planned.spanContext().spanId]);
    expect(nextJob.attributes['nudge.queue.wait_ms']).toBe(0);
    const nextPush = named('push simulated').find((s) => s.attributes['nudge.job.id'] === next.id)!;
    expect(nextPush.parentSpanContext?.spanId).toBe(nextJob.spanContext().spanId);

    // No span, attribute, event or link carries the push token.
    const everything = JSON.stringify(
      spans().map((s) => ({ name: s.name, attributes: s.attributes, events: s.events, links: s.links, status: s.status })),
    );
    expect(everything).not.toContain('do-not-leak');
  });

  it("follows a caller's decision not to sample: the job stores the trace unsampled and records no span", async () => {
    api.clock.set('2026-03-20T12:00:00Z');
    const bearer = await userWithDevice(api, 'tracing-unsampled', { platform: 'ios', pushToken: 'sim-unsampled-0001' });
    const unsampled = 'aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa';
    const created = await api.request('POST', '/v1/reminders', {
      token: bearer,
      headers: { traceparent: `00-${unsampled}-00f067aa0ba902b7-00` },
      body: { title: 'Unsampled', localTime: '09:00', startDate: '2026-03-21' },
    });
    expect(created.status).toBe(201);
    const [job] = await jobsOf(created.body.id);
    expect(job!.trace_parent).toMatch(new RegExp(`^00-${unsampled}-[0-9a-f]{16}-00$`));
    api.clock.set('2026-03-21T09:00:00Z');
    await eventually(
      async () => (await db.pool.query(`SELECT 1 FROM jobs WHERE id = $1 AND status = 'succeeded'`, [job!.id])).rowCount,
      'the job to succeed',
    );
    await new Promise((r) => setTimeout(r, 200));
    expect(spans().filter((s) => s.spanContext().traceId === unsampled || s.attributes['nudge.job.id'] === job!.id)).toEqual([]);
  });

  it('marks a failed provider call and its job as errors', async () => {
    api.clock.set('2026-03-10T12:00:00Z');
    const bearer = await userWithDevice(api, 'tracing-failing', { platform: 'android', pushToken: 'sim-500-tracing' });
    const created = await api.request('POST', '/v1/reminders', {
      token: bearer,
      body: { title: 'Fails', localTime: '09:00', startDate: '2026-03-11' },
    });
    expect(created.status).toBe(201);
    const [job] = await jobsOf(created.body.id);
    api.clock.set('2026-03-11T09:00:00Z');
    const span = await eventually(
      async () => spans().find((s) => s.name === 'job send_reminder' && s.attributes['nudge.job.id'] === job!.id),
      'the failed attempt span',
    );
    expect(span.status.code).toBe(SpanStatusCode.ERROR);
    expect(span.events.some((e) => e.name === 'exception')).toBe(true);
    const push = named('push simulated').find((s) => s.attributes['nudge.job.id'] === job!.id)!;
    expect(push.attributes['nudge.push.outcome']).toBe('transient');
    expect(push.attributes['nudge.push.platform']).toBe('android');
    expect(push.status.code).toBe(SpanStatusCode.ERROR);
  });
});
