import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { FixedClock } from '@nudge/config';
import { createTestDatabase, type TestDatabase } from '../support/database.js';
import { eventually, startTestApi, type TestApi } from '../support/api-app.js';
import { alternatingDevices, makeUser } from '../factories/user.js';

// Localized title and body end to end: the API stores the maps, the real
// worker runs the job, and the simulated provider records what each device
// was sent — its own locale's text, else its user's, else the default.

const START = '2027-01-03T12:00:00Z';

interface JobRow {
  id: string;
  status: string;
  run_at: Date;
}

describe('localized text end to end', () => {
  let db: TestDatabase;
  let api: TestApi;
  let ops: string;

  beforeAll(async () => {
    db = await createTestDatabase();
    api = await startTestApi({ databaseUrl: db.url, clock: new FixedClock(START), worker: { pollIntervalMs: 20 } });
    ops = await api.token('backend', ['ops']);
  });
  afterAll(async () => {
    await api?.close();
    await db?.drop();
  });

  /** A user with one device per entry: its token and locale (null: the device sent none). */
  const user = (id: string, locale: string | null, devices: [string, string | null][]): Promise<string> =>
    makeUser(api, id, { timeZone: 'UTC', ...(locale ? { locale } : {}) }, alternatingDevices(id, devices));

  const pushesTo = async (token: string) =>
    (
      await db.pool.query<{ title: string; body: string | null }>(
        `SELECT title, body FROM simulated_pushes WHERE push_token = $1 ORDER BY id`,
        [token],
      )
    ).rows;

  const jobRow = async (id: string) =>
    (await db.pool.query<JobRow>(`SELECT id::text, status, run_at FROM jobs WHERE id = $1`, [id])).rows[0]!;

  /** Moves the clock to the job's run_at and waits until the worker has finished it. */
  async function run(jobId: string): Promise<JobRow> {
    const job = await jobRow(jobId);
    api.clock.set(job.run_at);
    return eventually(async () => {
      const row = await jobRow(jobId);
      return row.status === 'succeeded' || row.status === 'dead' ? row : undefined;
    }, `job ${jobId} to finish`);
  }

  async function reminderJob(reminderId: string): Promise<string> {
    const { rows } = await db.pool.query<{ id: string }>(
      `SELECT j.id::text FROM reminder_jobs o JOIN jobs j ON j.id = o.job_id WHERE o.reminder_id = $1 AND j.status = 'queued'`,
      [reminderId],
    );
    expect(rows).toHaveLength(1);
    return rows[0]!.id;
  }

  const pill = { en: 'Take your pill', de: 'Tablette nehmen', 'pt-BR': 'Tome seu remédio' };

  describe('a reminder', () => {
    it('sends each device its locale’s text: de-AT → de, pt-BR → pt-BR, fr → the default; the body falls back on its own', async () => {
      api.clock.set(START);
      const bearer = await user('loc-r1', null, [
        ['sim-loc-r1-de', 'de-AT'],
        ['sim-loc-r1-pt', 'pt-BR'],
        ['sim-loc-r1-fr', 'fr'],
      ]);
      const res = await api.request('POST', '/v1/reminders', {
        token: bearer,
        body: {
          title: pill,
          body: { en: 'With water', de: 'Mit Wasser' },
          localTime: '08:00',
          timeZone: 'UTC',
          startDate: '2027-01-04',
        },
      });
      expect(res.status, JSON.stringify(res.body)).toBe(201);
      // What was stored comes back; without defaultLocale the first key of the title is the default.
      expect(res.body).toMatchObject({ title: pill, body: { en: 'With water', de: 'Mit Wasser' }, defaultLocale: 'en' });
      const got = await api.request('GET', `/v1/reminders/${res.body.id}`, { token: bearer });
      expect(got.body).toMatchObject({ title: pill, defaultLocale: 'en' });

      expect((await run(await reminderJob(res.body.id))).status).toBe('succeeded');
      expect(await pushesTo('sim-loc-r1-de')).toEqual([{ title: 'Tablette nehmen', body: 'Mit Wasser' }]);
      // pt-BR has a title of its own but no body: the body is the default's.
      expect(await pushesTo('sim-loc-r1-pt')).toEqual([{ title: 'Tome seu remédio', body: 'With water' }]);
      expect(await pushesTo('sim-loc-r1-fr')).toEqual([{ title: 'Take your pill', body: 'With water' }]);
    });

    it('uses the user’s locale for a device that has none (or one that fits nothing), and defaultLocale over the first key', async () => {
      api.clock.set(START);
      const bearer = await user('loc-r2', 'pt-br', [
        ['sim-loc-r2-none', null],
        ['sim-loc-r2-ja', 'ja-JP'],
        ['sim-loc-r2-de', 'de'],
      ]);
      const res = await api.request('POST', '/v1/reminders', {
        token: bearer,
        body: {
          title: { 'DE-at': 'Servus', 'pt-PT': 'Olá', en: 'Hi' },
          defaultLocale: 'en',
          localTime: '09:00',
          timeZone: 'UTC',
          startDate: '2027-01-04',
        },
      });
      expect(res.status, JSON.stringify(res.body)).toBe(201);
      // Tags are stored canonical.
      expect(res.body).toMatchObject({ title: { 'de-AT': 'Servus', 'pt-PT': 'Olá', en: 'Hi' }, body: null, defaultLocale: 'en' });
      expect((await run(await reminderJob(res.body.id))).status).toBe('succeeded');
      // The user's pt-BR does not take pt-PT (a sibling), nor does a device's de take de-AT: the default.
      expect(await pushesTo('sim-loc-r2-none')).toEqual([{ title: 'Hi', body: null }]);
      expect(await pushesTo('sim-loc-r2-ja')).toEqual([{ title: 'Hi', body: null }]);
      expect(await pushesTo('sim-loc-r2-de')).toEqual([{ title: 'Hi', body: null }]);
    });

    it('a user locale that fits is the second choice', async () => {
      api.clock.set(START);
      const bearer = await user('loc-r3', 'de-CH', [
        ['sim-loc-r3-none', null],
        ['sim-loc-r3-pt', 'pt-BR'],
      ]);
      const res = await api.request('POST', '/v1/reminders', {
        token: bearer,
        body: { title: pill, localTime: '10:00', timeZone: 'UTC', startDate: '2027-01-04' },
      });
      expect(res.status).toBe(201);
      expect((await run(await reminderJob(res.body.id))).status).toBe('succeeded');
      expect(await pushesTo('sim-loc-r3-none')).toEqual([{ title: 'Tablette nehmen', body: null }]);
      expect(await pushesTo('sim-loc-r3-pt')).toEqual([{ title: 'Tome seu remédio', body: null }]);
    });

    it('refuses bad tags, a defaultLocale missing from a map and an oversized variant with 400s naming them, writing nothing', async () => {
      api.clock.set(START);
      const bearer = await user('loc-r4', null, [['sim-loc-r4', 'de']]);
      const base = { localTime: '08:00', timeZone: 'UTC', startDate: '2027-01-04' };
      const cases: [Record<string, unknown>, string[]][] = [
        [{ title: { en: 'Hi', en_US: 'Hi', 'x-klingon': 'Qapla' } }, ['title.en_US', 'title.x-klingon']],
        [{ title: { en: 'Hi', de: '' } }, ['title.de']],
        [{ title: { en: 'x'.repeat(201) } }, ['title.en']],
        [{ title: {} }, ['title']],
        [{ title: ['Hi'] }, ['title']],
        [{ title: { en: 'Hi', de: 'Hallo' }, body: { de: 'Mit Wasser' }, defaultLocale: 'en' }, ['defaultLocale']],
        [{ title: { en: 'Hi' }, defaultLocale: 'fr' }, ['defaultLocale']],
        [{ title: { en: 'Hi' }, defaultLocale: 'en_US' }, ['defaultLocale']],
        [{ title: { en: 'Hi', de: 'Hallo' }, body: { en: 'short', de: '€'.repeat(1000) }, data: { pad: 'x'.repeat(1200) } }, ['body.de']],
        // The bad tag and another bad field in one 400.
        [{ title: { 'en-': 'Hi' }, localTime: '25:00' }, ['localTime', 'title.en-']],
      ];
      for (const [body, paths] of cases) {
        const res = await api.request('POST', '/v1/reminders', { token: bearer, body: { ...base, ...body } });
        expect(res.status, JSON.stringify(body)).toBe(400);
        expect(res.headers.get('content-type')).toContain('application/problem+json');
        expect(res.body.errors.map((e: { path: string }) => e.path).sort(), JSON.stringify(res.body)).toEqual(paths);
      }
      expect((await db.pool.query(`SELECT 1 FROM reminders WHERE user_id = 'loc-r4'`)).rowCount).toBe(0);
    });

    it('PATCH keeps the default language: a new map without it asks for defaultLocale; both strings drop it', async () => {
      api.clock.set(START);
      const bearer = await user('loc-r5', null, [['sim-loc-r5', 'de']]);
      const created = await api.request('POST', '/v1/reminders', {
        token: bearer,
        body: { title: pill, localTime: '08:00', timeZone: 'UTC', recurrence: 'FREQ=DAILY', startDate: '2027-01-04' },
      });
      const path = `/v1/reminders/${created.body.id}`;
      const missing = await api.request('PATCH', path, { token: bearer, body: { title: { de: 'Tablette', fr: 'Pilule' } } });
      expect(missing.status).toBe(400);
      expect(missing.body.errors).toEqual([{ path: 'defaultLocale', message: expect.stringContaining('defaultLocale en') }]);
      const withDefault = await api.request('PATCH', path, {
        token: bearer,
        body: { title: { de: 'Tablette', fr: 'Pilule' }, defaultLocale: 'fr' },
      });
      expect(withDefault.status).toBe(200);
      expect(withDefault.body).toMatchObject({ title: { de: 'Tablette', fr: 'Pilule' }, defaultLocale: 'fr', version: 2 });
      const plain = await api.request('PATCH', path, { token: bearer, body: { title: 'Pill' } });
      expect(plain.body).toMatchObject({ title: 'Pill', body: null, defaultLocale: null });
      // Readers that want one string (the ops timeline, the dashboard) get the default text from `title`.
      const { rows } = await db.pool.query(`SELECT title, title_i18n FROM reminders WHERE id = $1`, [created.body.id]);
      expect(rows[0]).toEqual({ title: 'Pill', title_i18n: null });
      // The ops user view lists the reminder with what was stored.
      const view = await api.request('GET', '/v1/ops/users/loc-r5', { token: ops });
      expect(view.body.reminders).toEqual([expect.objectContaining({ title: 'Pill', defaultLocale: null, version: 3 })]);
    });
  });

  describe('a notification', () => {
    let keys = 0;
    const notify = (body: Record<string, unknown>) =>
      api.request('POST', '/v1/notifications', { token: ops, body: { idempotencyKey: `loc-event-${++keys}`, ...body } });

    it('sends each device its locale’s text, else the user’s, else the default', async () => {
      api.clock.set(START);
      await user('loc-n1', 'pt-BR', [
        ['sim-loc-n1-de', 'de-AT'],
        ['sim-loc-n1-none', null],
        ['sim-loc-n1-fr', 'fr'],
      ]);
      await user('loc-n2', null, [['sim-loc-n2-fr', 'fr-FR']]);
      const text = { title: pill, body: { en: 'Now', de: 'Jetzt', 'pt-BR': 'Agora' }, defaultLocale: 'de' };
      const first = await notify({ userId: 'loc-n1', ...text });
      expect(first.status, JSON.stringify(first.body)).toBe(202);
      const second = await notify({ userId: 'loc-n2', ...text });
      expect((await run(first.body.jobId)).status).toBe('succeeded');
      expect((await run(second.body.jobId)).status).toBe('succeeded');
      expect(await pushesTo('sim-loc-n1-de')).toEqual([{ title: 'Tablette nehmen', body: 'Jetzt' }]);
      expect(await pushesTo('sim-loc-n1-none')).toEqual([{ title: 'Tome seu remédio', body: 'Agora' }]);
      // fr fits nothing, but the user's pt-BR does.
      expect(await pushesTo('sim-loc-n1-fr')).toEqual([{ title: 'Tome seu remédio', body: 'Agora' }]);
      // Neither the device nor the user fits: defaultLocale (de), not the first key.
      expect(await pushesTo('sim-loc-n2-fr')).toEqual([{ title: 'Tablette nehmen', body: 'Jetzt' }]);
    });

    it('is idempotent over a localized body, and refuses bad tags and oversized variants by name', async () => {
      await user('loc-n3', null, [['sim-loc-n3', 'de']]);
      const body = { userId: 'loc-n3', title: { en: 'Hi', de: 'Hallo' }, idempotencyKey: 'loc-same' };
      const a = await notify(body);
      const b = await notify(body);
      expect(a.status).toBe(202);
      expect(b.body.jobId).toBe(a.body.jobId);
      expect((await notify({ ...body, title: { en: 'Hi', de: 'Servus' } })).status).toBe(409);

      const bad = await notify({ userId: 'loc-n3', title: { en: 'Hi', 'de-': 'Hallo' }, body: { en: 'x'.repeat(2001) } });
      expect(bad.status).toBe(400);
      expect(bad.body.errors.map((e: { path: string }) => e.path).sort()).toEqual(['body.en', 'title.de-']);
      const big = await notify({ userId: 'loc-n3', title: { en: 'Hi', de: 'Hallo' }, body: { en: 'ok', de: 'ß'.repeat(2000) } });
      expect(big.status).toBe(400);
      expect(big.body.errors).toEqual([{ path: 'body.de', message: expect.stringMatching(/^body\.de: .* over the \d+-byte limit/) }]);
      // The operator sees it by its default title: the first key given (en), not jsonb's first (de).
      const view = await api.request('GET', '/v1/ops/users/loc-n3', { token: ops });
      expect(view.status).toBe(200);
      expect(view.body.timeline.items.map((e: { title: string }) => e.title)).toEqual(['Hi']);
      const defaultMissing = await notify({ userId: 'loc-n3', title: { en: 'Hi' }, defaultLocale: 'de' });
      expect(defaultMissing.status).toBe(400);
      expect(defaultMissing.body.errors[0].path).toBe('defaultLocale');
    });
  });

  it('lists title and body as a string or a map by language in the OpenAPI document', async () => {
    const res = await api.request('GET', '/docs-json');
    if (res.status !== 200) return expect.fail(`no OpenAPI JSON at /docs-json: ${res.status}`);
    for (const schema of ['CreateReminderDto', 'CreateNotificationDto', 'ReminderDto']) {
      const title = res.body.components.schemas[schema].properties.title;
      expect(title.oneOf, schema).toEqual([
        expect.objectContaining({ type: 'string' }),
        expect.objectContaining({ type: 'object', additionalProperties: expect.objectContaining({ type: 'string' }) }),
      ]);
    }
    expect(res.body.components.schemas.CreateReminderDto.properties.defaultLocale).toMatchObject({ type: 'string' });
  });
});
