import { trace } from '@opentelemetry/api';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { loadConfig, startTracing } from '@nudge/config';
import { tracingEnabled } from '@nudge/queue';
import { userWithDevice } from '../factories/user-with-device.js';
import { eventually, startTestApi, type TestApi } from '../support/api-app.js';
import { createTestDatabase, type TestDatabase } from '../support/database.js';

// Without OTEL_EXPORTER_OTLP_ENDPOINT nothing is registered, and a reminder's
// jobs carry no trace context, even when the caller sends a traceparent.
let db: TestDatabase;
let api: TestApi;
beforeAll(async () => {
  db = await createTestDatabase();
  api = await startTestApi({ databaseUrl: db.url, worker: { pollIntervalMs: 20 } });
});
afterAll(async () => {
  await api?.close();
  await db?.drop();
});

it('registers no tracer provider when OTEL_EXPORTER_OTLP_ENDPOINT is unset', () => {
  expect(startTracing(loadConfig({}), { serviceName: 'nudge-api' })).toBeUndefined();
  expect(tracingEnabled()).toBe(false);
  expect(trace.getTracer('nudge').startSpan('probe').isRecording()).toBe(false);
});

it('stores no trace context with the jobs of a reminder, from the API or from the worker', async () => {
  api.clock.set('2026-03-02T12:00:00Z');
  const bearer = await userWithDevice(api, 'untraced', { platform: 'ios', pushToken: 'sim-untraced-0001' });
  const created = await api.request('POST', '/v1/reminders', {
    token: bearer,
    headers: { traceparent: '00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01' },
    body: { title: 'Untraced', localTime: '08:00', recurrence: 'FREQ=DAILY', startDate: '2026-03-03' },
  });
  expect(created.status).toBe(201);
  api.clock.set('2026-03-03T08:00:00Z');
  const jobs = await eventually(async () => {
    const { rows } = await db.pool.query<{ status: string; trace_parent: string | null; trace_link: string | null }>(
      `SELECT j.status, j.trace_parent, j.trace_link FROM reminder_jobs o JOIN jobs j ON j.id = o.job_id
        WHERE o.reminder_id = $1 ORDER BY j.id`,
      [created.body.id],
    );
    return rows.length === 2 && rows[0]!.status === 'succeeded' ? rows : undefined;
  }, 'the first occurrence to run and the next to be planned');
  expect(jobs.map((j) => [j.trace_parent, j.trace_link])).toEqual([
    [null, null],
    [null, null],
  ]);
  expect((await db.pool.query(`SELECT count(*)::int AS n FROM simulated_pushes WHERE push_token = 'sim-untraced-0001'`)).rows[0].n).toBe(1);
});
