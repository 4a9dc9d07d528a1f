/**
 * Reads an HTTP Retry-After value, either delay-seconds or an HTTP-date, as
 * whole seconds from `now`. Anything unreadable yields undefined, so the queue
 * falls back to its own backoff.
 */
export function parseRetryAfter(value: string | string[] | number | undefined, now: Date): number | undefined {
  if (Array.isArray(value)) value = value[0];
  if (value === undefined || value === '') return undefined;
  const text = String(value).trim();
  if (/^\d+$/.test(text)) return Number(text);
  // An HTTP-date always names the day and month; Date.parse alone would read '-5' as a year.
  if (!/[a-z]/i.test(text)) return undefined;
  const at = Date.parse(text);
  if (Number.isNaN(at)) return undefined;
  return Math.max(0, Math.ceil((at - now.getTime()) / 1000));
}
