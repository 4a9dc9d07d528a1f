import fc from 'fast-check';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestDatabase, type TestDatabase } from '../support/database.js';
import { startTestApi, type TestApi } from '../support/api-app.js';
import { databaseSnapshot } from '../support/snapshot.js';
import { fuzzRuns } from '../support/fuzz.js';

// Property-based requests against every endpoint: whatever arrives, the answer
// is never a 5xx, every 4xx is problem+json, and a refused request leaves
// every table exactly as it was (row counts and an md5 of every row).

const INJECTION = [
  "'; DROP TABLE users; --",
  "' OR '1'='1",
  '" OR 1=1 --',
  '1; SELECT pg_sleep(10)',
  '<script>alert(1)</script>',
  '"><img src=x onerror=alert(1)>',
  '${jndi:ldap://evil/x}',
  '{{7*7}}',
  '../../../../etc/passwd',
  '%00',
  '\u0000',
  'a\u0000b',
  '\ud800',
  '\u202e\u0041',
  '💥'.repeat(300),
  'null',
  'NaN',
  '-1',
  '1e309',
  '__proto__',
  'constructor',
];
// Strings that each parser must refuse (or accept) without falling over.
const TIME_ISH = ['24:00', '23:60', '-01:00', '8:00', '08:00:00', '08:00\n', '０８:００', '99:99'];
const DATE_ISH = ['9999-12-31', '0000-01-01', '2026-02-30', '2026-13-01', '+275760-09-13', '1969-12-31', '2026-1-1', '20260101'];
const ZONE_ISH = [
  'EST',
  '-06:00',
  'UTC+5',
  'Etc/GMT+14',
  'America/New_York\u0000',
  'Europe/../../etc',
  'utc',
  'Mars/Olympus',
  'America/Ciudad_Juarez',
  'posix/Europe/Paris',
];
const RULE_ISH = [
  'FREQ=DAILY;COUNT=999999999',
  'FREQ=SECONDLY',
  'FREQ=HOURLY',
  'FREQ=DAILY;INTERVAL=0',
  'FREQ=DAILY;INTERVAL=99999999999',
  'FREQ=YEARLY;BYMONTH=2;BYMONTHDAY=30',
  'FREQ=YEARLY;BYMONTH=2;BYMONTHDAY=29;INTERVAL=3',
  'FREQ=MONTHLY;BYMONTHDAY=31;BYSETPOS=-1',
  'FREQ=MONTHLY;BYDAY=5FR',
  'FREQ=DAILY;UNTIL=99991231T000000Z',
  'FREQ=DAILY;UNTIL=20000101',
  'FREQ=WEEKLY;BYDAY=XX',
  'FREQ=WEEKLY;BYDAY=MO,MO,MO',
  'DTSTART:20260101T000000Z\nRRULE:FREQ=DAILY',
  'RRULE:FREQ=DAILY',
  'FREQ=DAILY;FREQ=WEEKLY',
  'FREQ=YEARLY;BYMONTH=13',
  'FREQ=MONTHLY;BYMONTHDAY=-32',
  'FREQ=DAILY;COUNT=-1',
  'FREQ=DAILY;WKST=XX',
];

const evilString = fc.oneof(
  fc.constantFrom(...INJECTION, ...TIME_ISH, ...DATE_ISH, ...ZONE_ISH, ...RULE_ISH),
  fc.string({ maxLength: 40 }),
  fc.string({ unit: 'binary', maxLength: 40 }),
  fc.string({ unit: 'grapheme', maxLength: 40 }),
  fc.integer({ min: 200, max: 70_000 }).map((n) => 'x'.repeat(n)),
);
const evilNumber = fc.oneof(
  fc.integer(),
  fc.double(),
  fc.constantFrom(-1, 0, 2 ** 31, 2 ** 53 + 1, Number.MAX_VALUE, -Number.MAX_VALUE, 1e-300),
);
// Any JSON value, with a bias towards the ones that break parsers.
const evilValue: fc.Arbitrary<unknown> = fc.oneof(
  { weight: 4, arbitrary: evilString },
  { weight: 2, arbitrary: evilNumber },
  fc.boolean(),
  fc.constant(null),
  fc.jsonValue({ maxDepth: 3 }),
  fc.integer({ min: 50, max: 3000 }).map((depth) => nested(depth)),
);

function nested(depth: number): unknown {
  let value: unknown = {};
  for (let i = 0; i < depth; i++) value = { a: value };
  return value;
}

/** A body built field by field, each field either a good value, a bad one, or absent; sometimes an extra field. */
function bodyOf(fields: Record<string, fc.Arbitrary<unknown>>): fc.Arbitrary<Record<string, unknown>> {
  const entries = Object.entries(fields).map(([key, good]) =>
    fc
      .oneof({ weight: 3, arbitrary: good }, { weight: 2, arbitrary: evilValue }, { weight: 1, arbitrary: fc.constant(ABSENT) })
      .map((v) => [key, v] as const),
  );
  return fc
    .tuple(
      fc.tuple(...entries),
      fc.option(fc.tuple(fc.constantFrom('__proto__', 'constructor', 'extra', 'userId', 'id', 'version'), evilValue), { freq: 4 }),
    )
    .map(([pairs, extra]) => {
      const body: Record<string, unknown> = {};
      for (const [key, value] of pairs) if (value !== ABSENT) body[key] = value;
      // defineProperty: `__proto__` must become a real key of the JSON text.
      if (extra) Object.defineProperty(body, extra[0], { value: extra[1], enumerable: true, configurable: true, writable: true });
      return body;
    });
}
const ABSENT = Symbol('absent');

const pathSegment = fc.oneof(
  fc.uuid(),
  evilString,
  fc.constantFrom(
    '0',
    '-1',
    '9999999999999999999',
    '9223372036854775807',
    '9223372036854775808',
    '1e3',
    '0x10',
    '00000000-0000-0000-0000-000000000000',
    '%2e%2e',
    '..',
  ),
  // Sent as they are, not percent-encoded: broken escapes and invalid UTF-8.
  fc.constantFrom('%', '%ff', '%E0%A4%A', '%00', '%C0%AF', 'a%2Fb').map((raw) => `RAW:${raw}`),
);

/** A path segment as a client would send it; `RAW:` ones go out untouched. */
function segment(value: string): string {
  return value.startsWith('RAW:')
    ? value.slice(4)
    : encodeURIComponent(value.replace(/[\ud800-\udbff](?![\udc00-\udfff])|(?<![\ud800-\udbff])[\udc00-\udfff]/g, '\ufffd'));
}

describe('bad input', () => {
  let db: TestDatabase;
  let api: TestApi;
  let alice: string;
  let ops: string;
  let reminderId: string;
  let jobId: string;
  const fiveHundreds: string[] = [];

  beforeAll(async () => {
    db = await createTestDatabase();
    api = await startTestApi({ databaseUrl: db.url });
    alice = await api.token('alice');
    ops = await api.token('operator', ['ops']);
    expect((await api.request('PUT', '/v1/me', { token: alice, body: { timeZone: 'Europe/Berlin' } })).status).toBe(201);
    expect(
      (await api.request('PUT', '/v1/me/devices/phone-1', { token: alice, body: { platform: 'ios', pushToken: 'sim-alice-phone' } }))
        .status,
    ).toBe(201);
    const created = await api.request('POST', '/v1/reminders', {
      token: alice,
      body: { title: 'Stretch', localTime: '08:00', recurrence: 'FREQ=DAILY' },
    });
    expect(created.status).toBe(201);
    reminderId = created.body.id;
    const { rows } = await db.pool.query<{ id: string }>(`SELECT id FROM jobs ORDER BY id LIMIT 1`);
    jobId = rows[0]!.id;
  });
  afterAll(async () => {
    await api?.close();
    await db?.drop();
  });

  interface Attempt {
    method: string;
    path: string;
    token?: string;
    body?: unknown;
    rawBody?: string;
    headers?: Record<string, string>;
  }

  /**
   * Sends one request; a 5xx is recorded (and fails the property), a 4xx must be
   * problem+json and must not have changed a row; a 2xx may change rows and
   * becomes the new baseline.
   */
  async function check(attempt: Attempt): Promise<number> {
    const before = await databaseSnapshot(db.pool);
    const res = await api.request(attempt.method, attempt.path, attempt);
    const shown = `${attempt.method} ${attempt.path.slice(0, 200)} ${(attempt.rawBody ?? JSON.stringify(attempt.body) ?? '').slice(0, 300)}`;
    if (res.status >= 500) {
      const logged = api.logs.lines.find((line) => res.body?.errorId && line.includes(res.body.errorId));
      fiveHundreds.push(`${res.status} ${shown} -> ${logged?.slice(0, 1500) ?? JSON.stringify(res.body)}`);
    }
    expect(res.status, shown).toBeLessThan(500);
    if (res.status >= 400) {
      expect(res.headers.get('content-type'), shown).toMatch(/^application\/problem\+json/);
      expect(res.body.status, shown).toBe(res.status);
      expect(await databaseSnapshot(db.pool), shown).toEqual(before);
    }
    return res.status;
  }

  // fc.assert's report quotes whole counterexamples (70 KB strings); this one is cut to size.
  async function holds<Ts extends [unknown, ...unknown[]]>(property: fc.IAsyncProperty<Ts>, params: fc.Parameters<Ts>): Promise<void> {
    const details = await fc.check(property, params);
    if (!details.failed) return;
    const cut = (text: string) => (text.length > 1500 ? `${text.slice(0, 1500)}… (${text.length} chars)` : text);
    throw new Error(
      `property failed (seed ${details.seed}, path ${details.counterexamplePath}):\n${cut(String(details.errorInstance))}\ncounterexample: ${cut(fc.stringify(details.counterexample))}`,
    );
  }

  it('profile: PUT and PATCH /v1/me with any body', async () => {
    const quietHours = fc.oneof(
      fc.constant(null),
      fc.record({ start: fc.constantFrom('22:00', ...TIME_ISH), end: fc.constantFrom('07:00', ...TIME_ISH) }),
      evilValue,
    );
    const profile = bodyOf({
      timeZone: fc.constantFrom('Europe/Berlin', 'America/Chicago', ...ZONE_ISH),
      locale: fc.constantFrom('en-US', 'pt-PT', null, 'x-klingon', 'en_US', ''),
      quietHours,
      followDeviceTimeZone: fc.boolean(),
      notificationsEnabled: fc.boolean(),
    });
    await holds(
      fc.asyncProperty(fc.constantFrom('PUT', 'PATCH'), profile, async (method, body) => {
        await check({ method, path: '/v1/me', token: alice, body });
      }),
      fuzzRuns(120),
    );
  });

  it('devices: PUT and DELETE /v1/me/devices/{installationId} with any id and body', async () => {
    const device = bodyOf({
      platform: fc.constantFrom('ios', 'android', 'web', 'IOS'),
      pushToken: fc.oneof(fc.constant('sim-fuzz-token'), fc.stringMatching(/^sim-[a-z0-9]{1,20}$/)),
      timeZone: fc.constantFrom('Europe/Lisbon', ...ZONE_ISH),
      appVersion: fc.constantFrom('1.0.0', ''),
      locale: fc.constantFrom('pt-PT', 'zz-ZZZZZZZZZZ'),
    });
    await holds(
      fc.asyncProperty(fc.oneof(fc.constant('phone-2'), pathSegment), device, async (id, body) => {
        await check({ method: 'PUT', path: `/v1/me/devices/${segment(id)}`, token: alice, body });
      }),
      fuzzRuns(120),
    );
    await holds(
      fc.asyncProperty(pathSegment, async (id) => {
        // Never the real device: refusing an unknown id must write nothing.
        fc.pre(id !== 'phone-1' && id !== 'phone-2');
        await check({ method: 'DELETE', path: `/v1/me/devices/${segment(id)}`, token: alice });
      }),
      fuzzRuns(40),
    );
  });

  it('reminders: POST with any body and Idempotency-Key', async () => {
    const reminder = bodyOf({
      title: fc.constantFrom('Stretch', 'Water', { en: 'Stretch', 'de-at': 'Dehnen' }, { 'pt-BR': 'Alongar', en_US: 'x' }),
      body: fc.constantFrom(null, 'Two minutes', { en: 'Two minutes', de: 'Zwei Minuten' }),
      defaultLocale: fc.constantFrom('en', 'de-AT', 'pt-br'),
      localTime: fc.constantFrom('08:00', '02:30', ...TIME_ISH),
      timeZone: fc.constantFrom('Europe/Berlin', 'America/Ciudad_Juarez', ...ZONE_ISH),
      recurrence: fc.constantFrom('FREQ=DAILY', 'FREQ=WEEKLY;BYDAY=MO,FR', 'FREQ=MONTHLY;BYMONTHDAY=-1', ...RULE_ISH),
      startDate: fc.constantFrom('2026-03-02', ...DATE_ISH),
      enabled: fc.boolean(),
      data: fc.oneof(fc.constant(null), fc.dictionary(fc.string({ maxLength: 10 }), fc.jsonValue({ maxDepth: 2 }), { maxKeys: 4 })),
    });
    const key = fc.option(fc.oneof(fc.stringMatching(/^[a-z0-9-]{1,20}$/), evilString), { freq: 3 });
    await holds(
      fc.asyncProperty(reminder, key, async (body, idempotencyKey) => {
        // fetch cannot put every string in a header; those never reach the server.
        const headers: Record<string, string> = {};
        if (idempotencyKey !== null) {
          if (!/^[\t\x20-\x7e\x80-\xff]*$/.test(idempotencyKey)) return;
          headers['idempotency-key'] = idempotencyKey;
        }
        await check({ method: 'POST', path: '/v1/reminders', token: alice, body, headers });
      }),
      fuzzRuns(150),
    );
  });

  it('reminders: GET, PATCH, DELETE, occurrences and deliveries with any id, query and body', async () => {
    const ids = fc.oneof({ weight: 2, arbitrary: fc.constant('REAL') }, { weight: 3, arbitrary: pathSegment });
    const patch = bodyOf({
      title: fc.constantFrom('Renamed', { de: 'Umbenannt', fr: 'Renommé' }),
      body: fc.constantFrom(null, { en: 'Two minutes' }),
      defaultLocale: fc.constantFrom('fr', 'en'),
      localTime: fc.constantFrom('09:15', ...TIME_ISH),
      timeZone: fc.constantFrom(null, 'Asia/Tokyo', ...ZONE_ISH),
      recurrence: fc.constantFrom('FREQ=DAILY', ...RULE_ISH),
      startDate: fc.constantFrom('2026-04-01', ...DATE_ISH),
      enabled: fc.boolean(),
    });
    const query = fc.dictionary(
      fc.constantFrom('limit', 'cursor', 'count', 'after', 'x'),
      fc.oneof(
        fc.constantFrom(
          '1',
          '100',
          '101',
          '0',
          '-1',
          '1e3',
          'NaN',
          'Infinity',
          '9999999999999999999999',
          '2026-03-01T00:00:00Z',
          '9999-12-31T23:59:59Z',
          '0000-01-01T00:00:00Z',
          '2026-02-30T00:00:00Z',
          '275760-09-13T00:00:00Z',
        ),
        evilString,
        cursorLike(),
      ),
      { maxKeys: 3 },
    );
    await holds(
      fc.asyncProperty(
        ids,
        fc.constantFrom('get', 'patch', 'occurrences', 'deliveries', 'list', 'delete'),
        query,
        patch,
        async (raw, what, q, body) => {
          const id = raw === 'REAL' ? reminderId : raw;
          // Only a refused delete may run against the real reminder (it is needed further on).
          if (what === 'delete' && id === reminderId) return;
          const search = new URLSearchParams(q as Record<string, string>).toString();
          const base = `/v1/reminders/${segment(id)}`;
          switch (what) {
            case 'get':
              return void (await check({ method: 'GET', path: base, token: alice }));
            case 'delete':
              return void (await check({ method: 'DELETE', path: base, token: alice }));
            case 'patch':
              return void (await check({ method: 'PATCH', path: base, token: alice, body }));
            case 'occurrences':
              return void (await check({ method: 'GET', path: `${base}/occurrences?${search}`, token: alice }));
            case 'deliveries':
              return void (await check({ method: 'GET', path: `${base}/deliveries`, token: alice }));
            case 'list':
              return void (await check({ method: 'GET', path: `/v1/reminders?${search}`, token: alice }));
          }
        },
      ),
      fuzzRuns(150),
    );
  });

  it('ops: jobs, retry, cancel and the queue with any id and query', async () => {
    const query = fc.dictionary(
      fc.constantFrom('status', 'kind', 'limit', 'cursor'),
      fc.oneof(fc.constantFrom('queued', 'dead', 'bogus', '500', '0', '-5', 'send_reminder'), evilString, cursorLike()),
      { maxKeys: 4 },
    );
    const ids = fc.oneof(fc.constant(jobId), pathSegment);
    await holds(
      fc.asyncProperty(fc.constantFrom('list', 'get', 'retry', 'cancel', 'queue'), ids, query, async (what, id, q) => {
        // Cancelling the real job is a legitimate write; only refused ones are fuzzed.
        if (what === 'cancel' && id === jobId) return;
        const search = new URLSearchParams(q as Record<string, string>).toString();
        const path = {
          list: `/v1/ops/jobs?${search}`,
          get: `/v1/ops/jobs/${segment(id)}`,
          retry: `/v1/ops/jobs/${segment(id)}/retry`,
          cancel: `/v1/ops/jobs/${segment(id)}/cancel`,
          queue: '/v1/ops/queue',
        }[what];
        await check({ method: what === 'retry' || what === 'cancel' ? 'POST' : 'GET', path, token: ops });
      }),
      fuzzRuns(150),
    );
  });

  it('ops: users, timeline, webhooks, apps, kinds and the events feed with any id and query', async () => {
    const query = fc.dictionary(fc.constantFrom('limit', 'cursor', 'after', 'kind'), fc.oneof(evilString, cursorLike()), { maxKeys: 3 });
    await holds(
      fc.asyncProperty(
        fc.constantFrom('user', 'timeline', 'webhook', 'app', 'pause', 'events', 'jobs'),
        fc.oneof(fc.constant('alice'), pathSegment),
        query,
        async (what, id, q) => {
          const search = new URLSearchParams(q as Record<string, string>).toString();
          const path = {
            user: `/v1/ops/users/${segment(id)}?${search}`,
            timeline: `/v1/ops/users/${segment(id)}/timeline?${search}`,
            webhook: `/v1/ops/webhooks/${segment(id)}`,
            app: `/v1/ops/apps/${segment(id)}`,
            // Pausing a real kind is a legitimate write; `alice` is not one.
            pause: `/v1/ops/kinds/${segment(id)}/resume`,
            events: `/v1/ops/events?${search}`,
            jobs: `/v1/ops/jobs?${search}`,
          }[what];
          await check({ method: what === 'pause' ? 'POST' : 'GET', path, token: ops });
        },
      ),
      fuzzRuns(150),
    );
  });

  it('notifications and token cleanup: POST with any body', async () => {
    const notification = bodyOf({
      userId: fc.constantFrom('alice', 'nobody-yet'),
      title: fc.constantFrom('Your order shipped', { en: 'Your order shipped', DE: 'Versandt' }),
      body: fc.constantFrom(null, 'Arriving Thursday', { de: 'Donnerstag', 'zh-hant-tw': '星期四' }),
      defaultLocale: fc.constantFrom('de', 'en'),
      data: fc.oneof(fc.constant(null), fc.dictionary(fc.string({ maxLength: 10 }), fc.jsonValue({ maxDepth: 2 }), { maxKeys: 4 })),
      idempotencyKey: fc.stringMatching(/^[a-z0-9-]{1,20}$/),
      timeSensitive: fc.boolean(),
    });
    const cleanup = bodyOf({ inactiveDays: fc.constantFrom(1, 60, 365) });
    await holds(
      fc.asyncProperty(fc.boolean(), notification, cleanup, async (isNotification, n, c) => {
        await check(
          isNotification
            ? { method: 'POST', path: '/v1/notifications', token: ops, body: n }
            : { method: 'POST', path: '/v1/ops/token-cleanup', token: ops, body: c },
        );
      }),
      fuzzRuns(150),
    );
  });

  it('raw bodies: malformed JSON, wrong content types, deep nesting, non-objects', async () => {
    const rawBodies = fc.oneof(
      fc.constantFrom(
        '{',
        '{"title":',
        '[]',
        '[1,2]',
        '"a string"',
        '42',
        'null',
        'true',
        '{"a":1}{"b":2}',
        '\u0000',
        '{"title":"\\ud800"}',
        '{"title":"\\u0000"}',
        "{'title':'x'}",
        '{"__proto__":{"isAdmin":true}}',
        '{"constructor":{"prototype":{"x":1}}}',
        '',
      ),
      fc.string({ maxLength: 100 }),
      fc.integer({ min: 1000, max: 20_000 }).map((n) => '['.repeat(n) + ']'.repeat(n)),
      fc.integer({ min: 1000, max: 10_000 }).map((n) => '{"data":'.repeat(n) + '1' + '}'.repeat(n)),
      fc.integer({ min: 70, max: 200 }).map((kb) => `{"title":"${'y'.repeat(kb * 1024)}"}`),
    );
    const contentTypes = fc.constantFrom(
      'application/json',
      'application/json; charset=utf-8',
      'application/json; charset=latin1',
      'application/json; charset=utf-16',
      'text/plain',
      'application/x-www-form-urlencoded',
      'multipart/form-data; boundary=x',
      'application/xml',
      'application/merge-patch+json',
      '',
    );
    const targets = fc.constantFrom(
      ['PUT', '/v1/me'],
      ['PATCH', '/v1/me'],
      ['PUT', '/v1/me/devices/phone-3'],
      ['POST', '/v1/reminders'],
      ['PATCH', 'REMINDER'],
      ['POST', '/v1/ops/jobs/1/retry'],
      ['POST', '/v1/notifications'],
      ['POST', '/v1/ops/token-cleanup'],
    );
    await holds(
      fc.asyncProperty(targets, rawBodies, contentTypes, async ([method, path], rawBody, contentType) => {
        const token = path!.startsWith('/v1/ops') || path === '/v1/notifications' ? ops : alice;
        const status = await check({
          method: method!,
          path: path === 'REMINDER' ? `/v1/reminders/${reminderId}` : path!,
          token,
          rawBody,
          headers: { 'content-type': contentType },
        });
        // Anything that is not a JSON object can never be a valid body here (no body at all is an empty PATCH).
        if (rawBody.trim() !== '' && !/^\s*\{/.test(rawBody) && !path!.startsWith('/v1/ops') && path !== '/v1/notifications')
          expect(status).toBeGreaterThanOrEqual(400);
      }),
      fuzzRuns(150),
    );
  });

  // What the properties above found (each was a 500 or a silent 200 before the fix).
  it.each([
    ['PATCH', '/v1/me', { timeZone: null }, 400],
    ['PATCH', '/v1/me', { notificationsEnabled: null }, 400],
    ['PATCH', 'REMINDER', { enabled: null }, 400],
    ['PATCH', 'REMINDER', { startDate: null }, 400],
    ['PUT', '/v1/me', { timeZone: 'Europe/Berlin', quietHours: nested(3000) }, 400],
    ['POST', '/v1/reminders', { title: 'a\u0000b', localTime: '08:00', recurrence: 'FREQ=DAILY' }, 400],
  ] as const)('regression: %s %s %j is a %i', async (method, path, body, status) => {
    const res = await api.request(method, path === 'REMINDER' ? `/v1/reminders/${reminderId}` : path, { token: alice, body });
    expect(res.status).toBe(status);
  });

  it('regression: JSON in another charset than UTF-8 is a 415 problem and changes nothing (a NUL byte as UTF-16 was an empty PATCH, 200)', async () => {
    for (const charset of ['utf-16', 'latin1']) {
      const res = await api.request('PATCH', `/v1/reminders/${reminderId}`, {
        token: alice,
        rawBody: '\u0000',
        headers: { 'content-type': `application/json; charset=${charset}` },
      });
      expect(res.status, charset).toBe(415);
      expect(res.headers.get('content-type')).toContain('application/problem+json');
    }
    // A profile of its own: alice's may be gone by now (the properties above delete at random).
    const utf8 = await api.request('PUT', '/v1/me', {
      token: await api.token('charset-check'),
      rawBody: '{"timeZone":"UTC"}',
      headers: { 'content-type': 'application/json; charset=UTF-8' },
    });
    expect(utf8.status).toBe(201);
  });

  it('regression: a form body is a 415 and a 20 KB URL a 431, both problem+json', async () => {
    const form = await api.request('PATCH', '/v1/me', {
      token: alice,
      rawBody: 'timeZone=UTC',
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
    });
    expect([form.status, form.headers.get('content-type')]).toEqual([415, expect.stringMatching(/^application\/problem\+json/)]);
    const long = await api.request('GET', `/v1/reminders?cursor=${'x'.repeat(20_000)}`, { token: alice });
    expect([long.status, long.headers.get('content-type'), long.body.status]).toEqual([431, 'application/problem+json', 431]);
  });

  it('regression: a cursor carrying an instant PostgreSQL cannot hold is a 400, not a 500', async () => {
    // fast-check found this one: JavaScript's earliest date, which PostgreSQL refused with an error.
    // A user of its own: the properties above may have deleted alice.
    const carol = await api.token('carol');
    expect((await api.request('PUT', '/v1/me', { token: carol, body: { timeZone: 'UTC' } })).status).toBe(201);
    const forged = Buffer.from(JSON.stringify(['-271821-04-20T00:00:00Z', '00000000-0000-0000-0000-000000000000'])).toString('base64url');
    const page = await api.request('GET', `/v1/reminders?cursor=${forged}`, { token: carol });
    expect([page.status, page.body.errors]).toEqual([400, [{ path: 'cursor', message: 'cursor is not one this API returned' }]]);
    const timeline = Buffer.from(JSON.stringify([-8.64e15, 'n', '1'])).toString('base64url');
    const opsPage = await api.request('GET', `/v1/ops/users/carol/timeline?cursor=${timeline}`, { token: ops });
    expect([opsPage.status, opsPage.body.errors]).toEqual([400, [{ path: 'cursor', message: 'cursor is not one this API returned' }]]);
  });

  it('regression: a NUL in the path or the query string is a 400 naming it, not a 500', async () => {
    // Found by hand: GET /v1/ops/users/a%00b and GET /v1/ops/jobs?kind=a%00b reached PostgreSQL, which cannot hold NUL in text.
    const user = await api.request('GET', '/v1/ops/users/a%00b', { token: ops });
    expect([user.status, user.body.errors]).toEqual([400, [{ path: 'path', message: 'the path must not contain NUL characters (%00)' }]]);
    const jobs = await api.request('GET', '/v1/ops/jobs?kind=a%00b&limit=5', { token: ops });
    expect([jobs.status, jobs.body.errors]).toEqual([
      400,
      [{ path: 'kind', message: 'query parameters must not contain NUL characters (%00)' }],
    ]);
    expect((await api.request('GET', '/v1/ops/jobs?kind=a%2500b', { token: ops })).status).toBe(200); // an escaped "%00" is text
  });

  it('found no 5xx in the whole run', () => {
    expect(fiveHundreds).toEqual([]);
  });
});

/** Cursors that look like ours: base64url of near-miss contents. */
function cursorLike(): fc.Arbitrary<string> {
  return fc
    .oneof(
      fc.constantFrom(
        JSON.stringify(['Tuesday 5', '00000000-0000-0000-0000-000000000000']),
        JSON.stringify(['275760-09-13T00:00:00Z', '00000000-0000-0000-0000-000000000000']),
        JSON.stringify(['2026-03-02T12:00:00Z', '00000000-0000-0000-0000-000000000000']),
        JSON.stringify(['2026-03-02T12:00:00Z', "'; DROP TABLE reminders; --"]),
        JSON.stringify(['1', '00000000-0000-0000-0000-000000000000']),
        JSON.stringify(['-271821-04-20T00:00:00Z', '00000000-0000-0000-0000-000000000000']),
        JSON.stringify({ a: 1 }),
        'j:9999999999999999999',
        'j:9223372036854775807',
        'j:-1',
        'j:1e5',
        'j:',
      ),
      fc.jsonValue({ maxDepth: 2 }).map((v) => JSON.stringify(v)),
    )
    .map((text) => Buffer.from(text).toString('base64url'));
}
