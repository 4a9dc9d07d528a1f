import { DateTime } from 'luxon';

// Local-time arithmetic for the oracle, written apart from libs/scheduling:
// luxon only answers "what is the UTC offset of this zone at this instant";
// the rules (DST gap → shifted forward by the gap, overlap → the first
// reading, quiet hours with an inclusive start and exclusive end that may
// cross midnight) are spelled out here from SPEC §5.

export const MINUTE = 60_000;
export const HOUR = 60 * MINUTE;
export const DAY = 24 * HOUR;

/** The zone's UTC offset at `ms`, in minutes. */
export function offsetAt(zone: string, ms: number): number {
  return DateTime.fromMillis(ms, { zone }).offset;
}

export interface LocalParts {
  date: string; // YYYY-MM-DD
  /** Minutes since local midnight, with seconds as a fraction. */
  minuteOfDay: number;
}

export function localParts(zone: string, ms: number): LocalParts {
  const wall = ms + offsetAt(zone, ms) * MINUTE;
  const d = new Date(wall);
  return {
    date: d.toISOString().slice(0, 10),
    minuteOfDay: d.getUTCHours() * 60 + d.getUTCMinutes() + d.getUTCSeconds() / 60 + d.getUTCMilliseconds() / 60_000,
  };
}

/** "2027-03-14 03:30:00 -04:00" */
export function formatLocal(zone: string, ms: number): string {
  const off = offsetAt(zone, ms);
  const wall = new Date(ms + off * MINUTE).toISOString();
  const sign = off < 0 ? '-' : '+';
  const abs = Math.abs(off);
  return `${wall.slice(0, 10)} ${wall.slice(11, 19)} ${sign}${String(Math.floor(abs / 60)).padStart(2, '0')}:${String(abs % 60).padStart(2, '0')}`;
}

export function minutesOf(hhmm: string): number {
  const [h, m] = hhmm.split(':').map(Number);
  return h! * 60 + m!;
}

export function addDays(date: string, days: number): string {
  const d = new Date(`${date}T00:00:00Z`);
  d.setUTCDate(d.getUTCDate() + days);
  return d.toISOString().slice(0, 10);
}

/**
 * The instant of a local date and wall time in a zone. A wall time that
 * happens twice (fall back) resolves to the first; one that does not exist
 * (spring forward) is read with the offset from before the change, i.e.
 * shifted forward by the gap (02:30 in a 02:00→03:00 gap → 03:30).
 */
export function resolveLocal(zone: string, date: string, hhmm: string): number {
  const wallUtc = Date.parse(`${date}T${hhmm}:00Z`);
  const offsets = new Set<number>();
  for (const probe of [-30, -14, -6, 0, 6, 14, 30]) offsets.add(offsetAt(zone, wallUtc + probe * HOUR));
  const candidates = [...offsets]
    .map((off) => wallUtc - off * MINUTE)
    .filter((ms) => offsetAt(zone, ms) * MINUTE === wallUtc - ms)
    .sort((a, b) => a - b);
  if (candidates.length > 0) return candidates[0]!;
  // In a gap: the offset before the change is the smaller one.
  return wallUtc - Math.min(...offsets) * MINUTE;
}

export interface QuietHours {
  start: string;
  end: string;
}

export function inQuietHours(quiet: QuietHours | null, zone: string, ms: number): boolean {
  if (!quiet || quiet.start === quiet.end) return false;
  const m = localParts(zone, ms).minuteOfDay;
  const s = minutesOf(quiet.start);
  const e = minutesOf(quiet.end);
  return s < e ? m >= s && m < e : m >= s || m < e;
}

/** The end of the quiet window that contains `ms` (call only when inside one). */
export function quietWindowEnd(quiet: QuietHours, zone: string, ms: number): number {
  const { date, minuteOfDay } = localParts(zone, ms);
  const e = minutesOf(quiet.end);
  const endDate = minuteOfDay < e ? date : addDays(date, 1);
  return resolveLocal(zone, endDate, quiet.end);
}

/** The earliest instant at or after `ms` outside quiet hours (`ms` itself when not quiet). */
export function deferPastQuiet(quiet: QuietHours | null, zone: string, ms: number): number {
  return inQuietHours(quiet, zone, ms) ? quietWindowEnd(quiet!, zone, ms) : ms;
}

export function todayIn(zone: string, ms: number): string {
  return localParts(zone, ms).date;
}

export function iso(ms: number): string {
  return new Date(ms).toISOString();
}
