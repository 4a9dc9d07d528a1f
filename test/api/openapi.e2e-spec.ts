import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { UNDOCUMENTED_ROUTES } from '../../apps/api/src/http/openapi.js';
import { createTestDatabase, type TestDatabase } from '../support/database.js';
import { startTestApi, type TestApi } from '../support/api-app.js';

interface Layer {
  route?: { path: string | string[]; methods: Record<string, boolean> };
}

/** Every `METHOD /path` the Express router serves, with `:param` written as OpenAPI's `{param}`. */
function registeredRoutes(api: TestApi): string[] {
  const express = api.app.getHttpAdapter().getInstance();
  const stack = express.router.stack as unknown as Layer[];
  const routes = new Set<string>();
  for (const layer of stack) {
    if (!layer.route) continue;
    for (const path of [layer.route.path].flat()) {
      for (const [method, on] of Object.entries(layer.route.methods)) {
        if (on && method !== '_all') routes.add(`${method.toUpperCase()} ${path.replace(/:(\w+)/g, '{$1}')}`);
      }
    }
  }
  return [...routes].sort();
}

describe('OpenAPI document', () => {
  let db: TestDatabase;
  let api: TestApi;
  let doc: any;
  beforeAll(async () => {
    db = await createTestDatabase();
    api = await startTestApi({ databaseUrl: db.url });
    const res = await api.request('GET', '/docs-json');
    expect(res.status).toBe(200);
    doc = res.body;
  });
  afterAll(async () => {
    await api?.close();
    await db?.drop();
  });

  const documented = () =>
    Object.entries<Record<string, unknown>>(doc.paths).flatMap(([path, ops]) =>
      Object.keys(ops)
        .filter((m) => ['get', 'put', 'post', 'patch', 'delete'].includes(m))
        .map((m) => `${m.toUpperCase()} ${path}`),
    );

  it('documents every route the app serves, apart from /docs, /metrics and /ops', () => {
    const routes = registeredRoutes(api);
    // The enumeration itself must see the app's routes, or the check below proves nothing.
    expect(routes).toContain('GET /v1/ops/jobs/{id}');
    expect(routes).toContain('GET /metrics');
    expect(routes).toContain('GET /ops');
    const expected = routes.filter((route) => !UNDOCUMENTED_ROUTES.some((pattern) => pattern.test(route.split(' ')[1])));
    expect(documented().sort()).toEqual(expected);
  });

  it('covers the endpoints of the contract', () => {
    const all = documented();
    for (const route of [
      'PUT /v1/me',
      'GET /v1/me',
      'PATCH /v1/me',
      'DELETE /v1/me',
      'PUT /v1/me/devices/{installationId}',
      'GET /v1/me/devices',
      'DELETE /v1/me/devices/{installationId}',
      'POST /v1/reminders',
      'GET /v1/reminders',
      'GET /v1/reminders/{id}',
      'PATCH /v1/reminders/{id}',
      'DELETE /v1/reminders/{id}',
      'GET /v1/reminders/{id}/occurrences',
      'GET /v1/reminders/{id}/deliveries',
      'GET /v1/ops/queue',
      'GET /v1/ops/jobs',
      'GET /v1/ops/jobs/{id}',
      'POST /v1/ops/jobs/{id}/retry',
      'POST /v1/ops/jobs/{id}/cancel',
      'POST /v1/ops/jobs/retry',
      'POST /v1/ops/kinds/{kind}/pause',
      'POST /v1/ops/kinds/{kind}/resume',
      'GET /v1/ops/users/{userId}',
      'GET /v1/ops/users/{userId}/timeline',
      'PUT /v1/ops/apps/{appId}',
      'GET /v1/ops/apps',
      'GET /v1/ops/apps/{appId}',
      'GET /v1/ops/delivery-health',
      'GET /v1/ops/upcoming',
      'GET /health/live',
      'GET /health/ready',
    ]) {
      expect(all).toContain(route);
    }
  });

  it('gives every operation a typed success response and problem+json errors', () => {
    for (const [path, ops] of Object.entries<Record<string, any>>(doc.paths)) {
      for (const [method, op] of Object.entries<any>(ops)) {
        const where = `${method.toUpperCase()} ${path}`;
        const statuses = Object.keys(op.responses);
        const success = statuses.filter((s) => s.startsWith('2'));
        expect(success.length, `${where}: no success response`).toBeGreaterThan(0);
        for (const status of success.filter((s) => s !== '204')) {
          const schema = op.responses[status].content?.['application/json']?.schema;
          expect(schema, `${where} ${status}: no schema`).toBeDefined();
        }
        if (path.startsWith('/v1/')) {
          expect(op.security, `${where}: no bearer auth`).toEqual([{ bearer: [] }]);
          for (const status of ['400', '401']) {
            expect(op.responses[status]?.content?.['application/problem+json']?.schema?.$ref, `${where} ${status}`).toBe(
              '#/components/schemas/ProblemDto',
            );
          }
        }
        if (path.startsWith('/v1/ops/')) expect(statuses, where).toContain('403');
      }
    }
  });

  it('describes request bodies and path parameters', () => {
    const create = doc.paths['/v1/reminders'].post;
    expect(create.requestBody.content['application/json'].schema.$ref).toBe('#/components/schemas/CreateReminderDto');
    expect(doc.components.schemas.CreateReminderDto.required).toEqual(expect.arrayContaining(['title', 'localTime']));
    expect(doc.components.schemas.SnoozeDto.required).toEqual(['minutes']);
    expect(Object.keys(doc.paths)).toEqual(
      expect.arrayContaining([
        '/v1/reminders/{id}/occurrences/{localDate}/done',
        '/v1/reminders/{id}/occurrences/{localDate}/snooze',
        '/v1/reminders/{id}/occurrences/{localDate}/skip',
      ]),
    );
    expect(doc.paths['/v1/ops/jobs/{id}'].get.parameters).toEqual(
      expect.arrayContaining([expect.objectContaining({ name: 'id', in: 'path', required: true })]),
    );
    expect(doc.components.securitySchemes.bearer).toMatchObject({ type: 'http', scheme: 'bearer' });
  });

  it('serves the Swagger UI at /docs without a token', async () => {
    const res = await fetch(`${api.baseUrl}/docs`);
    expect(res.status).toBe(200);
    expect(await res.text()).toMatch(/swagger/i);
  });
});
