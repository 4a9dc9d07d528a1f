import { Body, Controller, Module, Post, Get } from '@nestjs/common';
import { Type } from 'class-transformer';
import { IsIn, IsInt, IsString, Matches, Max, ValidateNested } from 'class-validator';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { SignJWT } from 'jose';
import { Auth, RequireScope } from '../../apps/api/src/auth/auth.decorators.js';
import type { TokenClaims } from '../../apps/api/src/auth/jwt.js';
import { createTestDatabase, type TestDatabase } from '../support/database.js';
import { startTestApi, TEST_SECRET, type TestApi } from '../support/api-app.js';

// A small resource that exercises the conventions every real endpoint uses.
class WindowDto {
  @Matches(/^\d\d:\d\d$/) start: string;
  @Matches(/^\d\d:\d\d$/) end: string;
}
class EchoDto {
  @IsString() name: string;
  @IsInt() @Max(10) count: number;
  @IsIn(['ios', 'android']) platform: string;
  @ValidateNested() @Type(() => WindowDto) window: WindowDto;
}
@Controller('v1/echo')
class EchoController {
  @Post()
  echo(@Body() body: EchoDto, @Auth() auth: TokenClaims) {
    return { ...body, userId: auth.userId };
  }
  @Get('ops')
  @RequireScope('ops')
  ops() {
    return { ok: true };
  }
}
@Module({ controllers: [EchoController] })
class EchoModule {}

describe('HTTP conventions', () => {
  let db: TestDatabase;
  let api: TestApi;
  let token: string;
  beforeAll(async () => {
    db = await createTestDatabase();
    api = await startTestApi({ databaseUrl: db.url, imports: [{ module: EchoModule }] });
    token = await api.token('alice');
  });
  afterAll(async () => {
    await api?.close();
    await db?.drop();
  });

  const good = { name: 'a', count: 3, platform: 'ios', window: { start: '22:00', end: '07:00' } };

  it('accepts a valid body and scopes it to the token user', async () => {
    const res = await api.request('POST', '/v1/echo', { token, body: good });
    expect(res.status).toBe(201);
    expect(res.body.userId).toBe('alice');
  });

  it('lists every bad field in one 400 problem+json', async () => {
    const res = await api.request('POST', '/v1/echo', {
      token,
      body: { name: 5, count: 11, platform: 'web', window: { start: '7am', end: '07:00' }, extra: true },
    });
    expect(res.status).toBe(400);
    expect(res.headers.get('content-type')).toMatch(/^application\/problem\+json/);
    expect(res.body).toMatchObject({ type: expect.any(String), title: 'Bad Request', status: 400, detail: expect.any(String) });
    const paths = res.body.errors.map((e: { path: string }) => e.path).sort();
    expect(paths).toEqual(['count', 'extra', 'name', 'platform', 'window.start']);
  });

  it('says only what kind a field takes when its value is of another kind (or missing), not its size rules', async () => {
    const res = await api.request('POST', '/v1/echo', { token, body: { ...good, count: '3', name: undefined } });
    expect(res.status).toBe(400);
    expect(res.body.errors).toEqual([
      { path: 'name', message: 'name must be a string' },
      { path: 'count', message: 'count must be an integer number' },
    ]);
    const big = await api.request('POST', '/v1/echo', { token, body: { ...good, count: 11 } });
    expect(big.body.errors).toEqual([{ path: 'count', message: 'count must not be greater than 10' }]);
  });

  it('refuses a JSON array as the body with one message, not one per element', async () => {
    const res = await api.request('POST', '/v1/echo', { token, body: [good, good] });
    expect(res.status).toBe(400);
    expect(res.body.detail).toBe('The request body must be a JSON object.');
    expect(res.body.errors).toEqual([{ path: '', message: 'the body must be a JSON object, not an array' }]);
  });

  it('answers malformed JSON with a 400 problem, not a 500', async () => {
    const res = await api.request('POST', '/v1/echo', { token, rawBody: '{"name": "a",' });
    expect(res.status).toBe(400);
    expect(res.headers.get('content-type')).toMatch(/^application\/problem\+json/);
    expect(res.body.detail).toBe('The request body is not valid JSON.');
    expect(res.headers.get('x-request-id')).toBeTruthy();
  });

  it('parses +json media types too: a non-object merge-patch body is a 400, not an ignored body', async () => {
    const res = await api.request('POST', '/v1/echo', {
      token,
      rawBody: 'true',
      headers: { 'content-type': 'application/merge-patch+json' },
    });
    expect(res.status).toBe(400);
    const ok = await api.request('POST', '/v1/echo', {
      token,
      rawBody: JSON.stringify(good),
      headers: { 'content-type': 'application/merge-patch+json' },
    });
    expect(ok.status).toBe(201);
  });

  it('answers a body over 64 KiB with 413', async () => {
    const res = await api.request('POST', '/v1/echo', { token, body: { ...good, name: 'x'.repeat(70 * 1024) } });
    expect(res.status).toBe(413);
    expect(res.body).toMatchObject({ status: 413, title: 'Content Too Large' });
  });

  it('refuses a missing, malformed, wrongly signed, expired or alg:none token with 401', async () => {
    const now = api.clock.now();
    const wrongKey = await new SignJWT({})
      .setProtectedHeader({ alg: 'HS256' })
      .setSubject('alice')
      .sign(new TextEncoder().encode('another-secret-another-secret-another'));
    const expired = await new SignJWT({})
      .setProtectedHeader({ alg: 'HS256' })
      .setSubject('alice')
      .setIssuedAt(Math.floor(now.getTime() / 1000) - 7200)
      .setExpirationTime(Math.floor(now.getTime() / 1000) - 3600)
      .sign(new TextEncoder().encode(TEST_SECRET));
    const none = `${Buffer.from('{"alg":"none","typ":"JWT"}').toString('base64url')}.${Buffer.from('{"sub":"alice"}').toString('base64url')}.`;
    for (const header of [undefined, 'Bearer', 'Basic abc', `Bearer ${wrongKey}`, `Bearer ${expired}`, `Bearer ${none}`]) {
      const res = await api.request('POST', '/v1/echo', { body: good, headers: header ? { authorization: header } : {} });
      expect(res.status, String(header)).toBe(401);
      expect(res.body.title).toBe('Unauthorized');
    }
  });

  it('holds a token already verified to its exp and nbf as the clock moves (the verifier remembers tokens)', async () => {
    const start = api.clock.now();
    const seconds = Math.floor(start.getTime() / 1000);
    const sign = (claims: { exp?: number; nbf?: number }) => {
      const jwt = new SignJWT({}).setProtectedHeader({ alg: 'HS256' }).setSubject('alice');
      if (claims.exp !== undefined) jwt.setExpirationTime(claims.exp);
      if (claims.nbf !== undefined) jwt.setNotBefore(claims.nbf);
      return jwt.sign(new TextEncoder().encode(TEST_SECRET));
    };
    const shortLived = await sign({ exp: seconds + 60 });
    const later = await sign({ nbf: seconds + 60 });
    const status = async (jwt: string) => (await api.request('POST', '/v1/echo', { token: jwt, body: good })).status;
    try {
      expect(await status(shortLived)).toBe(201);
      expect(await status(shortLived)).toBe(201);
      expect(await status(later)).toBe(401);
      api.clock.advance(59_000);
      expect(await status(shortLived)).toBe(201);
      api.clock.advance(1_000);
      const refused = await api.request('POST', '/v1/echo', { token: shortLived, body: good });
      expect(refused.status).toBe(401);
      expect(refused.body.detail).toMatch(/expired/);
      expect(await status(later)).toBe(201);
      api.clock.set(start);
      expect(await status(later)).toBe(401);
    } finally {
      api.clock.set(start);
    }
  });

  it('requires the ops scope on ops routes: 403 for a user token', async () => {
    expect((await api.request('GET', '/v1/echo/ops', { token })).status).toBe(403);
    expect((await api.request('GET', '/v1/echo/ops', { token: await api.token('admin', ['ops']) })).status).toBe(200);
  });

  it('answers unknown routes with a 404 problem and gives every response a request id', async () => {
    const res = await api.request('GET', '/v1/nowhere', { token });
    expect(res.status).toBe(404);
    expect(res.body.status).toBe(404);
    expect(res.headers.get('x-request-id')).toMatch(/^[0-9a-f-]{36}$/);
  });

  it('keeps bearer tokens out of the logs', async () => {
    await api.request('POST', '/v1/echo', { token, body: good });
    expect(api.logs.text).toContain('"path":"/v1/echo"');
    expect(api.logs.text).not.toContain(token);
  });

  it('reports ready when the database is migrated', async () => {
    const res = await api.request('GET', '/health/ready');
    expect(res.status).toBe(200);
    expect(res.body).toEqual({ status: 'ok', database: 'up' });
  });
});
