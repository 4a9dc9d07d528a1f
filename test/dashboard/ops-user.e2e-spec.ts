import { copyFileSync, mkdirSync } from 'node:fs';
import type { Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { ALICE_PHONE_TOKEN, ALICE_TABLET_TOKEN, buildOpsUserWeek, OPS_USER_WEEK_WORKER, WEEK_END } from '../factories/ops-user-week.js';
import { clearProviderFailures, markProvidersFailing } from '@nudge/push';
import { launchTestBrowser, type TestBrowser } from '../support/browser.js';
import { createTestDatabase, type TestDatabase } from '../support/database.js';
import { eventually, startTestApi, type TestApi } from '../support/api-app.js';

const CHROMIUM = inject('chromiumPath');

// "Alice says she got nothing this morning", answered from the page alone: a
// real browser against the real API, on a week the real worker delivered
// (test/factories/ops-user-week.ts). SCREENSHOT_DOCS=1 also copies the
// screenshots to docs/ (ops-user-page.png, ops-delivery-health.png, ops-coming.png).
const TITLE = 'the user view, delivery health and what is coming on /ops, in Chromium';
describe.skipIf(CHROMIUM === null)(CHROMIUM === null ? `${TITLE} (skipped: ${inject('chromiumSkipReason')})` : TITLE, () => {
  let db: TestDatabase;
  let api: TestApi;
  let browser: TestBrowser;
  let page: Page;
  let ops: string;

  beforeAll(async () => {
    db = await createTestDatabase();
    api = await startTestApi({ databaseUrl: db.url, worker: OPS_USER_WEEK_WORKER });
    ({ ops } = await buildOpsUserWeek(api, db));
    browser = await launchTestBrowser(CHROMIUM!);
    page = browser.page;
    mkdirSync('test-results', { recursive: true });
  }, 120_000);
  afterAll(async () => {
    await browser?.close();
    await api?.close();
    await db?.drop();
  });

  const timelineRow = (localDate: string, title: string) =>
    page.locator(`#timeline-table tbody tr[data-local-date="${localDate}"]`).filter({ hasText: title });

  it('signs in and shows delivery health per provider as the ledger has it, with the answers seen most', async () => {
    await page.goto(`${api.baseUrl}/ops`);
    await page.getByLabel('Ops token').fill(ops);
    await page.getByLabel('Ops token').press('Enter');
    await page.locator('#dashboard').waitFor({ state: 'visible' });

    const row = page.locator('#providers-table tbody tr[data-provider="simulated"]');
    await expect.poll(() => row.count()).toBe(1);
    expect(await row.locator('[data-field="sent"]').textContent()).toBe('1');
    expect(await row.locator('[data-field="failed"]').textContent()).toMatch(/^1/);
    expect(await row.locator('[data-field="invalid"]').textContent()).toBe('1');
    // One failure in three sends: past the alert threshold, coloured and said in words.
    expect(await row.locator('[data-field="ratio"]').textContent()).toBe('33 % (alert)');
    expect(await page.locator('#provider-charts figure[data-provider="simulated"] svg path.line').count()).toBe(3);
    const answers = (await page.locator('#answers-table tbody').textContent()) ?? '';
    expect(answers).toContain('transient: simulated: 500 InternalServerError');
    expect(answers).toContain('simulated: token is not registered');
  });

  it("lists the providers that rejected an app's credentials, as the worker marked them, and none once cleared", async () => {
    await expect.poll(() => page.locator('#failing-empty').isVisible(), { timeout: 15_000 }).toBe(true);
    expect(await page.locator('#failing-table tbody tr').count()).toBe(0);
    // The mark the worker writes (through this function) when APNs answers 403 InvalidProviderToken for the
    // environment's credentials; test/push/app-credentials.e2e-spec.ts drives that through the real client and a fake APNs.
    await markProvidersFailing(
      db.pool,
      [{ appId: 'default', provider: 'apns', reason: '403 InvalidProviderToken', appVersion: 0 }],
      new Date(WEEK_END),
    );
    await page.reload();
    const row = page.locator('#failing-table tbody tr[data-app="default"][data-provider="apns"]');
    await expect.poll(() => row.count(), { timeout: 15_000 }).toBe(1);
    expect(await row.textContent()).toContain('403 InvalidProviderToken');
    expect(await row.locator('[data-label="Provider"]').textContent()).toBe('apns (alert)');
    await clearProviderFailures(db.pool, [{ appId: 'default', provider: 'apns' }]);
    await page.reload();
    await expect.poll(() => page.locator('#failing-empty').isVisible(), { timeout: 15_000 }).toBe(true);
  });

  it("shows what is coming: the next day's jobs per minute, with the 08:00 herd as the busiest minute", async () => {
    const { rows } = await db.pool.query<{ n: number }>(
      `SELECT count(*)::int AS n FROM jobs WHERE status = 'queued' AND kind = 'send_reminder' AND run_at >= $1 AND run_at < $1::timestamptz + interval '1 day'`,
      [WEEK_END],
    );
    await expect.poll(() => page.locator('#upcoming-total').textContent()).toContain(`${rows[0]!.n} reminder deliveries`);
    expect(await page.locator('#chart-upcoming svg path.line').count()).toBeGreaterThanOrEqual(1);
    const peak = page.locator('#peaks-table tbody tr').first();
    expect(await peak.locator('[data-field="due"]').textContent()).toBe('21');
    expect(await peak.textContent()).toContain('send_reminder');
    for (const [section, file] of [
      ['#delivery', 'ops-delivery-health.png'],
      ['#coming', 'ops-coming.png'],
    ]) {
      await page.locator(section).screenshot({ path: `test-results/${file}` });
      if (process.env.SCREENSHOT_DOCS === '1') copyFileSync(`test-results/${file}`, `docs/${file}`);
    }
  });

  it("answers why alice's reminders did or did not arrive this week, from the page alone", async () => {
    await page.getByLabel('User id').fill('alice');
    await page.getByRole('button', { name: 'Look up' }).click();
    await page.locator('#user-view').waitFor({ state: 'visible' });

    const profile = (await page.locator('#user-profile').textContent()) ?? '';
    expect(profile).toContain('Europe/Berlin');
    expect(profile).toContain('22:00–07:00');
    expect(profile).toContain('off: every push is skipped');

    const tablet = page.locator('#devices-table tbody tr[data-installation-id="tablet"]');
    expect(await tablet.textContent()).toContain('…3c4d');
    expect(await tablet.locator('[data-field="state"]').textContent()).toMatch(
      /^deactivated .*invalid_token: simulated: token is not registered/,
    );
    expect(await page.locator('#devices-table tbody tr[data-installation-id="phone"] [data-field="state"]').textContent()).toBe('active');
    // Next occurrences in the user's zone: the pill at 08:00 Berlin on Friday.
    const pill = page.locator('#reminders-table tbody tr').filter({ hasText: 'Morning pill' });
    expect(await pill.locator('[data-field="next"]').textContent()).toBe('Fri 5 Mar, 08:00');

    expect(await page.locator('#timeline-table tbody tr').count()).toBe(8);
    // The first morning: sent to the phone, and the tablet's token was refused.
    const first = timelineRow('2027-03-01', 'Morning pill');
    expect(await first.locator('[data-field="status"]').textContent()).toBe('sent');
    const devices = (await first.locator('[data-field="devices"]').textContent()) ?? '';
    expect(devices).toContain('phone (ios …7a1b) — sent');
    expect(devices).toContain('tablet (android …3c4d) — invalid token: simulated: token is not registered');
    // 23:00 falls in the quiet hours: held until 07:00 the next morning, then sent.
    const evening = timelineRow('2027-03-01', 'Evening stretch');
    expect(await evening.locator('[data-field="why"]').textContent()).toContain('held until Tue 2 Mar, 07:00');
    // Stale, done, disabled: each with its reason in words.
    const stale = timelineRow('2027-03-02', 'Evening stretch');
    expect(await stale.locator('[data-field="status"]').textContent()).toMatch(/^skipped \(stale\)/);
    expect(await stale.locator('[data-field="why"]').textContent()).toContain('more than 6 h after it was allowed');
    expect(await timelineRow('2027-03-03', 'Morning pill').locator('[data-field="status"]').textContent()).toBe('done');
    const disabled = timelineRow('2027-03-04', 'Morning pill');
    expect(await disabled.locator('[data-field="status"]').textContent()).toMatch(/^skipped \(disabled\)/);
    expect(await disabled.locator('[data-field="why"]').textContent()).toContain('the user turned notifications off');
    const notification = page.locator('#timeline-table tbody tr[data-kind="notification"]');
    expect(await notification.textContent()).toContain('Your order shipped');
    expect(await notification.locator('[data-field="status"]').textContent()).toBe('sent');

    // Tokens only masked, anywhere on the page.
    const html = await page.content();
    expect(html).not.toContain(ALICE_PHONE_TOKEN);
    expect(html).not.toContain(ALICE_TABLET_TOKEN);
    await page.locator('#user').screenshot({ path: 'test-results/ops-user-page.png' });
    if (process.env.SCREENSHOT_DOCS === '1') copyFileSync('test-results/ops-user-page.png', 'docs/ops-user-page.png');
  });

  it("shows bob's failing delivery and the retry that waits, frank's missing device, and says so for an unknown user", async () => {
    await page.getByLabel('User id').fill('bob');
    await page.getByRole('button', { name: 'Look up' }).click();
    await expect.poll(() => page.locator('#user-title').textContent()).toBe('User bob');
    const row = page.locator('#timeline-table tbody tr').first();
    expect(await row.locator('[data-field="status"]').textContent()).toBe('scheduled');
    expect(await row.locator('[data-field="why"]').textContent()).toMatch(/retrying \(attempt 2 at .*500 InternalServerError/);
    expect(await row.locator('[data-field="devices"]').textContent()).toContain('— failed: transient: simulated: 500 InternalServerError');

    await page.getByLabel('User id').fill('frank');
    await page.getByRole('button', { name: 'Look up' }).click();
    await expect.poll(() => page.locator('#user-title').textContent()).toBe('User frank');
    expect(await page.locator('#devices-empty').isVisible()).toBe(true);
    const skipped = page.locator('#timeline-table tbody tr').first();
    expect(await skipped.locator('[data-field="status"]').textContent()).toMatch(/^skipped \(no_device\)/);
    expect(await skipped.locator('[data-field="why"]').textContent()).toContain('the user had no active device');
    expect(await skipped.locator('[data-field="devices"]').textContent()).toBe('no device — skipped (no_device)');

    await page.getByLabel('User id').fill('nobody');
    await page.getByRole('button', { name: 'Look up' }).click();
    await expect.poll(() => page.locator('#user-result').textContent()).toMatch(/Could not show nobody: .*404.*not found|not found/i);
    expect(await page.locator('#user-view').isVisible()).toBe(false);
    expect(await page.locator('#timeline-table tbody tr').count()).toBe(0);
  });

  it('pages older entries with "Older entries" once a timeline passes its first 50', async () => {
    // erin has no device: 55 event notifications, each skipped (no device), nothing sent.
    const erin = await api.token('erin');
    expect((await api.request('PUT', '/v1/me', { token: erin, body: { timeZone: 'UTC' } })).status).toBe(201);
    for (let i = 1; i <= 55; i++) {
      const body = { userId: 'erin', title: `Note ${i}`, idempotencyKey: `erin-${i}` };
      expect((await api.request('POST', '/v1/notifications', { token: ops, body })).status).toBe(202);
    }
    await eventually(async () => {
      const { rows } = await db.pool.query<{ n: number }>(`SELECT count(*)::int AS n FROM push_deliveries WHERE user_id = 'erin'`);
      return rows[0]!.n === 55;
    }, "erin's 55 notifications");

    await page.getByLabel('User id').fill('erin');
    await page.getByRole('button', { name: 'Look up' }).click();
    await expect.poll(() => page.locator('#user-title').textContent()).toBe('User erin');
    const rows = page.locator('#timeline-table tbody tr');
    expect(await rows.count()).toBe(50);
    await page.getByRole('button', { name: 'Older entries' }).click();
    await expect.poll(() => rows.count()).toBe(55);
    expect(await page.locator('#timeline-more').isVisible()).toBe(false);
    const titles = await rows.locator('td:nth-of-type(1)').allTextContents();
    // Each once: the second page continues the first.
    expect(new Set(titles).size).toBe(55);
    expect(titles.at(-1)).toBe('notification “Note 1”');
  });

  it('reads on a phone without sideways scrolling, forgets everything on sign-out, and breaks no CSP rule', async () => {
    await page.getByLabel('User id').fill('alice');
    await page.getByRole('button', { name: 'Look up' }).click();
    await expect.poll(() => page.locator('#timeline-table tbody tr').count()).toBe(8);
    // The whole week fits the first page (50): no "Older entries" button.
    expect(await page.locator('#timeline-more').isVisible()).toBe(false);

    await page.setViewportSize({ width: 390, height: 844 });
    const overflow = await page.evaluate<number>('document.documentElement.scrollWidth - window.innerWidth');
    expect(overflow).toBeLessThanOrEqual(0);
    await page.screenshot({ path: 'test-results/ops-user-phone.png', fullPage: true });

    await page.getByRole('button', { name: 'Sign out' }).click();
    expect(await page.locator('#timeline-table tbody tr').count()).toBe(0);
    expect(await page.locator('#providers-table tbody tr').count()).toBe(0);
    expect(browser.cspViolations).toEqual([]);
    expect(await page.content()).not.toContain('…7a1b');
  });
});
