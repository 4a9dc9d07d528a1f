import { mkdirSync } from 'node:fs';
import type { Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { enqueue } from '@nudge/queue';
import { createTestDatabase, type TestDatabase } from '../support/database.js';
import { startTestApi, type TestApi } from '../support/api-app.js';
import { launchTestBrowser, type TestBrowser } from '../support/browser.js';

// Debian's Chromium, never a browser that Playwright downloads: the integration
// project's setup (test/support/browser-setup.ts) finds or installs it, or
// says why these tests are skipped.
const CHROMIUM = inject('chromiumPath');

// The dashboard in a real browser against the real API and database. No
// worker runs, so the dead jobs stay dead until the test presses Retry.
const TITLE = 'operator dashboard (/ops) in Chromium';
describe.skipIf(CHROMIUM === null)(CHROMIUM === null ? `${TITLE} (skipped: ${inject('chromiumSkipReason')})` : TITLE, () => {
  let db: TestDatabase;
  let api: TestApi;
  let browser: TestBrowser;
  let page: Page;
  let deadIds: string[];
  let reminderId: string;
  let reminderJobId: string;

  beforeAll(async () => {
    db = await createTestDatabase();
    api = await startTestApi({ databaseUrl: db.url });
    const now = api.clock.now();
    const ago = (seconds: number) => new Date(now.getTime() - seconds * 1000);
    for (let i = 0; i < 3; i++) {
      // enqueue<string>: fixture jobs of real kinds with made-up payloads, for the queue views (they are not run as such).
      await enqueue<string>(db.pool, { kind: 'send_reminder', payload: { reminderId: `r${i}` }, runAt: ago(90 + i * 200) }, { now });
    }
    for (let i = 0; i < 2; i++) {
      await enqueue<string>(db.pool, { kind: 'send_reminder', payload: {}, runAt: new Date(now.getTime() + 3_600_000) }, { now });
    }
    deadIds = [];
    for (let i = 0; i < 2; i++) {
      const { job } = await enqueue<string>(
        db.pool,
        {
          kind: 'send_notification',
          payload: { title: 'Order shipped', pushToken: `secret-device-token-${i}` },
          idempotencyKey: `order-${i}`,
        },
        { now: ago(7200) },
      );
      deadIds.push(job.id);
      await db.pool.query(`UPDATE jobs SET status = 'dead', attempts = max_attempts, last_error = $2, finished_at = $3 WHERE id = $1`, [
        job.id,
        `APNs answered 400 BadTopic (${i})`,
        ago(600),
      ]);
      await db.pool.query(
        `INSERT INTO job_runs (job_id, kind, attempt, worker, started_at, finished_at, outcome, error)
         VALUES ($1, 'send_notification', 10, 'worker-a', $2, $2, 'dead', $3)`,
        [job.id, ago(600), `APNs answered 400 BadTopic (${i})`],
      );
    }
    // A real reminder whose pending occurrence failed once (the provider answered 500) and waits for its retry.
    const alice = await api.token('alice-r');
    await api.request('PUT', '/v1/me', { token: alice, body: { timeZone: 'Europe/Berlin' } });
    const reminder = await api.request('POST', '/v1/reminders', {
      token: alice,
      body: { title: 'Pill', localTime: '20:00', recurrence: 'FREQ=DAILY' },
    });
    reminderId = reminder.body.id;
    const { rows: planned } = await db.pool.query(`SELECT job_id::text AS id FROM reminder_occurrences WHERE reminder_id = $1`, [
      reminderId,
    ]);
    reminderJobId = planned[0].id;
    await db.pool.query(`UPDATE jobs SET attempts = 1, last_error = 'simulated: 500 InternalServerError' WHERE id = $1`, [reminderJobId]);
    const stuck = await enqueue<string>(db.pool, { kind: 'send_notification', payload: {} }, { now: ago(300) });
    await db.pool.query(`UPDATE jobs SET status = 'running', locked_at = $2, locked_until = $3, locked_by = 'gone' WHERE id = $1`, [
      stuck.job.id,
      ago(200),
      ago(100),
    ]);

    browser = await launchTestBrowser(CHROMIUM!);
    page = browser.page;
    mkdirSync('test-results', { recursive: true });
  });

  afterAll(async () => {
    await browser?.close();
    await api?.close();
    await db?.drop();
  });

  const queueCell = (kind: string, field: string) => page.locator(`#queue-table tbody tr[data-kind="${kind}"] td[data-field="${field}"]`);

  it('shows an error and no data for a wrong token, and for a token without the ops scope', async () => {
    await page.goto(`${api.baseUrl}/ops`);
    await page.getByLabel('Ops token').fill('not-a-real-token');
    await page.getByRole('button', { name: 'Open the dashboard' }).click();
    await expect.poll(() => page.getByRole('alert').textContent()).toMatch(/refused \(401\)/);
    expect(await page.locator('#dashboard').isVisible()).toBe(false);
    expect(await page.locator('#queue-table tbody tr').count()).toBe(0);

    await page.getByLabel('Ops token').fill(await api.token('alice'));
    await page.getByLabel('Ops token').press('Enter');
    await expect.poll(() => page.getByRole('alert').textContent()).toMatch(/ops scope \(403\)/);
    expect(await page.locator('#dashboard').isVisible()).toBe(false);
    expect(await page.content()).not.toContain('send_notification');
  });

  it('signs in with an ops token and shows the counts the database holds', async () => {
    await page.getByLabel('Ops token').fill(await api.token('admin', ['ops']));
    await page.getByLabel('Ops token').press('Enter');
    await page.locator('#dashboard').waitFor({ state: 'visible' });
    expect(await page.getByRole('alert').textContent()).toBe('');
    // The token is never put in the address.
    expect(page.url()).toBe(`${api.baseUrl}/ops`);

    const { rows } = await db.pool.query<{ kind: string; ready: number; scheduled: number; running: number; stuck: number; dead: number }>(
      `SELECT kind,
              count(*) FILTER (WHERE status = 'queued' AND run_at <= $1)::int AS ready,
              count(*) FILTER (WHERE status = 'queued' AND run_at > $1)::int AS scheduled,
              count(*) FILTER (WHERE status = 'running')::int AS running,
              count(*) FILTER (WHERE status = 'running' AND locked_until < $1)::int AS stuck,
              count(*) FILTER (WHERE status = 'dead')::int AS dead
       FROM jobs GROUP BY kind ORDER BY kind`,
      [api.clock.now()],
    );
    expect(rows.map((r) => r.kind)).toEqual(['send_notification', 'send_reminder']);
    for (const row of rows) {
      for (const field of ['ready', 'scheduled', 'running', 'stuck', 'dead'] as const) {
        const text = (await queueCell(row.kind, field).textContent()) ?? '';
        expect(Number.parseInt(text, 10), `${row.kind} ${field}`).toBe(row[field]);
      }
    }
    expect(await queueCell('send_reminder', 'ready').textContent()).toBe('3');
    expect(await queueCell('send_notification', 'dead').textContent()).toMatch(/^2/);
    // Past a threshold: coloured, and said in words.
    expect(await queueCell('send_notification', 'stuck').getAttribute('class')).toContain('alert');
    expect(await queueCell('send_reminder', 'oldest').textContent()).toMatch(/^8 min 10 s/);
    expect(await queueCell('send_reminder', 'oldest').getAttribute('class')).toContain('alert');
    // Charts are drawn as inline SVG.
    expect(await page.locator('#chart-ready svg').count()).toBe(1);
    expect(await page.locator('#chart-throughput svg path.line').count()).toBe(2);
  });

  it('lists dead jobs, filters them by kind, and opens one with its masked payload and attempts', async () => {
    const deadRows = page.locator('#jobs-table tbody tr');
    await expect.poll(() => deadRows.count()).toBe(2);
    const first = page.locator(`#jobs-table tbody tr[data-job-id="${deadIds[0]}"]`);
    expect(await first.textContent()).toContain('APNs answered 400 BadTopic (0)');
    expect(await first.textContent()).toContain('order-0');
    expect(await first.textContent()).toContain('10 / 10');

    await page.getByLabel('Kind', { exact: true }).selectOption('send_reminder');
    await expect.poll(() => deadRows.count()).toBe(0);
    await page.getByLabel('Kind', { exact: true }).selectOption('send_notification');
    await expect.poll(() => deadRows.count()).toBe(2);

    await page.getByRole('button', { name: `Open job ${deadIds[0]}` }).click();
    const detail = page.locator('#detail');
    await detail.waitFor({ state: 'visible' });
    // Focus moves to the detail, for keyboard and screen reader users.
    expect(await page.evaluate('document.activeElement?.id')).toBe('detail-title');
    expect(await page.locator('#detail-payload').textContent()).toContain('"pushToken": "[masked]"');
    expect(await page.content()).not.toContain('secret-device-token');
    expect(await page.locator('#history-table tbody tr').count()).toBe(1);
    expect(await page.locator('#history-table tbody').textContent()).toContain('worker-a');
    await page.screenshot({ path: 'test-results/dashboard.png', fullPage: true });
  });

  it('retries a dead job with the keyboard: it leaves the dead list and the database has it queued', async () => {
    const retry = page.getByRole('button', { name: `Retry job ${deadIds[0]} (detail)` });
    await retry.focus();
    await page.keyboard.press('Enter');
    await expect.poll(() => page.locator('#action-result').textContent()).toMatch(new RegExp(`Job ${deadIds[0]} retried: it is queued`));
    await expect.poll(() => page.locator(`#jobs-table tbody tr[data-job-id="${deadIds[0]}"]`).count()).toBe(0);
    expect(await page.locator(`#jobs-table tbody tr[data-job-id="${deadIds[1]}"]`).count()).toBe(1);

    const { rows } = await db.pool.query(`SELECT status, attempts FROM jobs WHERE id = $1`, [deadIds[0]]);
    expect(rows[0]).toEqual({ status: 'queued', attempts: 0 });
    await expect.poll(() => queueCell('send_notification', 'dead').textContent()).toMatch(/^1/);
    expect(await page.locator('#detail-fields').textContent()).toContain('queued');
  });

  it("shows a reminder job's occurrence and its state in the job's detail", async () => {
    await page.getByLabel('Show').selectOption('failing');
    await page.getByLabel('Kind', { exact: true }).selectOption('send_reminder');
    await page.getByRole('button', { name: `Open job ${reminderJobId}` }).click();
    await expect.poll(() => page.locator('#detail-title').textContent()).toBe(`Job #${reminderJobId} · send_reminder`);
    const fields = (await page.locator('#detail-fields').textContent()) ?? '';
    expect(fields).toContain('Occurrence2026-03-02 · regular delivery');
    expect(fields).toContain('Occurrence statescheduled');
    const { rows } = await db.pool.query(`SELECT status FROM reminder_occurrences WHERE reminder_id = $1`, [reminderId]);
    expect(rows).toEqual([{ status: 'scheduled' }]);
  });

  it('pauses a kind from its row: marked paused, stored in the database; Resume lifts it', async () => {
    const row = page.locator('#queue-table tbody tr[data-kind="send_reminder"]');
    await page.getByRole('button', { name: 'Pause send_reminder' }).click();
    await expect.poll(() => page.locator('#action-result').textContent()).toMatch(/send_reminder paused/);
    await expect.poll(() => row.getAttribute('data-paused')).toBe('true');
    expect(await row.locator('th').textContent()).toBe('send_reminderpaused');
    expect((await db.pool.query(`SELECT kind FROM job_kind_pauses`)).rows).toEqual([{ kind: 'send_reminder' }]);
    expect(await page.locator('#queue-table tbody tr[data-kind="send_notification"]').getAttribute('data-paused')).toBe('false');

    await page.getByRole('button', { name: 'Resume send_reminder' }).click();
    await expect.poll(() => row.getAttribute('data-paused')).toBe('false');
    expect((await db.pool.query(`SELECT count(*)::int AS n FROM job_kind_pauses`)).rows[0].n).toBe(0);
  });

  it('reads on a phone without sideways scrolling, and breaks no CSP rule', async () => {
    await page.setViewportSize({ width: 390, height: 844 });
    await page.locator('#detail-close').click();
    const overflow = await page.evaluate<number>('document.documentElement.scrollWidth - window.innerWidth');
    expect(overflow).toBeLessThanOrEqual(0);
    await page.screenshot({ path: 'test-results/dashboard-phone.png', fullPage: true });
    expect(browser.cspViolations).toEqual([]);
  });
});
