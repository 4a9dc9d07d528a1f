import { IANAZone } from 'luxon';
import { civilFromDays, DAY_MS, daysFromCivil, floorDiv, formatLocalIso } from './calendar.js';
import { Lru } from './lru.js';
import { fail, ok, type Result } from './result.js';

const HOUR_MS = 3_600_000;

// Offsets come from luxon (which reads the ICU tz database through Intl).
// One luxon lookup costs ~5-10 µs, so a (zone, UTC year) that is asked often
// is probed once (365 daily probes) into a table of its transitions, after
// which lookups are a short scan. A year asked only a few times (a yearly
// rule lists one date per year) is answered by luxon directly until it has
// cost as many lookups as its table would: at most twice the cheaper of the
// two, and results are the same either way.

interface YearTable {
  initial: number; // offset in ms at the start of the year
  at: number[]; // transition instants, ascending
  offsets: number[]; // offset in ms from the matching transition on
}

interface ZoneData {
  zone: IANAZone;
  years: Map<number, YearTable | number>; // a table, or the direct lookups made so far
  // The last few direct lookups: an occurrence's instant is looked up again
  // to format it, and the next query (after that instant) starts by
  // resolving the same occurrence again.
  recentAt: number[];
  recentOffset: number[];
  recentNext: number;
}
const RECENT = 4;

const zones = new Map<string, ZoneData>();
let entryCount = 0;
const MAX_ENTRIES = 20_000; // ~100 bytes each; clearing now and then is cheaper than an LRU here
const TABLE_AFTER = 365; // direct lookups in one (zone, year) before its table is built

const luxonOffsetMs = (zone: IANAZone, ts: number): number => Math.round(zone.offset(ts) * 60_000);

function buildYearTable(zone: IANAZone, year: number): YearTable {
  const start = daysFromCivil(year, 1, 1) * DAY_MS;
  const end = daysFromCivil(year + 1, 1, 1) * DAY_MS;
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

function zoneData(zone: string): ZoneData {
  let data = zones.get(zone);
  if (!data) {
    if (!IANAZone.isValidZone(zone)) throw new RangeError(`unknown time zone "${zone}"`);
    data = {
      zone: IANAZone.create(zone),
      years: new Map(),
      recentAt: new Array<number>(RECENT).fill(NaN),
      recentOffset: new Array<number>(RECENT).fill(0),
      recentNext: 0,
    };
    zones.set(zone, data);
  }
  return data;
}

/** The zone's UTC offset in milliseconds at an instant. */
export function offsetAt(zone: string, instantMs: number): number {
  if (zone === 'UTC') return 0;
  const data = zoneData(zone);
  const year = civilFromDays(floorDiv(instantMs, DAY_MS)).year;
  const entry = data.years.get(year);
  if (typeof entry === 'object') {
    let offset = entry.initial;
    for (let i = 0; i < entry.at.length && instantMs >= entry.at[i]!; i++) offset = entry.offsets[i]!;
    return offset;
  }
  if (entry === undefined && ++entryCount > MAX_ENTRIES) {
    zones.clear();
    entryCount = 0;
    return offsetAt(zone, instantMs);
  }
  const recent = data.recentAt.indexOf(instantMs);
  if (recent >= 0) return data.recentOffset[recent]!;
  const lookups = (entry ?? 0) + 1;
  if (lookups < TABLE_AFTER) {
    data.years.set(year, lookups);
    const offset = luxonOffsetMs(data.zone, instantMs);
    data.recentAt[data.recentNext] = instantMs;
    data.recentOffset[data.recentNext] = offset;
    data.recentNext = (data.recentNext + 1) % RECENT;
    return offset;
  }
  data.years.set(year, buildYearTable(data.zone, year));
  return offsetAt(zone, instantMs);
}

// ---- Local dates that do not exist -----------------------------------------

// When a zone moves across the date line eastwards its wall clock jumps a
// whole day: Pacific/Apia went from 2011-12-29 23:59:59 (UTC-10) straight to
// 2011-12-31 00:00 (UTC+14), so no instant there is on 2011-12-30. Such a jump
// (24 hours or more) shows as a net change of at least 12 hours between two
// New Year's offsets (other transitions in a year are DST-sized), so each
// UTC year costs one luxon lookup, and only a flagged year is bisected to
// the jump. Years are probed 16 at a time, 1899 to 2100: tzdata describes the
// years after its last change only by repeating each zone's current rules,
// which never move it across the date line.
const SKIP_BLOCK_YEARS = 16;
const LAST_PROBED_YEAR = 2100;
const skipped = new Map<string, Map<number, number[]>>();

function skippedInBlock(zone: string, block: number): number[] {
  let byBlock = skipped.get(zone);
  if (!byBlock) {
    if (skipped.size >= 1000) skipped.clear();
    byBlock = new Map();
    skipped.set(zone, byBlock);
  }
  let days = byBlock.get(block);
  if (days) return days;
  days = [];
  const z = zoneData(zone).zone;
  const firstYear = Math.max(block * SKIP_BLOCK_YEARS, 1899);
  const endYear = Math.min((block + 1) * SKIP_BLOCK_YEARS, LAST_PROBED_YEAR + 1);
  let start = daysFromCivil(firstYear, 1, 1) * DAY_MS;
  let startOffset = firstYear < endYear ? luxonOffsetMs(z, start) : 0;
  for (let year = firstYear; year < endYear; year++) {
    const end = daysFromCivil(year + 1, 1, 1) * DAY_MS;
    const endOffset = luxonOffsetMs(z, end);
    if (endOffset - startOffset >= 12 * HOUR_MS) {
      // Bisect to the second where the offset first reaches startOffset + 12 h.
      let lo = start;
      let hi = end;
      while (hi - lo > 1000) {
        const mid = lo + Math.floor((hi - lo) / 2000) * 1000;
        if (luxonOffsetMs(z, mid) - startOffset >= 12 * HOUR_MS) hi = mid;
        else lo = mid;
      }
      // The wall clock jumps from hi + before to hi + after: the local dates
      // wholly inside that range are never shown.
      const before = luxonOffsetMs(z, hi - 1000);
      const after = luxonOffsetMs(z, hi);
      for (let day = Math.ceil((hi + before) / DAY_MS); (day + 1) * DAY_MS <= hi + after; day++) days.push(day);
    }
    start = end;
    startOffset = endOffset;
  }
  byBlock.set(block, days);
  return days;
}

/**
 * The local dates (epoch days) in [fromDay, toDay] that no instant in the zone
 * has, ascending: only days a date-line move skipped, such as 2011-12-30 in
 * Pacific/Apia. An ordinary DST gap removes an hour, never a date.
 */
export function missingLocalDays(zone: string, fromDay: number, toDay: number): number[] {
  if (zone === 'UTC' || toDay < fromDay) return [];
  // A skipped date's jump happens within a day of it (offsets are under 15 h).
  const firstYear = civilFromDays(fromDay - 2).year;
  const lastYear = Math.min(civilFromDays(toDay + 2).year, LAST_PROBED_YEAR);
  const out: number[] = [];
  for (let block = floorDiv(firstYear, SKIP_BLOCK_YEARS); block <= floorDiv(lastYear, SKIP_BLOCK_YEARS); block++) {
    for (const day of skippedInBlock(zone, block)) if (day >= fromDay && day <= toDay) out.push(day);
  }
  return out;
}

/** True when no instant in the zone falls on this local date (epoch days). */
export const isMissingLocalDay = (zone: string, day: number): boolean => missingLocalDays(zone, day, day).length > 0;

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

// Zones IANA renamed whose old name CLDR keeps as its canonical id, so ICU
// (and Intl on Node 20: resolvedOptions().timeZone, supportedValuesOf) answers
// with the old one. From the renames in IANA's `backward` file ("Link
// Asia/Kolkata Asia/Calcutta"); the same list as the `iana` attribute of
// CLDR's bcp47/timezone.xml. Zones IANA merged into another with the same
// clocks since 1970 (Europe/Amsterdam into Europe/Brussels) are not renames
// and keep their own name, as in CLDR and ECMA-402.
const IANA_RENAMES: Readonly<Record<string, string>> = {
  'Africa/Asmera': 'Africa/Asmara',
  'America/Buenos_Aires': 'America/Argentina/Buenos_Aires',
  'America/Catamarca': 'America/Argentina/Catamarca',
  'America/Coral_Harbour': 'America/Atikokan',
  'America/Cordoba': 'America/Argentina/Cordoba',
  'America/Godthab': 'America/Nuuk',
  'America/Indianapolis': 'America/Indiana/Indianapolis',
  'America/Jujuy': 'America/Argentina/Jujuy',
  'America/Louisville': 'America/Kentucky/Louisville',
  'America/Mendoza': 'America/Argentina/Mendoza',
  'Asia/Calcutta': 'Asia/Kolkata',
  'Asia/Katmandu': 'Asia/Kathmandu',
  'Asia/Rangoon': 'Asia/Yangon',
  'Asia/Saigon': 'Asia/Ho_Chi_Minh',
  'Atlantic/Faeroe': 'Atlantic/Faroe',
  'Europe/Kiev': 'Europe/Kyiv',
  'Pacific/Enderbury': 'Pacific/Kanton',
  'Pacific/Ponape': 'Pacific/Pohnpei',
  'Pacific/Truk': 'Pacific/Chuuk',
};

/**
 * Accepts IANA region names (America/New_York, Asia/Kolkata, …) and UTC /
 * Etc/UTC. Rejects fixed offsets (-06:00, UTC+3, Etc/GMT+3), abbreviations
 * (EST) and POSIX-style legacy names (CST6CDT): a reminder should follow the
 * user's region through its DST changes. Returns the zone's canonical name
 * (see canonicalTimeZone).
 */
export function validateTimeZone(zone: string): Result<string> {
  if (typeof zone !== 'string' || zone.length === 0) return fail('time zone is required');
  // Checking a name builds an Intl.DateTimeFormat (~100 µs): remember answers.
  return validated.get(zone) ?? validated.set(zone, checkTimeZone(zone));
}

/**
 * The canonical name of a zone validateTimeZone accepts, null for one it
 * refuses: the IANA primary name with its case fixed, whatever alias or link
 * was given (asia/calcutta → Asia/Kolkata, US/Eastern → America/New_York,
 * Europe/Kiev → Europe/Kyiv), and UTC for UTC and Etc/UTC. Two spellings of
 * one zone give the same string. Memoised.
 */
export function canonicalTimeZone(zone: string): string | null {
  const result = validateTimeZone(zone);
  return result.ok ? result.value : null;
}

const validated = new Lru<string, Result<string>>(1000);

function checkTimeZone(zone: string): Result<string> {
  if (zone === 'UTC' || zone === 'Etc/UTC') return ok('UTC');
  const hint = 'use an IANA region name such as "America/New_York" (or "UTC")';
  if (zone.length > 64 || !REGION_NAME.test(zone) || /^etc\//i.test(zone)) {
    return fail(`"${zone}" is not an IANA region time zone; ${hint}`);
  }
  if (!IANAZone.isValidZone(zone)) return fail(`unknown time zone "${zone}"; ${hint}`);
  // ICU resolves links and fixes the case, but answers with CLDR's id.
  const id = new Intl.DateTimeFormat('en-US', { timeZone: zone }).resolvedOptions().timeZone;
  const renamed = IANA_RENAMES[id];
  // An ICU too old to know the new name keeps its own id.
  return ok(renamed !== undefined && IANAZone.isValidZone(renamed) ? renamed : id);
}

/** An instant as ISO-8601 in the zone, with the offset in force then (the `local` of an Occurrence). */
export function localIsoAt(zone: string, instant: Date): string {
  const ms = instant.getTime();
  return formatLocalIso(ms, offsetAt(zone, ms));
}
