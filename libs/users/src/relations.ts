// Read-only relations of the users lib's tables for another lib's statement
// to join (push's deliverMany, the reminders' batch reads), so that a hot
// path keeps its one statement while only this lib names `devices` and
// `users`. Each is a plain subquery, which PostgreSQL pulls up into the
// caller's join: the plan is the one a direct join would get. The columns
// listed are what this lib promises; writes go through its functions.

/** A device: `active` false once a provider rejected its token. */
export const DEVICES = `(SELECT id, user_id, installation_id, platform, push_token, locale, app_id, active, created_at FROM devices)`;

/** A user's delivery settings: language, zone, quiet hours, the off switch. */
export const USER_SETTINGS = `(SELECT id, locale, time_zone, quiet_hours_start, quiet_hours_end, notifications_enabled FROM users)`;
