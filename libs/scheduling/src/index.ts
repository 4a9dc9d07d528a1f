export { type Result, SchedulingError } from './result.js';
export { type CivilDate, type LocalTime, parseLocalDate, parseLocalTime } from './calendar.js';
export { canonicalTimeZone, validateTimeZone, localToInstant, localCandidates, localIsoAt, offsetAt } from './time-zone.js';
export { type Frequency, type Recurrence, type Until, type WeekdaySpec, MAX_COUNT, MAX_INTERVAL, parseRecurrence } from './rrule-subset.js';
export { type Occurrence, type Schedule, isLocalDateOf, nextOccurrence, occurrences, validateSchedule } from './next-occurrence.js';
export { type QuietHours, isInQuietHours, quietHoursEnd, validateQuietHours } from './quiet-hours.js';
export { jitterFor } from './jitter.js';
