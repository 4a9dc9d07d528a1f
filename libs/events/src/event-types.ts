// The events Nudge announces (docs/webhooks.md says what each one's data holds).
export const EVENT_TYPES = [
  'delivery.sent',
  'delivery.failed',
  'delivery.invalid_token',
  'device.deactivated',
  'occurrence.skipped',
  'occurrence.done',
  'occurrence.snoozed',
  'notification.skipped',
] as const;

export type EventType = (typeof EVENT_TYPES)[number];

/** A webhook subscribed to `*` gets every type, present and future. */
export const ALL_EVENTS = '*';

/** One state change to announce, in the transaction that makes it. */
export interface NewEvent {
  type: EventType;
  /** The user it concerns, when there is one (the feed and the ops views filter on it). */
  userId: string | null;
  data: Record<string, unknown>;
}

/** An event as the feed and the webhook POSTs carry it. */
export interface EventRecord {
  id: string;
  type: string;
  createdAt: Date;
  userId: string | null;
  data: Record<string, unknown>;
}
