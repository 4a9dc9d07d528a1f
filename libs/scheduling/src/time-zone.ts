import { IANAZone } from 'luxon';
import { civilFromDays, DAY_MS, floorDiv, formatLocalIso } from './calendar.js';
import { Lru } from './lru.js';
import { fail, ok, type Result } from './result.js';

// Offsets come from luxon (which reads the ICU tz database through Intl),
// but one luxon lookup costs ~5 µs, so each (zone, UTC year) is probed once
// and its transitions kept in a table; lookups after that are a short scan.

interface YearTable {
  initial: number; // offset in ms at the start of the year
  at: number[]; // transition instants, ascending
  offsets: number[]; // offset in ms from the matching transition on
}

const tables = new Map<string, Map<number, YearTable>>();
let tableCount = 0;
const MAX_TABLES = 20_000; // ~100 bytes each; clearing now and then is cheaper than an LRU here

const luxonOffsetMs = (zone: IANAZone, ts: number): number => Math.round(zone.offset(ts) * 60_000);

function buildYearTable(zone: IANAZone, year: number): YearTable {
  const start = Date.UTC(year, 0, 1);
  const end = Date.UTC(year + 1, 0, 1);
  const table: YearTable = { initial: luxonOffsetMs(zone, start), at: [], offsets: [] };
  let prev = table.initial;
  // Daily probes: real zones never change offset twice within a day.
  for (let probe = start + DAY_MS; probe <= end; probe += DAY_MS) {
    const cur = luxonOffsetMs(zone, probe);
    let lo = probe - DAY_MS;
    let loOff = prev;
    while (loOff !== cur) {
      // Bisect to the second: tz transitions fall on whole seconds.
      let hi = probe;
      while (hi - lo > 1000) {
        const mid = lo + Math.floor((hi - lo) / 2000) * 1000;
        if (luxonOffsetMs(zone, mid) === loOff) lo = mid;
        else hi = mid;
      }
      const hiOff = luxonOffsetMs(zone, hi);
      if (hi < end) {
        table.at.push(hi);
        table.offsets.push(hiOff);
      }
      lo = hi;
      loOff = hiOff;
    }
    prev = cur;
  }
  return table;
}

function tablesFor(zone: string): Map<number, YearTable> {
  let byYear = tables.get(zone);
  if (!byYear) {
    if (!IANAZone.isValidZone(zone)) throw new RangeError(`unknown time zone "${zone}"`);
    byYear = new Map();
    tables.set(zone, byYear);
  }
  return byYear;
}

/** The zone's UTC offset in milliseconds at an instant. */
export function offsetAt(zone: string, instantMs: number): number {
  const byYear = tablesFor(zone);
  const year = civilFromDays(floorDiv(instantMs, DAY_MS)).year;
  let table = byYear.get(year);
  if (!table) {
    if (++tableCount > MAX_TABLES) {
      tables.clear();
      tableCount = 1;
      return offsetAt(zone, instantMs);
    }
    table = buildYearTable(IANAZone.create(zone), year);
    byYear.set(year, table);
  }
  let offset = table.initial;
  for (let i = 0; i < table.at.length && instantMs >= table.at[i]!; i++) offset = table.offsets[i]!;
  return offset;
}

/**
 * Every instant whose wall clock in `zone` reads `floatingMs` (a local
 * date-time written as if it were UTC), earliest first: one normally, two in a
 * fall-back overlap, none in a spring-forward gap.
 */
export function localCandidates(zone: string, floatingMs: number): number[] {
  // The offsets a day either side bracket any single transition near this
  // wall-clock time, whatever the zone's offset (always < 1 day).
  const before = offsetAt(zone, floatingMs - DAY_MS);
  const after = offsetAt(zone, floatingMs + DAY_MS);
  const out: number[] = [];
  for (const offset of before === after ? [before] : [before, after]) {
    const t = floatingMs - offset;
    if (offsetAt(zone, t) === offset) out.push(t);
  }
  return out.sort((a, b) => a - b);
}

/**
 * The instant a local wall-clock time runs at (SPEC §5): in a fall-back
 * overlap the first (earlier) instant; in a spring-forward gap the same wall
 * clock shifted forward by the gap, i.e. read with the offset in force before
 * the transition (02:30 in a 02:00→03:00 gap runs at 03:30). This is chosen
 * here explicitly rather than left to luxon, whose choice is not documented.
 */
export function localToInstant(zone: string, floatingMs: number): number {
  const candidates = localCandidates(zone, floatingMs);
  if (candidates.length > 0) return candidates[0]!;
  return floatingMs - offsetAt(zone, floatingMs - DAY_MS);
}

/** The wall clock (floating ms) in `zone` at an instant. */
export const instantToLocal = (zone: string, instantMs: number): number => instantMs + offsetAt(zone, instantMs);

const REGION_NAME = /^[A-Za-z][A-Za-z0-9_+-]*(?:\/[A-Za-z0-9_+-]+)+$/;
let canonicalNames: Map<string, string> | undefined;

/**
 * Accepts IANA region names (America/New_York, Asia/Kolkata, …) and UTC /
 * Etc/UTC. Rejects fixed offsets (-06:00, UTC+3, Etc/GMT+3), abbreviations
 * (EST) and POSIX-style legacy names (CST6CDT): a reminder should follow the
 * user's region through its DST changes. Returns the canonically cased name.
 */
export function validateTimeZone(zone: string): Result<string> {
  if (typeof zone !== 'string' || zone.length === 0) return fail('time zone is required');
  // Checking a name builds an Intl.DateTimeFormat (~100 µs): remember answers.
  return validated.get(zone) ?? validated.set(zone, checkTimeZone(zone));
}

const validated = new Lru<string, Result<string>>(1000);

function checkTimeZone(zone: string): Result<string> {
  if (zone === 'UTC' || zone === 'Etc/UTC') return ok(zone);
  const hint = 'use an IANA region name such as "America/New_York" (or "UTC")';
  if (zone.length > 64 || !REGION_NAME.test(zone) || /^etc\//i.test(zone)) {
    return fail(`"${zone}" is not an IANA region time zone; ${hint}`);
  }
  if (!IANAZone.isValidZone(zone)) return fail(`unknown time zone "${zone}"; ${hint}`);
  canonicalNames ??= new Map(Intl.supportedValuesOf('timeZone').map((z) => [z.toLowerCase(), z]));
  return ok(canonicalNames.get(zone.toLowerCase()) ?? zone);
}

/** An instant as ISO-8601 in the zone, with the offset in force then (the `local` of an Occurrence). */
export function localIsoAt(zone: string, instant: Date): string {
  const ms = instant.getTime();
  return formatLocalIso(ms, offsetAt(zone, ms));
}
