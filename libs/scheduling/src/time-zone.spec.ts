import fc from 'fast-check';
import { IANAZone } from 'luxon';
import { describe, expect, it } from 'vitest';
import { localCandidates, localToInstant, offsetAt, validateTimeZone } from './time-zone.js';

const floating = (iso: string) => Date.parse(`${iso}Z`);
const utc = (iso: string) => Date.parse(iso);

describe('validateTimeZone', () => {
  it('accepts IANA region names and UTC', () => {
    for (const zone of ['America/New_York', 'Asia/Kolkata', 'America/Argentina/Buenos_Aires', 'Antarctica/Troll', 'UTC', 'Etc/UTC']) {
      expect(validateTimeZone(zone), zone).toEqual({ ok: true, value: zone });
    }
    expect(validateTimeZone('america/new_york')).toEqual({ ok: true, value: 'America/New_York' });
  });

  it('rejects offsets, abbreviations, legacy and unknown names', () => {
    for (const zone of ['-06:00', '+05:30', 'UTC+3', 'GMT', 'EST', 'CST6CDT', 'Etc/GMT+3', 'Mars/Olympus_Mons', '', 'America/New York']) {
      const result = validateTimeZone(zone);
      expect(result.ok, zone).toBe(false);
      if (!result.ok) expect(result.errors[0]).toMatch(/time zone/);
    }
  });
});

describe('offsetAt', () => {
  it('agrees with luxon at random instants in random zones', () => {
    const zones = Intl.supportedValuesOf('timeZone');
    fc.assert(
      fc.property(fc.constantFrom(...zones), fc.integer({ min: Date.UTC(2000, 0, 1), max: Date.UTC(2040, 0, 1) }), (zone, t) => {
        expect(offsetAt(zone, t)).toBe(Math.round(IANAZone.create(zone).offset(t) * 60_000));
      }),
      { numRuns: 150 },
    );
  });

  it('finds transitions to the second', () => {
    const ny = 'America/New_York';
    expect(offsetAt(ny, utc('2026-03-08T06:59:59Z'))).toBe(-5 * 3_600_000);
    expect(offsetAt(ny, utc('2026-03-08T07:00:00Z'))).toBe(-4 * 3_600_000);
  });
});

describe('localToInstant (SPEC §5 DST policy)', () => {
  // [zone, local wall-clock time, expected UTC instant] — transitions checked
  // against each zone's published rules (see next-occurrence.spec.ts).
  const cases: [string, string, string][] = [
    ['America/New_York', '2026-03-08T02:30', '2026-03-08T07:30:00Z'], // gap → 03:30 EDT
    ['America/New_York', '2026-03-08T02:00', '2026-03-08T07:00:00Z'], // gap start → 03:00 EDT
    ['America/New_York', '2026-03-08T03:00', '2026-03-08T07:00:00Z'],
    ['America/New_York', '2026-11-01T01:30', '2026-11-01T05:30:00Z'], // overlap → first (EDT)
    ['America/New_York', '2026-11-01T02:00', '2026-11-01T07:00:00Z'],
    ['Australia/Lord_Howe', '2026-10-04T02:15', '2026-10-03T15:45:00Z'], // 30-min gap → 02:45
    ['Australia/Lord_Howe', '2026-04-05T01:45', '2026-04-04T14:45:00Z'], // 30-min overlap → first
    ['America/Santiago', '2026-09-06T00:00', '2026-09-06T04:00:00Z'], // day starts at 01:00
    ['Antarctica/Troll', '2026-03-29T02:59', '2026-03-29T02:59:00Z'], // 2-hour gap → 04:59
  ];
  it.each(cases)('%s %s → %s', (zone, local, expected) => {
    expect(new Date(localToInstant(zone, floating(local))).toISOString()).toBe(new Date(expected).toISOString());
  });

  it('lists both passes of an overlap and none for a gap', () => {
    expect(localCandidates('America/New_York', floating('2026-11-01T01:30'))).toEqual([
      utc('2026-11-01T05:30:00Z'),
      utc('2026-11-01T06:30:00Z'),
    ]);
    expect(localCandidates('America/New_York', floating('2026-03-08T02:30'))).toEqual([]);
    expect(localCandidates('Asia/Kolkata', floating('2026-03-08T09:00'))).toEqual([utc('2026-03-08T03:30:00Z')]);
  });
});
