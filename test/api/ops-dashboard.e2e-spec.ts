import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestDatabase, type TestDatabase } from '../support/database.js';
import { startTestApi, type TestApi } from '../support/api-app.js';
import { completeAt } from '../support/completions.js';

// The dashboard page is public; everything it shows comes from the ops API,
// which must refuse the page's calls without an ops-scoped token.
describe('the /ops page and the calls it makes', () => {
  let db: TestDatabase;
  let api: TestApi;
  beforeAll(async () => {
    db = await createTestDatabase();
    api = await startTestApi({ databaseUrl: db.url });
  });
  afterAll(async () => {
    await api?.close();
    await db?.drop();
  });

  it('serves the page and its modules without a token, under a self-only Content-Security-Policy', async () => {
    const page = await fetch(`${api.baseUrl}/ops`);
    expect(page.status).toBe(200);
    expect(page.headers.get('content-type')).toMatch(/^text\/html/);
    const csp = page.headers.get('content-security-policy') ?? '';
    expect(csp).toContain("default-src 'self'");
    expect(csp).toContain("script-src 'self'");
    expect(csp).toContain("frame-ancestors 'none'");
    expect(csp).not.toMatch(/unsafe-inline|unsafe-eval|\*/);
    const html = await page.text();
    // No inline script or style for the CSP to have to allow.
    expect(html).not.toMatch(/<script(?![^>]*\bsrc=)[^>]*>/);
    expect(html).not.toMatch(/\sstyle=|<style/);

    for (const [file, type] of [
      ['app.js', /^text\/javascript/],
      ['api.js', /^text\/javascript/],
      ['chart.js', /^text\/javascript/],
      ['dom.js', /^text\/javascript/],
      ['user-view.js', /^text\/javascript/],
      ['delivery-view.js', /^text\/javascript/],
      ['style.css', /^text\/css/],
    ] as const) {
      const res = await fetch(`${api.baseUrl}/ops/${file}`);
      expect(res.status, file).toBe(200);
      expect(res.headers.get('content-type'), file).toMatch(type);
      expect(res.headers.get('content-security-policy'), file).toBe(csp);
    }
  });

  it('serves only its own files', async () => {
    for (const path of ['/ops/nope.js', '/ops/..%2F..%2Fpackage.json', '/ops/index.html.bak', '/ops/%2e%2e']) {
      const res = await api.request('GET', path);
      expect(res.status, path).toBe(404);
      expect(res.body.status).toBe(404);
    }
  });

  it('refuses every ops call the page makes without a token (401) and with a user token (403)', async () => {
    const user = await api.token('alice');
    const calls: [string, string][] = [
      ['GET', '/v1/ops/queue'],
      ['GET', '/v1/ops/jobs?status=dead&limit=100'],
      ['GET', '/v1/ops/jobs/1'],
      ['POST', '/v1/ops/jobs/1/retry'],
      ['POST', '/v1/ops/jobs/1/cancel'],
      ['GET', '/v1/ops/users/alice'],
      ['GET', '/v1/ops/users/alice/timeline?cursor=x'],
      ['GET', '/v1/ops/delivery-health'],
      ['GET', '/v1/ops/upcoming'],
    ];
    for (const [method, path] of calls) {
      const anonymous = await api.request(method, path);
      expect(anonymous.status, `${method} ${path}`).toBe(401);
      expect(anonymous.headers.get('content-type')).toMatch(/^application\/problem\+json/);
      const refused = await api.request(method, path, { token: user });
      expect(refused.status, `${method} ${path}`).toBe(403);
      expect(refused.body).not.toHaveProperty('kinds');
    }
  });

  it('gives the page per-minute completed and failed counts for the last hour', async () => {
    const now = api.clock.now();
    const minute = (offset: number) => new Date(Math.floor(now.getTime() / 60_000) * 60_000 + offset * 60_000);
    const { rows: jobs } = await db.pool.query<{ id: string }>(
      `INSERT INTO jobs (kind) SELECT 'send_reminder' FROM generate_series(1, 4) RETURNING id`,
    );
    const ids = jobs.map((j) => String(j.id));
    await completeAt(db.pool, ids.slice(0, 2), minute(-1));
    await completeAt(db.pool, ids.slice(2, 3), minute(-5));
    await completeAt(db.pool, ids.slice(3), minute(-90));
    await db.pool.query(
      `INSERT INTO job_runs (job_id, kind, attempt, finished_at, outcome, error) VALUES (1, 'send_reminder', 1, $1, 'failed', 'x'), (1, 'send_reminder', 1, $1, 'snoozed', NULL)`,
      [minute(-1)],
    );
    const res = await api.request('GET', '/v1/ops/queue', { token: await api.token('admin', ['ops']) });
    expect(res.status).toBe(200);
    expect(res.body.lastHourByMinute).toEqual([
      { minute: minute(-5).toISOString(), succeeded: 1, failed: 0 },
      { minute: minute(-1).toISOString(), succeeded: 2, failed: 1 },
    ]);
  });
});
