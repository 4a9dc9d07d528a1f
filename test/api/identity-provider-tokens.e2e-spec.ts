import type { webcrypto } from 'node:crypto';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { exportJWK, exportSPKI, generateKeyPair, type JWK, type JWTPayload, SignJWT } from 'jose';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestDatabase, type TestDatabase } from '../support/database.js';
import { eventually, startTestApi, type TestApi } from '../support/api-app.js';

// Tokens from an identity provider (Firebase Auth, Supabase, Auth0…): RS256 and
// ES256 verified against the keys a local JWKS server publishes, through the
// real API. The provider rotates its keys while the API runs.

const ISSUER = 'https://issuer.test/';
const AUDIENCE = 'nudge-test-app';
const NOW = new Date('2026-03-02T12:00:00Z');
const unix = (date: Date) => Math.floor(date.getTime() / 1000);

type Alg = 'RS256' | 'ES256';
interface SigningKey {
  kid: string;
  alg: Alg;
  privateKey: webcrypto.CryptoKey;
  publicKey: webcrypto.CryptoKey;
  jwk: JWK;
}

async function signingKey(kid: string, alg: Alg): Promise<SigningKey> {
  const { privateKey, publicKey } = await generateKeyPair(alg, { extractable: true });
  return { kid, alg, privateKey, publicKey, jwk: { ...(await exportJWK(publicKey)), kid, alg, use: 'sig' } };
}

/** A provider's JWKS endpoint: publishes what `keys` holds now, counts fetches, can fail. */
class JwksServer {
  keys: JWK[] = [];
  fetches = 0;
  failing = false;
  private server: Server | undefined;
  url = '';

  async start() {
    this.server = createServer((_req, res) => {
      this.fetches++;
      if (this.failing) {
        res.writeHead(500).end();
        return;
      }
      res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify({ keys: this.keys }));
    });
    await new Promise<void>((done) => this.server!.listen(0, '127.0.0.1', done));
    this.url = `http://127.0.0.1:${(this.server.address() as AddressInfo).port}/.well-known/jwks.json`;
  }

  close() {
    return new Promise<void>((done) => this.server?.close(() => done()) ?? done());
  }
}

function sign(key: SigningKey, claims: JWTPayload, options: { issuer?: string; audience?: string; expiresAt?: Date; kid?: string } = {}) {
  return new SignJWT(claims)
    .setProtectedHeader({ alg: key.alg, kid: options.kid ?? key.kid, typ: 'JWT' })
    .setIssuer(options.issuer ?? ISSUER)
    .setAudience(options.audience ?? AUDIENCE)
    .setIssuedAt(unix(NOW) - 60)
    .setExpirationTime(unix(options.expiresAt ?? new Date(NOW.getTime() + 3600_000)))
    .sign(key.privateKey);
}

describe('identity-provider tokens (AUTH_JWKS_URL)', () => {
  const jwks = new JwksServer();
  let db: TestDatabase;
  let api: TestApi;
  let rsa: SigningKey;
  let ec: SigningKey;

  beforeAll(async () => {
    [rsa, ec] = await Promise.all([signingKey('rsa-1', 'RS256'), signingKey('ec-1', 'ES256')]);
    await jwks.start();
    jwks.keys = [rsa.jwk, ec.jwk];
    db = await createTestDatabase();
    api = await startTestApi({
      databaseUrl: db.url,
      env: {
        AUTH_JWKS_URL: jwks.url,
        AUTH_ISSUER: ISSUER,
        AUTH_AUDIENCE: AUDIENCE,
        AUTH_SCOPE_CLAIM: 'app_metadata.nudge_scopes',
        AUTH_JWKS_COOLDOWN_SECONDS: '1',
      },
    });
    api.clock.set(NOW.toISOString());
  });
  afterAll(async () => {
    await api?.close();
    await db?.drop();
    await jwks.close();
  });

  const putMe = (token: string) => api.request('PUT', '/v1/me', { token, body: { timeZone: 'Europe/Berlin' } });

  it('accepts RS256 and ES256 tokens signed by the published keys, the user id from `sub`', async () => {
    const viaRsa = await putMe(await sign(rsa, { sub: 'firebase-uid-1' }));
    expect(viaRsa.status).toBe(201);
    expect(viaRsa.body.userId).toBe('firebase-uid-1');
    const viaEc = await api.request('GET', '/v1/me', { token: await sign(ec, { sub: 'firebase-uid-1' }) });
    expect(viaEc.status).toBe(200);
    expect(viaEc.body.userId).toBe('firebase-uid-1');
  });

  it('keeps the self-signed HS256 path (npm run token)', async () => {
    expect((await putMe(await api.token('self-signed-user'))).status).toBe(201);
    expect((await api.request('GET', '/v1/ops/queue', { token: await api.token('admin', ['ops']) })).status).toBe(200);
  });

  it('grants ops only to provider tokens whose scope claim lists `ops`', async () => {
    const operator = await sign(rsa, { sub: 'op-1', app_metadata: { nudge_scopes: ['ops'] } });
    expect((await api.request('GET', '/v1/ops/queue', { token: operator })).status).toBe(200);
    // A `scope` claim is not the configured claim: no ops.
    const user = await sign(rsa, { sub: 'user-1', scope: 'ops', app_metadata: { nudge_scopes: 'read write' } });
    expect((await api.request('GET', '/v1/ops/queue', { token: user })).status).toBe(403);
  });

  it('refuses a wrong issuer, audience, key or algorithm, an expired token and a bad user id with 401 problem+json', async () => {
    const stranger = await signingKey('rsa-1', 'RS256'); // the published kid, another key
    const confusion = await new SignJWT({ sub: 'mallory' })
      .setProtectedHeader({ alg: 'HS256', kid: 'rsa-1' })
      .setIssuer(ISSUER)
      .setAudience(AUDIENCE)
      .sign(new TextEncoder().encode(await exportSPKI(rsa.publicKey)));
    const cases: [string, string][] = [
      ['wrong issuer', await sign(rsa, { sub: 'u' }, { issuer: 'https://other-project.test/' })],
      ['wrong audience', await sign(rsa, { sub: 'u' }, { audience: 'another-firebase-project' })],
      ['wrong key', await sign(stranger, { sub: 'u' })],
      ['unknown kid', await sign(stranger, { sub: 'u' }, { kid: 'nobody-published-this' })],
      ['expired', await sign(ec, { sub: 'u' }, { expiresAt: new Date(NOW.getTime() - 1000) })],
      ['HS256 with the public key as secret', confusion],
      ['no sub', await sign(rsa, {})],
      ['numeric sub', await sign(rsa, { sub: 42 as unknown as string })],
      ['sub of 129 characters', await sign(rsa, { sub: 'x'.repeat(129) })],
      ['sub with a control character', await sign(rsa, { sub: 'alice\u0000' })],
      ['sub with a newline', await sign(rsa, { sub: 'alice\nadmin' })],
    ];
    for (const [what, token] of cases) {
      const res = await putMe(token);
      expect(res.status, what).toBe(401);
      expect(res.headers.get('content-type'), what).toMatch(/^application\/problem\+json/);
      expect(res.body.title, what).toBe('Unauthorized');
    }
    expect((await putMe(await sign(rsa, { sub: 'x'.repeat(128) }))).status).toBe(201);
    const expired = await putMe(await sign(ec, { sub: 'u' }, { expiresAt: new Date(NOW.getTime() - 1000) }));
    expect(expired.body.detail).toMatch(/expired/);
    const wrongIssuer = await putMe(await sign(rsa, { sub: 'u' }, { issuer: 'https://other-project.test/' }));
    expect(wrongIssuer.body.detail).toMatch(/issuer/);
  });

  it('accepts a rotated key once the provider publishes it, without a restart', async () => {
    const next = await signingKey('rsa-2', 'RS256');
    const token = await sign(next, { sub: 'rotated-user' });
    // Not published yet: refused.
    expect((await putMe(token)).status).toBe(401);
    jwks.keys = [next.jwk, ec.jwk];
    // Published: accepted once the cooldown since the last fetch has passed (1 s here, 30 s by default).
    const res = await eventually(
      async () => {
        const attempt = await putMe(token);
        return attempt.status === 201 ? attempt : undefined;
      },
      'the rotated key to be accepted',
      5_000,
    );
    expect(res.body.userId).toBe('rotated-user');
    // The retired key is gone from the set: its tokens are refused.
    expect((await putMe(await sign(rsa, { sub: 'firebase-uid-1' }))).status).toBe(401);
    jwks.keys = [rsa.jwk, next.jwk, ec.jwk];
  });

  it('fetches the keys at most about once per cooldown, however many unknown kids arrive', async () => {
    await new Promise((r) => setTimeout(r, 1_100));
    const before = jwks.fetches;
    const started = Date.now();
    for (let round = 0; round < 10; round++) {
      const tokens = await Promise.all(Array.from({ length: 10 }, (_, i) => sign(rsa, { sub: 'u' }, { kid: `bogus-${round}-${i}` })));
      const statuses = await Promise.all(tokens.map(async (token) => (await putMe(token)).status));
      expect(statuses.every((status) => status === 401)).toBe(true);
    }
    const elapsedSeconds = (Date.now() - started) / 1000;
    expect(jwks.fetches - before).toBeLessThanOrEqual(Math.ceil(elapsedSeconds) + 1);
  });

  it('answers 503 while the keys cannot be fetched, keeps serving cached keys, and does not hammer the provider', async () => {
    await new Promise((r) => setTimeout(r, 1_100));
    jwks.failing = true;
    const before = jwks.fetches;
    const unknown = await sign(rsa, { sub: 'u' }, { kid: 'rsa-3' });
    for (let i = 0; i < 5; i++) {
      const res = await putMe(unknown);
      expect(res.status).toBe(503);
      expect(res.headers.get('content-type')).toMatch(/^application\/problem\+json/);
    }
    expect(jwks.fetches - before).toBe(1);
    expect((await putMe(await sign(ec, { sub: 'firebase-uid-1' }))).status).toBe(200);
    jwks.failing = false;
  });
});

describe('AUTH_USER_CLAIM', () => {
  it('takes the user id from the named claim', async () => {
    const jwks = new JwksServer();
    await jwks.start();
    const key = await signingKey('k', 'ES256');
    jwks.keys = [key.jwk];
    const db = await createTestDatabase();
    const api = await startTestApi({
      databaseUrl: db.url,
      env: { AUTH_JWKS_URL: jwks.url, AUTH_ISSUER: ISSUER, AUTH_AUDIENCE: AUDIENCE, AUTH_USER_CLAIM: 'https://nudge.test/uid' },
    });
    api.clock.set(NOW.toISOString());
    try {
      const token = await sign(key, { sub: 'auth0|abc', 'https://nudge.test/uid': 'app-user-7' });
      const res = await api.request('PUT', '/v1/me', { token, body: { timeZone: 'UTC' } });
      expect(res.status).toBe(201);
      expect(res.body.userId).toBe('app-user-7');
      const without = await sign(key, { sub: 'auth0|abc' });
      expect((await api.request('GET', '/v1/me', { token: without })).status).toBe(401);
    } finally {
      await api.close();
      await db.drop();
      await jwks.close();
    }
  });
});
