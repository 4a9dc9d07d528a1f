import rrulePkg from 'rrule';

// The local dates a reminder's rule produces, expanded by the `rrule` package
// in a floating frame: DTSTART is startDate at midnight "UTC" with no TZID, so
// rrule does date arithmetic only and never sees a zone. Which instant each
// date maps to is the oracle's business (local-time.ts).

const { RRule } = rrulePkg;

const cache = new Map<string, string[]>();

/** Every date the rule produces from startDate up to `horizon` (inclusive), sorted. One-off: [startDate]. */
export function ruleDates(rule: string | null, startDate: string, horizon: string): string[] {
  if (rule === null) return [startDate];
  const key = `${rule}|${startDate}|${horizon}`;
  let dates = cache.get(key);
  if (!dates) {
    const options = RRule.parseString(rule);
    const r = new RRule({ ...options, dtstart: new Date(`${startDate}T00:00:00Z`) });
    dates = r.between(new Date(`${startDate}T00:00:00Z`), new Date(`${horizon}T23:59:59Z`), true).map((d) => d.toISOString().slice(0, 10));
    cache.set(key, dates);
  }
  return dates;
}

export function firstAfter(dates: readonly string[], date: string | null): number {
  if (date === null) return 0;
  let lo = 0;
  let hi = dates.length;
  while (lo < hi) {
    const mid = (lo + hi) >> 1;
    if (dates[mid]! <= date) lo = mid + 1;
    else hi = mid;
  }
  return lo;
}
