import { describe, expect, it } from 'vitest';
import { DomainError } from '@nudge/config';
import { compareTimeline, decodeTimelineCursor, encodeTimelineCursor, sourceBounds, type TimelinePosition } from './timeline-cursor.js';

const at = new Date('2027-03-04T12:00:00.000Z');
const occurrence = (key: string, when = at): TimelinePosition => ({ at: when, kind: 'occurrence', key });
const notification = (key: string, when = at): TimelinePosition => ({ at: when, kind: 'notification', key });
const R1 = '0b6f1c1e-58a0-4a43-9d57-2f4f1f1f1f1f:2027-03-04';
const R2 = 'f0000000-58a0-4a43-9d57-2f4f1f1f1f1f:2027-03-04';

describe('the timeline order and its cursor', () => {
  it('orders newest first, occurrences before notifications at one instant, then by key descending', () => {
    const older = notification('999', new Date(at.getTime() - 1));
    const entries = [older, notification('9'), occurrence(R1), notification('10'), occurrence(R2)];
    expect(entries.sort(compareTimeline)).toEqual([occurrence(R2), occurrence(R1), notification('10'), notification('9'), older]);
  });

  it('round-trips a position through its cursor', () => {
    for (const position of [occurrence(R1), notification('9223372036854775807')]) {
      expect(decodeTimelineCursor(encodeTimelineCursor(position))).toEqual(position);
    }
  });

  it('refuses cursors it did not hand out with a 400-kind error naming the field', () => {
    const bad = [
      'nope',
      '',
      Buffer.from('[1,"o","not-a-key"]').toString('base64url'),
      Buffer.from('[1,"n","01"]').toString('base64url'),
      Buffer.from('["1","n","1"]').toString('base64url'),
      Buffer.from('[1e300,"n","1"]').toString('base64url'),
      Buffer.from('{"t":1}').toString('base64url'),
    ];
    for (const cursor of bad) {
      const error = (() => {
        try {
          decodeTimelineCursor(cursor);
        } catch (e) {
          return e;
        }
        return null;
      })();
      expect(error, cursor).toBeInstanceOf(DomainError);
      expect((error as DomainError).code).toBe('invalid_input');
      expect((error as DomainError).errors?.[0]?.path).toBe('cursor');
    }
  });

  it('resumes each source where the cursor leaves it at a tie', () => {
    // After an occurrence: the rest of that instant's occurrences, and every notification of it.
    expect(sourceBounds(occurrence(R1))).toEqual({
      occurrence: { at, key: R1 },
      notification: { at, jobId: '9223372036854775807' },
    });
    // After a notification: no occurrence of that instant (all came before), the lower job ids.
    expect(sourceBounds(notification('42'))).toEqual({ occurrence: { at, key: '' }, notification: { at, jobId: '42' } });
  });
});
