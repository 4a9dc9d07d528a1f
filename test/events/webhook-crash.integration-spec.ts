import { spawn } from 'node:child_process';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { FixedClock } from '@nudge/config';
import { withTransaction } from '@nudge/database';
import { recordEvents } from '@nudge/events';
import { createTestDatabase, type TestDatabase } from '../support/database.js';
import { eventually, startTestApi, type TestApi } from '../support/api-app.js';
import { WebhookReceiver } from './receiver.js';

// At least once, with a crash: a worker process is SIGKILLed while webhook
// POSTs are in flight (the receiver answers slowly). After its leases expire a
// healthy worker's reaper returns the jobs, and the receiver ends up with
// every event id at least once; the ones in flight at the kill may come twice,
// which is why receivers deduplicate by id.

const T0 = new Date('2026-05-01T10:00:00Z');
const EVENTS = 40;

describe('webhook deliveries across a worker crash', () => {
  let db: TestDatabase;
  let receiver: WebhookReceiver;
  let healthy: TestApi | undefined;

  beforeAll(async () => {
    db = await createTestDatabase();
    receiver = await new WebhookReceiver().start();
  });
  afterAll(async () => {
    await healthy?.close();
    await receiver?.stop();
    await db?.drop();
  });

  it('delivers every event at least once after the worker is killed mid-delivery', async () => {
    receiver.delayMs = 400;
    await db.pool.query(
      `INSERT INTO webhooks (id, url, events, secret, created_at, updated_at) VALUES ('crm', $1, '{*}', 'crash-test-secret-0123456789', $2, $2)`,
      [receiver.url, T0],
    );
    await withTransaction(db.pool, (tx) =>
      recordEvents(
        tx,
        Array.from({ length: EVENTS }, (_, i) => ({ type: 'occurrence.done' as const, userId: 'u1', data: { n: i } })),
        T0,
      ),
    );
    const eventIds = new Set((await db.pool.query(`SELECT id::text FROM events`)).rows.map((r) => r.id as string));
    expect(eventIds.size).toBe(EVENTS);

    const child = spawn(process.execPath, ['--import', 'tsx', 'test/events/fixtures/webhook-worker.ts'], {
      env: { ...process.env, DATABASE_URL: db.url, NOW: T0.toISOString() },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let output = '';
    child.stdout!.on('data', (d) => (output += String(d)));
    child.stderr!.on('data', (d) => (output += String(d)));
    let gone = false;
    const exited = new Promise<NodeJS.Signals | null>((resolve) =>
      child.on('exit', (_code, signal) => {
        gone = true;
        resolve(signal);
      }),
    );
    // Some delivered, more in flight: then the hard kill.
    await eventually(
      async () => {
        if (gone) throw new Error(`the worker exited early:\n${output}`);
        return receiver.posts.length >= 10;
      },
      'deliveries to be under way',
      30_000,
    );
    child.kill('SIGKILL');
    expect(await exited, output).toBe('SIGKILL');

    const held = (await db.pool.query(`SELECT count(*)::int AS n FROM jobs WHERE kind = 'webhook_delivery' AND status = 'running'`)).rows[0]
      .n;
    expect(held, 'jobs the dead worker held').toBeGreaterThan(0);
    expect(receiver.ids().size).toBeLessThan(EVENTS);

    // A healthy worker after the 30 s lease: its reaper returns the dead worker's jobs.
    healthy = await startTestApi({
      databaseUrl: db.url,
      clock: new FixedClock(new Date(T0.getTime() + 60_000)),
      worker: { pollIntervalMs: 20 },
    });
    receiver.delayMs = 0;
    await eventually(
      async () =>
        (await db.pool.query(`SELECT count(*)::int AS n FROM jobs WHERE kind = 'webhook_delivery' AND status = 'succeeded'`)).rows[0].n ===
        EVENTS,
      'every delivery to succeed',
      30_000,
    );
    expect(receiver.ids()).toEqual(eventIds);
    expect(receiver.posts.length).toBeGreaterThanOrEqual(EVENTS);
  });
});
