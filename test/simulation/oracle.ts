import {
  deferPastQuiet,
  formatLocal,
  HOUR,
  inQuietHours,
  MINUTE,
  type QuietHours,
  quietWindowEnd,
  resolveLocal,
  todayIn,
} from './local-time.js';
import { firstAfter, ruleDates } from './rule-dates.js';

// The oracle: what each user should see, per (reminder, local date), stated
// from SPEC §3/§5, issue #12 and the lead's contract, apart from the
// production code (no libs/scheduling, no libs/reminders): rule dates come
// from the `rrule` package in a floating frame, instants from local-time.ts.
//
// It is an online model. The driver feeds it, in time order, every scripted
// event with the API's answer and every push the simulated provider
// recorded (stamped with the simulated clock), and calls advance(now) as the
// clock moves. Where the contract leaves a choice (the jitter of an
// occurrence is unknown: E lies in [nominal, nominal + spread); a retry's
// backoff is random; an event lands while an occurrence is being decided),
// the oracle keeps every allowed outcome and lets the observations pick one;
// everything else is a violation.

export const STALE_AFTER_MS = 6 * HOUR;
/** A send_reminder job's attempts (8) with the queue's backoff (base 30 s, ×2, equal jitter): the last retry is at most ~2.1 h after the first attempt. */
const RETRY_SPAN_MS = 7_700_000;
/** The longest single backoff gap (attempt 7: 1920–3840 s). */
const RETRY_GAP_MS = 3_900_000;

export type SkipReason = 'stale' | 'disabled' | 'no_device' | 'failed' | 'rescheduled' | 'user' | 'deleted' | string;

export interface Violation {
  userId: string;
  reminderId?: string;
  date?: string;
  at: number;
  kind: string;
  message: string;
}

export interface Outage {
  /** The worker does not run from `from` until `to`; at `to` it runs the backlog. */
  from: number;
  to: number;
}

export interface OracleEnv {
  outages: readonly Outage[];
  /** REMINDER_JITTER_SECONDS in effect at an instant. */
  jitterSecondsAt(ms: number): number;
  /** How late after its due instant the driver may run a job (its step coalescing). */
  slackMs: number;
  /** Rule dates are expanded up to here. */
  horizon: string;
}

export interface ReminderInput {
  title: string;
  localTime: string;
  recurrence?: string;
  startDate?: string;
  timeZone?: string;
  timeSensitive?: boolean;
  enabled?: boolean;
}

export interface ReminderPatch {
  title?: string;
  localTime?: string;
  recurrence?: string;
  startDate?: string;
  timeZone?: string;
  enabled?: boolean;
}

export type ActionKind = 'done' | 'skip' | 'snooze';
export type ActionTarget = 'pending' | 'last' | 'future' | 'invalid';

export interface ApiResponse {
  status: number;
  body?: any;
}

export interface ObservedPush {
  at: number;
  token: string;
  reminderId: string | undefined;
  date: string | undefined;
  title: string;
  collapseId: string | null;
  outcome: string;
}

type DeviceState = 'ok' | 'failing' | 'none';

interface UserState {
  zone: string;
  quiet: QuietHours | null;
  notif: boolean;
  device: DeviceState;
  token: string | null;
}

interface Cand {
  /** When the job becomes due. */
  due: number;
  /** What staleness counts from (the earliest allowed instant). */
  base: number;
}

interface Occ {
  kind: 'regular' | 'snooze';
  reminder: ReminderModel;
  date: string;
  /** Regular: the nominal instant; snooze: now + minutes. */
  nominal: number;
  cands: Cand[];
  /** The contract allows that it is never delivered. */
  optional: boolean;
  plannedAt: number;
  nextNominal: number;
  /** Skip reasons allowed besides the ones the analysis finds (e.g. a re-plan the contract leaves open). */
  extraReasons?: Set<string>;
  analysis?: Analysis;
}

interface Analysis {
  lo: number;
  hi: number;
  /** Finalize once the clock reaches this. */
  resolveAt: number;
  mustDeliver: boolean;
  reasons: Set<string>;
  notes: string[];
}

export interface Settlement {
  how: 'sent' | 'done' | 'skipped' | 'notOwed' | 'missing' | 'optional';
  at: number;
  reasons?: Set<string>;
  /** Delivered (a regular push seen) before it was done. */
  delivered?: boolean;
  nominal?: number;
  /** A date before the reminder existed: nothing to record. */
  beforeCreation?: boolean;
}

export class ReminderModel {
  id = '';
  title: string;
  localTime: string;
  pinnedZone: string | null;
  rule: string | null;
  startDate: string;
  timeSensitive: boolean;
  enabled: boolean;
  deleted = false;
  deletedAt = Infinity;
  readonly settled = new Map<string, Settlement>();
  chainPos: string | null = null;
  pending: Occ | null = null;
  readonly snoozes = new Map<string, Occ>();
  readonly visible = new Map<string, number>();
  /** Dates that were planned (pending) at some point: an occurrence the user could see coming. */
  readonly everPlanned = new Set<string>();
  readonly titles: { t: number; title: string }[] = [];
  readonly enabledHist: { t: number; enabled: boolean }[] = [];
  collapseId: string | null = null;
  readonly createdAt: number;

  constructor(
    readonly ref: string,
    input: ReminderInput,
    zone: string,
    t: number,
  ) {
    this.createdAt = t;
    this.title = input.title;
    this.localTime = input.localTime;
    this.pinnedZone = input.timeZone ? canonicalZone(input.timeZone) : null;
    this.rule = input.recurrence ?? null;
    this.startDate = input.startDate ?? todayIn(zone, t);
    this.timeSensitive = input.timeSensitive ?? false;
    this.enabled = input.enabled ?? true;
    this.titles.push({ t, title: this.title });
    this.enabledHist.push({ t, enabled: this.enabled });
  }

  titleAt(t: number): string {
    let title = this.titles[0]!.title;
    for (const e of this.titles) if (e.t < t) title = e.title;
    return title;
  }

  enabledAt(t: number): boolean {
    let enabled = this.enabledHist[0]!.enabled;
    for (const e of this.enabledHist) if (e.t < t) enabled = e.enabled;
    return enabled;
  }
}

// Zone spellings the simulation sends, and what each must be stored as.
export const ZONE_ALIASES: Record<string, string> = {
  'Asia/Calcutta': 'Asia/Kolkata',
  'asia/kolkata': 'Asia/Kolkata',
  'Asia/Katmandu': 'Asia/Kathmandu',
  'US/Eastern': 'America/New_York',
  'america/new_york': 'America/New_York',
  'Canada/Newfoundland': 'America/St_Johns',
  'Australia/LHI': 'Australia/Lord_Howe',
  'Europe/Belfast': 'Europe/London',
  'Brazil/East': 'America/Sao_Paulo',
  'Australia/NSW': 'Australia/Sydney',
  'Etc/UCT': 'UTC',
};

export function canonicalZone(name: string): string {
  return ZONE_ALIASES[name] ?? name;
}

export class UserOracle {
  readonly reminders = new Map<string, ReminderModel>();
  readonly byId = new Map<string, ReminderModel>();
  readonly hist: { t: number; s: UserState }[] = [];
  readonly timeline: { t: number; text: string }[] = [];
  readonly violations: Violation[] = [];
  follows = true;
  private state: UserState;
  private dirty = true;

  constructor(
    readonly userId: string,
    readonly env: OracleEnv,
    initial: { zone: string; quiet: QuietHours | null; notificationsEnabled?: boolean },
    t: number,
  ) {
    this.state = {
      zone: canonicalZone(initial.zone),
      quiet: initial.quiet,
      notif: initial.notificationsEnabled ?? true,
      device: 'none',
      token: null,
    };
    this.hist.push({ t, s: { ...this.state } });
    this.log(t, `profile: zone ${this.state.zone}, quiet hours ${fmtQuiet(initial.quiet)}`);
  }

  get zone(): string {
    return this.state.zone;
  }

  get quiet(): QuietHours | null {
    return this.state.quiet;
  }

  /** The device's token now, or the last one it had. */
  get token(): string | null {
    for (let i = this.hist.length - 1; i >= 0; i--) if (this.hist[i]!.s.token) return this.hist[i]!.s.token;
    return null;
  }

  /** The next instant at which advance() has something to settle. */
  wakeAt = Infinity;

  // ——— bookkeeping ————————————————————————————————————————————————

  log(t: number, text: string): void {
    this.timeline.push({ t, text });
  }

  violate(t: number, kind: string, message: string, r?: ReminderModel, date?: string): void {
    this.violations.push({ userId: this.userId, reminderId: r?.id, date, at: t, kind, message });
    this.log(t, `VIOLATION ${kind}${r ? ` [${r.ref}${date ? ` ${date}` : ''}]` : ''}: ${message}`);
  }

  private setState(t: number, change: Partial<UserState>): void {
    this.state = { ...this.state, ...change };
    this.hist.push({ t, s: { ...this.state } });
    this.dirty = true;
  }

  /** The user's state as a job running at `x` sees it: every event before `x` applied (jobs at an instant run before events at it). */
  stateAt(x: number): UserState {
    let lo = 0;
    let hi = this.hist.length - 1;
    let found = 0;
    while (lo <= hi) {
      const mid = (lo + hi) >> 1;
      if (this.hist[mid]!.t < x) {
        found = mid;
        lo = mid + 1;
      } else hi = mid - 1;
    }
    return this.hist[found]!.s;
  }

  /** The last instant at which an event was applied: pushes observed at that instant came after it. */
  private lastEventAt = -Infinity;

  private touch(t: number): void {
    this.lastEventAt = t;
  }

  /** The state a push observed at `t` was sent under. */
  private stateOfPush(t: number): number {
    return this.lastEventAt === t ? t + 0.5 : t;
  }

  local(t: number): string {
    return formatLocal(this.stateAt(t + 1).zone, t);
  }

  private zoneOf(r: ReminderModel): string {
    return r.pinnedZone ?? this.state.zone;
  }

  private dates(r: ReminderModel): string[] {
    return ruleDates(r.rule, r.startDate, this.env.horizon);
  }

  private nominal(r: ReminderModel, date: string): number {
    return resolveLocal(this.zoneOf(r), date, r.localTime);
  }

  private nextNominal(r: ReminderModel, date: string): number {
    const dates = this.dates(r);
    const i = firstAfter(dates, date);
    return i < dates.length ? this.nominal(r, dates[i]!) : Infinity;
  }

  private defer(r: ReminderModel, ms: number): number {
    return r.timeSensitive ? ms : deferPastQuiet(this.state.quiet, this.state.zone, ms);
  }

  /** E's range for a nominal instant: [defer(N), defer(N + spread - 1 s)]. */
  private window(r: ReminderModel, n: number, t: number): { eLo: number; eHi: number } {
    const spread = Math.max(this.env.jitterSecondsAt(t), this.env.jitterSecondsAt(n));
    const eLo = this.defer(r, n);
    const eHi = spread > 0 ? this.defer(r, n + (spread - 1) * 1000) : eLo;
    return { eLo, eHi };
  }

  /** When a job due at `ms` runs: at once, or when the outage that covers it ends. */
  private workerRun(ms: number): number {
    for (const o of this.env.outages) if (ms >= o.from && ms < o.to) return o.to;
    return ms;
  }

  // ——— planning ————————————————————————————————————————————————————

  private plan(r: ReminderModel, date: string, t: number, cands: Cand[] | null, optional: boolean, why: string): void {
    const n = this.nominal(r, date);
    let list = cands;
    if (!list) {
      const { eLo, eHi } = this.window(r, n, t);
      list =
        eLo === eHi
          ? [{ due: eLo, base: eLo }]
          : [
              { due: eLo, base: eLo },
              { due: eHi, base: eHi },
            ];
    }
    r.pending = {
      kind: 'regular',
      reminder: r,
      date,
      nominal: n,
      cands: list,
      optional,
      plannedAt: t,
      nextNominal: this.nextNominal(r, date),
    };
    r.everPlanned.add(date);
    const dues = list.map((c) => this.local(c.due).slice(11, 19));
    this.log(
      t,
      `[${r.ref}] plan ${date} (${why}): nominal ${this.local(n)}, due ${[...new Set(dues)].join('…')}${optional ? ', optional' : ''}`,
    );
  }

  private settle(r: ReminderModel, date: string, s: Settlement, t: number, note: string): void {
    const previous = r.settled.get(date);
    if (previous?.how === 'sent' && s.how === 'done') s.delivered = true;
    r.settled.set(date, s);
    const reasons = s.reasons ? ` (${[...s.reasons].join('|')})` : '';
    this.log(t, `[${r.ref}] ${date} → ${s.how}${reasons}${note ? `: ${note}` : ''}`);
  }

  /** The last date sent, done or skipped whose instant is not after `t`. */
  private settledBy(r: ReminderModel, t: number): string | null {
    let last: string | null = null;
    for (const [d, s] of r.settled) {
      if (s.how !== 'sent' && s.how !== 'done' && s.how !== 'skipped') continue;
      if ((s.nominal ?? this.nominal(r, d)) <= t && (last === null || d > last)) last = d;
    }
    return last;
  }

  /** The regular chain: after `date` settled, the next date of the rule that is not settled yet is owed, past or not. */
  private chainNext(r: ReminderModel, date: string, t: number): void {
    if (r.chainPos === null || date > r.chainPos) r.chainPos = date;
    r.pending = null;
    if (!r.enabled || r.deleted) return;
    const dates = this.dates(r);
    for (let i = firstAfter(dates, r.chainPos); i < dates.length; i++) {
      const d = dates[i]!;
      const s = r.settled.get(d);
      if (s && s.how !== 'notOwed') {
        r.chainPos = d;
        continue;
      }
      this.plan(r, d, t, null, s?.how === 'notOwed', 'chain');
      return;
    }
    this.log(t, `[${r.ref}] rule exhausted`);
  }

  /** Creation and enable: the first date whose nominal instant is after now; the dates before are not owed. */
  private planFromNow(r: ReminderModel, t: number, why: string): void {
    r.pending = null;
    const dates = this.dates(r);
    for (let i = firstAfter(dates, r.chainPos); i < dates.length; i++) {
      const d = dates[i]!;
      const s = r.settled.get(d);
      if (s && s.how !== 'notOwed') continue;
      const n = this.nominal(r, d);
      if (n > t) return this.plan(r, d, t, null, s?.how === 'notOwed', why);
      const { eLo, eHi } = this.window(r, n, t);
      if (eHi > t)
        return this.plan(
          r,
          d,
          t,
          [
            { due: t, base: Math.max(eLo, t) },
            { due: eHi, base: eHi },
          ],
          true,
          `${why}, nominal past but E maybe not`,
        );
      if (!s) this.settle(r, d, { how: 'notOwed', at: t, nominal: n, beforeCreation: why === 'created' }, t, `passed before ${why}`);
    }
    this.log(t, `[${r.ref}] nothing left to plan`);
  }

  /**
   * Travel and schedule edits: re-plan from the last date already settled.
   * The pending date moves to its new instant if that is ahead, is delivered
   * at once if it is at most 6 h behind, else is skipped (`rescheduled`);
   * other dates whose new instant is behind are not owed.
   */
  private replan(r: ReminderModel, t: number, why: string): void {
    const p = r.pending;
    let uncertain = false;
    if (p) {
      const a = this.analyze(p);
      // Being decided right now (due, no push seen) and a skip was allowed: the
      // system may already have settled it; whatever we plan for it is optional.
      if (a.lo <= t && !a.mustDeliver) uncertain = true;
      if (p.optional) uncertain = true;
    }
    r.pending = null;
    const pd = p?.date;
    const dates = this.dates(r);
    for (let i = firstAfter(dates, r.chainPos); i < dates.length; i++) {
      const d = dates[i]!;
      const s = r.settled.get(d);
      if (s && s.how !== 'notOwed') continue;
      const wasNotOwed = s?.how === 'notOwed';
      const n = this.nominal(r, d);
      const { eLo, eHi } = this.window(r, n, t);
      if (d === pd) {
        if (eLo > t) return this.plan(r, d, t, null, uncertain || wasNotOwed, `${why}: pending moves`);
        if (eHi > t)
          return this.plan(
            r,
            d,
            t,
            [
              { due: t, base: t },
              { due: eHi, base: eHi },
            ],
            uncertain || wasNotOwed,
            `${why}: pending, now or soon`,
          );
        const lagMin = t - eHi;
        const lagMax = t - eLo;
        if (lagMax <= STALE_AFTER_MS) {
          return this.plan(
            r,
            d,
            t,
            [
              { due: t, base: eLo },
              { due: t, base: eHi },
            ],
            uncertain || wasNotOwed,
            `${why}: pending is past, at once`,
          );
        }
        if (lagMin > STALE_AFTER_MS) {
          const reasons = new Set(['rescheduled']);
          if (uncertain) for (const x of this.analyze(p!).reasons) reasons.add(x);
          this.settle(r, d, { how: 'skipped', at: t, reasons, nominal: n }, t, `${why}: pending is over 6 h past`);
          r.chainPos = d;
          continue;
        }
        return this.plan(
          r,
          d,
          t,
          [
            { due: t, base: eLo },
            { due: t, base: eHi },
          ],
          true,
          `${why}: pending is about 6 h past`,
        );
      }
      // When the worker may already have settled the pending date (uncertain), its chain went on and may
      // have judged this date too (stale, under the old schedule, with no push to show for it): optional.
      const chainMayHaveRun = uncertain && pd !== undefined && d > pd;
      if (n > t) return this.plan(r, d, t, null, wasNotOwed || chainMayHaveRun, why);
      if (eHi > t)
        return this.plan(
          r,
          d,
          t,
          [
            { due: t, base: Math.max(t, eLo) },
            { due: eHi, base: eHi },
          ],
          true,
          `${why}: nominal past, E maybe ahead`,
        );
      if (!s) this.settle(r, d, { how: 'notOwed', at: t, nominal: n }, t, `${why}: already past`);
    }
    this.log(t, `[${r.ref}] nothing left to plan`);
  }

  /**
   * Quiet hours changed (PATCH /v1/me, or travel for reminders pinned to a
   * zone): the pending occurrence is re-planned from its schedule (the lead's
   * implementation does; SPEC only says quiet hours are checked again when the
   * job runs), so either the new plan or the old one (its job left in place,
   * deferred again at run time) is accepted.
   */
  private replanKeeping(r: ReminderModel, t: number, why: string): void {
    const old = r.pending;
    this.replan(r, t, why);
    const now = r.pending;
    if (old && now && old.date === now.date) {
      for (const c of old.cands) if (c.due > t && !now.cands.some((n) => n.due === c.due)) now.cands.push(c);
    }
    if (old) {
      const s = r.settled.get(old.date);
      if (s?.how === 'skipped') s.reasons!.add('stale');
    }
    for (const z of r.snoozes.values()) {
      const due = this.defer(r, z.nominal);
      if (due > t && !z.cands.some((c) => c.due === due)) z.cands.push({ due, base: due });
    }
  }

  // ——— deciding ————————————————————————————————————————————————————

  /** Where an occurrence can end, from the state at the instants its job can run. */
  analyze(o: Occ): Analysis {
    if (o.analysis && !this.dirty) return o.analysis;
    const r = o.reminder;
    let lo = Infinity;
    let hi = -Infinity;
    let resolveAt = -Infinity;
    let delivers = 0;
    const reasons = new Set<string>();
    const notes: string[] = [];
    for (const c of o.cands) {
      // A job cannot run before it was planned: one planned after its instant runs at once.
      const start = Math.max(c.due, o.plannedAt);
      let due = start;
      let base = c.base;
      if (start === o.plannedAt && !r.timeSensitive) {
        // Planned at or after its instant, inside quiet hours: planned at their end, which becomes E.
        const sp = this.stateAt(start + 0.5);
        if (inQuietHours(sp.quiet, sp.zone, start) && !(start - base > STALE_AFTER_MS))
          due = base = quietWindowEnd(sp.quiet!, sp.zone, start);
      }
      let x = this.workerRun(due);
      // A job an event planned to run at its own instant runs after that event.
      const stateAtRun = (ms: number) => this.stateAt(ms === o.plannedAt ? ms + 0.5 : ms);
      // Quiet hours met when the job runs on time (or at once when planned late) move the
      // earliest allowed instant to their end. Met by a job that runs late after an outage,
      // whether staleness then counts from their end or from the earlier E is not settled
      // by the contract: both are allowed.
      let eitherWay = false;
      for (let i = 0; i < 4; i++) {
        const s = stateAtRun(x);
        if (r.timeSensitive || !inQuietHours(s.quiet, s.zone, x)) break;
        if (x - base > STALE_AFTER_MS || x >= o.nextNominal) break;
        const end = quietWindowEnd(s.quiet!, s.zone, x);
        if (x !== due) eitherWay = true;
        due = base = end;
        x = this.workerRun(due);
      }
      const s = stateAtRun(x);
      lo = Math.min(lo, x);
      const late = x - base;
      const overdue = late > STALE_AFTER_MS || x >= o.nextNominal;
      const stale = o.kind === 'regular' && overdue;
      // Snooze re-deliveries after an outage, and runs near the 6 h line: either outcome.
      const nearStale = eitherWay || (o.kind === 'regular' && Math.abs(late - STALE_AFTER_MS) < 2000) || (o.kind === 'snooze' && overdue);
      let end = x + this.env.slackMs + 1000;
      if (stale || nearStale) reasons.add('stale');
      // Every reason that applies is allowed (the contract gives no precedence).
      if (!s.notif) reasons.add('disabled');
      if (s.device === 'none') reasons.add('no_device');
      if (!stale && s.notif && s.device === 'failing') {
        reasons.add('failed').add('stale');
        const restore = this.restoreAfter(x);
        if (restore === Infinity) end = Infinity;
        else {
          end = this.workerRun(Math.min(restore, x + RETRY_SPAN_MS) + RETRY_GAP_MS) + this.env.slackMs + 1000;
          const se = this.stateAt(end);
          if (!r.timeSensitive && inQuietHours(se.quiet, se.zone, end))
            end = quietWindowEnd(se.quiet!, se.zone, end) + this.env.slackMs + 1000;
        }
        notes.push(`device failing at ${this.local(x)}`);
      } else if (!stale && !nearStale && s.notif && s.device === 'ok') delivers++;
      hi = Math.max(hi, end);
      resolveAt = Math.max(resolveAt, end);
    }
    for (const x of o.extraReasons ?? []) reasons.add(x);
    const analysis: Analysis = { lo, hi, resolveAt, mustDeliver: !o.optional && delivers === o.cands.length, reasons, notes };
    o.analysis = analysis;
    return analysis;
  }

  /** The first instant ≥ x at which the device is not failing (Infinity while unknown). */
  private restoreAfter(x: number): number {
    for (let i = 0; i < this.hist.length; i++) {
      const e = this.hist[i]!;
      if (e.t < x) continue;
      if (e.s.device !== 'failing') return e.t;
    }
    return this.state.device !== 'failing' ? x : Infinity;
  }

  /** Occurrences whose decision time has passed without a push are settled (or reported missing). */
  advance(t: number, options: { stopAtDeliverable?: boolean } = {}): void {
    if (this.dirty) {
      for (const r of this.reminders.values()) {
        if (r.pending) r.pending.analysis = undefined;
        for (const s of r.snoozes.values()) s.analysis = undefined;
      }
    }
    for (const r of this.reminders.values()) {
      for (let guard = 0; guard < 1000 && r.pending; guard++) {
        const o = r.pending;
        const a = this.analyze(o);
        if (a.resolveAt > t) break;
        this.finalizeRegular(o, a, t);
        // (The self-driving reference of the unit tests delivers what the chain owes before settling further.)
        if (options.stopAtDeliverable && r.pending && this.analyze(r.pending).mustDeliver) break;
      }
      for (const [date, o] of [...r.snoozes]) {
        const a = this.analyze(o);
        if (a.resolveAt > t) continue;
        r.snoozes.delete(date);
        if (a.mustDeliver) this.violate(t, 'missing-snooze', `snooze re-delivery of ${date} due ${this.local(a.lo)} never came`, r, date);
        else this.log(t, `[${r.ref}] snooze of ${date} not delivered (allowed: ${[...a.reasons].join('|') || 'optional'})`);
      }
    }
    this.dirty = false;
    let wake = Infinity;
    for (const r of this.reminders.values()) {
      if (r.pending) wake = Math.min(wake, this.analyze(r.pending).resolveAt);
      for (const z of r.snoozes.values()) wake = Math.min(wake, this.analyze(z).resolveAt);
    }
    this.wakeAt = wake;
  }

  private finalizeRegular(o: Occ, a: Analysis, t: number): void {
    const r = o.reminder;
    if (a.mustDeliver) {
      this.violate(
        t,
        'missing',
        `no push for ${o.date}: expected between ${this.local(a.lo)} and ${this.local(a.hi)} (nominal ${this.local(o.nominal)})`,
        r,
        o.date,
      );
      this.settle(r, o.date, { how: 'missing', at: t, nominal: o.nominal }, t, '');
    } else if (o.optional) {
      this.settle(r, o.date, { how: 'optional', at: t, reasons: a.reasons, nominal: o.nominal }, t, 'not delivered (allowed)');
    } else {
      this.settle(r, o.date, { how: 'skipped', at: t, reasons: a.reasons, nominal: o.nominal }, t, a.notes.join('; '));
    }
    this.chainNext(r, o.date, Math.min(t, a.lo));
  }

  // ——— observations ————————————————————————————————————————————————

  observePush(p: ObservedPush): void {
    const t = p.at;
    const ts = this.stateOfPush(t);
    const s = this.stateAt(ts);
    const r = p.reminderId ? this.byId.get(p.reminderId) : undefined;
    const visible = p.outcome === 'sent';
    if (!r || !p.date) {
      this.violate(
        t,
        'unknown-push',
        `push "${p.title}" without a known reminder/occurrence (data.reminderId=${p.reminderId}, data.occurrence=${p.date})`,
      );
      return;
    }
    if (r.collapseId === null) r.collapseId = p.collapseId;
    else if (p.collapseId !== r.collapseId)
      this.violate(t, 'collapse-id', `collapse id ${p.collapseId} ≠ ${r.collapseId} of the reminder's earlier pushes`, r, p.date);
    if (s.token !== null && p.token !== s.token)
      this.violate(t, 'old-token', `push to ${p.token}, the device's token is ${s.token}`, r, p.date);
    if (!visible) {
      this.log(t, `[${r.ref}] push attempt for ${p.date}: ${p.outcome}`);
      return;
    }
    this.log(t, `[${r.ref}] PUSH ${p.date} "${p.title}"`);
    if (r.deleted && ts > r.deletedAt) this.violate(t, 'after-delete', `push for ${p.date} after the reminder was deleted`, r, p.date);
    if (!r.enabledAt(ts)) this.violate(t, 'while-disabled', `push for ${p.date} while the reminder is disabled`, r, p.date);
    if (!s.notif) this.violate(t, 'notifications-off', `push for ${p.date} while the user's notifications are off`, r, p.date);
    if (!r.timeSensitive && inQuietHours(s.quiet, s.zone, t))
      this.violate(t, 'quiet-hours', `push for ${p.date} inside quiet hours ${fmtQuiet(s.quiet)}`, r, p.date);
    const title = r.titleAt(ts);
    if (p.title !== title) this.violate(t, 'old-content', `push title "${p.title}", the reminder's title is "${title}"`, r, p.date);
    r.visible.set(p.date, (r.visible.get(p.date) ?? 0) + 1);
    this.attribute(r, p.date, t);
  }

  private attribute(r: ReminderModel, date: string, t: number): void {
    const o = r.pending;
    if (o && o.date === date) {
      const a = this.analyze(o);
      if (t < a.lo - 1000)
        this.violate(
          t,
          'early',
          `push for ${date} before its earliest allowed ${this.local(a.lo)} (nominal ${this.local(o.nominal)})`,
          r,
          date,
        );
      else if (t > a.hi)
        this.violate(
          t,
          'late',
          `push for ${date} after the latest allowed ${this.local(a.hi)} (nominal ${this.local(o.nominal)})`,
          r,
          date,
        );
      this.settle(r, date, { how: 'sent', at: t, nominal: o.nominal }, t, '');
      this.chainNext(r, date, t);
      return;
    }
    const z = r.snoozes.get(date);
    if (z) {
      const a = this.analyze(z);
      if (t < a.lo - 1000) this.violate(t, 'early-snooze', `snooze re-delivery of ${date} before ${this.local(a.lo)}`, r, date);
      else if (t > a.hi) this.violate(t, 'late-snooze', `snooze re-delivery of ${date} after ${this.local(a.hi)}`, r, date);
      r.snoozes.delete(date);
      return;
    }
    const st = r.settled.get(date);
    if (!st && o && o.date < date) {
      // A later date arrived while the pending one is still open: fine only if it could have been skipped already.
      const a = this.analyze(o);
      if (!a.mustDeliver && t >= a.lo) {
        this.finalizeRegular(o, a, t);
        return this.attribute(r, date, t);
      }
    }
    if (!st) return this.violate(t, 'unexpected', `push for ${date}, which nothing planned (pending: ${o ? o.date : 'none'})`, r, date);
    const what: Record<Settlement['how'], string> = {
      sent: 'duplicate',
      done: 'after-done',
      skipped: 'after-skip',
      notOwed: 'not-owed',
      missing: 'late',
      optional: 'late',
    };
    const kind = st.how === 'done' && st.delivered ? 'duplicate' : what[st.how];
    this.violate(
      t,
      kind,
      `push for ${date}, already ${st.how}${st.reasons ? ` (${[...st.reasons].join('|')})` : ''} at ${this.local(st.at)}`,
      r,
      date,
    );
  }

  // ——— events ——————————————————————————————————————————————————————

  /** PATCH /v1/me */
  profile(t: number, change: { quietHours?: QuietHours | null; notificationsEnabled?: boolean }, res: ApiResponse): void {
    this.touch(t);
    this.log(t, `PATCH /v1/me ${JSON.stringify(change)} → ${res.status}`);
    if (res.status !== 200) return this.violate(t, 'status', `PATCH /v1/me answered ${res.status}, expected 200`);
    const next: Partial<UserState> = {};
    if (change.quietHours !== undefined) next.quiet = change.quietHours;
    if (change.notificationsEnabled !== undefined) next.notif = change.notificationsEnabled;
    // Quiet hours set to what they already are change nothing, and re-plan nothing.
    const was = this.state.quiet;
    const quietChanged =
      change.quietHours !== undefined &&
      ((was?.start ?? null) !== (change.quietHours?.start ?? null) || (was?.end ?? null) !== (change.quietHours?.end ?? null));
    this.setState(t, next);
    if (quietChanged) {
      for (const r of this.reminders.values()) if (!r.deleted && r.enabled) this.replanKeeping(r, t, 'quiet hours');
    }
  }

  /** PUT /v1/me/devices/{id}: a token change, a heartbeat, or a new zone (travel). */
  device(t: number, change: { token: string; timeZone?: string }, res: ApiResponse): void {
    this.touch(t);
    const expected = this.state.device === 'none' && this.hist.every((h) => h.s.token === null) ? [201] : [200, 201];
    this.log(t, `PUT device token ${change.token}${change.timeZone ? ` zone ${change.timeZone}` : ''} → ${res.status}`);
    if (!expected.includes(res.status))
      return this.violate(t, 'status', `device PUT answered ${res.status}, expected ${expected.join('|')}`);
    if (change.timeZone && res.body?.timeZone !== undefined && res.body.timeZone !== canonicalZone(change.timeZone)) {
      this.violate(
        t,
        'zone-name',
        `device zone "${change.timeZone}" stored as "${res.body.timeZone}", expected "${canonicalZone(change.timeZone)}"`,
      );
    }
    const failing = /^sim-(500|429)-/.test(change.token);
    const zone = change.timeZone ? canonicalZone(change.timeZone) : this.state.zone;
    const travel = zone !== this.state.zone && this.follows;
    this.setState(t, { device: failing ? 'failing' : 'ok', token: change.token, ...(travel ? { zone } : {}) });
    if (travel) {
      this.log(t, `travel to ${zone}`);
      for (const r of this.reminders.values()) {
        if (r.deleted || !r.enabled) continue;
        if (r.pinnedZone === null) this.replan(r, t, 'travel');
        else this.replanKeeping(r, t, 'quiet hours moved');
      }
    }
  }

  deviceDelete(t: number, res: ApiResponse): void {
    this.touch(t);
    this.log(t, `DELETE device → ${res.status}`);
    if (res.status !== 204) this.violate(t, 'status', `device DELETE answered ${res.status}, expected 204`);
    this.setState(t, { device: 'none', token: null });
  }

  expectCreate(t: number, input: ReminderInput): number[] {
    const zone = input.timeZone ? canonicalZone(input.timeZone) : this.state.zone;
    const probe = new ReminderModel('probe', input, zone, t);
    if (probe.enabled === false) return [201];
    const dates = this.dates(probe);
    let maybe = false;
    for (const d of dates) {
      const n = resolveLocal(zone, d, probe.localTime);
      if (n > t) return [201];
      if (this.window(probe, n, t).eHi > t) maybe = true;
    }
    return maybe ? [201, 400] : [400];
  }

  create(t: number, ref: string, input: ReminderInput, res: ApiResponse): ReminderModel | undefined {
    this.touch(t);
    const expected = this.expectCreate(t, input);
    this.log(t, `POST reminder ${ref} ${JSON.stringify(input)} → ${res.status}`);
    if (!expected.includes(res.status))
      this.violate(
        t,
        'status',
        `POST /v1/reminders ${ref} answered ${res.status} ${JSON.stringify(res.body?.errors ?? '')}, expected ${expected.join('|')}`,
      );
    if (res.status !== 201) return undefined;
    const zone = input.timeZone ? canonicalZone(input.timeZone) : this.state.zone;
    const r = new ReminderModel(ref, input, zone, t);
    r.id = res.body?.id ?? ref;
    this.reminders.set(ref, r);
    this.byId.set(r.id, r);
    if (res.body?.timeZone !== undefined && res.body.timeZone !== zone)
      this.violate(t, 'zone-name', `reminder zone stored as "${res.body.timeZone}", expected "${zone}"`, r);
    if (r.enabled) this.planFromNow(r, t, 'created');
    this.checkNext(t, r, res);
    return r;
  }

  private checkNext(t: number, r: ReminderModel, res: ApiResponse): void {
    const o = r.pending;
    const next = res.body?.nextOccurrence;
    if (!o || o.optional || o.nominal <= t || next === undefined) return;
    if (next === null || next.at !== new Date(o.nominal).toISOString()) {
      this.violate(
        t,
        'next-occurrence',
        `nextOccurrence ${next ? `${next.at} (${next.local})` : 'null'}, expected ${new Date(o.nominal).toISOString()} (${this.local(o.nominal)}, ${o.date})`,
        r,
        o.date,
      );
    }
  }

  expectPatch(t: number, ref: string, patch: ReminderPatch): number[] {
    const r = this.reminders.get(ref);
    if (!r || r.deleted) return [404];
    const scheduleChange = this.changesSchedule(r, patch);
    const enabling = patch.enabled === true && !r.enabled;
    if (!(scheduleChange || enabling) || patch.enabled === false || (!r.enabled && patch.enabled !== true)) return [200];
    const zone = patch.timeZone ? canonicalZone(patch.timeZone) : this.zoneOf(r);
    const localTime = patch.localTime ?? r.localTime;
    const dates = ruleDates(patch.recurrence ?? r.rule, patch.startDate ?? r.startDate, this.env.horizon);
    let maybe = false;
    for (const d of dates) {
      const n = resolveLocal(zone, d, localTime);
      if (n > t) return [200];
      maybe = maybe || n > t - 24 * HOUR;
    }
    return maybe ? [200, 400] : [400];
  }

  /** An edit that sets the same values (or pins the zone the reminder already has) leaves the schedule alone. */
  private changesSchedule(r: ReminderModel, patch: ReminderPatch): boolean {
    return (
      (patch.localTime !== undefined && patch.localTime !== r.localTime) ||
      (patch.recurrence !== undefined && patch.recurrence !== r.rule) ||
      (patch.startDate !== undefined && patch.startDate !== r.startDate) ||
      (patch.timeZone !== undefined && canonicalZone(patch.timeZone) !== this.zoneOf(r))
    );
  }

  patch(t: number, ref: string, patch: ReminderPatch, res: ApiResponse): void {
    this.touch(t);
    const expected = this.expectPatch(t, ref, patch);
    this.log(t, `PATCH reminder ${ref} ${JSON.stringify(patch)} → ${res.status}`);
    const r = this.reminders.get(ref);
    if (!expected.includes(res.status))
      this.violate(
        t,
        'status',
        `PATCH ${ref} answered ${res.status} ${JSON.stringify(res.body?.errors ?? '')}, expected ${expected.join('|')}`,
        r,
      );
    if (res.status !== 200 || !r) return;
    if (patch.title !== undefined) {
      r.title = patch.title;
      r.titles.push({ t, title: patch.title });
    }
    const scheduleChange = this.changesSchedule(r, patch);
    if (patch.localTime !== undefined) r.localTime = patch.localTime;
    if (patch.recurrence !== undefined) r.rule = patch.recurrence;
    if (patch.startDate !== undefined) r.startDate = patch.startDate;
    if (patch.timeZone !== undefined) r.pinnedZone = canonicalZone(patch.timeZone);
    if (patch.enabled === false && r.enabled) {
      r.enabled = false;
      r.enabledHist.push({ t, enabled: false });
      // The pending date is dropped, not settled: an enable before its time owes it again.
      if (r.pending) this.log(t, `[${r.ref}] ${r.pending.date} dropped: disabled before delivery`);
      r.pending = null;
      for (const z of r.snoozes.values()) z.optional = true;
      return;
    }
    if (patch.enabled === true && !r.enabled) {
      r.enabled = true;
      r.enabledHist.push({ t, enabled: true });
      // Enabling plans from now: the chain stands at the last date settled by now; a date settled ahead of
      // now (skipped in advance) is passed over, and the dates before it are owed again.
      r.chainPos = this.settledBy(r, t);
      this.planFromNow(r, t, 'enabled');
      return this.checkNext(t, r, res);
    }
    if (scheduleChange && r.enabled) {
      for (const z of r.snoozes.values()) z.optional = true;
      this.replan(r, t, 'edit');
      this.checkNext(t, r, res);
    }
  }

  remove(t: number, ref: string, res: ApiResponse): void {
    this.touch(t);
    const r = this.reminders.get(ref);
    const expected = !r || r.deleted ? [404] : [204];
    this.log(t, `DELETE reminder ${ref} → ${res.status}`);
    if (!expected.includes(res.status))
      this.violate(t, 'status', `DELETE ${ref} answered ${res.status}, expected ${expected.join('|')}`, r);
    if (!r || res.status !== 204) return;
    r.deleted = true;
    r.deletedAt = t;
    r.pending = null;
    r.snoozes.clear();
  }

  /** The local date an action targets, from the model's state (null: nothing sensible to target). */
  actionDate(t: number, ref: string, target: ActionTarget): string | null {
    const r = this.reminders.get(ref);
    if (!r) return null;
    const dates = this.dates(r);
    switch (target) {
      case 'pending':
        return r.pending?.date ?? dates[firstAfter(dates, todayIn(this.zoneOf(r), t))] ?? null;
      case 'last': {
        let last: string | null = null;
        for (const [d, s] of r.settled)
          if ((s.how === 'sent' || (s.how === 'done' && s.delivered)) && (last === null || d > last)) last = d;
        return last;
      }
      case 'future': {
        const from = r.pending?.date ?? todayIn(this.zoneOf(r), t);
        const i = firstAfter(dates, from);
        return dates[i + 1] ?? dates[i] ?? null;
      }
      case 'invalid': {
        const set = new Set(dates);
        let d = todayIn(this.zoneOf(r), t);
        for (let k = 0; k < 40; k++) {
          if (!set.has(d) && d !== r.startDate) return d;
          d = addDay(d);
        }
        return null;
      }
    }
  }

  private dateState(r: ReminderModel, date: string, t: number): string {
    if (r.pending?.date === date) {
      const a = this.analyze(r.pending);
      return a.lo <= t && !a.mustDeliver ? 'deciding' : 'pending';
    }
    const s = r.settled.get(date);
    if (s) {
      if (s.how === 'sent') return r.snoozes.has(date) ? 'snoozed' : 'sent';
      if (s.how === 'done') return s.delivered ? 'done-after' : 'done-before';
      if (s.how === 'skipped') return s.reasons?.has('user') && s.reasons.size === 1 ? 'skipped-user' : 'skipped-other';
      return s.how;
    }
    if (r.chainPos !== null && date <= r.chainPos) return 'passed';
    return 'future';
  }

  expectAction(t: number, ref: string, kind: ActionKind, date: string, minutes?: number): number[] {
    const r = this.reminders.get(ref);
    if (!r || r.deleted) return [404];
    const produced = new Set(this.dates(r)).has(date);
    // A date an earlier rule produced and that has a record: whether actions still reach it is open.
    if (!produced && !r.settled.has(date)) return [400];
    if (kind === 'snooze' && (minutes === undefined || minutes < 1 || minutes > 1440 || !Number.isInteger(minutes))) return [400];
    const expected = this.expectActionOn(r, kind, date, t);
    return produced ? expected : [...expected, 400];
  }

  private expectActionOn(r: ReminderModel, kind: ActionKind, date: string, t: number): number[] {
    // A snooze would deliver nothing while the reminder is disabled or notifications are off: refused.
    if (kind === 'snooze' && (!r.enabled || !this.state.notif)) return [409];
    if (!r.enabled) return [200, 409];
    const st = this.dateState(r, date, t);
    const table: Record<ActionKind, Record<string, number[]>> = {
      done: {
        pending: [200],
        future: [200],
        sent: [200],
        snoozed: [200],
        'done-before': [200],
        'done-after': [200],
        'skipped-user': [409],
      },
      skip: {
        pending: [200],
        future: [200],
        sent: [409],
        snoozed: [409],
        'done-before': [409],
        'done-after': [409],
        'skipped-user': [200],
      },
      snooze: { pending: [409], future: [409], sent: [200], snoozed: [200], 'done-before': [409], 'skipped-user': [409] },
    };
    return table[kind][st] ?? [200, 409];
  }

  action(t: number, ref: string, kind: ActionKind, date: string, minutes: number | undefined, res: ApiResponse): void {
    this.touch(t);
    const expected = this.expectAction(t, ref, kind, date, minutes);
    const r = this.reminders.get(ref);
    const st = r ? this.dateState(r, date, t) : 'unknown';
    this.log(t, `POST ${ref} ${date}/${kind}${minutes !== undefined ? ` ${minutes} min` : ''} (${st}) → ${res.status}`);
    if (!expected.includes(res.status)) {
      this.violate(
        t,
        'status',
        `${kind} of ${date} (${st}) answered ${res.status} ${res.body?.detail ?? ''}, expected ${expected.join('|')}`,
        r,
        date,
      );
    }
    if (!r || res.status !== 200) return;
    const p = r.pending;
    if (kind === 'done' || kind === 'skip') {
      const how = kind === 'done' ? 'done' : 'skipped';
      const s = r.settled.get(date);
      const delivered = (r.visible.get(date) ?? 0) > 0;
      if (kind === 'done' && s?.how === 'done') return;
      if (kind === 'skip' && s?.how === 'skipped') return;
      if (p?.date === date) {
        if (delivered) return;
        this.settle(
          r,
          date,
          { how, at: t, reasons: kind === 'skip' ? new Set(['user']) : undefined, delivered: false, nominal: p.nominal },
          t,
          `${kind} before delivery`,
        );
        this.chainNext(r, date, t);
        return;
      }
      this.settle(r, date, { how, at: t, reasons: kind === 'skip' ? new Set(['user']) : undefined, delivered, nominal: s?.nominal }, t, '');
      if (kind === 'done') {
        const z = r.snoozes.get(date);
        if (z) z.optional = true;
      }
      return;
    }
    // snooze: one re-delivery at now + minutes (quiet hours apply); a new snooze replaces an open one.
    const at = t + minutes! * MINUTE;
    const due = this.defer(r, at);
    const nn = this.nextNominal(r, date);
    const okState = st === 'sent' || st === 'snoozed';
    r.snoozes.set(date, {
      kind: 'snooze',
      reminder: r,
      date,
      nominal: at,
      cands: [{ due, base: due }],
      optional: !okState,
      plannedAt: t,
      nextNominal: nn,
    });
    this.log(t, `[${r.ref}] snooze ${date} until ${this.local(due)}${okState ? '' : ' (optional)'}`);
  }

  // ——— the end ————————————————————————————————————————————————————

  /** What the API must say about a date now (status, reason), as a predicate and its description. */
  expectedStatus(r: ReminderModel, date: string): { ok: (status: string, reason?: string) => boolean; text: string } | null {
    const s = r.settled.get(date);
    if (!s) {
      if (r.pending?.date === date) {
        return r.pending.optional ? null : { ok: (st) => st === 'scheduled' || st === 'sent', text: 'scheduled (pending)' };
      }
      return null;
    }
    const delivered = (r.visible.get(date) ?? 0) > 0;
    switch (s.how) {
      case 'sent':
        return { ok: (st) => st === 'sent' || st === 'snoozed', text: 'sent or snoozed' };
      case 'done':
        return { ok: (st) => st === 'done', text: 'done' };
      case 'skipped':
        return {
          ok: (st, reason) => st === 'skipped' && (reason === undefined || s.reasons!.has(reason)),
          text: `skipped (${[...s.reasons!].join('|')})`,
        };
      case 'notOwed':
      case 'optional':
        return delivered ? null : { ok: (st) => st !== 'sent' && st !== 'snoozed', text: 'not delivered (any status but sent)' };
      case 'missing':
        return null;
    }
  }
}

export function fmtQuiet(q: QuietHours | null): string {
  return q ? `${q.start}–${q.end}` : 'none';
}

function addDay(date: string): string {
  const d = new Date(`${date}T00:00:00Z`);
  d.setUTCDate(d.getUTCDate() + 1);
  return d.toISOString().slice(0, 10);
}
