import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { nextOccurrence } from '@nudge/scheduling';
import { createTestDatabase, type TestDatabase } from '../support/database.js';
import { startTestApi, type TestApi } from '../support/api-app.js';

// Nudge has no time-zone tables of its own: luxon and the scheduler ask Intl,
// i.e. the IANA data in Node's ICU (`process.versions.tz`). These rule changes
// resolve one way with that data and another with anything older, so the test
// fails if some other (stale) copy of the database were ever used instead.
//
// - tzdata 2022f: Mexico abolished DST; America/Mexico_City stays at UTC−6 in summer 2023 (was −5).
// - tzdata 2022g: America/Ciudad_Juarez split off America/Ojinaga (older data: an unknown zone).
// - tzdata 2023a: Greenland's America/Nuuk moved to UTC−2 standard time from 28 Oct 2023 (was −3).
const CASES = [
  {
    zone: 'America/Mexico_City',
    startDate: '2023-07-03',
    after: '2023-07-03T00:00:00Z',
    at: '2023-07-03T14:00:00.000Z',
    local: '2023-07-03T08:00:00.000-06:00',
    stale: '2023-07-03T13:00:00.000Z',
  },
  {
    zone: 'America/Ciudad_Juarez',
    startDate: '2023-01-16',
    after: '2023-01-16T00:00:00Z',
    at: '2023-01-16T15:00:00.000Z',
    local: '2023-01-16T08:00:00.000-07:00',
    stale: null,
  },
  {
    zone: 'America/Nuuk',
    startDate: '2024-01-15',
    after: '2024-01-15T00:00:00Z',
    at: '2024-01-15T10:00:00.000Z',
    local: '2024-01-15T08:00:00.000-02:00',
    stale: '2024-01-15T11:00:00.000Z',
  },
];

describe("time-zone data: Node's ICU, not a copy of our own", () => {
  let db: TestDatabase;
  let api: TestApi;
  let token: string;
  beforeAll(async () => {
    db = await createTestDatabase();
    api = await startTestApi({ databaseUrl: db.url });
    token = await api.token('traveller');
    expect((await api.request('PUT', '/v1/me', { token, body: { timeZone: 'UTC' } })).status).toBe(201);
  });
  afterAll(async () => {
    await api?.close();
    await db?.drop();
  });

  it('runs on an IANA release that has all three changes (2023a or later)', () => {
    expect(process.versions.tz, 'Node ships no tz version: built without ICU?').toMatch(/^\d{4}[a-z]$/);
    expect(process.versions.tz! >= '2023a', `Node's tzdata ${process.versions.tz} predates 2023a: update Node`).toBe(true);
  });

  it.each(CASES)('$zone: nextOccurrence follows the current rules', ({ zone, startDate, after, at, local, stale }) => {
    const next = nextOccurrence({ localTime: '08:00', timeZone: zone, recurrence: 'FREQ=DAILY', startDate }, new Date(after));
    expect({ at: next?.at.toISOString(), local: next?.local }).toEqual({ at, local });
    if (stale) expect(at).not.toBe(stale);
  });

  it.each(CASES)('$zone: the API accepts the zone and GET occurrences answers the same', async ({ zone, startDate, after, at, local }) => {
    const created = await api.request('POST', '/v1/reminders', {
      token,
      body: { title: zone, localTime: '08:00', timeZone: zone, recurrence: 'FREQ=DAILY', startDate },
    });
    expect(created.status, JSON.stringify(created.body)).toBe(201);
    const res = await api.request('GET', `/v1/reminders/${created.body.id}/occurrences?count=1&after=${encodeURIComponent(after)}`, {
      token,
    });
    expect(res.status).toBe(200);
    // Long before the reminder existed: it was never owed, so it shows as skipped (not_scheduled).
    expect(res.body.occurrences).toEqual([{ localDate: startDate, at, local, status: 'skipped', reason: 'not_scheduled' }]);
  });
});
