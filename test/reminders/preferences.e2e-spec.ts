import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestDatabase, type TestDatabase } from '../support/database.js';
import { eventually, startTestApi, type TestApi } from '../support/api-app.js';
import { makeUser } from '../factories/user.js';
import { simulatedPushesTo } from '../support/simulated-pushes.js';

// Category preferences as a user lives them, through HTTP and the real worker
// on a pinned clock: the API (PUT/GET/DELETE, validation, scoping), a
// category turned off and on again, a category's quiet hours replacing the
// user's, allowTimeSensitive, and event notifications in a category. Each
// test moves the clock forward to a day of its own.

interface JobRow {
  id: string;
  status: string;
  run_at: Date;
  attempts: number;
  payload: { localDate: string };
}

describe('category preferences', () => {
  let db: TestDatabase;
  let api: TestApi;
  let ops: string;

  beforeAll(async () => {
    db = await createTestDatabase();
    api = await startTestApi({ databaseUrl: db.url, worker: { pollIntervalMs: 20 } });
    ops = await api.token('backend', ['ops']);
  });
  afterAll(async () => {
    await api?.close();
    await db?.drop();
  });

  const user = (id: string, profile: Record<string, unknown> = { timeZone: 'UTC' }) =>
    makeUser(api, id, profile, { phone: { platform: 'ios', pushToken: `sim-${id}` } });

  async function prefer(bearer: string, category: string, body: Record<string, unknown>) {
    const res = await api.request('PUT', `/v1/me/preferences/${category}`, { token: bearer, body });
    expect([200, 201], JSON.stringify(res.body)).toContain(res.status);
    return res.body;
  }

  async function create(bearer: string, body: Record<string, unknown>) {
    const res = await api.request('POST', '/v1/reminders', { token: bearer, body });
    expect(res.status, JSON.stringify(res.body)).toBe(201);
    return res.body as { id: string; category: string | null; nextOccurrence: { at: string } | null };
  }

  const pending = async (reminderId: string): Promise<JobRow[]> =>
    (
      await db.pool.query<JobRow>(
        `SELECT j.id, j.status, j.run_at, j.attempts, j.payload FROM reminder_jobs m JOIN jobs j ON j.id = m.job_id
          WHERE m.reminder_id = $1 AND j.status IN ('queued', 'running') ORDER BY j.run_at`,
        [reminderId],
      )
    ).rows;

  const runAtOf = async (reminderId: string) => (await pending(reminderId))[0]?.run_at.toISOString();

  const pushes = (token: string) =>
    simulatedPushesTo<{ title: string; occurrence: string | null; created_at: Date }>(
      db.pool,
      token,
      `title, data->>'occurrence' AS occurrence, created_at`,
    );

  const ledger = async (jobId: string) =>
    (await db.pool.query(`SELECT status, skip_reason FROM push_deliveries WHERE job_id = $1 ORDER BY id`, [jobId])).rows;

  /** Moves the clock to the job's run_at (or `at`) and waits until it has run (finished, or back in the queue for later). */
  async function run(job: JobRow, at = job.run_at.toISOString()): Promise<JobRow> {
    api.clock.set(at);
    return eventually(async () => {
      const [row] = (await db.pool.query<JobRow>(`SELECT * FROM jobs WHERE id = $1`, [job.id])).rows;
      return row && row.status !== 'running' && (row.status !== 'queued' || row.run_at.getTime() !== job.run_at.getTime())
        ? row
        : undefined;
    }, `job ${job.id} to run`);
  }

  async function runNext(reminderId: string): Promise<JobRow> {
    const [job] = await pending(reminderId);
    expect(job, `a pending job for ${reminderId}`).toBeDefined();
    return run(job!);
  }

  const occurrences = async (bearer: string, id: string, after: string) =>
    (
      (await api.request('GET', `/v1/reminders/${id}/occurrences?after=${after}&count=3`, { token: bearer })).body.occurrences as {
        localDate: string;
        status: string;
        reason?: string;
      }[]
    ).map((o) => [o.localDate, o.status, o.reason]);

  describe('the API', () => {
    it('PUT creates (201) then replaces (200) a preference, in lower case; GET lists them; DELETE returns to the defaults', async () => {
      api.clock.set('2027-05-01T12:00:00Z');
      const bearer = await user('prefs');
      const created = await api.request('PUT', '/v1/me/preferences/Medication', {
        token: bearer,
        body: { enabled: true, quietHours: { start: '21:00', end: '08:00' } },
      });
      expect(created.status).toBe(201);
      expect(created.body).toEqual({
        category: 'medication',
        enabled: true,
        quietHours: { start: '21:00', end: '08:00' },
        allowTimeSensitive: true,
        updatedAt: '2027-05-01T12:00:00.000Z',
      });
      // A PUT replaces the whole preference: what is left out takes its default.
      const replaced = await api.request('PUT', '/v1/me/preferences/medication', {
        token: bearer,
        body: { enabled: false, allowTimeSensitive: false },
      });
      expect(replaced.status).toBe(200);
      expect(replaced.body).toMatchObject({ category: 'medication', enabled: false, quietHours: null, allowTimeSensitive: false });
      await prefer(bearer, 'tips.daily', { enabled: false });

      const list = await api.request('GET', '/v1/me/preferences', { token: bearer });
      expect(list.status).toBe(200);
      expect(list.body.preferences.map((p: { category: string; enabled: boolean }) => [p.category, p.enabled])).toEqual([
        ['medication', false],
        ['tips.daily', false],
      ]);

      expect((await api.request('DELETE', '/v1/me/preferences/MEDICATION', { token: bearer })).status).toBe(204);
      expect((await api.request('DELETE', '/v1/me/preferences/medication', { token: bearer })).status).toBe(404);
      const after = await api.request('GET', '/v1/me/preferences', { token: bearer });
      expect(after.body.preferences.map((p: { category: string }) => p.category)).toEqual(['tips.daily']);
    });

    it('refuses bad input with a 400 that names every field, and writes nothing', async () => {
      const bearer = await user('prefs-bad');
      const cases: [string, unknown, string[]][] = [
        ['medication', {}, ['enabled']],
        ['medication', { enabled: 'yes', allowTimeSensitive: 1 }, ['enabled', 'allowTimeSensitive']],
        ['medication', { enabled: true, quietHours: { start: '25:00', end: '7:00' } }, ['quietHours.start', 'quietHours.end']],
        ['medication', { enabled: true, quietHours: '22:00-07:00' }, ['quietHours']],
        ['bad%20name', { enabled: true }, ['category']],
        ['x'.repeat(65), { enabled: true }, ['category']],
      ];
      for (const [category, body, paths] of cases) {
        const res = await api.request('PUT', `/v1/me/preferences/${category}`, { token: bearer, body });
        expect(res.status, JSON.stringify({ category, body })).toBe(400);
        expect(res.headers.get('content-type')).toMatch(/application\/problem\+json/);
        expect(res.body.errors.map((e: { path: string }) => e.path).sort(), JSON.stringify(res.body)).toEqual([...paths].sort());
      }
      expect((await api.request('PUT', `/v1/me/preferences/${'x'.repeat(64)}`, { token: bearer, body: { enabled: true } })).status).toBe(
        201,
      );
      const list = await api.request('GET', '/v1/me/preferences', { token: bearer });
      expect(list.body.preferences.map((p: { category: string }) => p.category)).toEqual(['x'.repeat(64)]);
      expect((await api.request('DELETE', '/v1/me/preferences/no%20such', { token: bearer })).status).toBe(400);
    });

    it("is scoped to the token's user: another user sees none of mine and cannot remove them", async () => {
      const mine = await user('prefs-mine');
      const theirs = await user('prefs-theirs');
      await prefer(mine, 'news', { enabled: false });
      expect((await api.request('GET', '/v1/me/preferences', { token: theirs })).body).toEqual({ preferences: [] });
      expect((await api.request('DELETE', '/v1/me/preferences/news', { token: theirs })).status).toBe(404);
      // Their PUT of the same name is theirs alone.
      await prefer(theirs, 'news', { enabled: true });
      const list = (await api.request('GET', '/v1/me/preferences', { token: mine })).body.preferences;
      expect(list).toEqual([expect.objectContaining({ category: 'news', enabled: false })]);
      expect((await api.request('GET', '/v1/me/preferences')).status).toBe(401);
    });

    it('needs a profile first (409), and a deleted user takes their preferences along', async () => {
      const bearer = await api.token('prefs-nobody');
      const res = await api.request('PUT', '/v1/me/preferences/news', { token: bearer, body: { enabled: false } });
      expect(res.status).toBe(409);
      const gone = await user('prefs-gone');
      await prefer(gone, 'news', { enabled: false });
      expect((await api.request('DELETE', '/v1/me', { token: gone })).status).toBe(204);
      const { rows } = await db.pool.query(`SELECT 1 FROM user_preferences WHERE user_id = 'prefs-gone'`);
      expect(rows).toEqual([]);
    });

    it('reminders and notifications take a category, stored in lower case; a bad one is a 400', async () => {
      const bearer = await user('prefs-cat');
      const reminder = await create(bearer, { title: 'Pill', localTime: '09:00', recurrence: 'FREQ=DAILY', category: 'Medication' });
      expect(reminder.category).toBe('medication');
      const patched = await api.request('PATCH', `/v1/reminders/${reminder.id}`, { token: bearer, body: { category: null } });
      expect(patched.body.category).toBeNull();
      for (const category of ['', 'has space', 'x'.repeat(65), 7]) {
        const res = await api.request('POST', '/v1/reminders', { token: bearer, body: { title: 'T', localTime: '09:00', category } });
        expect(res.status, String(category)).toBe(400);
        expect(res.body.errors.map((e: { path: string }) => e.path)).toContain('category');
        const notification = await api.request('POST', '/v1/notifications', {
          token: ops,
          body: { userId: 'prefs-cat', title: 'T', idempotencyKey: `bad-category-${String(category).length}`, category },
        });
        expect(notification.status, String(category)).toBe(400);
        expect(notification.body.errors.map((e: { path: string }) => e.path)).toContain('category');
      }
      const accepted = await api.request('POST', '/v1/notifications', {
        token: ops,
        body: { userId: 'prefs-cat', title: 'T', idempotencyKey: 'good-category', category: 'Orders' },
      });
      expect(accepted.status).toBe(202);
      const { rows } = await db.pool.query(`SELECT payload->>'category' AS category FROM jobs WHERE id = $1`, [accepted.body.jobId]);
      expect(rows).toEqual([{ category: 'orders' }]);
    });
  });

  describe('reminders', () => {
    it('skips occurrences of a disabled category (category_disabled) and goes on; once enabled again they arrive', async () => {
      api.clock.set('2027-06-01T12:00:00Z');
      const bearer = await user('cat-off');
      const reminder = await create(bearer, { title: 'Tip', localTime: '09:00', recurrence: 'FREQ=DAILY', category: 'tips' });
      await prefer(bearer, 'TIPS', { enabled: false });

      const skipped = await runNext(reminder.id);
      expect(skipped.status).toBe('succeeded');
      expect(await pushes('sim-cat-off')).toEqual([]);
      expect(await ledger(skipped.id)).toEqual([{ status: 'skipped', skip_reason: 'category_disabled' }]);
      // Turning a category off is not deleting the reminder: the next occurrence is planned.
      expect(await runAtOf(reminder.id)).toBe('2027-06-03T09:00:00.000Z');

      await prefer(bearer, 'tips', { enabled: true });
      expect((await runNext(reminder.id)).status).toBe('succeeded');
      expect((await pushes('sim-cat-off')).map((p) => p.occurrence)).toEqual(['2027-06-03']);
      expect(await occurrences(bearer, reminder.id, '2027-06-01T12:00:00Z')).toEqual([
        ['2027-06-02', 'skipped', 'category_disabled'],
        ['2027-06-03', 'sent', undefined],
        ['2027-06-04', 'scheduled', undefined],
      ]);

      // The user's own off switch comes first: the reason is theirs, not the category's.
      await prefer(bearer, 'tips', { enabled: false });
      expect((await api.request('PATCH', '/v1/me', { token: bearer, body: { notificationsEnabled: false } })).status).toBe(200);
      await runNext(reminder.id);
      expect((await occurrences(bearer, reminder.id, '2027-06-03T12:00:00Z'))[0]).toEqual(['2027-06-04', 'skipped', 'disabled']);
    });

    it("replaces the user's quiet hours with the category's, when planned and when the preference changes", async () => {
      api.clock.set('2027-07-01T00:30:00Z');
      const bearer = await user('cat-quiet', { timeZone: 'UTC', quietHours: { start: '22:00', end: '07:00' } });
      await prefer(bearer, 'medication', { enabled: true, quietHours: { start: '12:00', end: '13:00' } });
      // Inside the user's window, outside the category's: not moved.
      const early = await create(bearer, { title: 'Early pill', localTime: '06:00', recurrence: 'FREQ=DAILY', category: 'medication' });
      // Inside the category's window, outside the user's: moved to its end.
      const noon = await create(bearer, { title: 'Noon pill', localTime: '12:30', recurrence: 'FREQ=DAILY', category: 'medication' });
      // Without a category, or in one without a preference: the user's quiet hours.
      const plain = await create(bearer, { title: 'Plain', localTime: '06:00', recurrence: 'FREQ=DAILY' });
      const other = await create(bearer, { title: 'Other', localTime: '06:00', recurrence: 'FREQ=DAILY', category: 'other' });
      expect(await runAtOf(early.id)).toBe('2027-07-01T06:00:00.000Z');
      expect(await runAtOf(noon.id)).toBe('2027-07-01T13:00:00.000Z');
      expect(await runAtOf(plain.id)).toBe('2027-07-01T07:00:00.000Z');
      expect(await runAtOf(other.id)).toBe('2027-07-01T07:00:00.000Z');

      // The category's own hours removed: the user's apply again, and the pending occurrences re-plan at once.
      await prefer(bearer, 'medication', { enabled: true, quietHours: null });
      expect(await runAtOf(early.id)).toBe('2027-07-01T07:00:00.000Z');
      expect(await runAtOf(noon.id)).toBe('2027-07-01T12:30:00.000Z');
      // And back.
      await prefer(bearer, 'medication', { enabled: true, quietHours: { start: '12:00', end: '13:00' } });
      expect(await runAtOf(early.id)).toBe('2027-07-01T06:00:00.000Z');
      expect(await runAtOf(noon.id)).toBe('2027-07-01T13:00:00.000Z');
      await runNext(early.id);
      await runNext(plain.id);

      // Checked again when the job runs: a job planned for 12:30 (the window written behind the planner's back)
      // waits until the category's window ends.
      await prefer(bearer, 'medication', { enabled: true, quietHours: null });
      await db.pool.query(
        `UPDATE user_preferences SET quiet_hours_start = '12:00', quiet_hours_end = '13:00' WHERE user_id = 'cat-quiet' AND category = 'medication'`,
      );
      const [noonJob] = await pending(noon.id);
      expect(noonJob!.run_at.toISOString()).toBe('2027-07-01T12:30:00.000Z');
      const deferred = await run(noonJob!);
      expect(deferred.run_at.toISOString()).toBe('2027-07-01T13:00:00.000Z');
      await run(deferred);
      const sent = (await pushes('sim-cat-quiet')).filter((p) => p.title !== 'Other');
      expect(sent.map((p) => [p.title, p.created_at.toISOString()])).toEqual([
        ['Early pill', '2027-07-01T06:00:00.000Z'],
        ['Plain', '2027-07-01T07:00:00.000Z'],
        ['Noon pill', '2027-07-01T13:00:00.000Z'],
      ]);
    });

    it('holds time-sensitive reminders of a category that does not allow them until its quiet hours end', async () => {
      api.clock.set('2027-08-01T00:30:00Z');
      const bearer = await user('cat-ts');
      await prefer(bearer, 'alarm', { enabled: true, quietHours: { start: '12:00', end: '13:00' } });
      const urgent = await create(bearer, {
        title: 'Urgent',
        localTime: '12:30',
        recurrence: 'FREQ=DAILY',
        category: 'alarm',
        timeSensitive: true,
      });
      // Allowed (the default): it breaks through the category's quiet hours.
      expect(await runAtOf(urgent.id)).toBe('2027-08-01T12:30:00.000Z');
      await prefer(bearer, 'alarm', { enabled: true, quietHours: { start: '12:00', end: '13:00' }, allowTimeSensitive: false });
      expect(await runAtOf(urgent.id)).toBe('2027-08-01T13:00:00.000Z');
      await prefer(bearer, 'alarm', { enabled: true, quietHours: { start: '12:00', end: '13:00' } });
      expect(await runAtOf(urgent.id)).toBe('2027-08-01T12:30:00.000Z');
      // Checked again when the job runs (the rule written behind the planner's back): it waits.
      await db.pool.query(`UPDATE user_preferences SET allow_time_sensitive = false WHERE user_id = 'cat-ts'`);
      const [job] = await pending(urgent.id);
      const deferred = await run(job!);
      expect(deferred.run_at.toISOString()).toBe('2027-08-01T13:00:00.000Z');
      await run(deferred);
      expect((await pushes('sim-cat-ts')).map((p) => p.created_at.toISOString())).toEqual(['2027-08-01T13:00:00.000Z']);
    });
  });

  describe('snoozes', () => {
    it("wait out the category's quiet hours, and are refused (409) while the category is off", async () => {
      api.clock.set('2027-08-10T00:30:00Z');
      const bearer = await user('cat-snooze', { timeZone: 'UTC', quietHours: { start: '22:00', end: '07:00' } });
      await prefer(bearer, 'pill', { enabled: true, quietHours: { start: '12:00', end: '13:00' } });
      const reminder = await create(bearer, { title: 'Pill', localTime: '11:50', recurrence: 'FREQ=DAILY', category: 'pill' });
      expect((await runNext(reminder.id)).status).toBe('succeeded');
      const snooze = (minutes: number) =>
        api.request('POST', `/v1/reminders/${reminder.id}/occurrences/2027-08-10/snooze`, { token: bearer, body: { minutes } });
      // 12:10 is inside the category's window (not the user's): delivered again at its end.
      const snoozed = await snooze(20);
      expect(snoozed.status, JSON.stringify(snoozed.body)).toBe(200);
      expect(snoozed.body.snoozedUntil).toBe('2027-08-10T13:00:00.000Z');
      await prefer(bearer, 'pill', { enabled: false });
      const refused = await snooze(20);
      expect(refused.status).toBe(409);
      expect(refused.body.detail).toMatch(/category "pill" is turned off/);
    });
  });

  describe('OpenAPI', () => {
    it('lists the preference endpoints and every field', async () => {
      const doc = (await api.request('GET', '/docs-json')).body;
      expect(Object.keys(doc.paths['/v1/me/preferences/{category}']).sort()).toEqual(['delete', 'put']);
      expect(Object.keys(doc.paths['/v1/me/preferences'])).toEqual(['get']);
      const schemas = doc.components.schemas;
      expect(Object.keys(schemas.PutPreferenceDto.properties).sort()).toEqual(['allowTimeSensitive', 'enabled', 'quietHours']);
      expect(schemas.PutPreferenceDto.required).toEqual(['enabled']);
      expect(Object.keys(schemas.PreferenceDto.properties).sort()).toEqual([
        'allowTimeSensitive',
        'category',
        'enabled',
        'quietHours',
        'updatedAt',
      ]);
      expect(schemas.CreateReminderDto.properties.category).toBeDefined();
      expect(schemas.ReminderDto.properties.category).toBeDefined();
      expect(schemas.CreateNotificationDto.properties.category).toBeDefined();
      expect(schemas.OccurrenceDto.properties.reason.enum).toContain('category_disabled');
    });
  });

  describe('notifications', () => {
    it("skips a notification of a disabled category, holds one in its category's quiet hours, lets the others through", async () => {
      api.clock.set('2027-09-01T12:30:00Z');
      const bearer = await user('cat-notify');
      await prefer(bearer, 'promo', { enabled: false });
      await prefer(bearer, 'orders', { enabled: true, quietHours: { start: '12:00', end: '13:00' } });
      const notify = async (key: string, body: Record<string, unknown>) => {
        const res = await api.request('POST', '/v1/notifications', {
          token: ops,
          body: { userId: 'cat-notify', title: key, idempotencyKey: `cat-notify-${key}`, ...body },
        });
        expect(res.status, JSON.stringify(res.body)).toBe(202);
        return res.body.jobId as string;
      };
      const jobOf = async (id: string) => (await db.pool.query<JobRow>(`SELECT * FROM jobs WHERE id = $1`, [id])).rows[0]!;
      const settled = (id: string) => eventually(async () => ((await jobOf(id)).status === 'succeeded' ? true : undefined), `job ${id}`);

      const promo = await notify('promo', { category: 'Promo' });
      const orders = await notify('orders', { category: 'orders' });
      const urgent = await notify('urgent', { category: 'orders', timeSensitive: true });
      const plain = await notify('plain', {});
      await settled(promo);
      await settled(urgent);
      await settled(plain);
      expect(await ledger(promo)).toEqual([{ status: 'skipped', skip_reason: 'category_disabled' }]);
      const held = await eventually(async () => {
        const row = await jobOf(orders);
        return row.status === 'queued' && row.run_at.getTime() > api.clock.now().getTime() ? row : undefined;
      }, 'the orders notification to wait');
      expect(held.run_at.toISOString()).toBe('2027-09-01T13:00:00.000Z');
      expect((await pushes('sim-cat-notify')).map((p) => p.title).sort()).toEqual(['plain', 'urgent']);

      api.clock.set('2027-09-01T13:00:00Z');
      await settled(orders);
      expect((await pushes('sim-cat-notify')).map((p) => p.title)).toContain('orders');
    });
  });
});
