import { Registry } from 'prom-client';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { FixedClock } from '@nudge/config';
import { createTestDatabase, type TestDatabase } from '../support/database.js';
import { eventually, startTestApi, type TestApi } from '../support/api-app.js';

// Token hygiene: the daily token_cleanup system job and POST /v1/ops/token-cleanup
// delete exactly the devices a provider rejected (deactivated) and those not
// seen for inactiveDays, with a real worker and a pinned clock.

const NOW = new Date('2026-06-15T12:00:00Z');
const daysAgo = (days: number) => new Date(NOW.getTime() - days * 86_400_000);

describe('token cleanup', () => {
  let db: TestDatabase;
  let api: TestApi;
  let ops: string;

  async function device(userId: string, installationId: string, lastSeen: Date, active = true) {
    await db.pool.query(`INSERT INTO users (id, time_zone) VALUES ($1, 'UTC') ON CONFLICT DO NOTHING`, [userId]);
    await db.pool.query(
      `INSERT INTO devices (user_id, installation_id, platform, push_token, active, deactivated_reason, deactivated_at, last_seen_at, created_at)
       VALUES ($1, $2, 'ios', $3, $4, $5, $6, $7, $7)`,
      [
        userId,
        installationId,
        `sim-${userId}-${installationId}`,
        active,
        active ? null : 'invalid_token: Unregistered',
        active ? null : lastSeen,
        lastSeen,
      ],
    );
  }

  const installations = async (userId: string) =>
    (await db.pool.query(`SELECT installation_id FROM devices WHERE user_id = $1 ORDER BY installation_id`, [userId])).rows.map(
      (r) => r.installation_id,
    );

  const finished = (jobId: string) =>
    eventually(async () => {
      const { rows } = await db.pool.query(`SELECT status FROM jobs WHERE id = $1`, [jobId]);
      return rows[0]?.status === 'succeeded' ? rows[0] : undefined;
    }, `token_cleanup job ${jobId}`);

  beforeAll(async () => {
    db = await createTestDatabase();
    // Arranged before the worker boots: the day's system job finds them.
    await device('daily', 'fresh', daysAgo(1));
    await device('daily', 'stale', daysAgo(61));
    await device('daily', 'rejected', daysAgo(1), false);
    api = await startTestApi({ databaseUrl: db.url, clock: new FixedClock(NOW), worker: { pollIntervalMs: 20 } });
    ops = await api.token('ops-user', ['ops']);
  });
  afterAll(async () => {
    await api?.close();
    await db?.drop();
  });

  it('runs daily as a system job (60 days), removing the rejected and the stale devices, and logs the count', async () => {
    const job = await eventually(async () => {
      const { rows } = await db.pool.query(
        `SELECT id, payload, status FROM jobs WHERE idempotency_key = 'system:token_cleanup:2026-06-15T00:00:00.000Z'`,
      );
      return rows[0]?.status === 'succeeded' ? rows[0] : undefined;
    }, 'the daily token_cleanup job');
    expect(job.payload).toEqual({ inactiveDays: 60 });
    expect(await installations('daily')).toEqual(['fresh']);
    const line = api.logs.lines.map((l) => JSON.parse(l)).find((l) => l.msg === 'token cleanup removed devices' && l.jobId === job.id);
    expect(line).toMatchObject({ kind: 'token_cleanup', removed: 2, deactivated: 1, stale: 1, inactiveDays: 60 });
  });

  it('POST /v1/ops/token-cleanup (202) deletes exactly the deactivated and the unseen devices, in batches, and counts them', async () => {
    await device('keep', 'today', daysAgo(0));
    await device('keep', 'week', daysAgo(7));
    await device('mixed', 'recent', daysAgo(20));
    await device('mixed', 'old', daysAgo(31));
    await device('mixed', 'rejected', daysAgo(0), false);
    // More than one batch of 1000.
    await db.pool.query(`INSERT INTO users (id, time_zone) VALUES ('bulk', 'UTC')`);
    await db.pool.query(
      `INSERT INTO devices (user_id, installation_id, platform, push_token, last_seen_at)
       SELECT 'bulk', 'i-' || n, 'android', 'sim-bulk-' || n, $1 FROM generate_series(1, 2500) AS n`,
      [daysAgo(400)],
    );
    const before = await api.app.get(Registry).getSingleMetricAsString('nudge_tokens_removed_total');

    const res = await api.request('POST', '/v1/ops/token-cleanup', { token: ops, body: { inactiveDays: 30 } });
    expect(res.status).toBe(202);
    expect(res.body).toEqual({ jobId: expect.stringMatching(/^\d+$/) });
    await finished(res.body.jobId);

    expect(await installations('keep')).toEqual(['today', 'week']);
    expect(await installations('mixed')).toEqual(['recent']);
    expect(await installations('bulk')).toEqual([]);
    const line = api.logs.lines
      .map((l) => JSON.parse(l))
      .find((l) => l.jobId === res.body.jobId && l.msg === 'token cleanup removed devices');
    expect(line).toMatchObject({ removed: 2502, deactivated: 1, stale: 2501, inactiveDays: 30 });
    const metrics = await api.app.get(Registry).getSingleMetricAsString('nudge_tokens_removed_total');
    expect(before).toContain('nudge_tokens_removed_total{reason="stale"} 1');
    expect(metrics).toContain('nudge_tokens_removed_total{reason="stale"} 2502');
    expect(metrics).toContain('nudge_tokens_removed_total{reason="deactivated"} 2');
  });

  it('defaults to 60 days', async () => {
    await device('default', 'fifty-nine', daysAgo(59));
    await device('default', 'sixty-one', daysAgo(61));
    const res = await api.request('POST', '/v1/ops/token-cleanup', { token: ops, body: {} });
    expect(res.status).toBe(202);
    await finished(res.body.jobId);
    expect(await installations('default')).toEqual(['fifty-nine']);
  });

  it.each([[0], [3651], ['30'], [1.5]])('refuses inactiveDays %j with a 400 naming it', async (inactiveDays) => {
    const res = await api.request('POST', '/v1/ops/token-cleanup', { token: ops, body: { inactiveDays } });
    expect(res.status).toBe(400);
    expect(res.body.errors.map((e: { path: string }) => e.path)).toContain('inactiveDays');
  });

  it('is for ops tokens only', async () => {
    expect((await api.request('POST', '/v1/ops/token-cleanup', { token: await api.token('someone'), body: {} })).status).toBe(403);
  });
});
