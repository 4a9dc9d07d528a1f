import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import fc from 'fast-check';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { withTransaction } from '@nudge/database';
import { type NewEvent, recordEvents, WebhooksService } from '@nudge/events';
import { createTestDatabase, type TestDatabase } from '../support/database.js';
import { eventually, startTestApi, type TestApi } from '../support/api-app.js';
import { fuzzRuns } from '../support/fuzz.js';
import { WebhookReceiver } from './receiver.js';

// Webhooks through the ops API and the real worker on a pinned clock: CRUD and
// validation, signed POSTs checked with the snippet from docs/webhooks.md,
// retries with backoff, dead after 24 hours and retryable from /ops; and the
// pull feed, which never passes over an event of a transaction that commits late.

type Verify = (secret: string, rawBody: string, header: string, nowSeconds?: number) => boolean;

/** The Node snippet of docs/webhooks.md, run as it is printed there. */
async function docsSnippet(): Promise<Verify> {
  const page = readFileSync('docs/webhooks.md', 'utf8');
  const code = /### Checking the signature[\s\S]*?```js\n([\s\S]*?)```/.exec(page)?.[1];
  expect(code, 'the js block under "Checking the signature"').toBeDefined();
  const file = join(mkdtempSync(join(tmpdir(), 'nudge-webhook-')), 'verify.mjs');
  writeFileSync(file, code!);
  return ((await import(pathToFileURL(file).href)) as { verifyNudgeSignature: Verify }).verifyNudgeSignature;
}

const T0 = new Date('2026-03-02T12:00:00Z');

describe('webhooks', () => {
  let db: TestDatabase;
  let api: TestApi;
  let ops: string;
  let receiver: WebhookReceiver;

  beforeAll(async () => {
    db = await createTestDatabase();
    api = await startTestApi({ databaseUrl: db.url, worker: { pollIntervalMs: 20 } });
    ops = await api.token('backend', ['ops']);
    receiver = await new WebhookReceiver().start();
  });
  afterAll(async () => {
    await api?.close();
    await receiver?.stop();
    await db?.drop();
  });
  beforeEach(async () => {
    api.clock.set(T0);
    receiver.posts.length = 0;
    receiver.answers = [];
    receiver.otherwise = 200;
    await db.pool.query('TRUNCATE webhooks, events');
    await db.pool.query(`DELETE FROM jobs WHERE kind = 'webhook_delivery'`);
  });

  const put = (id: string, body: unknown, token = ops) => api.request('PUT', `/v1/ops/webhooks/${id}`, { token, body });
  const emit = (...events: NewEvent[]) => withTransaction(db.pool, (tx) => recordEvents(tx, events, api.clock.now()));
  const done = (localDate: string): NewEvent => ({
    type: 'occurrence.done',
    userId: 'u1',
    data: { reminderId: 'r1', userId: 'u1', localDate },
  });
  const deliveries = async () =>
    (await db.pool.query(`SELECT id, status, attempts, run_at, last_error FROM jobs WHERE kind = 'webhook_delivery' ORDER BY id`)).rows;

  it('documents every endpoint and field in OpenAPI', async () => {
    const doc = (await api.request('GET', '/docs-json')).body;
    expect(Object.keys(doc.paths['/v1/ops/webhooks/{id}']).sort()).toEqual(['delete', 'get', 'put']);
    expect(Object.keys(doc.paths['/v1/ops/webhooks'])).toEqual(['get']);
    const feed = doc.paths['/v1/ops/events'].get;
    expect(feed.parameters.map((p: { name: string }) => p.name).sort()).toEqual(['after', 'limit']);
    const schemas = doc.components.schemas;
    const fields = (name: string) => Object.keys(schemas[name].properties).sort();
    expect(fields('PutWebhookDto')).toEqual(['events', 'secret', 'url']);
    expect(schemas.PutWebhookDto.required.sort()).toEqual(['events', 'url']);
    expect(fields('PutWebhookResponseDto')).toEqual(['createdAt', 'events', 'id', 'secret', 'updatedAt', 'url']);
    expect(fields('WebhookDto')).toEqual(['createdAt', 'events', 'id', 'updatedAt', 'url']);
    expect(fields('EventPageDto')).toEqual(['events', 'nextCursor']);
    expect(fields('EventDto')).toEqual(['createdAt', 'data', 'id', 'type', 'userId']);
    expect(schemas.PutWebhookDto.properties.events.items.enum).toEqual([
      'delivery.sent',
      'delivery.failed',
      'delivery.invalid_token',
      'device.deactivated',
      'occurrence.skipped',
      'occurrence.done',
      'occurrence.snoozed',
      'notification.skipped',
      '*',
    ]);
  });

  describe('PUT, GET, DELETE', () => {
    it('creates with a generated secret shown once, replaces keeping it, lists, deletes', async () => {
      const created = await put('crm', {
        url: 'https://example.com/in',
        events: ['delivery.failed', 'device.deactivated', 'delivery.failed'],
      });
      expect(created.status).toBe(201);
      expect(created.body).toEqual({
        id: 'crm',
        url: 'https://example.com/in',
        events: ['delivery.failed', 'device.deactivated'],
        secret: expect.stringMatching(/^whsec_[A-Za-z0-9_-]{32}$/),
        createdAt: T0.toISOString(),
        updatedAt: T0.toISOString(),
      });
      const secret = created.body.secret;

      const got = await api.request('GET', '/v1/ops/webhooks/crm', { token: ops });
      expect(got.status).toBe(200);
      expect(got.body).not.toHaveProperty('secret');

      api.clock.set('2026-03-02T13:00:00Z');
      const replaced = await put('crm', { url: 'http://localhost:8080/in', events: ['*', 'delivery.sent'] });
      expect(replaced.status).toBe(200);
      expect(replaced.body).toEqual({
        id: 'crm',
        url: 'http://localhost:8080/in',
        events: ['*'],
        createdAt: T0.toISOString(),
        updatedAt: '2026-03-02T13:00:00.000Z',
      });
      expect((await db.pool.query(`SELECT secret FROM webhooks WHERE id = 'crm'`)).rows[0].secret).toBe(secret);

      // A secret given is stored and never echoed.
      const own = await put('erp', { url: 'https://erp.example/hook', events: ['occurrence.done'], secret: 'a-secret-of-my-own-choosing' });
      expect(own.status).toBe(201);
      expect(own.body).not.toHaveProperty('secret');
      expect((await api.request('GET', '/v1/ops/webhooks', { token: ops })).body.webhooks.map((w: { id: string }) => w.id)).toEqual([
        'crm',
        'erp',
      ]);

      expect((await api.request('DELETE', '/v1/ops/webhooks/crm', { token: ops })).status).toBe(204);
      for (const method of ['GET', 'DELETE']) {
        const gone = await api.request(method, '/v1/ops/webhooks/crm', { token: ops });
        expect(gone.status).toBe(404);
        expect(gone.headers.get('content-type')).toContain('application/problem+json');
      }
      expect(api.logs.text).not.toContain(secret);
      expect(api.logs.text).not.toContain('a-secret-of-my-own-choosing');
    });

    it('refuses bad input with every field named, writing nothing; needs the ops scope', async () => {
      const bad = await put('crm', { url: 'ftp://example.com/in', events: ['delivery.sent', 'reminder.created'], secret: 'short' });
      expect(bad.status).toBe(400);
      expect(bad.headers.get('content-type')).toContain('application/problem+json');
      expect(bad.body.errors.map((e: { path: string }) => e.path).sort()).toEqual(['events', 'secret', 'url']);
      for (const body of [{ url: 'https://x.example', events: [] }, { events: ['*'] }, { url: 'https://x.example', events: '*' }, null]) {
        expect((await put('crm', body)).status).toBe(400);
      }
      // fetch cannot POST to a URL with credentials, and GET would show the password back.
      for (const url of ['https://hook:s3cret@x.example/in', 'https://hook@x.example/in']) {
        const withCredentials = await put('crm', { url, events: ['*'] });
        expect(withCredentials.status).toBe(400);
        expect(withCredentials.body.errors).toEqual([{ path: 'url', message: expect.stringMatching(/user name or password/) }]);
      }
      expect((await put('-bad id', { url: 'https://x.example', events: ['*'] })).status).toBe(400);
      expect((await put('x'.repeat(65), { url: 'https://x.example', events: ['*'] })).status).toBe(400);
      expect((await db.pool.query(`SELECT count(*)::int AS n FROM webhooks`)).rows[0].n).toBe(0);

      const user = await api.token('someone');
      expect((await put('crm', { url: 'https://x.example', events: ['*'] }, user)).status).toBe(403);
      expect((await api.request('GET', '/v1/ops/events', { token: user })).status).toBe(403);
      expect((await api.request('GET', '/v1/ops/webhooks/crm')).status).toBe(401);
    });
    it('answers any body or query with a 2xx or a 4xx problem, never a 500; a 4xx writes nothing', async () => {
      const anything = fc.oneof(
        fc.string({ maxLength: 30 }),
        fc.string({ unit: 'binary', maxLength: 30 }),
        fc.constantFrom(
          '*',
          'delivery.sent',
          'https://x.example/h',
          'ftp://x',
          'javascript:alert(1)',
          '\u0000',
          "'; DROP TABLE events; --",
        ),
        fc.integer(),
        fc.constant(null),
        fc.array(fc.string({ maxLength: 20 }), { maxLength: 3 }),
      );
      const body = fc.oneof(
        fc.record(
          { url: anything, events: fc.oneof(anything, fc.array(anything, { maxLength: 3 })), secret: anything },
          { requiredKeys: [] },
        ),
        anything,
      );
      await fc.assert(
        fc.asyncProperty(
          fc.string({ maxLength: 70 }),
          body,
          fc.string({ maxLength: 40 }),
          fc.string({ maxLength: 8 }),
          async (id, payload, after, limit) => {
            await db.pool.query('TRUNCATE webhooks');
            const res = await api.request('PUT', `/v1/ops/webhooks/${encodeURIComponent(id) || 'x'}`, { token: ops, body: payload });
            expect([200, 201, 400, 404]).toContain(res.status);
            if (res.status >= 400) expect((await db.pool.query(`SELECT count(*)::int AS n FROM webhooks`)).rows[0].n).toBe(0);
            const feed = await api.request('GET', `/v1/ops/events?after=${encodeURIComponent(after)}&limit=${encodeURIComponent(limit)}`, {
              token: ops,
            });
            expect([200, 400]).toContain(feed.status);
          },
        ),
        fuzzRuns(150),
      );
    });
  });

  describe('delivery', () => {
    it('POSTs each subscribed event once, signed so that the docs snippet verifies it', async () => {
      const verify = await docsSnippet();
      const { body: hook } = await put('crm', { url: receiver.url, events: ['occurrence.done'] });
      await put('other', { url: receiver.url, events: ['delivery.sent'] });
      await emit(done('2026-03-01'), { type: 'occurrence.skipped', userId: 'u1', data: { reason: 'stale' } });

      await eventually(async () => receiver.posts.length === 1 && (await deliveries())[0]?.status === 'succeeded', 'the delivery');
      const [post] = receiver.posts;
      const [event] = (await db.pool.query(`SELECT id::text, created_at FROM events WHERE type = 'occurrence.done'`)).rows;
      expect(JSON.parse(post!.rawBody)).toEqual({
        id: event.id,
        type: 'occurrence.done',
        createdAt: T0.toISOString(),
        data: { reminderId: 'r1', userId: 'u1', localDate: '2026-03-01' },
      });
      expect(post!.headers['nudge-event-id']).toBe(event.id);
      expect(post!.headers['content-type']).toBe('application/json');
      const header = String(post!.headers['nudge-signature']);
      expect(header).toMatch(new RegExp(`^t=${T0.getTime() / 1000},v1=[0-9a-f]{64}$`));
      const now = T0.getTime() / 1000;
      expect(verify(hook.secret, post!.rawBody, header, now)).toBe(true);
      expect(verify(hook.secret, post!.rawBody.replace('2026-03-01', '2026-03-02'), header, now)).toBe(false);
      expect(verify('whsec_someone-elses-secret', post!.rawBody, header, now)).toBe(false);
      expect(verify(hook.secret, post!.rawBody, header, now + 3600)).toBe(false);
      // Only the subscribed type, only to the subscriber.
      expect((await deliveries()).length).toBe(1);
    });

    it('retries a failing receiver with backoff, the same event each time, until it answers 2xx', async () => {
      await put('crm', { url: receiver.url, events: ['*'] });
      receiver.answers = [500, 503];
      await emit(done('2026-03-01'));

      let previous = T0;
      for (const [attempt, min, max] of [
        [1, 30, 60],
        [2, 60, 120],
      ] as const) {
        const [job] = await eventually(async () => {
          const rows = await deliveries();
          return rows[0]?.attempts === attempt && rows[0].status === 'queued' ? rows : undefined;
        }, `attempt ${attempt} to fail`);
        const wait = (job.run_at.getTime() - previous.getTime()) / 1000;
        expect(wait).toBeGreaterThanOrEqual(min);
        expect(wait).toBeLessThanOrEqual(max);
        expect(job.last_error).toContain(`receiver answered ${receiver.posts.length === 1 ? 500 : 503}`);
        previous = job.run_at;
        api.clock.set(job.run_at);
      }
      await eventually(async () => (await deliveries())[0]?.status === 'succeeded', 'the third attempt');
      expect(receiver.posts).toHaveLength(3);
      expect(new Set(receiver.posts.map((p) => p.headers['nudge-event-id'])).size).toBe(1);
      expect(new Set(receiver.posts.map((p) => p.rawBody)).size).toBe(1);
    });

    it('is dead at the first failure 24 h after the event, listed and retryable on /ops', async () => {
      await put('crm', { url: receiver.url, events: ['*'] });
      receiver.otherwise = 500;
      await emit(done('2026-03-01'));
      await eventually(async () => (await deliveries())[0]?.attempts === 1 && (await deliveries())[0].status === 'queued', 'attempt 1');
      // The next attempt comes a day later (a long outage of the workers): past the window, it is the last.
      api.clock.set(new Date(T0.getTime() + 24 * 3_600_000 + 1000));
      const [job] = await eventually(async () => {
        const rows = await deliveries();
        return rows[0]?.status === 'dead' ? rows : undefined;
      }, 'the delivery to die');
      expect(job.attempts).toBe(2);
      expect(job.last_error).toContain('gave up 24 h after the event');

      const listed = await api.request('GET', '/v1/ops/jobs?kind=webhook_delivery&status=dead', { token: ops });
      expect(listed.body.items.map((j: { id: string }) => j.id)).toEqual([job.id]);
      receiver.otherwise = 200;
      expect((await api.request('POST', `/v1/ops/jobs/${job.id}/retry`, { token: ops })).status).toBe(200);
      await eventually(async () => (await deliveries())[0]?.status === 'succeeded', 'the retried delivery');
      expect(receiver.posts).toHaveLength(3);
    });

    it('ends a queued delivery without a POST once its webhook is deleted', async () => {
      await put('crm', { url: receiver.url, events: ['*'] });
      receiver.answers = [500];
      await emit(done('2026-03-01'));
      const [job] = await eventually(async () => {
        const rows = await deliveries();
        return rows[0]?.attempts === 1 && rows[0].status === 'queued' ? rows : undefined;
      }, 'attempt 1 to fail');
      expect((await api.request('DELETE', '/v1/ops/webhooks/crm', { token: ops })).status).toBe(204);
      api.clock.set(job.run_at);
      await eventually(async () => (await deliveries())[0]?.status === 'succeeded', 'the delivery to end');
      expect(receiver.posts).toHaveLength(1);
    });
  });

  describe('the feed', () => {
    const feed = async (query = '') => {
      const res = await api.request('GET', `/v1/ops/events${query}`, { token: ops });
      expect(res.status, JSON.stringify(res.body)).toBe(200);
      return res.body as { events: { id: string; type: string; data: { localDate: string } }[]; nextCursor: string };
    };
    const dates = (page: { events: { data: { localDate: string } }[] }) => page.events.map((e) => e.data.localDate);

    it('pages through the events in commit order with nextCursor', async () => {
      await emit(done('01'), done('02'));
      await emit(done('03'));
      const first = await feed('?limit=2');
      expect(dates(first)).toEqual(['01', '02']);
      expect(first.events[0]).toMatchObject({ type: 'occurrence.done', createdAt: T0.toISOString(), userId: 'u1' });
      const second = await feed(`?after=${first.nextCursor}&limit=2`);
      expect(dates(second)).toEqual(['03']);
      const empty = await feed(`?after=${second.nextCursor}`);
      expect(empty).toEqual({ events: [], nextCursor: second.nextCursor });
      await emit(done('04'));
      expect(dates(await feed(`?after=${second.nextCursor}`))).toEqual(['04']);
    });

    it('never passes over an event whose transaction commits after a later one', async () => {
      const start = (await feed()).nextCursor;
      const late = await db.pool.connect();
      try {
        await late.query('BEGIN');
        await recordEvents(late, [done('late')], api.clock.now());
        await emit(done('early'));
        // The early commit waits behind the open transaction: serving it now would move a reader past 'late'.
        expect(dates(await feed(`?after=${start}`))).toEqual([]);
        await late.query('COMMIT');
      } finally {
        late.release();
      }
      const page = await eventually(async () => {
        const p = await feed(`?after=${start}`);
        return p.events.length === 2 ? p : undefined;
      }, 'both events');
      expect(dates(page)).toEqual(['late', 'early']);
    });

    it('refuses a cursor it did not make and a limit out of range (400)', async () => {
      for (const query of [
        '?after=abc',
        '?after=1-99999999999999999999',
        '?after=99999999999999999999999-1',
        '?limit=0',
        '?limit=1001',
        '?limit=x',
      ]) {
        const res = await api.request('GET', `/v1/ops/events${query}`, { token: ops });
        expect(res.status, query).toBe(400);
        expect(res.headers.get('content-type')).toContain('application/problem+json');
      }
    });

    it('prunes events older than EVENTS_RETENTION_HOURS', async () => {
      await emit(done('old'));
      api.clock.set(new Date(T0.getTime() + 167 * 3_600_000));
      await emit(done('new'));
      api.clock.set(new Date(T0.getTime() + 169 * 3_600_000));
      await api.app.get(WebhooksService).prune();
      expect(dates(await feed())).toEqual(['new']);
    });
  });
});
