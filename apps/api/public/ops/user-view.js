// One user as an operator needs to see them: profile, devices, reminders and
// what became of each occurrence and notification, and why. Times are shown in
// the user's zone (what they would call "my 8 AM"), with UTC on hover.
import { $, cell, fillFields, fillTable, headerCell } from './dom.js';

// Why an occurrence or a delivery did not reach the phone, in words.
const REASONS = {
  stale: 'stale: it would have arrived more than 6 h after it was allowed, or after the next one was due',
  disabled: 'disabled: the user turned notifications off, or the reminder is disabled',
  no_device: 'no device: the user had no active device',
  quiet_hours: 'quiet hours',
  rescheduled: 'rescheduled: travel or an edit moved it into the past',
  failed: 'failed: every attempt failed, the job gave up',
  user: 'skipped by the user',
  category_disabled: 'the category is turned off',
};

const DELIVERY_STATUS = { sent: 'sent', failed: 'failed', invalid_token: 'invalid token', skipped: 'skipped', sending: 'sending' };

function reasonText(reason) {
  if (!reason) return '';
  return REASONS[reason] ?? reason;
}

export function createUserView({ client, describe }) {
  let zone = 'UTC';
  let userId = null;

  const local = (iso) =>
    iso
      ? new Date(iso).toLocaleString('en-GB', {
          timeZone: zone,
          weekday: 'short',
          day: 'numeric',
          month: 'short',
          hour: '2-digit',
          minute: '2-digit',
        })
      : '—';

  function timed(row, label, iso) {
    const td = cell(row, label, local(iso));
    if (iso) td.title = `${iso} (UTC)`;
    return td;
  }

  function renderProfile(user) {
    const p = user.profile;
    zone = p.timeZone;
    $('user-title').textContent = `User ${p.userId}`;
    fillFields($('user-profile'), [
      ['Time zone', `${p.timeZone}${p.followDeviceTimeZone ? ' (follows the device when travelling)' : ''}`],
      ['Quiet hours', p.quietHours ? `${p.quietHours.start}–${p.quietHours.end}` : 'none'],
      ['Notifications', p.notificationsEnabled ? 'on' : 'off: every push is skipped (disabled)'],
      ['Locale', p.locale ?? '—'],
      ['Since', local(p.createdAt)],
    ]);
  }

  function renderDevices(devices) {
    const rows = devices.map((d) => {
      const tr = document.createElement('tr');
      tr.dataset.installationId = d.installationId;
      headerCell(tr, 'Device', d.installationId);
      cell(tr, 'Platform', d.platform);
      cell(tr, 'Token', d.pushToken).classList.add('mono');
      const state = cell(
        tr,
        'State',
        d.active ? 'active' : `deactivated ${local(d.deactivatedAt)}: ${d.deactivatedReason ?? 'no reason kept'}`,
        d.active ? '' : 'warn',
      );
      state.dataset.field = 'state';
      cell(tr, 'App version', d.appVersion ?? '—');
      timed(tr, 'Last seen', d.lastSeenAt);
      return tr;
    });
    fillTable('devices-table', 'devices-empty', rows);
  }

  function renderReminders(reminders, more) {
    const rows = reminders.map((r) => {
      const tr = document.createElement('tr');
      tr.dataset.reminderId = r.id;
      // A localized title (a map by language) shows its default language's text.
      headerCell(tr, 'Reminder', typeof r.title === 'string' ? r.title : (r.title[r.defaultLocale] ?? Object.values(r.title)[0]));
      cell(tr, 'Time', `${r.localTime} ${r.timeZone}${r.followsUserTimeZone ? ' (user zone)' : ''}`);
      cell(tr, 'Repeats', r.recurrence ?? `once, ${r.startDate}`).classList.add('mono');
      cell(tr, 'Enabled', r.enabled ? 'yes' : 'no', r.enabled ? '' : 'warn');
      cell(tr, 'Next', r.nextOccurrence ? local(r.nextOccurrence.at) : 'none').dataset.field = 'next';
      return tr;
    });
    fillTable('reminders-table', 'reminders-empty', rows);
    $('reminders-more').hidden = !more;
  }

  function statusText(entry) {
    if (entry.status === 'skipped') return `skipped (${entry.reason})`;
    if (entry.status === 'snoozed') return `snoozed until ${local(entry.snoozedUntil)}`;
    return entry.status;
  }

  function whyText(entry) {
    const parts = [];
    if (entry.reason) parts.push(reasonText(entry.reason));
    if (entry.earliestAt && Date.parse(entry.earliestAt) - Date.parse(entry.at) >= 60_000) {
      parts.push(`held until ${local(entry.earliestAt)} (quiet hours or jitter)`);
    }
    if (entry.sentAt) parts.push(`sent ${local(entry.sentAt)}`);
    if (entry.status === 'done' || entry.status === 'skipped') {
      if (entry.actedAt) parts.push(`marked by the user ${local(entry.actedAt)}`);
    }
    for (const job of entry.jobs) {
      if (job.status === 'queued' && job.attempts > 0) parts.push(`retrying (attempt ${job.attempts + 1} at ${local(job.runAt)})`);
      if (job.status === 'dead') parts.push(`job ${job.id} dead: ${job.lastError ?? ''}`);
      if (job.lastError && job.status !== 'dead') parts.push(`last error: ${job.lastError}`);
    }
    return parts.join('; ') || '—';
  }

  function deliveriesList(entry) {
    const list = document.createElement('ul');
    list.className = 'outcomes';
    for (const d of entry.deliveries) {
      const item = document.createElement('li');
      item.dataset.status = d.status;
      const device = d.installationId
        ? `${d.installationId} (${d.platform} ${d.pushToken})`
        : d.deviceRemoved
          ? 'a device since removed'
          : 'no device';
      // A skip's reason is in the Why column already; a provider's answer is shown whole.
      const why = !d.reason ? '' : d.status === 'skipped' ? ` (${d.reason})` : `: ${d.reason}`;
      item.textContent = `${device} — ${DELIVERY_STATUS[d.status] ?? d.status}${why}${d.attempts > 1 ? ` (${d.attempts} attempts)` : ''}`;
      list.append(item);
    }
    if (entry.deliveries.length === 0) list.textContent = '—';
    return list;
  }

  function timelineRows(items) {
    return items.map((entry) => {
      const tr = document.createElement('tr');
      tr.dataset.kind = entry.kind;
      tr.dataset.status = entry.status;
      if (entry.localDate) tr.dataset.localDate = entry.localDate;
      const th = headerCell(tr, 'When', local(entry.at));
      th.title = `${entry.at} (UTC)`;
      cell(tr, 'What', entry.kind === 'notification' ? `notification “${entry.title ?? '?'}”` : `${entry.title} · ${entry.localDate}`);
      const level = entry.status === 'skipped' || entry.status === 'failed' ? 'warn' : '';
      cell(tr, 'Status', statusText(entry), level).dataset.field = 'status';
      cell(tr, 'Why', whyText(entry)).dataset.field = 'why';
      const devices = cell(tr, 'Per device', '');
      devices.dataset.field = 'devices';
      devices.append(deliveriesList(entry));
      return tr;
    });
  }

  let cursor = null;
  function renderTimeline(page, append) {
    const rows = timelineRows(page.items);
    const body = $('timeline-table').tBodies[0];
    if (append) body.append(...rows);
    else body.replaceChildren(...rows);
    $('timeline-empty').hidden = body.rows.length > 0;
    cursor = page.nextCursor;
    $('timeline-more').hidden = !cursor;
  }

  async function open(id) {
    const user = await client().user(id);
    userId = id;
    renderProfile(user);
    renderDevices(user.devices);
    renderReminders(user.reminders, user.moreReminders);
    renderTimeline(user.timeline, false);
    $('user-view').hidden = false;
    $('user-result').textContent = `Showing ${id} as of ${new Date(user.generatedAt).toISOString()}.`;
  }

  function clear() {
    userId = null;
    cursor = null;
    for (const id of ['devices-table', 'reminders-table', 'timeline-table']) $(id).tBodies[0].replaceChildren();
    $('user-profile').replaceChildren();
    $('user-view').hidden = true;
    $('user-title').textContent = 'A user';
    $('user-result').textContent = '';
  }

  function wire() {
    $('user-form').addEventListener('submit', (event) => {
      event.preventDefault();
      const id = $('user-id').value.trim();
      if (!id || !client()) return;
      $('user-result').textContent = `Looking up ${id}…`;
      open(id).catch((error) => {
        clear();
        $('user-result').textContent = `Could not show ${id}: ${describe(error)}`;
      });
    });
    $('timeline-more').addEventListener('click', () => {
      if (!cursor || !userId) return;
      client()
        .timeline(userId, cursor)
        .then((page) => renderTimeline(page, true))
        .catch((error) => ($('user-result').textContent = `Could not load older entries: ${describe(error)}`));
    });
  }

  return { wire, clear, open };
}
