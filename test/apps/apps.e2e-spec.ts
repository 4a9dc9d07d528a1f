import { generateKeyPairSync, randomBytes } from 'node:crypto';
import fc from 'fast-check';
import webpush from 'web-push';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestDatabase, type TestDatabase } from '../support/database.js';
import { startTestApi, type TestApi } from '../support/api-app.js';
import { fuzzRuns } from '../support/fuzz.js';
import { generateApnsSigningKey } from '../push/fakes/fake-apns.js';

// PUT /v1/ops/apps/{appId} and GET /v1/ops/apps against the real API and
// PostgreSQL: credentials checked at the PUT (400 naming the field, nothing
// written), secrets sealed at rest and never shown back or logged, a device
// naming its app.

const SECRET_KEY = randomBytes(32).toString('base64');
const apnsKey = generateApnsSigningKey('ABC123DEFG', 'TEAM123456');
const rsa = generateKeyPairSync('rsa', {
  modulusLength: 2048,
  publicKeyEncoding: { type: 'spki', format: 'pem' },
  privateKeyEncoding: { type: 'pkcs8', format: 'pem' },
}).privateKey;
const serviceAccount = {
  type: 'service_account',
  project_id: 'shop-project',
  client_email: 'push@shop-project.iam.gserviceaccount.com',
  private_key: rsa,
};
const vapid = webpush.generateVAPIDKeys();
const EXPO_TOKEN = 'expo-access-token-that-is-secret';

const credentials = () => ({
  name: 'Shop',
  apns: { key: apnsKey.privateKey, keyId: apnsKey.keyId, teamId: apnsKey.teamId, topic: 'com.example.shop', production: true },
  fcm: { serviceAccount: JSON.stringify(serviceAccount) },
  expo: { accessToken: EXPO_TOKEN },
  webPush: { publicKey: vapid.publicKey, privateKey: vapid.privateKey, subject: 'mailto:push@example.com' },
});

/** Pieces of every secret that must never be shown, stored in the clear, or logged. */
const SECRET_PIECES = [apnsKey.privateKey.split('\n')[1]!, rsa.split('\n')[1]!, EXPO_TOKEN, vapid.privateKey, 'PRIVATE KEY'];

describe('apps (ops)', () => {
  let db: TestDatabase;
  let api: TestApi;
  let ops: string;

  beforeAll(async () => {
    db = await createTestDatabase();
    api = await startTestApi({ databaseUrl: db.url, env: { NUDGE_SECRET_KEY: SECRET_KEY } });
    ops = await api.token('operator', ['ops']);
  });
  afterAll(async () => {
    await api?.close();
    await db?.drop();
  });

  const appsRow = async (id: string) => (await db.pool.query(`SELECT * FROM apps WHERE id = $1`, [id])).rows[0];

  it('needs the ops scope', async () => {
    const user = await api.token('someone');
    expect((await api.request('PUT', '/v1/ops/apps/shop', { token: user, body: credentials() })).status).toBe(403);
    expect((await api.request('GET', '/v1/ops/apps', { token: user })).status).toBe(403);
    expect(await appsRow('shop')).toBeUndefined();
  });

  it('creates an app, shows its secrets masked, and stores them sealed', async () => {
    const res = await api.request('PUT', '/v1/ops/apps/shop', { token: ops, body: credentials() });
    expect(res.status).toBe(201);
    expect(res.body).toMatchObject({
      id: 'shop',
      name: 'Shop',
      version: 1,
      apns: { keyId: 'ABC123DEFG', teamId: 'TEAM123456', topic: 'com.example.shop', production: true, key: { set: true } },
      fcm: { projectId: 'shop-project', clientEmail: serviceAccount.client_email, serviceAccount: { set: true } },
      expo: { accessToken: { set: true } },
      webPush: { publicKey: vapid.publicKey, subject: 'mailto:push@example.com', privateKey: { set: true } },
      failing: [],
    });
    expect(res.body.apns.key.fingerprint).toMatch(/^…[0-9a-f]{4}$/);
    const shown = JSON.stringify(res.body) + JSON.stringify((await api.request('GET', '/v1/ops/apps/shop', { token: ops })).body);
    const stored = JSON.stringify(await appsRow('shop'));
    for (const piece of SECRET_PIECES) {
      expect(shown).not.toContain(piece);
      expect(stored).not.toContain(piece);
      expect(api.logs.text).not.toContain(piece);
    }
    expect((await appsRow('shop')).apns.key.sealed).toMatch(/^v1\.[0-9a-f]{8}\./);
  });

  it('refuses bad credentials with a 400 naming each field, and writes nothing', async () => {
    const other = generateKeyPairSync('ec', {
      namedCurve: 'secp384r1',
      publicKeyEncoding: { type: 'spki', format: 'pem' },
      privateKeyEncoding: { type: 'pkcs8', format: 'pem' },
    });
    const res = await api.request('PUT', '/v1/ops/apps/broken', {
      token: ops,
      body: {
        name: 'Broken',
        apns: { key: other.privateKey, keyId: 'short', teamId: 'TEAM123456', topic: 'not a bundle id' },
        fcm: { serviceAccount: { project_id: 'p', private_key: 'nope' } },
        webPush: { publicKey: vapid.publicKey, privateKey: webpush.generateVAPIDKeys().privateKey, subject: 'push@example.com' },
      },
    });
    expect(res.status).toBe(400);
    expect(res.headers.get('content-type')).toMatch(/application\/problem\+json/);
    expect(res.body.errors.map((e: { path: string }) => e.path).sort()).toEqual(
      ['apns.key', 'apns.keyId', 'apns.topic', 'fcm.serviceAccount', 'webPush.privateKey', 'webPush.subject'].sort(),
    );
    expect(JSON.stringify(res.body)).not.toContain('PRIVATE KEY');
    expect(await appsRow('broken')).toBeUndefined();

    for (const [path, body] of [
      ['/v1/ops/apps/Upper', { name: 'x' }],
      ['/v1/ops/apps/default', { name: 'x' }],
      ['/v1/ops/apps/ok', { name: 'x', apns: { key: 1 } }],
      ['/v1/ops/apps/ok', { name: 'x', unknown: true }],
    ] as const) {
      const bad = await api.request('PUT', path, { token: ops, body });
      expect(bad.status, path).toBe(400);
    }
    expect((await db.pool.query(`SELECT count(*)::int AS n FROM apps`)).rows[0].n).toBe(1);
  });

  it('a PUT replaces the sections given, keeps those left out, removes those set to null, and bumps the version', async () => {
    const rotated = generateApnsSigningKey('NEWKEY1234', 'TEAM123456');
    const before = (await api.request('GET', '/v1/ops/apps/shop', { token: ops })).body;
    const res = await api.request('PUT', '/v1/ops/apps/shop', {
      token: ops,
      body: {
        name: 'Shop',
        apns: { key: rotated.privateKey, keyId: rotated.keyId, teamId: rotated.teamId, topic: 'com.example.shop' },
        expo: null,
      },
    });
    expect(res.status).toBe(200);
    expect(res.body).toMatchObject({ version: 2, apns: { keyId: 'NEWKEY1234', production: false }, expo: null });
    expect(res.body.apns.key.fingerprint).not.toBe(before.apns.key.fingerprint);
    expect(res.body.fcm).toEqual(before.fcm);
    expect(res.body.webPush).toEqual(before.webPush);
  });

  it('lists the apps and the default app', async () => {
    const res = await api.request('GET', '/v1/ops/apps', { token: ops });
    expect(res.status).toBe(200);
    expect(res.body.apps.map((a: { id: string }) => a.id)).toEqual(['shop']);
    expect(res.body.defaultApp).toEqual({ failing: [] });
    expect((await api.request('GET', '/v1/ops/apps/nope', { token: ops })).status).toBe(404);
  });

  it('a device names its app: unknown → 400, omitted → default, kept on refresh, `default` moves it back', async () => {
    const user = await api.token('alice');
    expect((await api.request('PUT', '/v1/me', { token: user, body: { timeZone: 'UTC' } })).status).toBe(201);
    const put = (body: object) =>
      api.request('PUT', '/v1/me/devices/phone', { token: user, body: { platform: 'ios', pushToken: 'ab'.repeat(32), ...body } });

    const unknown = await put({ appId: 'nope' });
    expect(unknown.status).toBe(400);
    expect(unknown.body.errors).toEqual([{ path: 'appId', message: expect.stringContaining('no app') }]);
    expect((await db.pool.query(`SELECT count(*)::int AS n FROM devices`)).rows[0].n).toBe(0);
    expect((await put({ appId: 'Not Valid' })).status).toBe(400);

    expect(await put({})).toMatchObject({ status: 201, body: { appId: 'default' } });
    expect(await put({ appId: 'shop' })).toMatchObject({ status: 200, body: { appId: 'shop' } });
    expect(await put({ locale: 'en' })).toMatchObject({ status: 200, body: { appId: 'shop' } });
    expect((await api.request('GET', '/v1/me/devices', { token: user })).body.devices[0].appId).toBe('shop');
    expect(await put({ appId: 'default' })).toMatchObject({ status: 200, body: { appId: 'default' } });
    expect((await db.pool.query(`SELECT app_id FROM devices`)).rows).toEqual([{ app_id: null }]);
  });

  it('a credentials section given as an array (empty or of a good section) is a 400 naming it, and writes nothing', async () => {
    // fast-check found `{"name":"Fuzz","expo":[]}` answered 500: class-validator's
    // nested check walks an array's elements, so [] passed and reached the service.
    const good = credentials();
    for (const key of ['apns', 'fcm', 'expo', 'webPush'] as const) {
      for (const value of [[], [good[key]]]) {
        const res = await api.request('PUT', '/v1/ops/apps/arrays', { token: ops, body: { name: 'Arrays', [key]: value } });
        expect(res.status, `${key}: ${JSON.stringify(value).slice(0, 40)}`).toBe(400);
        expect(res.headers.get('content-type')).toMatch(/application\/problem\+json/);
        expect(res.body.errors).toContainEqual({ path: key, message: expect.stringContaining('object') });
      }
    }
    expect(await appsRow('arrays')).toBeUndefined();
  });

  it('answers any body with a 2xx or a problem+json 4xx, never a 5xx, and a refused PUT changes no row', async () => {
    const evil = fc.oneof(
      fc.string({ maxLength: 30 }),
      fc.constantFrom('', 'null', '-----BEGIN PRIVATE KEY-----\nAAAA\n-----END PRIVATE KEY-----', '{"project_id":1}', 'x'.repeat(5000)),
      fc.integer(),
      fc.boolean(),
      fc.constant(null),
      fc.jsonValue({ maxDepth: 3 }),
    );
    const field = <T>(good: fc.Arbitrary<T>) => fc.oneof({ weight: 3, arbitrary: good }, { weight: 1, arbitrary: evil });
    const good = credentials();
    const section = <T extends Record<string, unknown>>(value: T) =>
      fc.oneof(
        fc.record(Object.fromEntries(Object.entries(value).map(([k, v]) => [k, field(fc.constant(v))])), { requiredKeys: [] }),
        evil,
      );
    const body = fc.record(
      {
        name: field(fc.constant('Fuzz')),
        apns: section(good.apns),
        fcm: section(good.fcm),
        expo: section(good.expo),
        webPush: section(good.webPush),
      },
      { requiredKeys: [] },
    );
    const appId = fc.constantFrom('fuzz', 'shop', 'Bad Id', 'default', 'a'.repeat(70));
    const rows = async () => (await db.pool.query(`SELECT md5(string_agg(a::text, ',' ORDER BY id)) AS h FROM apps a`)).rows[0].h;
    await fc.assert(
      fc.asyncProperty(appId, body, async (id, sent) => {
        const before = await rows();
        const res = await api.request('PUT', `/v1/ops/apps/${encodeURIComponent(id)}`, { token: ops, body: sent });
        expect(res.status, JSON.stringify(sent).slice(0, 300)).toBeLessThan(500);
        if (res.status >= 400) {
          expect(res.headers.get('content-type')).toMatch(/application\/problem\+json/);
          expect(await rows()).toBe(before);
        }
      }),
      fuzzRuns(120),
    );
    for (const piece of SECRET_PIECES) expect(api.logs.text).not.toContain(piece);
  });

  describe('without NUDGE_SECRET_KEY', () => {
    let keyless: TestApi;
    beforeAll(async () => {
      keyless = await startTestApi({ databaseUrl: db.url });
    });
    afterAll(async () => keyless?.close());

    it('refuses to store secrets (503, nothing written) but takes an app without any', async () => {
      const token = await keyless.token('operator', ['ops']);
      const res = await keyless.request('PUT', '/v1/ops/apps/plain', { token, body: credentials() });
      expect(res.status).toBe(503);
      expect(res.body.detail).toMatch(/NUDGE_SECRET_KEY/);
      expect(await appsRow('plain')).toBeUndefined();
      expect((await keyless.request('PUT', '/v1/ops/apps/plain', { token, body: { name: 'Plain' } })).status).toBe(201);
    });
  });
});
