import { spawn, type ChildProcess } from 'node:child_process';
import { resolve } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { freePort } from '@nudge/database';
import { occurrences } from '@nudge/scheduling';
import { signToken } from '../../apps/api/src/auth/jwt.js';
import { createTestDatabase, type TestDatabase } from '../support/database.js';
import { TEST_SECRET } from '../support/api-app.js';

// The built API, run under process time zones far from UTC, must answer
// GET /occurrences exactly as the scheduling code computes them here.
const SERVER_ZONES = ['Pacific/Kiritimati', 'America/Adak', 'Asia/Kathmandu'];
const RULES: [string, string, string][] = [
  ['America/New_York', '02:30', 'FREQ=DAILY'],
  ['Europe/London', '01:30', 'FREQ=WEEKLY;BYDAY=SU'],
  ['Australia/Lord_Howe', '02:15', 'FREQ=DAILY;INTERVAL=3'],
  ['America/Santiago', '00:30', 'FREQ=MONTHLY;BYDAY=SA;BYSETPOS=1'],
  ['Pacific/Chatham', '03:45', 'FREQ=YEARLY;BYMONTH=4;BYDAY=1SU'],
];

describe.each(SERVER_ZONES)('GET /occurrences with the server in TZ=%s', (serverZone) => {
  let db: TestDatabase;
  let child: ChildProcess;
  let base: string;
  let token: string;

  beforeAll(async () => {
    db = await createTestDatabase();
    const port = await freePort();
    base = `http://127.0.0.1:${port}`;
    child = spawn(process.execPath, [resolve('dist/apps/api/src/main.js')], {
      env: {
        ...process.env,
        TZ: serverZone,
        ROLE: 'api',
        PORT: String(port),
        DATABASE_URL: db.url,
        AUTH_JWT_SECRET: TEST_SECRET,
        SKIP_MIGRATIONS: '1',
        LOG_LEVEL: 'warn',
      },
      stdio: ['ignore', 'ignore', 'pipe'],
    });
    let stderr = '';
    child.stderr!.on('data', (chunk) => (stderr += chunk));
    for (let i = 0; i < 600; i++) {
      if (child.exitCode !== null) throw new Error(`the API exited: ${stderr}`);
      if (
        (await fetch(`${base}/health/ready`).then(
          (r) => r.status,
          () => 0,
        )) === 200
      )
        break;
      await new Promise((r) => setTimeout(r, 100));
    }
    token = await signToken(TEST_SECRET, { userId: 'tz-user' });
    const put = await fetch(`${base}/v1/me`, {
      method: 'PUT',
      headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
      body: JSON.stringify({ timeZone: 'UTC' }),
    });
    expect(put.status).toBe(201);
  }, 60_000);
  afterAll(async () => {
    if (child && child.exitCode === null) {
      const exited = new Promise((r) => child.once('exit', r));
      child.kill('SIGTERM');
      await exited;
    }
    await db?.drop();
  });

  it.each(RULES)('%s %s %s', async (timeZone, localTime, recurrence) => {
    // Ahead of the real clock (the spawned API reads it): a past date without a
    // record is listed as skipped, not scheduled.
    const startDate = '2031-01-01';
    const created = await fetch(`${base}/v1/reminders`, {
      method: 'POST',
      headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
      body: JSON.stringify({ title: 't', localTime, timeZone, recurrence, startDate }),
    }).then((r) => r.json() as Promise<{ id: string }>);
    const after = '2031-01-01T00:00:00.000Z';
    const res = await fetch(`${base}/v1/reminders/${created.id}/occurrences?count=40&after=${after}`, {
      headers: { authorization: `Bearer ${token}` },
    });
    const body = (await res.json()) as { occurrences: unknown[] };
    const expected = occurrences({ timeZone, localTime, recurrence, startDate }, new Date(after), 40).map((o) => ({
      localDate: o.localDate,
      at: o.at.toISOString(),
      local: o.local,
      status: 'scheduled',
    }));
    expect(expected.length).toBe(40);
    expect(body.occurrences).toEqual(expected);
  });
});
