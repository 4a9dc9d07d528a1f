import { DAY, HOUR, MINUTE, type QuietHours } from './local-time.js';
import type { ActionKind, ActionTarget, Outage, ReminderInput, ReminderPatch } from './oracle.js';
import { Prng } from './prng.js';

// The event generator: a population of users, each with a script of what
// they do over the simulated calendar, and the world's worker outages and
// jitter phases. Everything derives from the seed, so SIM_SEED replays a run.

export interface ZoneInfo {
  zone: string;
  /** Other spellings of the same zone: sending one must never count as travel. */
  aliases: string[];
}

// ≥ 12 zones, both hemispheres; half-hour and 45-minute offsets; a 30-minute
// DST shift (Lord Howe); zones without DST (north and south).
export const ZONES: ZoneInfo[] = [
  { zone: 'America/New_York', aliases: ['US/Eastern', 'america/new_york'] },
  { zone: 'America/St_Johns', aliases: ['Canada/Newfoundland'] },
  { zone: 'America/Los_Angeles', aliases: [] },
  { zone: 'America/Sao_Paulo', aliases: ['Brazil/East'] }, // south, no DST
  { zone: 'Europe/London', aliases: ['Europe/Belfast'] },
  { zone: 'Europe/Berlin', aliases: [] },
  { zone: 'Africa/Johannesburg', aliases: [] }, // south, no DST
  { zone: 'Asia/Kolkata', aliases: ['Asia/Calcutta', 'asia/kolkata'] }, // +05:30, no DST
  { zone: 'Asia/Kathmandu', aliases: ['Asia/Katmandu'] }, // +05:45
  { zone: 'Asia/Tokyo', aliases: [] },
  { zone: 'Australia/Sydney', aliases: ['Australia/NSW'] },
  { zone: 'Australia/Lord_Howe', aliases: ['Australia/LHI'] }, // +10:30/+11, 30-minute DST
  { zone: 'Pacific/Chatham', aliases: [] }, // +12:45/+13:45
  { zone: 'Pacific/Auckland', aliases: [] },
];

// Local times, including ones that fall in DST gaps or overlaps somewhere in
// March–April 2027 (01:30, 02:30, 03:00), ones quiet hours defer (22:30,
// 23:00, 06:00), and 21:59, which jitter can push into quiet hours starting at
// 22:00. Mostly on the hour: every distinct UTC instant is a step of the worker.
const LOCAL_TIMES: [string, number][] = [
  ['06:00', 2],
  ['07:00', 5],
  ['08:00', 6],
  ['09:00', 6],
  ['12:00', 2],
  ['18:00', 3],
  ['20:00', 2],
  ['21:00', 2],
  ['21:59', 0.7],
  ['22:30', 3],
  ['23:00', 1],
  ['00:00', 1],
  ['01:30', 2],
  ['02:30', 3],
  ['03:00', 1],
];

// Minutes to add to a local time so that it falls on the UTC hour (or half hour).
const HOME_ALIGN: Record<string, number> = { 'Asia/Kolkata': 30, 'America/St_Johns': 30, 'Asia/Kathmandu': 45, 'Pacific/Chatham': 45 };

const QUIET: [QuietHours | null, number][] = [
  [null, 10],
  [{ start: '22:00', end: '07:00' }, 5],
  [{ start: '23:00', end: '06:30' }, 2],
  [{ start: '21:00', end: '08:00' }, 2],
  [{ start: '20:00', end: '09:30' }, 1],
  [{ start: '12:00', end: '13:30' }, 1],
  [{ start: '08:00', end: '08:00' }, 1], // start == end: empty
];

const RULES: [string | null, number][] = [
  ['FREQ=DAILY', 12],
  ['FREQ=DAILY;INTERVAL=2', 2],
  ['FREQ=WEEKLY;BYDAY=MO,WE,FR', 3],
  ['FREQ=WEEKLY;BYDAY=SA,SU', 2],
  ['FREQ=WEEKLY;INTERVAL=2;BYDAY=TU', 1],
  ['FREQ=MONTHLY;BYMONTHDAY=1,15', 1],
  ['FREQ=MONTHLY;BYDAY=1MO', 0.5],
  ['FREQ=MONTHLY;BYDAY=-1FR', 0.5],
  ['FREQ=DAILY;COUNT=10', 1],
  ['FREQ=YEARLY;BYMONTH=3,4;BYMONTHDAY=20', 0.3],
  [null, 1.2], // one-off
];

export type ScriptEvent =
  | { kind: 'device'; /** Omitted: the device's current token. */ token?: string; timeZone?: string; note?: string }
  | { kind: 'deviceDelete' }
  | { kind: 'profile'; quietHours?: QuietHours | null; notificationsEnabled?: boolean }
  | { kind: 'create'; ref: string; input: ReminderInput }
  | { kind: 'patch'; ref: string; patch: ReminderPatch }
  | { kind: 'delete'; ref: string }
  | { kind: 'action'; ref: string; action: ActionKind; target: ActionTarget; minutes?: number };

export interface TimedEvent {
  t: number;
  seq: number;
  ev: ScriptEvent;
}

export interface UserScript {
  userId: string;
  zone: string;
  quiet: QuietHours | null;
  initialToken: string;
  events: TimedEvent[];
}

export interface Scenario {
  seed: number;
  start: number;
  end: number;
  days: number;
  users: UserScript[];
  outages: Outage[];
  /** The app restarts here with the second jitter setting. */
  jitterSwitch: number;
  jitterSeconds: [number, number];
}

export interface ScenarioOptions {
  seed: number;
  users: number;
  days: number;
  start?: string;
  jitterSeconds?: number;
  /** Events per user per day, on average. */
  eventRate?: number;
}

function dateOf(ms: number): string {
  return new Date(ms).toISOString().slice(0, 10);
}

/**
 * One shard of the population: users [firstUser, firstUser + users), with
 * outages of its own. Even shards run without jitter first and with it after
 * the mid-run restart; odd shards the other way round.
 */
export function generateScenario(options: ScenarioOptions & { shard?: number; firstUser?: number }): Scenario {
  const rng = new Prng(options.seed);
  const shard = options.shard ?? 0;
  const start = Date.parse(`${options.start ?? '2027-03-01'}T00:00:00Z`);
  const end = start + options.days * DAY;
  const span = end - start;
  const jitterSwitch = start + Math.floor(options.days / 2) * DAY + 7 * HOUR + 250; // 07:00:00.250 UTC, mid-run
  const outages = makeOutages(rng.fork(`outages-${shard}`), start, end, jitterSwitch);
  const users: UserScript[] = [];
  const first = options.firstUser ?? 0;
  for (let i = first; i < first + options.users; i++) {
    users.push(makeUser(rng.fork(`user-${i}`), i, start, end, span, options.eventRate ?? 0.08));
  }
  const jitter = options.jitterSeconds ?? 120;
  return {
    seed: options.seed,
    start,
    end,
    days: options.days,
    users,
    outages,
    jitterSwitch,
    jitterSeconds: shard % 2 === 0 ? [0, jitter] : [jitter, 0],
  };
}

/** Worker outages from minutes to days, not overlapping, not across the restart; boundaries at .5 s so nothing is due exactly then. */
function makeOutages(rng: Prng, start: number, end: number, avoid: number): Outage[] {
  const days = (end - start) / DAY;
  const lengths = [8 * MINUTE, 40 * MINUTE, 3 * HOUR, 7 * HOUR + 20 * MINUTE, 2 * DAY + 3 * HOUR];
  for (let extra = Math.floor(days / 30) - 2; extra > 0; extra--) lengths.push(rng.pick([15 * MINUTE, 2 * HOUR, 9 * HOUR, 30 * HOUR]));
  const out: Outage[] = [];
  for (const len of lengths) {
    if (len > (end - start) / 8) continue;
    for (let tries = 0; tries < 50; tries++) {
      const from =
        start + 2 * DAY + Math.floor((rng.next() * (end - start - 4 * DAY - len)) / MINUTE) * MINUTE + 500 + rng.int(0, 59) * 1000;
      const to = from + len;
      if (from < avoid + HOUR && to > avoid - HOUR) continue;
      if (out.some((o) => from < o.to + 6 * HOUR && to > o.from - 6 * HOUR)) continue;
      out.push({ from, to });
      break;
    }
  }
  return out.sort((a, b) => a.from - b.from);
}

function eventTime(rng: Prng, from: number, to: number): number {
  const t = from + Math.floor(rng.next() * Math.max(1, to - from));
  // Mostly on the quarter hour (where reminders fall due: an event and a job at one instant), some on any minute.
  return rng.chance(0.8) ? Math.floor(t / (15 * MINUTE)) * 15 * MINUTE : Math.floor(t / MINUTE) * MINUTE;
}

function makeUser(rng: Prng, index: number, start: number, end: number, span: number, rate: number): UserScript {
  const userId = `sim-u${String(index).padStart(5, '0')}`;
  const home = rng.pick(ZONES);
  const quiet = rng.weighted(QUIET);
  let tokenSeq = 0;
  const token = (prefix = '') => `${prefix}sim-${userId}-${++tokenSeq}`;
  const initialToken = token();
  const events: TimedEvent[] = [];
  let seq = 0;
  const push = (t: number, ev: ScriptEvent) => {
    if (t >= start && t < end) events.push({ t, seq: seq++, ev });
  };

  // Reminders: refs alive (for edits and actions) with their disabled state, known at script time.
  const alive: { ref: string; disabledUntil: number }[] = [];
  // Most users in zones a half or three-quarter hour off UTC pick times on that
  // fraction (08:45 in Kathmandu is 03:00 UTC): fewer distinct instants, fewer steps.
  const align = HOME_ALIGN[home.zone] ?? 0;
  const localTime = () => {
    const base = rng.weighted(LOCAL_TIMES);
    if (!align || rng.chance(0.3)) return base;
    const [h, m] = base.split(':').map(Number);
    const minutes = (h! * 60 + m! + align) % (24 * 60);
    return `${String(Math.floor(minutes / 60)).padStart(2, '0')}:${String(minutes % 60).padStart(2, '0')}`;
  };
  let refSeq = 0;
  const newReminder = (t: number): ScriptEvent => {
    const ref = `r${++refSeq}`;
    alive.push({ ref, disabledUntil: 0 });
    const rule = rng.weighted(RULES);
    const input: ReminderInput = { title: `${ref} v1`, localTime: localTime() };
    const today = dateOf(t + 14 * HOUR);
    if (rule) input.recurrence = rule;
    if (rule === null) input.startDate = dateOf(t + rng.int(1, 20) * DAY);
    else if (rng.chance(0.7)) input.startDate = rng.chance(0.8) ? dateOf(t - DAY) : dateOf(t + rng.int(1, 10) * DAY);
    else if (rng.chance(0.3)) input.startDate = today;
    if (rng.chance(0.1)) input.timeSensitive = true;
    if (rng.chance(0.1)) input.timeZone = rng.pick(ZONES).zone;
    return { kind: 'create', ref, input };
  };

  const t0 = start;
  const initial = rng.int(1, 3);
  for (let i = 0; i < initial; i++) push(t0, newReminder(t0));

  // The user's zone over the script, to spell aliases and plan return trips.
  let zone = home.zone;
  let away = false;
  const count = Math.max(1, Math.round(((end - start) / DAY) * rate * (0.5 + rng.next())));
  const times = Array.from({ length: count }, () => eventTime(rng, start + HOUR, end - HOUR)).sort((a, b) => a - b);
  for (const t of times) {
    const pickAlive = (enabledOnly = false) => {
      const pool = alive.filter((a) => !enabledOnly || a.disabledUntil < t);
      return pool.length ? rng.pick(pool) : undefined;
    };
    const what = rng.weighted<string>([
      ['travel', away ? 0 : 4],
      ['return', away ? 8 : 0],
      ['alias', 3],
      ['heartbeat', 1],
      ['editTime', 4],
      ['editRule', 2],
      ['editTitle', 4],
      ['editStart', 1],
      ['pin', 1],
      ['disable', 2],
      ['delete', 1],
      ['create', 2],
      ['done', 5],
      ['skip', 4],
      ['snooze', 5],
      ['quiet', 2],
      ['notifOff', 1],
      ['providerOutage', 1.5],
      ['deviceGone', 1],
      ['badCreate', 0.5],
      ['badAction', 1],
    ]);
    switch (what) {
      case 'travel': {
        const dest = rng.pick(ZONES.filter((z) => z.zone !== zone));
        const spelling = dest.aliases.length && rng.chance(0.3) ? rng.pick(dest.aliases) : dest.zone;
        push(t, { kind: 'device', timeZone: spelling, note: 'travel' });
        zone = dest.zone;
        away = true;
        break;
      }
      case 'return': {
        const spelling = home.aliases.length && rng.chance(0.3) ? rng.pick(home.aliases) : home.zone;
        push(t, { kind: 'device', timeZone: spelling, note: 'return' });
        zone = home.zone;
        away = false;
        break;
      }
      case 'alias': {
        const info = ZONES.find((z) => z.zone === zone)!;
        const spelling = info.aliases.length ? rng.pick(info.aliases) : zone;
        push(t, { kind: 'device', timeZone: spelling, note: 'alias' });
        break;
      }
      case 'heartbeat':
        push(t, { kind: 'device', timeZone: zone, note: 'heartbeat' });
        break;
      case 'editTime': {
        const a = pickAlive();
        if (a) push(t, { kind: 'patch', ref: a.ref, patch: { localTime: localTime() } });
        break;
      }
      case 'editRule': {
        const a = pickAlive();
        const rule = rng.weighted(RULES.filter(([r]) => r !== null));
        if (a && rule) push(t, { kind: 'patch', ref: a.ref, patch: { recurrence: rule } });
        break;
      }
      case 'editTitle': {
        const a = pickAlive();
        if (a) push(t, { kind: 'patch', ref: a.ref, patch: { title: `${a.ref} v${rng.int(2, 999)}` } });
        break;
      }
      case 'editStart': {
        const a = pickAlive();
        if (a) push(t, { kind: 'patch', ref: a.ref, patch: { startDate: dateOf(t + rng.int(-3, 6) * DAY) } });
        break;
      }
      case 'pin': {
        const a = pickAlive();
        if (a) push(t, { kind: 'patch', ref: a.ref, patch: { timeZone: rng.pick(ZONES).zone } });
        break;
      }
      case 'disable': {
        const a = pickAlive(true);
        if (!a) break;
        push(t, { kind: 'patch', ref: a.ref, patch: { enabled: false } });
        const back = Math.floor((t + rng.pick([45 * MINUTE, 5 * HOUR, 26 * HOUR, 4 * DAY])) / MINUTE) * MINUTE;
        a.disabledUntil = back < end - HOUR ? back : Infinity;
        if (back < end - HOUR) push(back, { kind: 'patch', ref: a.ref, patch: { enabled: true } });
        break;
      }
      case 'delete': {
        const a = pickAlive();
        if (!a || alive.length < 2) break;
        alive.splice(alive.indexOf(a), 1);
        push(t, { kind: 'delete', ref: a.ref });
        break;
      }
      case 'create':
        if (alive.length < 5) push(t, newReminder(t));
        break;
      case 'done':
      case 'skip':
      case 'snooze': {
        const a = pickAlive();
        if (!a) break;
        const target = rng.weighted<ActionTarget>(
          what === 'done'
            ? [
                ['pending', 3],
                ['last', 3],
                ['future', 1],
              ]
            : what === 'skip'
              ? [
                  ['pending', 3],
                  ['future', 2],
                  ['last', 1],
                ]
              : [
                  ['last', 6],
                  ['pending', 1],
                ],
        );
        const minutes =
          what === 'snooze'
            ? rng.weighted<number>([
                [5, 2],
                [10, 3],
                [30, 2],
                [60, 2],
                [180, 1],
                [1440, 0.3],
              ])
            : undefined;
        push(t, { kind: 'action', ref: a.ref, action: what, target, minutes });
        // A second tap on the same button (idempotent).
        if (rng.chance(0.15)) push(t + MINUTE, { kind: 'action', ref: a.ref, action: what, target, minutes });
        break;
      }
      case 'quiet':
        push(t, { kind: 'profile', quietHours: rng.weighted(QUIET) });
        break;
      case 'notifOff': {
        push(t, { kind: 'profile', notificationsEnabled: false });
        const back = t + rng.pick([2 * HOUR, 20 * HOUR, 3 * DAY]);
        push(Math.floor(back / MINUTE) * MINUTE, { kind: 'profile', notificationsEnabled: true });
        break;
      }
      case 'providerOutage': {
        const prefix = rng.chance(0.5) ? 'sim-500-' : 'sim-429-';
        push(t, { kind: 'device', token: `${prefix}${userId}-${++tokenSeq}`, note: 'provider failing' });
        const back = t + rng.pick([5 * MINUTE, 20 * MINUTE, 90 * MINUTE, 5 * HOUR]);
        push(Math.floor(back / MINUTE) * MINUTE + 30_000, { kind: 'device', token: token(), note: 'provider back' });
        break;
      }
      case 'deviceGone': {
        push(t, { kind: 'deviceDelete' });
        const back = t + rng.pick([3 * HOUR, 30 * HOUR]);
        push(Math.floor(back / MINUTE) * MINUTE, { kind: 'device', token: token(), note: 'new install' });
        break;
      }
      case 'badCreate': {
        // A one-off whose time has passed: refused, nothing written.
        const ref = `x${++refSeq}`;
        push(t, { kind: 'create', ref, input: { title: ref, localTime: '09:00', startDate: dateOf(t - 3 * DAY) } });
        break;
      }
      case 'badAction': {
        const a = pickAlive();
        if (!a) break;
        if (rng.chance(0.5))
          push(t, { kind: 'action', ref: a.ref, action: rng.pick<ActionKind>(['done', 'skip', 'snooze']), target: 'invalid', minutes: 10 });
        else push(t, { kind: 'action', ref: a.ref, action: 'snooze', target: 'last', minutes: rng.pick([0, 1441]) });
        break;
      }
    }
  }
  events.sort((a, b) => a.t - b.t || a.seq - b.seq);
  return { userId, zone: home.zone, quiet, initialToken, events };
}
