import { readFileSync } from 'node:fs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { parse } from 'yaml';
import { enqueue } from '@nudge/queue';
import { NUDGE_JOB_KINDS } from '../../apps/api/src/ops/job-kinds.js';
import { createTestDatabase, type TestDatabase } from '../support/database.js';
import { startTestApi, type TestApi } from '../support/api-app.js';

/** The value of one sample line, e.g. `http_requests_total{method="GET",...} 3`. */
function sample(text: string, name: string, labels: Record<string, string>): number | undefined {
  for (const line of text.split('\n')) {
    if (!line.startsWith(`${name}{`)) continue;
    const body = line.slice(name.length + 1, line.lastIndexOf('}'));
    const found = Object.fromEntries([...body.matchAll(/(\w+)="((?:[^"\\]|\\.)*)"/g)].map((m) => [m[1], m[2]]));
    if (Object.entries(labels).every(([k, v]) => found[k] === v)) return Number(line.slice(line.lastIndexOf(' ') + 1));
  }
  return undefined;
}

// PromQL words that are not metric names.
const PROMQL_WORDS = new Set([
  'sum',
  'max',
  'min',
  'avg',
  'count',
  'by',
  'without',
  'rate',
  'irate',
  'increase',
  'delta',
  'deriv',
  'histogram_quantile',
  'and',
  'or',
  'unless',
  'on',
  'ignoring',
  'group_left',
  'group_right',
  'offset',
  'bool',
  'abs',
  'clamp_min',
  'time',
]);

/** The metric names an expression reads: identifiers outside label matchers, ranges, strings and `by (...)` lists. */
function metricNames(expr: string): string[] {
  const stripped = expr
    .replace(/"(?:[^"\\]|\\.)*"/g, '""')
    .replace(/\{[^}]*\}/g, ' ')
    .replace(/\[[^\]]*\]/g, ' ')
    .replace(/\b(by|without|on|ignoring)\s*\([^)]*\)/g, ' ');
  const names = [...stripped.matchAll(/[A-Za-z_:][A-Za-z0-9_:]*/g)].map((m) => m[0]);
  return [...new Set(names.filter((n) => !PROMQL_WORDS.has(n)))];
}

describe('observability: /metrics and the alert rules', () => {
  let db: TestDatabase;
  let api: TestApi;
  let ops: string;
  beforeAll(async () => {
    db = await createTestDatabase();
    // ROLE=all with the worker's handlers registered but not claiming: its /metrics shows the API's, the queue's
    // gauges and the worker's own (queue_jobs_past_timeout), as a worker's WORKER_METRICS_PORT does.
    api = await startTestApi({ databaseUrl: db.url, worker: { runWorker: false } });
    ops = await api.token('admin', ['ops']);
    // A little of everything, so that every queue gauge has a series.
    const now = api.clock.now();
    // enqueue<string>: fixture jobs of real kinds with made-up payloads, for the queue views (they are not run as such).
    const ready = await enqueue<string>(db.pool, { kind: 'send_reminder', payload: {}, runAt: new Date(now.getTime() - 120_000) }, { now });
    const dead = await enqueue<string>(db.pool, { kind: 'send_reminder', payload: {} }, { now });
    const stuck = await enqueue<string>(db.pool, { kind: 'send_notification', payload: {} }, { now });
    expect(ready.created).toBe(true);
    await db.pool.query(`UPDATE jobs SET status = 'dead', last_error = 'no', finished_at = $2 WHERE id = $1`, [dead.job.id, now]);
    await db.pool.query(
      `UPDATE jobs SET status = 'running', locked_at = $2::timestamptz - interval '90 seconds', locked_until = $2::timestamptz - interval '1 minute', locked_by = 'gone' WHERE id = $1`,
      [stuck.job.id, now],
    );
  });
  afterAll(async () => {
    await api?.close();
    await db?.drop();
  });

  const scrape = async () => {
    const res = await fetch(`${api.baseUrl}/metrics`);
    expect(res.status).toBe(200);
    return res.text();
  };

  it('counts requests by route pattern and status, never by raw URL', async () => {
    const labels = { method: 'GET', route: '/v1/ops/jobs/:id', status: '404' };
    const before = sample(await scrape(), 'http_requests_total', labels) ?? 0;
    expect((await api.request('GET', '/v1/ops/jobs/987654321', { token: ops })).status).toBe(404);
    expect((await api.request('GET', '/v1/ops/jobs/987654322', { token: ops })).status).toBe(404);
    expect((await api.request('GET', '/v1/ops/jobs/987654323')).status).toBe(401);
    expect((await api.request('GET', '/v1/no/such/route/55555')).status).toBe(404);

    const text = await scrape();
    expect(sample(text, 'http_requests_total', labels)).toBe(before + 2);
    expect(sample(text, 'http_requests_total', { ...labels, status: '401' })).toBe(1);
    expect(sample(text, 'http_request_duration_seconds_count', labels)).toBe(before + 2);
    expect(sample(text, 'http_request_duration_seconds_bucket', { ...labels, le: '+Inf' })).toBe(before + 2);
    expect(sample(text, 'http_requests_total', { route: 'unmatched', status: '404' })).toBeGreaterThanOrEqual(1);
    // No id and no unknown URL became a label.
    expect(text).not.toMatch(/98765432\d|55555/);
  });

  it('shows the queue gauges from the database', async () => {
    const text = await scrape();
    expect(sample(text, 'queue_jobs_ready', { kind: 'send_reminder' })).toBe(1);
    expect(sample(text, 'queue_oldest_ready_age_seconds', { kind: 'send_reminder' })).toBe(120);
    expect(sample(text, 'queue_jobs_dead', { kind: 'send_reminder' })).toBe(1);
    expect(sample(text, 'queue_jobs_stuck', { kind: 'send_notification' })).toBe(1);
    expect(sample(text, 'queue_oldest_running_age_seconds', { kind: 'send_notification' })).toBe(90);
    // This process's handlers past their timeout: a series for each kind with a timeout, 0 while none is.
    expect(sample(text, 'queue_jobs_past_timeout', { kind: 'send_notification' })).toBe(0);
    expect(sample(text, 'queue_jobs_past_timeout', { kind: 'send_reminder' })).toBe(0);
    // A kind the worker handles with nothing in that state: 0, not an absent series ("no data" reads as a broken scrape).
    expect(sample(text, 'queue_jobs_ready', { kind: 'webhook_delivery' })).toBe(0);
    expect(sample(text, 'queue_oldest_ready_age_seconds', { kind: 'send_notification' })).toBe(0);
    expect(sample(text, 'queue_jobs_dead', { kind: 'send_notification' })).toBe(0);
    expect(sample(text, 'queue_jobs_stuck', { kind: 'send_reminder' })).toBe(0);
    expect(sample(text, 'queue_kind_paused', { kind: 'send_reminder' })).toBe(0);
  });

  it('an API-only process reports every kind of Nudge, 0 on an empty queue', async () => {
    const empty = await createTestDatabase();
    const apiOnly = await startTestApi({ databaseUrl: empty.url });
    try {
      const text = await (await fetch(`${apiOnly.baseUrl}/metrics`)).text();
      for (const kind of NUDGE_JOB_KINDS) {
        for (const gauge of ['queue_jobs_ready', 'queue_jobs_running', 'queue_jobs_dead', 'queue_kind_paused']) {
          expect(sample(text, gauge, { kind }), `${gauge}{kind="${kind}"}`).toBe(0);
        }
      }
    } finally {
      await apiOnly.close();
      await empty.drop();
    }
  });

  it('has alert rules, each on metrics that a real scrape exposes', async () => {
    const file = parse(readFileSync('deploy/prometheus-alerts.yml', 'utf8'));
    const rules: any[] = file.groups.flatMap((g: { rules: unknown[] }) => g.rules);
    const names = rules.map((r) => r.alert);
    // The three symptoms the runbook promises.
    expect(names).toEqual(
      expect.arrayContaining(['NudgeQueueBacklog', 'NudgeDeadJobsGrowing', 'NudgeJobsStuck', 'NudgePushFailureRatio', 'NudgeWorkerWedged']),
    );

    await api.request('GET', '/v1/ops/queue', { token: ops });
    const text = await scrape();
    const exposed = new Set(
      text
        .split('\n')
        .filter((l) => l && !l.startsWith('#'))
        .map((l) => l.slice(0, l.search(/[{ ]/))),
    );
    for (const rule of rules) {
      expect(rule.expr, rule.alert).toEqual(expect.any(String));
      expect(rule.labels?.severity, rule.alert).toBeTruthy();
      expect(rule.annotations?.summary, rule.alert).toBeTruthy();
      const metrics = metricNames(rule.expr);
      expect(metrics.length, rule.alert).toBeGreaterThan(0);
      for (const metric of metrics) expect(exposed, `${rule.alert}: ${metric}`).toContain(metric);
    }
  });

  it('reads the metric names out of PromQL', () => {
    expect(metricNames('max by (kind) (delta(queue_jobs_dead[30m])) > 0')).toEqual(['queue_jobs_dead']);
    expect(metricNames('sum(rate(http_requests_total{status=~"5.."}[5m])) > 0')).toEqual(['http_requests_total']);
    expect(
      metricNames(
        'sum by (provider) (rate(nudge_push_sends_total{outcome="failed"}[10m])) / sum by (provider) (rate(nudge_push_sends_total[10m])) > 0.1',
      ),
    ).toEqual(['nudge_push_sends_total']);
  });
});
