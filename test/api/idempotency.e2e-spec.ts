import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestDatabase, type TestDatabase } from '../support/database.js';
import { startTestApi, type TestApi } from '../support/api-app.js';

// Idempotency-Key on every creating POST (apps/api/src/http/idempotency.interceptor.ts),
// against the real API and PostgreSQL with a pinned clock and no worker, so that
// every job a request made is still there to count.

describe('Idempotency-Key on creating POSTs', () => {
  let db: TestDatabase;
  let api: TestApi;
  let ops: string;

  beforeAll(async () => {
    db = await createTestDatabase();
    api = await startTestApi({ databaseUrl: db.url });
    ops = await api.token('backend', ['ops']);
  });
  afterAll(async () => {
    await api?.close();
    await db?.drop();
  });

  /** A POST as a client sends it, with the answer's exact text (a replay must repeat it byte for byte). */
  async function post(path: string, token: string, body: unknown, key?: string) {
    const response = await fetch(api.baseUrl + path, {
      method: 'POST',
      headers: {
        'content-type': 'application/json',
        authorization: `Bearer ${token}`,
        ...(key !== undefined ? { 'idempotency-key': key } : {}),
      },
      body: typeof body === 'string' ? body : JSON.stringify(body),
    });
    const text = await response.text();
    return {
      status: response.status,
      text,
      body: text ? JSON.parse(text) : undefined,
      contentType: response.headers.get('content-type'),
      replayed: response.headers.get('idempotent-replayed'),
    };
  }

  async function userWithProfile(id: string): Promise<string> {
    const bearer = await api.token(id);
    expect((await api.request('PUT', '/v1/me', { token: bearer, body: { timeZone: 'Europe/Berlin' } })).status).toBe(201);
    return bearer;
  }

  const count = async (sql: string, params: unknown[] = []) => (await db.pool.query<{ n: number }>(sql, params)).rows[0]!.n;
  const remindersOf = (userId: string) => count(`SELECT count(*)::int AS n FROM reminders WHERE user_id = $1`, [userId]);
  const reminderJobsOf = (userId: string) =>
    count(`SELECT count(*)::int AS n FROM reminder_jobs o JOIN reminders r ON r.id = o.reminder_id WHERE r.user_id = $1`, [userId]);
  const jobsOfKind = (kind: string) => count(`SELECT count(*)::int AS n FROM jobs WHERE kind = $1`, [kind]);
  const keyRows = (principal: string, key: string) =>
    count(`SELECT count(*)::int AS n FROM idempotency_keys WHERE user_id = $1 AND key = $2`, [principal, key]);

  const reminder = { title: 'Stretch', localTime: '08:00', recurrence: 'FREQ=DAILY', data: { screen: 'stretch' } };

  describe('POST /v1/reminders', () => {
    it('answers the same key and body again with the first answer, status and exact body, and creates nothing more', async () => {
      const bearer = await userWithProfile('replay');
      const first = await post('/v1/reminders', bearer, reminder, 'k-1');
      expect(first.status).toBe(201);
      expect(first.replayed).toBeNull();
      // The same body with its keys in another order is the same request.
      const reordered = Object.fromEntries(Object.entries(reminder).reverse());
      const again = await post('/v1/reminders', bearer, reordered, 'k-1');
      expect(again.status).toBe(201);
      expect(again.replayed).toBe('true');
      expect(again.text).toBe(first.text);
      expect(await remindersOf('replay')).toBe(1);
      expect(await reminderJobsOf('replay')).toBe(1);

      // Another key is another request: a second reminder.
      const other = await post('/v1/reminders', bearer, reminder, 'k-2');
      expect(other.status).toBe(201);
      expect(other.body.id).not.toBe(first.body.id);
      expect(await remindersOf('replay')).toBe(2);
    });

    it('answers 409 problem+json for the same key with another body, and writes nothing', async () => {
      const bearer = await userWithProfile('clash');
      expect((await post('/v1/reminders', bearer, reminder, 'k-1')).status).toBe(201);
      const clash = await post('/v1/reminders', bearer, { ...reminder, title: 'Something else' }, 'k-1');
      expect(clash.status).toBe(409);
      expect(clash.contentType).toMatch(/^application\/problem\+json/);
      expect(clash.body).toMatchObject({ status: 409, detail: expect.stringMatching(/Idempotency-Key/) });
      expect(await remindersOf('clash')).toBe(1);
      expect(await reminderJobsOf('clash')).toBe(1);
    });

    it('makes one reminder for several identical requests at once: the first creates, the others wait and replay it', async () => {
      const bearer = await userWithProfile('racer');
      const answers = await Promise.all(Array.from({ length: 6 }, () => post('/v1/reminders', bearer, reminder, 'race-1')));
      expect(answers.map((a) => a.status)).toEqual(Array(6).fill(201));
      expect(new Set(answers.map((a) => a.text)).size).toBe(1);
      expect(answers.filter((a) => a.replayed === null)).toHaveLength(1);
      expect(await remindersOf('racer')).toBe(1);
      expect(await reminderJobsOf('racer')).toBe(1);
    });

    it('refuses a malformed key with a 400 naming the header, and writes nothing', async () => {
      const bearer = await userWithProfile('malformed');
      for (const key of ['', 'has space', 'x'.repeat(256), 'tab\there']) {
        const res = await post('/v1/reminders', bearer, reminder, key);
        expect(res.status, JSON.stringify(key)).toBe(400);
        expect(res.contentType).toMatch(/^application\/problem\+json/);
        expect(res.body.errors).toEqual([{ path: 'Idempotency-Key', message: expect.any(String) }]);
      }
      expect(await post('/v1/reminders', bearer, reminder, 'x'.repeat(255))).toMatchObject({ status: 201 });
      expect(await remindersOf('malformed')).toBe(1);
      expect(await count(`SELECT count(*)::int AS n FROM idempotency_keys WHERE user_id = 'malformed'`)).toBe(1);
    });

    it("keeps each user's keys apart: another user's same key and body is a request of its own", async () => {
      const alice = await userWithProfile('scoped-a');
      const bob = await userWithProfile('scoped-b');
      const a = await post('/v1/reminders', alice, reminder, 'shared-key');
      const b = await post('/v1/reminders', bob, reminder, 'shared-key');
      expect([a.status, b.status]).toEqual([201, 201]);
      expect(b.replayed).toBeNull();
      expect(b.body.id).not.toBe(a.body.id);
      expect([await remindersOf('scoped-a'), await remindersOf('scoped-b')]).toEqual([1, 1]);
      // Bob's reminder is his: Alice cannot see it, whatever key she replays.
      expect((await api.request('GET', `/v1/reminders/${b.body.id}`, { token: alice })).status).toBe(404);
    });

    it('keeps no error answer: after a 400 or 409 the client fixes the request and retries with the same key', async () => {
      const bearer = await api.token('late-profile');
      // No profile yet: 409, and the key stays free.
      expect((await post('/v1/reminders', bearer, reminder, 'k-1')).status).toBe(409);
      expect(await keyRows('late-profile', 'k-1')).toBe(0);
      expect((await api.request('PUT', '/v1/me', { token: bearer, body: { timeZone: 'Asia/Tokyo' } })).status).toBe(201);
      // A bad body: 400, the key still free; the fixed body (another body, same key) creates.
      const bad = await post('/v1/reminders', bearer, { ...reminder, localTime: '25:00' }, 'k-1');
      expect(bad.status).toBe(400);
      expect(await keyRows('late-profile', 'k-1')).toBe(0);
      const fixed = await post('/v1/reminders', bearer, reminder, 'k-1');
      expect(fixed.status).toBe(201);
      expect(fixed.replayed).toBeNull();
      expect(await remindersOf('late-profile')).toBe(1);
    });
    it("forgets a user's keys with the user: an account made again under the id is not answered with the deleted reminder", async () => {
      const bearer = await userWithProfile('leaver');
      const first = await post('/v1/reminders', bearer, reminder, 'k-1');
      expect(first.status).toBe(201);
      expect((await api.request('DELETE', '/v1/me', { token: bearer })).status).toBe(204);
      expect(await keyRows('leaver', 'k-1')).toBe(0);

      expect((await api.request('PUT', '/v1/me', { token: bearer, body: { timeZone: 'Europe/Berlin' } })).status).toBe(201);
      const again = await post('/v1/reminders', bearer, reminder, 'k-1');
      expect(again.status).toBe(201);
      expect(again.replayed).toBeNull();
      expect(again.body.id).not.toBe(first.body.id);
      expect((await api.request('GET', `/v1/reminders/${again.body.id}`, { token: bearer })).status).toBe(200);
    });
  });

  describe('one transaction for the key, the resource and the stored answer', () => {
    // Faults injected by triggers, switched on per user in test_faults: `write` fails the reminder's
    // INSERT (after the key was claimed); `answer` fails storing the answer and `crash` kills the
    // connection there (both after the reminder and its job were written).
    beforeAll(async () => {
      await db.pool.query(`
        CREATE TABLE test_faults (user_id text, kind text);
        CREATE FUNCTION test_fault() RETURNS trigger LANGUAGE plpgsql AS $$
        DECLARE fault text;
        BEGIN
          SELECT kind INTO fault FROM test_faults WHERE user_id = NEW.user_id;
          IF fault = TG_ARGV[0] THEN RAISE EXCEPTION 'injected fault'; END IF;
          IF fault = 'crash' AND TG_ARGV[0] = 'answer' THEN PERFORM pg_terminate_backend(pg_backend_pid()); END IF;
          RETURN NEW;
        END $$;
        CREATE TRIGGER test_fault_write BEFORE INSERT ON reminders FOR EACH ROW EXECUTE FUNCTION test_fault('write');
        CREATE TRIGGER test_fault_answer BEFORE UPDATE ON idempotency_keys FOR EACH ROW EXECUTE FUNCTION test_fault('answer');`);
    });
    afterAll(async () => {
      await db.pool.query(`DROP TRIGGER test_fault_write ON reminders; DROP TRIGGER test_fault_answer ON idempotency_keys;
                           DROP FUNCTION test_fault(); DROP TABLE test_faults;`);
    });
    const fault = (userId: string, kind: string | null) =>
      kind === null
        ? db.pool.query(`DELETE FROM test_faults WHERE user_id = $1`, [userId])
        : db.pool.query(`INSERT INTO test_faults VALUES ($1, $2)`, [userId, kind]);

    it.each(['write', 'answer', 'crash'])(
      'leaves no reminder, job or key behind when the request fails after the claim (%s), and the retry with the key creates once',
      async (kind) => {
        const user = `fault-${kind}`;
        const bearer = await userWithProfile(user);
        await fault(user, kind);
        const res = await post('/v1/reminders', bearer, reminder, 'k-1');
        expect(res.status).toBeGreaterThanOrEqual(500);
        expect(await remindersOf(user)).toBe(0);
        expect(await reminderJobsOf(user)).toBe(0);
        expect(await count(`SELECT count(*)::int AS n FROM jobs WHERE payload->>'userId' = $1`, [user])).toBe(0);
        expect(await keyRows(user, 'k-1')).toBe(0);

        // The fault is gone; the client retries the same request with the same key: one reminder, one job, one key.
        await fault(user, null);
        const retried = await post('/v1/reminders', bearer, reminder, 'k-1');
        expect(retried.status).toBe(201);
        expect(retried.replayed).toBeNull();
        expect(await remindersOf(user)).toBe(1);
        expect(await reminderJobsOf(user)).toBe(1);
        const { rows } = await db.pool.query(`SELECT status_code, response FROM idempotency_keys WHERE user_id = $1 AND key = 'k-1'`, [
          user,
        ]);
        expect(rows).toEqual([{ status_code: 201, response: retried.body }]);
      },
    );

    it('has every committed key hold a stored answer', async () => {
      expect(await count(`SELECT count(*)::int AS n FROM idempotency_keys WHERE status_code = 0`)).toBe(0);
    });
  });

  describe('POST /v1/notifications (ops)', () => {
    const notification = (eventKey: string) => ({ userId: 'someone', title: 'Order shipped', idempotencyKey: eventKey });

    it('replays the first 202 for the same header key and body, 409 for another body', async () => {
      const before = await jobsOfKind('send_notification');
      const first = await post('/v1/notifications', ops, notification('order-1'), 'h-1');
      expect(first.status).toBe(202);
      const again = await post('/v1/notifications', ops, notification('order-1'), 'h-1');
      expect(again).toMatchObject({ status: 202, replayed: 'true', text: first.text });
      const clash = await post('/v1/notifications', ops, notification('order-2'), 'h-1');
      expect(clash.status).toBe(409);
      expect(clash.contentType).toMatch(/^application\/problem\+json/);
      expect(await jobsOfKind('send_notification')).toBe(before + 1);
    });

    it("keeps the body key's rule: the same idempotencyKey under another header key (or none) is the same job", async () => {
      const first = await post('/v1/notifications', ops, notification('order-3'), 'h-a');
      const otherHeader = await post('/v1/notifications', ops, notification('order-3'), 'h-b');
      const noHeader = await post('/v1/notifications', ops, notification('order-3'));
      expect([first.status, otherHeader.status, noHeader.status]).toEqual([202, 202, 202]);
      expect(otherHeader.replayed).toBeNull();
      expect(new Set([first.body.jobId, otherHeader.body.jobId, noHeader.body.jobId]).size).toBe(1);
      expect(await count(`SELECT count(*)::int AS n FROM jobs WHERE idempotency_key = 'notification:order-3'`)).toBe(1);
    });

    it('makes one job for identical requests at once', async () => {
      const answers = await Promise.all(Array.from({ length: 5 }, () => post('/v1/notifications', ops, notification('order-4'), 'h-race')));
      expect(answers.map((a) => a.status)).toEqual(Array(5).fill(202));
      expect(new Set(answers.map((a) => a.body.jobId)).size).toBe(1);
      expect(answers.filter((a) => a.replayed === null)).toHaveLength(1);
      expect(await count(`SELECT count(*)::int AS n FROM jobs WHERE idempotency_key = 'notification:order-4'`)).toBe(1);
    });

    it("scopes header keys by the ops token's subject", async () => {
      const other = await api.token('another-backend', ['ops']);
      const a = await post('/v1/notifications', ops, notification('order-5'), 'h-shared');
      const b = await post('/v1/notifications', other, notification('order-6'), 'h-shared');
      expect([a.status, b.status]).toEqual([202, 202]);
      expect(b.body.jobId).not.toBe(a.body.jobId);
    });

    it('refuses a malformed header key with 400 and enqueues nothing', async () => {
      const before = await jobsOfKind('send_notification');
      const res = await post('/v1/notifications', ops, notification('order-7'), 'not ok');
      expect(res.status).toBe(400);
      expect(res.body.errors).toEqual([{ path: 'Idempotency-Key', message: expect.any(String) }]);
      expect(await jobsOfKind('send_notification')).toBe(before);
    });

    it('enqueues no job when storing the answer fails', async () => {
      await db.pool.query(`
        CREATE FUNCTION test_fail_n() RETURNS trigger LANGUAGE plpgsql AS $$ BEGIN RAISE EXCEPTION 'injected fault'; END $$;
        CREATE TRIGGER test_fail_n BEFORE UPDATE ON idempotency_keys FOR EACH ROW WHEN (NEW.key = 'h-fail') EXECUTE FUNCTION test_fail_n();`);
      try {
        const res = await post('/v1/notifications', ops, notification('order-8'), 'h-fail');
        expect(res.status).toBeGreaterThanOrEqual(500);
        expect(await count(`SELECT count(*)::int AS n FROM jobs WHERE idempotency_key = 'notification:order-8'`)).toBe(0);
        expect(await keyRows('backend', 'h-fail')).toBe(0);
      } finally {
        await db.pool.query(`DROP TRIGGER test_fail_n ON idempotency_keys; DROP FUNCTION test_fail_n();`);
      }
    });
  });

  describe('POST /v1/ops/token-cleanup', () => {
    it('replays the first job for the same key; without a key each request queues a cleanup, as before', async () => {
      const before = await jobsOfKind('token_cleanup');
      const first = await post('/v1/ops/token-cleanup', ops, { inactiveDays: 30 }, 'cleanup-1');
      const again = await post('/v1/ops/token-cleanup', ops, { inactiveDays: 30 }, 'cleanup-1');
      expect(first.status).toBe(202);
      expect(again).toMatchObject({ status: 202, replayed: 'true', text: first.text });
      expect((await post('/v1/ops/token-cleanup', ops, { inactiveDays: 90 }, 'cleanup-1')).status).toBe(409);
      expect(await jobsOfKind('token_cleanup')).toBe(before + 1);
      expect((await post('/v1/ops/token-cleanup', ops, { inactiveDays: 30 })).status).toBe(202);
      expect(await jobsOfKind('token_cleanup')).toBe(before + 2);
    });
  });

  it('documents the header on every POST that creates (answers 201 or 202), and on no other', async () => {
    const doc = (await api.request('GET', '/docs-json')).body;
    const creating: string[] = [];
    const withHeader: string[] = [];
    for (const [path, operations] of Object.entries<Record<string, any>>(doc.paths)) {
      const op = operations.post;
      if (!op) continue;
      if (Object.keys(op.responses).some((status) => status === '201' || status === '202')) creating.push(path);
      if ((op.parameters ?? []).some((p: { in: string; name: string }) => p.in === 'header' && p.name === 'Idempotency-Key')) {
        withHeader.push(path);
      }
    }
    expect(creating).toEqual(expect.arrayContaining(['/v1/reminders', '/v1/notifications', '/v1/ops/token-cleanup']));
    expect(withHeader.sort()).toEqual(creating.sort());
  });
});
