// A small seeded PRNG (sfc32 seeded through splitmix32) so that a run can be
// replayed from its seed: SIM_SEED=<seed> reproduces the same population,
// scripts and outages.

function splitmix32(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x9e3779b9) >>> 0;
    let z = a;
    z = Math.imul(z ^ (z >>> 16), 0x85ebca6b) >>> 0;
    z = Math.imul(z ^ (z >>> 13), 0xc2b2ae35) >>> 0;
    return (z ^ (z >>> 16)) >>> 0;
  };
}

export class Prng {
  private a: number;
  private b: number;
  private c: number;
  private d: number;

  constructor(readonly seed: number) {
    const mix = splitmix32(seed);
    this.a = mix();
    this.b = mix();
    this.c = mix();
    this.d = mix();
    for (let i = 0; i < 12; i++) this.next();
  }

  /** A derived generator: the same seed and label always give the same stream. */
  fork(label: string): Prng {
    let h = this.seed ^ 0x2545f491;
    for (let i = 0; i < label.length; i++) h = Math.imul(h ^ label.charCodeAt(i), 0x01000193) >>> 0;
    return new Prng(h >>> 0);
  }

  /** [0, 1) */
  next(): number {
    const t = (((this.a + this.b) >>> 0) + this.d) >>> 0;
    this.d = (this.d + 1) >>> 0;
    this.a = this.b ^ (this.b >>> 9);
    this.b = (this.c + (this.c << 3)) >>> 0;
    this.c = ((this.c << 21) | (this.c >>> 11)) >>> 0;
    this.c = (this.c + t) >>> 0;
    return t / 4294967296;
  }

  /** An integer in [min, max]. */
  int(min: number, max: number): number {
    return min + Math.floor(this.next() * (max - min + 1));
  }

  chance(p: number): boolean {
    return this.next() < p;
  }

  pick<T>(items: readonly T[]): T {
    if (items.length === 0) throw new Error('pick from an empty list');
    return items[Math.floor(this.next() * items.length)]!;
  }

  /** Picks by weight: [[item, weight], ...]. */
  weighted<T>(items: readonly (readonly [T, number])[]): T {
    const total = items.reduce((sum, [, w]) => sum + w, 0);
    let x = this.next() * total;
    for (const [item, w] of items) {
      x -= w;
      if (x < 0) return item;
    }
    return items[items.length - 1]![0];
  }
}

/**
 * The run's seed: a number replays that run; `random` draws a new one (to explore); unset, the default
 * seed, so that `npm test` and CI judge the same population every time and a red build is the code's, not
 * the dice's. New seeds are explored by hand or on a schedule, and a seed that finds a bug becomes a test.
 */
export function seedFrom(text: string | undefined, fallback: number): number {
  if (text && /^\d+$/.test(text)) return Number(text) >>> 0;
  if (text === 'random') return Math.floor(Math.random() * 2 ** 32) >>> 0 || 1;
  if (text) throw new Error(`SIM_SEED must be a number or "random", not "${text}"`);
  return fallback;
}
