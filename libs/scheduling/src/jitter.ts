// Deterministic spread for a reminder's occurrence: the same reminder and
// local date always get the same offset, so a re-enqueue (sweep, retry)
// lands on the same instant instead of drawing a new one.

function fnv1a32(text: string): number {
  let h = 0x811c9dc5;
  for (let i = 0; i < text.length; i++) {
    h ^= text.charCodeAt(i);
    h = Math.imul(h, 0x01000193);
  }
  // murmur3's finaliser: FNV alone leaves similar ids with similar high bits.
  h ^= h >>> 16;
  h = Math.imul(h, 0x85ebca6b);
  h ^= h >>> 13;
  h = Math.imul(h, 0xc2b2ae35);
  h ^= h >>> 16;
  return h >>> 0;
}

/** Whole seconds in [0, spreadSeconds); 0 when the spread is 0. */
export function jitterFor(reminderId: string, localDate: string, spreadSeconds: number): number {
  if (!Number.isFinite(spreadSeconds) || spreadSeconds < 0) {
    throw new RangeError(`jitterFor: spreadSeconds must be a finite number >= 0, got ${spreadSeconds}`);
  }
  const spread = Math.floor(spreadSeconds);
  if (spread === 0) return 0;
  return Math.floor((fnv1a32(`${reminderId}\u0000${localDate}`) / 2 ** 32) * spread);
}
