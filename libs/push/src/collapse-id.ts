import { createHash } from 'node:crypto';

/** APNs rejects an `apns-collapse-id` longer than this; FCM's collapse key has no smaller limit. */
export const MAX_COLLAPSE_ID_BYTES = 64;

/**
 * The collapse id of a delivery, from its collapse key (`reminder:<id>`,
 * `notification:<key>`) or else its job id: the same key (and the same
 * qualifiers, if a caller needs several pushes per key) always yields the
 * same id, so a retry after a lost answer, or a newer push of the same
 * reminder, replaces the earlier push on the phone instead of showing twice.
 * Ids that would exceed 64 bytes are hashed, keeping them deterministic.
 */
export function collapseIdFor(key: string | number | bigint, ...qualifiers: (string | number)[]): string {
  const plain = ['nudge', String(key), ...qualifiers.map(String)].join(':');
  if (Buffer.byteLength(plain, 'utf8') <= MAX_COLLAPSE_ID_BYTES) return plain;
  return `nudge:h:${createHash('sha256').update(plain).digest('base64url')}`;
}
