// Delivery health (the last hour per provider) and what is coming (jobs due per minute over the next day).
import { lineChart } from './chart.js';
import { $, cell, fillTable, headerCell } from './dom.js';

const MINUTE = 60_000;
// A provider failing more than this share of its sends is coloured (the alert rule pages at 10%).
const RATIO_WARN = 0.02;
const RATIO_ALERT = 0.1;

const percent = (ratio) => `${(ratio * 100).toFixed(ratio > 0 && ratio < 0.1 ? 1 : 0)} %`;
const clock = (iso) => new Date(iso).toLocaleString([], { weekday: 'short', hour: '2-digit', minute: '2-digit' });

export function renderHealth(health) {
  const rows = health.providers.map((p) => {
    const tr = document.createElement('tr');
    tr.dataset.provider = p.provider;
    headerCell(tr, 'Provider', p.provider);
    cell(tr, 'Sent', p.sent).dataset.field = 'sent';
    cell(tr, 'Failed', p.failed, p.failed > 0 ? 'warn' : '').dataset.field = 'failed';
    cell(tr, 'Invalid token', p.invalidToken).dataset.field = 'invalid';
    const level = p.failureRatio >= RATIO_ALERT ? 'alert' : p.failureRatio >= RATIO_WARN ? 'warn' : '';
    cell(tr, 'Failure ratio', percent(p.failureRatio), level).dataset.field = 'ratio';
    return tr;
  });
  fillTable('providers-table', 'providers-empty', rows);

  // One small chart per provider, zero-filled over the hour.
  const from = Date.parse(health.from);
  const minutes = Array.from({ length: 60 }, (_, i) => from + i * MINUTE);
  const charts = health.providers.map((p) => {
    const own = new Map(health.lastHourByMinute.filter((m) => m.provider === p.provider).map((m) => [Date.parse(m.minute), m]));
    const series = (field) => minutes.map((t) => ({ t, v: own.get(t)?.[field] ?? 0 }));
    const figure = document.createElement('figure');
    figure.dataset.provider = p.provider;
    const caption = document.createElement('figcaption');
    caption.textContent = `${p.provider}: sends per minute`;
    const chart = document.createElement('div');
    chart.className = 'chart';
    lineChart(chart, {
      from: minutes[0],
      to: minutes[59],
      series: [
        { name: 'sent', className: 's-ok', points: series('sent') },
        { name: 'failed', className: 's-failed', points: series('failed') },
        { name: 'invalid token', className: 's-age', points: series('invalidToken') },
      ],
      summary: `${p.provider} over the last hour: ${p.sent} sent, ${p.failed} failed, ${p.invalidToken} invalid tokens.`,
    });
    figure.append(caption, chart);
    return figure;
  });
  $('provider-charts').replaceChildren(...charts);

  const answers = health.topAnswers.map((a) => {
    const tr = document.createElement('tr');
    headerCell(tr, 'Provider', a.provider);
    cell(tr, 'Outcome', a.status === 'invalid_token' ? 'invalid token' : 'failed');
    cell(tr, 'Answer', a.answer).classList.add('error-text');
    cell(tr, 'Count', a.count);
    return tr;
  });
  fillTable('answers-table', 'answers-empty', answers);
}

/** The (app, provider) pairs whose credentials a provider rejected, from GET /v1/ops/apps. */
export function renderFailing(apps) {
  const marks = [
    ...apps.defaultApp.failing.map((f) => ({ app: 'default', ...f })),
    ...apps.apps.flatMap((a) => a.failing.map((f) => ({ app: a.id, ...f }))),
  ];
  const rows = marks.map((m) => {
    const tr = document.createElement('tr');
    tr.dataset.app = m.app;
    tr.dataset.provider = m.provider;
    headerCell(tr, 'App', m.app);
    cell(tr, 'Provider', m.provider, 'alert');
    cell(tr, 'Since', clock(m.since));
    cell(tr, 'Answer', m.reason).classList.add('error-text');
    return tr;
  });
  fillTable('failing-table', 'failing-empty', rows);
}

export function renderUpcoming(upcoming) {
  const from = Math.floor(Date.parse(upcoming.from) / MINUTE) * MINUTE;
  const to = Date.parse(upcoming.to);
  const reminders = new Map();
  const others = new Map();
  for (const m of upcoming.byMinute) {
    const into = m.kind === 'send_reminder' ? reminders : others;
    const t = Date.parse(m.minute);
    into.set(t, (into.get(t) ?? 0) + m.due);
  }
  // Only the minutes that have jobs, with zeros either side, so 1440 minutes stay a light drawing.
  const points = (map) => {
    const out = [];
    for (const t of [...map.keys()].sort((a, b) => a - b)) {
      if (!map.has(t - MINUTE)) out.push({ t: t - MINUTE, v: 0 });
      out.push({ t, v: map.get(t) });
      if (!map.has(t + MINUTE)) out.push({ t: t + MINUTE, v: 0 });
    }
    return [{ t: from, v: 0 }, ...out, { t: to, v: 0 }];
  };
  const total = (kind) => upcoming.kinds.find((k) => k.kind === kind)?.due ?? 0;
  const otherTotal = upcoming.kinds.filter((k) => k.kind !== 'send_reminder').reduce((sum, k) => sum + k.due, 0);
  lineChart($('chart-upcoming'), {
    from,
    to,
    series: [
      { name: 'reminders (send_reminder)', className: 's-ready', points: points(reminders) },
      { name: 'other kinds', className: 's-age', points: points(others) },
    ],
    summary: `Jobs due per minute over the next 24 hours: ${total('send_reminder')} reminders and ${otherTotal} other jobs.`,
  });
  $('upcoming-total').textContent =
    `Next 24 hours: ${total('send_reminder')} reminder deliveries and ${otherTotal} other jobs queued` +
    (upcoming.peaks[0] ? `; the busiest minute is ${clock(upcoming.peaks[0].minute)} with ${upcoming.peaks[0].due}.` : '.');
  const peaks = upcoming.peaks.map((p) => {
    const tr = document.createElement('tr');
    headerCell(tr, 'Minute', clock(p.minute));
    cell(tr, 'Kind', p.kind);
    cell(tr, 'Due', p.due).dataset.field = 'due';
    return tr;
  });
  fillTable('peaks-table', 'peaks-empty', peaks);
}

export function clearDelivery() {
  for (const id of ['providers-table', 'answers-table', 'failing-table', 'peaks-table']) $(id).tBodies[0].replaceChildren();
  for (const id of ['provider-charts', 'chart-upcoming']) $(id).replaceChildren();
  $('upcoming-total').textContent = '';
}
