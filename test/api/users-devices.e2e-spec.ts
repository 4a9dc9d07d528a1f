import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestDatabase, type TestDatabase } from '../support/database.js';
import { startTestApi, type TestApi } from '../support/api-app.js';

describe('users and devices API', () => {
  let db: TestDatabase;
  let api: TestApi;
  let alice: string;
  let bob: string;
  beforeAll(async () => {
    db = await createTestDatabase();
    api = await startTestApi({ databaseUrl: db.url });
    alice = await api.token('alice');
    bob = await api.token('bob');
  });
  afterAll(async () => {
    await api?.close();
    await db?.drop();
  });

  it('creates a profile with 201, replaces it with 200, and patches a subset', async () => {
    const created = await api.request('PUT', '/v1/me', {
      token: alice,
      body: { timeZone: 'America/Chicago', quietHours: { start: '22:00', end: '07:00' } },
    });
    expect(created.status).toBe(201);
    expect(created.body).toMatchObject({
      userId: 'alice',
      timeZone: 'America/Chicago',
      quietHours: { start: '22:00', end: '07:00' },
      followDeviceTimeZone: true,
      notificationsEnabled: true,
      locale: null,
    });
    const replaced = await api.request('PUT', '/v1/me', { token: alice, body: { timeZone: 'America/Chicago', locale: 'en-US' } });
    expect(replaced.status).toBe(200);
    expect(replaced.body.quietHours).toBeNull();
    const patched = await api.request('PATCH', '/v1/me', { token: alice, body: { notificationsEnabled: false } });
    expect(patched.status).toBe(200);
    expect(patched.body).toMatchObject({ locale: 'en-US', notificationsEnabled: false, timeZone: 'America/Chicago' });
    expect((await api.request('GET', '/v1/me', { token: alice })).body.notificationsEnabled).toBe(false);
  });

  it('of first PUTs racing for a new user, one creates (201) and each other one applies its own values (200)', async () => {
    const racer = await api.token('racer');
    const zones = [
      'Europe/Berlin',
      'Asia/Tokyo',
      'America/Chicago',
      'Africa/Lagos',
      'Australia/Sydney',
      'Europe/Lisbon',
      'Asia/Seoul',
      'America/Lima',
    ];
    // Open enough pooled connections first, so that the PUTs really run side by side.
    await Promise.all(zones.map(() => api.request('GET', '/v1/me', { token: racer })));
    const answers = await Promise.all(zones.map((timeZone) => api.request('PUT', '/v1/me', { token: racer, body: { timeZone } })));
    expect(answers.map((a) => a.status).sort()).toEqual([200, 200, 200, 200, 200, 200, 200, 201]);
    // Each answer is the profile as its own PUT left it, not the winner's.
    expect(answers.map((a) => a.body.timeZone)).toEqual(zones);
    const stored = (await db.pool.query(`SELECT time_zone FROM users WHERE id = 'racer'`)).rows;
    expect(stored).toHaveLength(1);
    expect(zones).toContain(stored[0].time_zone);
  });

  it.each([['-06:00'], ['EST'], ['UTC+3'], ['America/Nowhere'], [''], ['CST6CDT']])(
    'refuses the time zone %j, naming the field and writing nothing',
    async (timeZone) => {
      const res = await api.request('PUT', '/v1/me', { token: bob, body: { timeZone } });
      expect(res.status).toBe(400);
      expect(res.body.errors.map((e: { path: string }) => e.path)).toContain('timeZone');
      expect((await db.pool.query(`SELECT count(*)::int AS n FROM users WHERE id = 'bob'`)).rows[0].n).toBe(0);
    },
  );

  it('refuses bad quiet hours and lists every bad field', async () => {
    const res = await api.request('PUT', '/v1/me', {
      token: bob,
      body: { timeZone: 'Europe/Berlin', quietHours: { start: '25:00', end: '7:00' }, locale: 'not a locale', notificationsEnabled: 'yes' },
    });
    expect(res.status).toBe(400);
    expect(res.body.errors.map((e: { path: string }) => e.path).sort()).toEqual([
      'locale',
      'notificationsEnabled',
      'quietHours.end',
      'quietHours.start',
    ]);
  });

  it('refuses quiet hours given as an array, for the profile and for a category, and writes nothing', async () => {
    for (const quietHours of [[], [{ start: '22:00', end: '07:00' }]]) {
      const profile = await api.request('PUT', '/v1/me', { token: bob, body: { timeZone: 'Europe/Berlin', quietHours } });
      expect(profile.status).toBe(400);
      expect(profile.body.errors).toContainEqual({ path: 'quietHours', message: expect.stringContaining('object') });
      const category = await api.request('PUT', '/v1/me/preferences/arrays', { token: bob, body: { enabled: true, quietHours } });
      expect(category.status).toBe(400);
      expect(category.body.errors).toContainEqual({ path: 'quietHours', message: expect.stringContaining('object') });
    }
    expect((await db.pool.query(`SELECT count(*)::int AS n FROM users WHERE id = 'bob'`)).rows[0].n).toBe(0);
    expect((await db.pool.query(`SELECT count(*)::int AS n FROM user_preferences`)).rows[0].n).toBe(0);
  });

  it('registers a device idempotently and never shows the whole token', async () => {
    const body = { platform: 'ios', pushToken: 'sim-token-alice-a1b2', appVersion: '1.0.0' };
    const first = await api.request('PUT', '/v1/me/devices/phone-1', { token: alice, body });
    expect(first.status).toBe(201);
    expect(first.body).toMatchObject({
      installationId: 'phone-1',
      platform: 'ios',
      pushToken: '…a1b2',
      active: true,
      deactivatedReason: null,
    });
    const again = await api.request('PUT', '/v1/me/devices/phone-1', { token: alice, body });
    expect(again.status).toBe(200);
    const list = await api.request('GET', '/v1/me/devices', { token: alice });
    expect(list.body.devices).toHaveLength(1);
    expect(JSON.stringify(list.body)).not.toContain('sim-token-alice');
  });

  it('moves a token that another installation held to the new one', async () => {
    await api.request('PUT', '/v1/me', { token: bob, body: { timeZone: 'Europe/Berlin' } });
    const res = await api.request('PUT', '/v1/me/devices/bob-phone', {
      token: bob,
      body: { platform: 'ios', pushToken: 'sim-token-alice-a1b2' },
    });
    expect(res.status).toBe(201);
    expect((await api.request('GET', '/v1/me/devices', { token: alice })).body.devices).toHaveLength(0);
    const { rows } = await db.pool.query(`SELECT user_id, installation_id FROM devices WHERE push_token = 'sim-token-alice-a1b2'`);
    expect(rows).toEqual([{ user_id: 'bob', installation_id: 'bob-phone' }]);
  });

  it('of users registering one token at the same moment, each answer is a success and one device holds it', async () => {
    const owners = ['swap-1', 'swap-2', 'swap-3', 'swap-4'];
    const tokens = await Promise.all(owners.map((id) => api.token(id)));
    for (const token of tokens) await api.request('PUT', '/v1/me', { token, body: { timeZone: 'Europe/Paris' } });
    const body = { platform: 'android', pushToken: 'sim-token-shared-by-racers' };
    const answers = await Promise.all(
      [1, 2, 3].flatMap((n) => tokens.map((token) => api.request('PUT', `/v1/me/devices/phone-${n}`, { token, body }))),
    );
    expect(answers.map((a) => a.status).filter((status) => status !== 200 && status !== 201)).toEqual([]);
    const { rows } = await db.pool.query(`SELECT user_id FROM devices WHERE push_token = 'sim-token-shared-by-racers'`);
    expect(rows).toHaveLength(1);
    expect(owners).toContain(rows[0].user_id);
  });

  it('follows the device zone when the user asked to (travel), and not otherwise', async () => {
    const moved = await api.request('PUT', '/v1/me/devices/bob-phone', {
      token: bob,
      body: { platform: 'ios', pushToken: 'sim-token-alice-a1b2', timeZone: 'Asia/Tokyo' },
    });
    expect(moved.status).toBe(200);
    expect((await api.request('GET', '/v1/me', { token: bob })).body.timeZone).toBe('Asia/Tokyo');
    await api.request('PATCH', '/v1/me', { token: bob, body: { followDeviceTimeZone: false } });
    await api.request('PUT', '/v1/me/devices/bob-phone', {
      token: bob,
      body: { platform: 'ios', pushToken: 'sim-token-alice-a1b2', timeZone: 'Europe/Paris' },
    });
    expect((await api.request('GET', '/v1/me', { token: bob })).body.timeZone).toBe('Asia/Tokyo');
  });

  it("keeps users apart: another user's installation is a 404 and stays", async () => {
    expect((await api.request('DELETE', '/v1/me/devices/bob-phone', { token: alice })).status).toBe(404);
    expect((await api.request('GET', '/v1/me/devices', { token: bob })).body.devices).toHaveLength(1);
  });

  it('refuses a device for a user without a profile, and a bad installation id', async () => {
    const carol = await api.token('carol');
    expect((await api.request('PUT', '/v1/me/devices/x', { token: carol, body: { platform: 'ios', pushToken: 'abc' } })).status).toBe(409);
    const bad = await api.request('PUT', `/v1/me/devices/${'x'.repeat(200)}`, { token: bob, body: { platform: 'web', pushToken: 'abc' } });
    expect(bad.status).toBe(400);
  });

  it('deletes the user with their devices', async () => {
    expect((await api.request('DELETE', '/v1/me', { token: bob })).status).toBe(204);
    expect((await api.request('GET', '/v1/me', { token: bob })).status).toBe(404);
    expect((await db.pool.query(`SELECT count(*)::int AS n FROM devices WHERE user_id = 'bob'`)).rows[0].n).toBe(0);
  });
});
