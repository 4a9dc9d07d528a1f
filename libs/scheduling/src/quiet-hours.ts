import { DAY_MS, floorDiv, MINUTE_MS, parseLocalTime } from './calendar.js';
import { fail, ok, unwrap, type Result } from './result.js';
import { localCandidates, localToInstant, offsetAt, validateTimeZone } from './time-zone.js';

/** A daily window in the user's zone; may cross midnight; start == end is an empty window. */
export interface QuietHours {
  start: string; // HH:mm, inclusive
  end: string; // HH:mm, exclusive
}

export function validateQuietHours(window: QuietHours): Result<QuietHours> {
  const errors = [...prefixed('start', parseLocalTime(window?.start)), ...prefixed('end', parseLocalTime(window?.end))];
  return errors.length > 0 ? fail(...errors) : ok(window);
}

function prefixed(field: string, result: Result<unknown>): string[] {
  return result.ok ? [] : result.errors.map((e) => `${field}: ${e}`);
}

function minutes(value: string): number {
  const t = unwrap(parseLocalTime(value));
  return t.hour * 60 + t.minute;
}

function checkZone(zone: string): void {
  unwrap(validateTimeZone(zone));
}

// Quiet hours are read off the wall clock, so both passes through a
// fall-back hour count, and a gap simply skips part of the window.
function localMinute(zone: string, instantMs: number): { day: number; minute: number } {
  const wall = instantMs + offsetAt(zone, instantMs);
  const day = floorDiv(wall, DAY_MS);
  return { day, minute: Math.floor((wall - day * DAY_MS) / MINUTE_MS) };
}

export function isInQuietHours(window: QuietHours, zone: string, instant: Date): boolean {
  checkZone(zone);
  const start = minutes(window.start);
  const end = minutes(window.end);
  if (start === end) return false;
  const { minute } = localMinute(zone, instant.getTime());
  return start < end ? minute >= start && minute < end : minute >= start || minute < end;
}

/**
 * When the window that `instant` falls in ends: the next local `end` time,
 * resolved like an occurrence (a gap shifts it forward by the gap; in an
 * overlap the first pass that is still ahead of `instant`). Returns `instant`
 * itself when it is not in quiet hours.
 */
export function quietHoursEnd(window: QuietHours, zone: string, instant: Date): Date {
  if (!isInQuietHours(window, zone, instant)) return instant;
  const end = minutes(window.end);
  const instantMs = instant.getTime();
  const { day, minute } = localMinute(zone, instantMs);
  // Before `end` on the wall clock: it ends today; otherwise the window
  // crossed midnight and ends tomorrow.
  const endDay = minute < end ? day : day + 1;
  const floating = endDay * DAY_MS + end * MINUTE_MS;
  // In the second pass through an overlap the first `end` is already behind us.
  const ahead = localCandidates(zone, floating).find((t) => t > instantMs);
  return new Date(ahead ?? Math.max(localToInstant(zone, floating), instantMs));
}
