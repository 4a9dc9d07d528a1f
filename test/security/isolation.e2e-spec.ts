import { SignJWT } from 'jose';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { collapseIdFor } from '@nudge/push';
import { createTestDatabase, type TestDatabase } from '../support/database.js';
import { eventually, startTestApi, TEST_SECRET, type TestApi } from '../support/api-app.js';
import { databaseSnapshot } from '../support/snapshot.js';

// A user never sees, changes or learns of another user's data; bad tokens get
// 401, user tokens get 403 on ops routes; and nothing secret reaches the logs.

const ALICE_TOKENS = ['sim-alice-phone-7f3e9a1c55d04b2e', 'sim-500-alice-tablet-c0ffee'];
const encoder = new TextEncoder();
const unix = (date: Date) => Math.floor(date.getTime() / 1000);

describe('isolation and auth', () => {
  let db: TestDatabase;
  let api: TestApi;
  let alice: string;
  let bob: string;
  let ops: string;
  let reminderId: string;
  let jobId: string;

  beforeAll(async () => {
    db = await createTestDatabase();
    // The worker runs in-process too, so its log lines (sends, retries) are in the capture.
    api = await startTestApi({ databaseUrl: db.url, worker: { pollIntervalMs: 50 } });
    alice = await api.token('alice');
    bob = await api.token('bob');
    ops = await api.token('operator', ['ops']);
    expect((await api.request('PUT', '/v1/me', { token: alice, body: { timeZone: 'UTC' } })).status).toBe(201);
    expect((await api.request('PUT', '/v1/me', { token: bob, body: { timeZone: 'UTC' } })).status).toBe(201);
    for (const [i, pushToken] of ALICE_TOKENS.entries()) {
      expect((await api.request('PUT', `/v1/me/devices/alice-${i}`, { token: alice, body: { platform: 'ios', pushToken } })).status).toBe(
        201,
      );
    }
    expect(
      (await api.request('PUT', '/v1/me/devices/bob-0', { token: bob, body: { platform: 'android', pushToken: 'sim-bob-phone' } })).status,
    ).toBe(201);
    const created = await api.request('POST', '/v1/reminders', {
      token: alice,
      body: { title: 'Private', localTime: '12:30', recurrence: 'FREQ=DAILY' },
    });
    expect(created.status).toBe(201);
    reminderId = created.body.id;
    // Due in 30 minutes: run it, so that there is delivery history (and worker logs).
    api.clock.set('2026-03-02T12:30:01Z');
    const { rows } = await eventually(async () => {
      const result = await db.pool.query<{ id: string }>(`SELECT job_id AS id FROM push_deliveries WHERE status = 'sent'`);
      return result.rows.length > 0 ? result : undefined;
    }, 'the reminder to be delivered');
    jobId = rows[0]!.id;
  });
  afterAll(async () => {
    await api?.close();
    await db?.drop();
  });

  it("answers another user's ids with the same 404 as ids that do not exist, and changes nothing", async () => {
    const before = await databaseSnapshot(db.pool);
    const missing = '00000000-0000-4000-8000-000000000000';
    const attempts: [string, string, unknown?][] = [
      ['GET', `/v1/reminders/${reminderId}`],
      ['PATCH', `/v1/reminders/${reminderId}`, { title: 'mine now', enabled: false }],
      ['DELETE', `/v1/reminders/${reminderId}`],
      ['GET', `/v1/reminders/${reminderId}/occurrences`],
      ['GET', `/v1/reminders/${reminderId}/deliveries`],
      ['DELETE', '/v1/me/devices/alice-0'],
    ];
    for (const [method, path, body] of attempts) {
      const theirs = await api.request(method, path, { token: bob, body });
      const nobody = await api.request(method, path.replace(reminderId, missing).replace('alice-0', 'nobody-0'), { token: bob, body });
      expect(theirs.status, `${method} ${path}`).toBe(404);
      // Same answer for "theirs" and "nobody's": the response tells bob nothing.
      expect({ ...theirs.body, instance: undefined }).toEqual({ ...nobody.body, instance: undefined });
    }
    // Bob's own listings show nothing of alice's.
    const list = await api.request('GET', '/v1/reminders', { token: bob });
    expect(list.body.items).toEqual([]);
    const devices = await api.request('GET', '/v1/me/devices', { token: bob });
    expect(devices.body.devices.map((d: { installationId: string }) => d.installationId)).toEqual(['bob-0']);
    expect(await databaseSnapshot(db.pool)).toEqual(before);
    // And alice still has all of it.
    expect((await api.request('GET', `/v1/reminders/${reminderId}`, { token: alice })).body.title).toBe('Private');
  });

  it('never shows a push token in full, not even to its owner', async () => {
    const devices = await api.request('GET', '/v1/me/devices', { token: alice });
    const text = JSON.stringify(devices.body);
    for (const token of ALICE_TOKENS) expect(text).not.toContain(token);
    expect(devices.body.devices[0].pushToken).toMatch(/^….{4}$/);
  });

  it('refuses expired, wrongly signed, alg:none, other-algorithm, subject-less and malformed tokens with 401', async () => {
    const now = api.clock.now();
    const secret = encoder.encode(TEST_SECRET);
    const sign = (claims: Record<string, unknown>, alg = 'HS256', key = secret) =>
      new SignJWT(claims).setProtectedHeader({ alg }).sign(key);
    const b64 = (value: object) => Buffer.from(JSON.stringify(value)).toString('base64url');
    const [header, payload, signature] = alice.split('.');
    const bad: Record<string, string> = {
      expired: await sign({ sub: 'alice', iat: unix(now) - 7200, exp: unix(now) - 60 }),
      'not yet valid': await sign({ sub: 'alice', nbf: unix(now) + 3600 }),
      'wrong secret': await sign({ sub: 'alice' }, 'HS256', encoder.encode('x'.repeat(48))),
      'alg none': `${b64({ alg: 'none', typ: 'JWT' })}.${b64({ sub: 'alice', scope: 'ops' })}.`,
      'alg HS512 with the right secret': await sign({ sub: 'alice' }, 'HS512'),
      'no subject': await sign({ scope: 'ops' }),
      'empty subject': await sign({ sub: '' }),
      'subject over 128 characters': await sign({ sub: 'a'.repeat(129) }),
      'subject with a NUL': await sign({ sub: 'al\u0000ice' }),
      'subject with control characters': await sign({ sub: 'alice\n{"level":60}' }),
      // Stored as U+FFFD, it would be the same user as every other lone surrogate in that place.
      'subject with a lone surrogate': await sign({ sub: 'alice\ud800' }),
      'payload swapped under the same signature': `${header}.${b64({ sub: 'bob', scope: 'ops' })}.${signature}`,
      'signature stripped': `${header}.${payload}.`,
      garbage: 'not-a-jwt',
    };
    for (const [what, token] of Object.entries(bad)) {
      for (const [method, path] of [
        ['GET', '/v1/me'],
        ['PUT', '/v1/me'],
        ['GET', '/v1/ops/queue'],
      ] as const) {
        const res = await api.request(method, path, { token, body: method === 'PUT' ? { timeZone: 'UTC' } : undefined });
        expect(res.status, `${what}: ${method} ${path}`).toBe(401);
        expect(res.headers.get('content-type')).toMatch(/^application\/problem\+json/);
      }
    }
    // A scheme other than Bearer, or none at all.
    for (const authorization of ['', `Basic ${Buffer.from('alice:pw').toString('base64')}`, `bearer${alice}`, `Bearer ${alice} extra`]) {
      expect((await api.request('GET', '/v1/me', { headers: { authorization } })).status, authorization).toBe(401);
    }
  });

  it('refuses user tokens (no scope, or other scopes) on every ops and service endpoint with 403, and writes nothing', async () => {
    const before = await databaseSnapshot(db.pool);
    const scopeless = await new SignJWT({ sub: 'mallory' }).setProtectedHeader({ alg: 'HS256' }).sign(encoder.encode(TEST_SECRET));
    const lookalike = await api.token('mallory', ['opsx', 'admin', 'OPS']);
    const routes: [string, string, unknown?][] = [
      ['GET', '/v1/ops/queue'],
      ['GET', '/v1/ops/jobs'],
      ['GET', `/v1/ops/jobs/${jobId}`],
      ['POST', `/v1/ops/jobs/${jobId}/retry`],
      ['POST', `/v1/ops/jobs/${jobId}/cancel`],
      ['POST', '/v1/ops/token-cleanup', { inactiveDays: 1 }],
      ['POST', '/v1/notifications', { userId: 'alice', title: 'spoofed', idempotencyKey: 'spoof-1' }],
    ];
    for (const token of [alice, scopeless, lookalike]) {
      for (const [method, path, body] of routes) {
        const res = await api.request(method, path, { token, body });
        expect(res.status, `${method} ${path}`).toBe(403);
      }
    }
    expect(await databaseSnapshot(db.pool)).toEqual(before);
    // The ops token does get through.
    expect((await api.request('GET', `/v1/ops/jobs/${jobId}`, { token: ops })).status).toBe(200);
  });

  it('shows ops the job without the push tokens', async () => {
    const job = await api.request('GET', `/v1/ops/jobs/${jobId}`, { token: ops });
    const text = JSON.stringify(job.body);
    for (const token of ALICE_TOKENS) expect(text).not.toContain(token);
  });

  it('delivered only to the owner, with the collapse id of the reminder', async () => {
    const { rows } = await db.pool.query<{ push_token: string; collapse_id: string }>(
      `SELECT push_token, collapse_id FROM simulated_pushes`,
    );
    expect(rows.length).toBeGreaterThan(0);
    for (const row of rows) {
      expect(ALICE_TOKENS).toContain(row.push_token);
      expect(row.collapse_id).toBe(collapseIdFor(`reminder:${reminderId}`));
    }
  });

  it('wrote no push token, bearer token or secret to the logs of the whole run', async () => {
    // The run had requests with every bad token above, a send, a 500 retry and 4xx answers.
    expect(api.logs.lines.length).toBeGreaterThan(20);
    expect(api.logs.text).toMatch(/job failed; will retry/);
    const secrets = [...ALICE_TOKENS, 'sim-bob-phone', alice, bob, ops, TEST_SECRET];
    for (const secret of secrets) expect(api.logs.text).not.toContain(secret);
    // No JWT-shaped string at all (three base64url parts, the first an encoded JSON header).
    expect(api.logs.text).not.toMatch(/eyJ[A-Za-z0-9_-]{5,}\.[A-Za-z0-9_-]+\./);
  });
});
