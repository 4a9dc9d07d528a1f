import { createHash } from 'node:crypto';

/** APNs rejects an `apns-collapse-id` longer than this; FCM's collapse key has no smaller limit. */
export const MAX_COLLAPSE_ID_BYTES = 64;

/**
 * The collapse id of a delivery: the same job (and the same qualifiers, if a
 * caller needs several pushes per job) always yields the same id, so a retry
 * after a lost answer replaces the first push on the phone instead of showing
 * twice. Ids that would exceed 64 bytes are hashed, keeping them deterministic.
 */
export function collapseIdFor(jobId: string | number | bigint, ...qualifiers: (string | number)[]): string {
  const plain = ['nudge', String(jobId), ...qualifiers.map(String)].join(':');
  if (Buffer.byteLength(plain, 'utf8') <= MAX_COLLAPSE_ID_BYTES) return plain;
  return `nudge:h:${createHash('sha256').update(plain).digest('base64url')}`;
}
