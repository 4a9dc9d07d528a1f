// The operator dashboard: reads the ops API every few seconds and renders with
// textContent only, so nothing from a job (errors, payloads) is ever parsed as HTML.
import { ApiError, opsClient } from './api.js';
import { lineChart } from './chart.js';
import { clearDelivery, renderFailing, renderHealth, renderUpcoming } from './delivery-view.js';
import { $, cell, fillFields } from './dom.js';
import { createUserView } from './user-view.js';

const REFRESH_MS = 5000;
// What is coming reads every queued job of the next day: once a minute is enough.
const UPCOMING_MS = 60_000;
const HOUR_MS = 3_600_000;
const TOKEN_KEY = 'nudge-ops-token';
// Past these, a figure is coloured (and says so in words, for those who do not see the colour).
const AGE_WARN_S = 60;
const AGE_ALERT_S = 300;

const state = {
  client: null,
  timer: null,
  samples: [], // {t, ready, age}: the last hour, in page memory only
  serverNow: Date.now(),
  detailId: null,
  busy: false,
  upcomingAt: 0,
};

function duration(seconds) {
  const s = Math.max(0, Math.round(seconds));
  if (s < 60) return `${s} s`;
  if (s < 3600) return `${Math.floor(s / 60)} min ${s % 60 ? `${s % 60} s` : ''}`.trim();
  if (s < 86400) return `${Math.floor(s / 3600)} h ${Math.floor((s % 3600) / 60)} min`;
  return `${Math.floor(s / 86400)} d ${Math.floor((s % 86400) / 3600)} h`;
}

function when(iso) {
  return iso ? new Date(iso).toLocaleString() : '—';
}

const userView = createUserView({ client: () => state.client, describe });

function showError(message) {
  $('error').textContent = message;
}

function describe(error) {
  if (error instanceof ApiError) {
    if (error.status === 401) return `The token was refused (401): ${error.message}`;
    if (error.status === 403) return `This token lacks the ops scope (403): ${error.message}`;
    return `${error.status ? `Error ${error.status}: ` : ''}${error.message}`;
  }
  return String(error?.message ?? error);
}

// ---- sign in / out ----

function signOut(message = '') {
  clearTimeout(state.timer);
  state.client = null;
  state.samples = [];
  state.detailId = null;
  state.upcomingAt = 0;
  sessionStorage.removeItem(TOKEN_KEY);
  userView.clear();
  clearDelivery();
  // No figures stay on screen once the token is gone or refused.
  for (const id of ['queue-table', 'jobs-table', 'history-table']) $(id).tBodies[0].replaceChildren();
  $('dashboard').hidden = true;
  $('detail').hidden = true;
  $('sign-out').hidden = true;
  $('login').hidden = false;
  $('updated').textContent = '';
  showError(message);
  $('token').value = '';
  $('token').focus();
}

async function signIn(token) {
  state.client = opsClient(token);
  showError('');
  try {
    await refresh();
  } catch (error) {
    signOut(describe(error));
    return;
  }
  sessionStorage.setItem(TOKEN_KEY, token);
  $('login').hidden = true;
  $('dashboard').hidden = false;
  $('sign-out').hidden = false;
  schedule();
}

function schedule() {
  clearTimeout(state.timer);
  state.timer = setTimeout(async () => {
    try {
      await refresh();
      showError('');
    } catch (error) {
      if (error instanceof ApiError && (error.status === 401 || error.status === 403)) return signOut(describe(error));
      showError(`Could not refresh: ${describe(error)}`);
    }
    if (state.client) schedule();
  }, REFRESH_MS);
}

// ---- refresh ----

async function refresh() {
  const client = state.client;
  const stats = await client.queue();
  if (client !== state.client) return;
  state.serverNow = Date.parse(stats.generatedAt);
  renderQueue(stats);
  renderCharts(stats);
  renderHealth(await client.health());
  renderFailing(await client.apps());
  if (Date.now() - state.upcomingAt >= UPCOMING_MS) {
    renderUpcoming(await client.upcoming());
    state.upcomingAt = Date.now();
  }
  await refreshJobs();
  $('updated').textContent = `Updated ${new Date().toLocaleTimeString()}`;
}

function renderQueue(stats) {
  const body = $('queue-table').tBodies[0];
  const rows = stats.kinds.map((k) => {
    const tr = document.createElement('tr');
    tr.dataset.kind = k.kind;
    const th = document.createElement('th');
    th.scope = 'row';
    th.dataset.label = 'Kind';
    th.textContent = k.kind;
    tr.dataset.paused = String(k.paused);
    if (k.paused) {
      const mark = document.createElement('span');
      mark.className = 'paused';
      mark.textContent = 'paused';
      th.append(mark);
    }
    tr.append(th);
    cell(tr, 'Ready', k.ready).dataset.field = 'ready';
    cell(tr, 'Scheduled', k.scheduled).dataset.field = 'scheduled';
    cell(tr, 'Running', k.running).dataset.field = 'running';
    cell(tr, 'Stuck', k.stuck, k.stuck > 0 ? 'alert' : '').dataset.field = 'stuck';
    cell(tr, 'Dead', k.dead, k.dead > 0 ? 'warn' : '').dataset.field = 'dead';
    const age = k.oldestReadyAgeSeconds;
    cell(
      tr,
      'Oldest ready',
      k.ready > 0 ? duration(age) : '—',
      age >= AGE_ALERT_S ? 'alert' : age >= AGE_WARN_S ? 'warn' : '',
    ).dataset.field = 'oldest';
    cell(tr, 'Succeeded (1 h)', k.succeededLastHour).dataset.field = 'succeeded';
    cell(tr, 'Failed (1 h)', k.failedLastHour, k.failedLastHour > 0 ? 'warn' : '').dataset.field = 'failed';
    const control = cell(tr, 'Claiming', k.paused ? 'paused ' : 'on ');
    control.dataset.field = 'claiming';
    const button = document.createElement('button');
    button.type = 'button';
    button.textContent = k.paused ? 'Resume' : 'Pause';
    button.className = k.paused ? '' : 'danger';
    button.dataset.action = k.paused ? 'resume' : 'pause';
    button.dataset.kind = k.kind;
    button.setAttribute('aria-label', `${button.textContent} ${k.kind}`);
    control.append(button);
    return tr;
  });
  body.replaceChildren(...rows);
  $('queue-empty').hidden = rows.length > 0;

  const select = $('kind-filter');
  const known = new Set([...select.options].map((o) => o.value));
  for (const k of stats.kinds) {
    if (known.has(k.kind)) continue;
    const option = document.createElement('option');
    option.value = option.textContent = k.kind;
    select.append(option);
  }
}

function renderCharts(stats) {
  const t = Date.now();
  const ready = stats.kinds.reduce((sum, k) => sum + k.ready, 0);
  const age = Math.max(0, ...stats.kinds.map((k) => k.oldestReadyAgeSeconds));
  state.samples.push({ t, ready, age });
  state.samples = state.samples.filter((s) => s.t > t - HOUR_MS);
  lineChart($('chart-ready'), {
    from: t - HOUR_MS,
    to: t,
    series: [{ name: 'ready', className: 's-ready', points: state.samples.map((s) => ({ t: s.t, v: s.ready })) }],
    summary: `Ready jobs over the last hour; now ${ready}.`,
  });
  lineChart($('chart-age'), {
    from: t - HOUR_MS,
    to: t,
    series: [{ name: 'oldest ready, s', className: 's-age', points: state.samples.map((s) => ({ t: s.t, v: s.age })) }],
    summary: `Oldest ready age over the last hour; now ${duration(age)}.`,
  });

  // Server minutes, zero-filled, on the server's clock.
  const end = Math.floor(state.serverNow / 60_000) * 60_000;
  const byMinute = new Map(stats.lastHourByMinute.map((m) => [Date.parse(m.minute), m]));
  const minutes = Array.from({ length: 60 }, (_, i) => end - (59 - i) * 60_000);
  const succeeded = minutes.map((m) => ({ t: m, v: byMinute.get(m)?.succeeded ?? 0 }));
  const failed = minutes.map((m) => ({ t: m, v: byMinute.get(m)?.failed ?? 0 }));
  const total = (points) => points.reduce((sum, p) => sum + p.v, 0);
  lineChart($('chart-throughput'), {
    from: minutes[0],
    to: end,
    series: [
      { name: 'completed', className: 's-ok', points: succeeded },
      { name: 'failed', className: 's-failed', points: failed },
    ],
    summary: `Per minute over the last hour: ${total(succeeded)} completed and ${total(failed)} failed in all.`,
  });
}

async function refreshJobs() {
  const client = state.client;
  const status = $('status-filter').value;
  const kind = $('kind-filter').value;
  const params = { status: status === 'failing' ? 'queued' : status, limit: status === 'failing' ? '500' : '100' };
  if (kind) params.kind = kind;
  const page = await client.jobs(params);
  if (client !== state.client) return;
  // "Failing": queued again after a failed attempt (the list API has no such filter).
  const jobs = status === 'failing' ? page.items.filter((j) => j.lastError !== null && j.attempts > 0) : page.items;
  renderJobs(jobs);
}

function actionButtons(job, where) {
  const buttons = [];
  if (job.status === 'dead' || job.status === 'cancelled') buttons.push(['Retry', 'retry']);
  if (job.status === 'queued') buttons.push(['Cancel', 'cancel']);
  return buttons.map(([label, action]) => {
    const button = document.createElement('button');
    button.type = 'button';
    button.textContent = label;
    button.className = action === 'cancel' ? 'danger' : '';
    button.dataset.action = action;
    button.dataset.jobId = job.id;
    button.setAttribute('aria-label', `${label} job ${job.id}${where ? ` (${where})` : ''}`);
    return button;
  });
}

function renderJobs(jobs) {
  const rows = jobs.map((job) => {
    const tr = document.createElement('tr');
    tr.dataset.jobId = job.id;
    const first = document.createElement('th');
    first.scope = 'row';
    first.dataset.label = 'Job';
    const open = document.createElement('button');
    open.type = 'button';
    open.className = 'link';
    open.textContent = `#${job.id}`;
    open.dataset.action = 'open';
    open.dataset.jobId = job.id;
    open.setAttribute('aria-label', `Open job ${job.id}`);
    first.append(open);
    tr.append(first);
    cell(tr, 'Kind', job.kind);
    cell(tr, 'Status', job.status);
    cell(tr, 'Attempts', `${job.attempts} / ${job.maxAttempts}`);
    cell(tr, 'Last error', job.lastError ?? '—').classList.add('error-text');
    cell(tr, 'Idempotency key', job.idempotencyKey ?? '—').classList.add('mono');
    cell(tr, 'Age', duration((state.serverNow - Date.parse(job.createdAt)) / 1000));
    const actions = cell(tr, 'Actions', '');
    actions.append(...actionButtons(job));
    return tr;
  });
  $('jobs-table').tBodies[0].replaceChildren(...rows);
  $('jobs-empty').hidden = rows.length > 0;
}

// ---- one job ----

async function openJob(id, { focus = true } = {}) {
  const job = await state.client.job(id);
  state.detailId = job.id;
  $('detail-title').textContent = `Job #${job.id} · ${job.kind}`;
  const fields = [
    ['Status', job.status],
    ['Attempts', `${job.attempts} / ${job.maxAttempts}`],
    ['Last error', job.lastError ?? '—'],
    ['Idempotency key', job.idempotencyKey ?? '—'],
    ['Run at', when(job.runAt)],
    ['Created', when(job.createdAt)],
    ['Finished', when(job.finishedAt)],
    ['Locked by', job.lockedBy ?? '—'],
  ];
  // A reminder job: the occurrence it carries, and what became of it.
  const occurrence = job.occurrence;
  if (occurrence) {
    const state = occurrence.reason ? `${occurrence.status} (${occurrence.reason})` : occurrence.status;
    fields.push(
      ['Occurrence', `${occurrence.localDate} · ${occurrence.purpose === 'snooze' ? 'snooze re-delivery' : 'regular delivery'}`],
      ['Occurrence state', state],
      ['Due (nominal)', when(occurrence.dueAt)],
      ['Earliest allowed', when(occurrence.earliestAt)],
      ['Sent', when(occurrence.sentAt)],
      ['Acted on', when(occurrence.actedAt)],
    );
  }
  fillFields($('detail-fields'), fields);
  $('detail-actions').replaceChildren(...actionButtons(job, 'detail'));
  $('detail-payload').textContent = JSON.stringify(job.payload, null, 2);
  const history = job.history.map((run) => {
    const tr = document.createElement('tr');
    cell(tr, 'Attempt', run.attempt);
    cell(tr, 'Outcome', run.outcome);
    cell(tr, 'Worker', run.worker ?? '—');
    cell(tr, 'Started', when(run.startedAt));
    cell(tr, 'Finished', when(run.finishedAt));
    cell(tr, 'Error', run.error ?? '—').classList.add('error-text');
    cell(tr, 'Next run', when(run.nextRunAt));
    return tr;
  });
  $('history-table').tBodies[0].replaceChildren(...history);
  $('history-empty').hidden = history.length > 0;
  $('detail').hidden = false;
  if (focus) $('detail-title').focus();
}

async function act(action, id, button) {
  if (state.busy) return;
  state.busy = true;
  button.disabled = true;
  const result = $('action-result');
  result.className = 'result';
  result.textContent = `${action === 'retry' ? 'Retrying' : 'Cancelling'} job ${id}…`;
  try {
    const job = await state.client[action](id);
    result.classList.add('ok');
    result.textContent =
      action === 'retry' ? `Job ${job.id} retried: it is ${job.status} again, attempts reset.` : `Job ${job.id} cancelled.`;
  } catch (error) {
    result.classList.add('failed');
    result.textContent = `Could not ${action} job ${id}: ${describe(error)}`;
  } finally {
    state.busy = false;
    button.disabled = false;
  }
  try {
    await refresh();
    if (state.detailId === id) await openJob(id, { focus: false });
  } catch (error) {
    showError(`Could not refresh: ${describe(error)}`);
  }
}

async function actOnKind(action, kind, button) {
  if (state.busy) return;
  state.busy = true;
  button.disabled = true;
  const result = $('action-result');
  result.className = 'result';
  result.textContent = `${action === 'pause' ? 'Pausing' : 'Resuming'} ${kind}…`;
  try {
    await state.client[action](kind);
    result.classList.add('ok');
    result.textContent =
      action === 'pause' ? `${kind} paused: no worker claims it now; its running jobs finish.` : `${kind} resumed: workers claim it again.`;
  } catch (error) {
    result.classList.add('failed');
    result.textContent = `Could not ${action} ${kind}: ${describe(error)}`;
  } finally {
    state.busy = false;
    button.disabled = false;
  }
  try {
    await refresh();
  } catch (error) {
    showError(`Could not refresh: ${describe(error)}`);
  }
}

// ---- wiring ----

document.addEventListener('DOMContentLoaded', () => {
  $('login-form').addEventListener('submit', (event) => {
    event.preventDefault();
    const token = $('token').value.trim();
    if (token) signIn(token);
  });
  $('sign-out').addEventListener('click', () => signOut());
  userView.wire();
  $('detail-close').addEventListener('click', () => {
    const id = state.detailId;
    state.detailId = null;
    $('detail').hidden = true;
    document.querySelector(`button[data-action="open"][data-job-id="${CSS.escape(id ?? '')}"]`)?.focus();
  });
  $('filters').addEventListener('change', () => refreshJobs().catch((error) => showError(describe(error))));
  $('filters').addEventListener('submit', (event) => event.preventDefault());
  // One listener for every job and kind button, in the lists and in the detail.
  document.addEventListener('click', (event) => {
    const button = event.target instanceof Element ? event.target.closest('button[data-action]') : null;
    if (!button || !state.client) return;
    const { action, jobId, kind } = button.dataset;
    if (action === 'open') openJob(jobId).catch((error) => showError(describe(error)));
    else if (action === 'pause' || action === 'resume') actOnKind(action, kind, button);
    else act(action, jobId, button);
  });

  const saved = sessionStorage.getItem(TOKEN_KEY);
  if (saved) signIn(saved);
  else $('token').focus();
});
