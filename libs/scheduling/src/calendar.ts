import { fail, ok, type Result } from './result.js';

// Dates are handled as "epoch days" (days since 1970-01-01) and local
// wall-clock date-times as "floating" milliseconds: the wall clock read as if
// it were UTC. Integer arithmetic only, so nothing depends on the process TZ.

export const MINUTE_MS = 60_000;
export const DAY_MS = 86_400_000;

export const floorDiv = (a: number, b: number): number => Math.floor(a / b);
export const mod = (a: number, b: number): number => ((a % b) + b) % b;

export interface CivilDate {
  year: number;
  month: number; // 1..12
  day: number;
}

export interface LocalTime {
  hour: number;
  minute: number;
}

// Howard Hinnant's days_from_civil / civil_from_days (proleptic Gregorian).
export function daysFromCivil(year: number, month: number, day: number): number {
  const y = month <= 2 ? year - 1 : year;
  const era = Math.floor(y / 400);
  const yoe = y - era * 400;
  const mp = (month + 9) % 12;
  const doy = Math.floor((153 * mp + 2) / 5) + day - 1;
  const doe = yoe * 365 + Math.floor(yoe / 4) - Math.floor(yoe / 100) + doy;
  return era * 146097 + doe - 719468;
}

export function civilFromDays(days: number): CivilDate {
  const z = days + 719468;
  const era = Math.floor(z / 146097);
  const doe = z - era * 146097;
  const yoe = Math.floor((doe - Math.floor(doe / 1460) + Math.floor(doe / 36524) - Math.floor(doe / 146096)) / 365);
  const doy = doe - (365 * yoe + Math.floor(yoe / 4) - Math.floor(yoe / 100));
  const mp = Math.floor((5 * doy + 2) / 153);
  const day = doy - Math.floor((153 * mp + 2) / 5) + 1;
  const month = mp < 10 ? mp + 3 : mp - 9;
  return { year: yoe + era * 400 + (month <= 2 ? 1 : 0), month, day };
}

/** ISO weekday with Monday = 0 … Sunday = 6 (rrule's numbering). */
export const weekdayOf = (days: number): number => mod(days + 3, 7); // 1970-01-01 was a Thursday

export const isLeapYear = (y: number): boolean => (y % 4 === 0 && y % 100 !== 0) || y % 400 === 0;

export function daysInMonth(year: number, month: number): number {
  if (month === 2) return isLeapYear(year) ? 29 : 28;
  return month === 4 || month === 6 || month === 9 || month === 11 ? 30 : 31;
}

const pad2 = (n: number): string => (n < 10 ? '0' : '') + n;
const pad3 = (n: number): string => (n < 10 ? '00' : n < 100 ? '0' : '') + n;

export function formatDate(days: number): string {
  const { year, month, day } = civilFromDays(days);
  return `${String(year).padStart(4, '0')}-${pad2(month)}-${pad2(day)}`;
}

/** ISO-8601 with millis and a ±HH:MM offset (never `Z`), e.g. 2026-03-08T03:30:00.000-04:00. */
export function formatLocalIso(instantMs: number, offsetMs: number): string {
  const wall = instantMs + offsetMs;
  const days = floorDiv(wall, DAY_MS);
  const msOfDay = wall - days * DAY_MS;
  const offMin = Math.round(offsetMs / MINUTE_MS);
  const absMin = Math.abs(offMin);
  return (
    `${formatDate(days)}T${pad2(Math.floor(msOfDay / 3_600_000))}:${pad2(Math.floor(msOfDay / MINUTE_MS) % 60)}` +
    `:${pad2(Math.floor(msOfDay / 1000) % 60)}.${pad3(msOfDay % 1000)}` +
    `${offMin < 0 ? '-' : '+'}${pad2(Math.floor(absMin / 60))}:${pad2(absMin % 60)}`
  );
}

const LOCAL_DATE = /^(\d{4})-(\d{2})-(\d{2})$/;
const LOCAL_TIME = /^([01]\d|2[0-3]):([0-5]\d)$/;

/** A real calendar date written YYYY-MM-DD, years 1900..9999. */
export function parseLocalDate(value: string): Result<CivilDate> {
  const m = typeof value === 'string' ? LOCAL_DATE.exec(value) : null;
  if (!m) return fail(`"${String(value)}" is not a date in YYYY-MM-DD form`);
  const year = Number(m[1]);
  const month = Number(m[2]);
  const day = Number(m[3]);
  if (year < 1900) return fail(`"${value}": the year must be 1900 or later`);
  if (month < 1 || month > 12 || day < 1 || day > daysInMonth(year, month)) {
    return fail(`"${value}" is not a real calendar date`);
  }
  return ok({ year, month, day });
}

/** A wall-clock time written HH:mm, 00:00..23:59, exactly two digits each. */
export function parseLocalTime(value: string): Result<LocalTime> {
  const m = typeof value === 'string' ? LOCAL_TIME.exec(value) : null;
  if (!m) return fail(`"${String(value)}" is not a time in HH:mm form (00:00 to 23:59)`);
  return ok({ hour: Number(m[1]), minute: Number(m[2]) });
}
