import { cursorInstant, decodeCursor, encodeCursor, invalidCursor } from '@nudge/config';

// The order of a user's timeline, newest first: by instant, then occurrences
// before notifications, then by key (an occurrence's `<reminderId>:<localDate>`
// bytewise, a notification's job id numerically). A cursor is the last entry a
// page showed; the next page starts strictly after it in that order.

export type TimelineKind = 'occurrence' | 'notification';

export interface TimelinePosition {
  at: Date;
  kind: TimelineKind;
  key: string;
}

const RANK: Record<TimelineKind, number> = { occurrence: 1, notification: 0 };

/** Negative when `a` comes first (is newer) in the walk. */
export function compareTimeline(a: TimelinePosition, b: TimelinePosition): number {
  if (a.at.getTime() !== b.at.getTime()) return b.at.getTime() - a.at.getTime();
  if (a.kind !== b.kind) return RANK[b.kind] - RANK[a.kind];
  if (a.kind === 'notification') {
    const x = BigInt(a.key);
    const y = BigInt(b.key);
    return x === y ? 0 : x > y ? -1 : 1;
  }
  return a.key === b.key ? 0 : a.key > b.key ? -1 : 1;
}

export function encodeTimelineCursor(position: TimelinePosition): string {
  return encodeCursor([position.at.getTime(), position.kind === 'occurrence' ? 'o' : 'n', position.key]);
}

const OCCURRENCE_KEY = /^[0-9a-f-]{36}:\d{4}-\d{2}-\d{2}$/;
const JOB_ID = /^[1-9]\d{0,18}$/;

export function decodeTimelineCursor(cursor: string): TimelinePosition {
  const [t, k, key] = decodeCursor(cursor, 3);
  const at = typeof t === 'number' ? cursorInstant(t) : null;
  if (at && typeof key === 'string') {
    if (k === 'o' && OCCURRENCE_KEY.test(key)) return { at, kind: 'occurrence', key };
    if (k === 'n' && JOB_ID.test(key)) return { at, kind: 'notification', key };
  }
  throw invalidCursor();
}

/**
 * Where each source's walk resumes, as its own keyset bound (strictly
 * before): the occurrences at the cursor's instant come before its
 * notifications, so a notification cursor leaves none of them and an
 * occurrence cursor leaves every notification of that instant.
 */
export function sourceBounds(position: TimelinePosition): {
  occurrence: { at: Date; key: string };
  notification: { at: Date; jobId: string };
} {
  const { at, kind, key } = position;
  return {
    occurrence: { at, key: kind === 'occurrence' ? key : '' },
    notification: { at, jobId: kind === 'notification' ? key : '9223372036854775807' },
  };
}
