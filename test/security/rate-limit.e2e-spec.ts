import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadConfig } from '@nudge/config';
import { createTestDatabase, type TestDatabase } from '../support/database.js';
import { startTestApi, type TestApi } from '../support/api-app.js';

// The limits are per minute; these tests set small ones and count requests.
describe('rate limits', () => {
  let db: TestDatabase;
  let api: TestApi;
  beforeAll(async () => {
    db = await createTestDatabase();
    api = await startTestApi({ databaseUrl: db.url, env: { RATE_LIMIT_PER_MINUTE: '5', RATE_LIMIT_PER_IP_PER_MINUTE: '12' } });
  });
  afterAll(async () => {
    await api?.close();
    await db?.drop();
  });

  it('limits each user, then each IP, with 429 problem+json and a Retry-After that counts down; /health and /metrics stay open', async () => {
    const alice = await api.token('alice');
    const bob = await api.token('bob');
    const statuses = async (n: number, token?: string) => {
      const out: number[] = [];
      for (let i = 0; i < n; i++) out.push((await api.request('GET', '/v1/me', { token })).status);
      return out;
    };
    // alice: 5 allowed (404: no profile yet), the 6th refused.
    expect(await statuses(5, alice)).toEqual([404, 404, 404, 404, 404]);
    const limited = await api.request('GET', '/v1/me', { token: alice });
    expect(limited.status).toBe(429);
    expect(limited.headers.get('content-type')).toMatch(/^application\/problem\+json/);
    expect(limited.body).toMatchObject({ status: 429, title: 'Too Many Requests' });
    const first = Number(limited.headers.get('retry-after'));
    expect(first).toBeGreaterThanOrEqual(58);
    expect(first).toBeLessThanOrEqual(60);

    // bob has his own allowance; the IP has 12 in all (6 used by alice).
    expect(await statuses(5, bob)).toEqual([404, 404, 404, 404, 404]);
    // The 12th request from this IP is still served (401: no token); the 13th is refused before authentication.
    expect(await statuses(1)).toEqual([401]);
    const byIp = await api.request('GET', '/v1/me');
    expect(byIp.status).toBe(429);

    for (let i = 0; i < 20; i++) {
      expect((await api.request('GET', '/health/live')).status).toBe(200);
      expect((await api.request('GET', '/metrics')).status).toBe(200);
    }

    // The wait is real: it shrinks as time passes.
    await new Promise((r) => setTimeout(r, 2100));
    const later = await api.request('GET', '/v1/me', { token: alice });
    expect(later.status).toBe(429);
    expect(Number(later.headers.get('retry-after'))).toBeLessThanOrEqual(first - 2);
  });

  it('exempts service (ops) tokens from the per-user limit; 0 turns a limit off', async () => {
    const second = await startTestApi({ databaseUrl: db.url, env: { RATE_LIMIT_PER_MINUTE: '3', RATE_LIMIT_PER_IP_PER_MINUTE: '0' } });
    try {
      const ops = await second.token('backend', ['ops']);
      for (let i = 0; i < 10; i++) expect((await second.request('GET', '/v1/ops/queue', { token: ops })).status).toBe(200);
      const user = await second.token('carol');
      const seen = [];
      for (let i = 0; i < 4; i++) seen.push((await second.request('GET', '/v1/me', { token: user })).status);
      expect(seen).toEqual([404, 404, 404, 429]);
    } finally {
      await second.close();
    }
  });

  it('refuses a bad limit at boot, naming the variable', () => {
    expect(() => loadConfig({ RATE_LIMIT_PER_MINUTE: '-1' })).toThrow(/RATE_LIMIT_PER_MINUTE must be a whole number/);
    expect(() => loadConfig({ RATE_LIMIT_PER_IP_PER_MINUTE: 'lots' })).toThrow(/RATE_LIMIT_PER_IP_PER_MINUTE/);
    expect(loadConfig({}).rateLimitPerMinute).toBe(600);
    expect(loadConfig({ RATE_LIMIT_PER_MINUTE: '0' }).rateLimitPerMinute).toBe(0);
  });
});
