import fc from 'fast-check';
import { IANAZone } from 'luxon';
import { describe, expect, it } from 'vitest';
import { canonicalTimeZone, localCandidates, localToInstant, missingLocalDays, offsetAt, validateTimeZone } from './time-zone.js';

const floating = (iso: string) => Date.parse(`${iso}Z`);
const utc = (iso: string) => Date.parse(iso);

describe('validateTimeZone', () => {
  it('accepts IANA region names and UTC', () => {
    for (const zone of ['America/New_York', 'Asia/Kolkata', 'America/Argentina/Buenos_Aires', 'Antarctica/Troll', 'UTC']) {
      expect(validateTimeZone(zone), zone).toEqual({ ok: true, value: zone });
    }
    expect(validateTimeZone('america/new_york')).toEqual({ ok: true, value: 'America/New_York' });
    expect(validateTimeZone('Etc/UTC')).toEqual({ ok: true, value: 'UTC' });
  });

  it('rejects offsets, abbreviations, legacy and unknown names', () => {
    for (const zone of ['-06:00', '+05:30', 'UTC+3', 'GMT', 'EST', 'CST6CDT', 'Etc/GMT+3', 'Mars/Olympus_Mons', '', 'America/New York']) {
      const result = validateTimeZone(zone);
      expect(result.ok, zone).toBe(false);
      if (!result.ok) expect(result.errors[0]).toMatch(/time zone/);
    }
  });
});

describe('canonicalTimeZone', () => {
  // [given, IANA primary name]. Node 20's ICU answers the CLDR id for the
  // renamed ones (Asia/Calcutta, Europe/Kiev); newer ICUs may answer the new
  // name directly. Either way the result is the IANA name.
  const cases: [string, string][] = [
    ['Asia/Calcutta', 'Asia/Kolkata'],
    ['asia/kolkata', 'Asia/Kolkata'],
    ['Asia/Kolkata', 'Asia/Kolkata'],
    ['america/new_york', 'America/New_York'],
    ['US/Eastern', 'America/New_York'],
    ['Europe/Kiev', 'Europe/Kyiv'],
    ['Europe/Kyiv', 'Europe/Kyiv'],
    ['europe/uzhgorod', 'Europe/Kyiv'],
    ['Asia/Saigon', 'Asia/Ho_Chi_Minh'],
    ['Asia/Ho_Chi_Minh', 'Asia/Ho_Chi_Minh'],
    ['America/Godthab', 'America/Nuuk'],
    ['Asia/Katmandu', 'Asia/Kathmandu'],
    ['Asia/Rangoon', 'Asia/Yangon'],
    ['Pacific/Enderbury', 'Pacific/Kanton'],
    ['America/Buenos_Aires', 'America/Argentina/Buenos_Aires'],
    ['America/Argentina/Buenos_Aires', 'America/Argentina/Buenos_Aires'],
    ['America/Argentina/ComodRivadavia', 'America/Argentina/Catamarca'],
    ['America/Catamarca', 'America/Argentina/Catamarca'],
    ['America/Cordoba', 'America/Argentina/Cordoba'],
    ['America/Rosario', 'America/Argentina/Cordoba'],
    ['America/Jujuy', 'America/Argentina/Jujuy'],
    ['America/Mendoza', 'America/Argentina/Mendoza'],
    ['America/Indianapolis', 'America/Indiana/Indianapolis'],
    ['America/Fort_Wayne', 'America/Indiana/Indianapolis'],
    ['US/East-Indiana', 'America/Indiana/Indianapolis'],
    ['America/Louisville', 'America/Kentucky/Louisville'],
    ['America/Coral_Harbour', 'America/Atikokan'],
    ['Atlantic/Faeroe', 'Atlantic/Faroe'],
    ['Africa/Asmera', 'Africa/Asmara'],
    ['Pacific/Ponape', 'Pacific/Pohnpei'],
    ['Pacific/Truk', 'Pacific/Chuuk'],
    ['Pacific/Yap', 'Pacific/Chuuk'],
    ['Europe/Amsterdam', 'Europe/Amsterdam'], // merged into Brussels by IANA, not renamed: keeps its name
    ['UTC', 'UTC'],
    ['Etc/UTC', 'UTC'],
  ];
  it.each(cases)('%s → %s', (given, expected) => {
    expect(canonicalTimeZone(given)).toBe(expected);
    expect(validateTimeZone(given)).toEqual({ ok: true, value: expected });
    expect(IANAZone.isValidZone(expected)).toBe(true);
  });

  it('refuses what validateTimeZone refuses', () => {
    for (const zone of ['-06:00', 'UTC+3', 'GMT', 'EST', 'EST5EDT', 'CST6CDT', 'Etc/GMT+3', 'etc/utc', 'Zulu', 'Mars/Olympus_Mons', '']) {
      expect(canonicalTimeZone(zone), zone).toBeNull();
    }
  });

  it('maps every zone Intl knows to one accepted name, whatever the spelling', () => {
    for (const zone of Intl.supportedValuesOf('timeZone')) {
      const canonical = canonicalTimeZone(zone);
      if (canonical === null) continue; // Etc/GMT+3 and the like
      expect(IANAZone.isValidZone(canonical), zone).toBe(true);
      expect(canonicalTimeZone(canonical), zone).toBe(canonical);
      expect(canonicalTimeZone(zone.toUpperCase()), zone).toBe(canonical);
      // Same clocks: the canonical name is the same zone, not a look-alike.
      for (const t of [Date.UTC(1975, 0, 1), Date.UTC(2000, 6, 1), Date.UTC(2026, 0, 15)]) {
        expect(IANAZone.create(canonical).offset(t), `${zone} ${canonical}`).toBe(IANAZone.create(zone).offset(t));
      }
    }
  });

  it('is memoised', () => {
    canonicalTimeZone('Asia/Calcutta');
    const start = performance.now();
    for (let i = 0; i < 10_000; i++) canonicalTimeZone(i % 2 ? 'Asia/Calcutta' : 'asia/kolkata');
    expect(performance.now() - start).toBeLessThan(100); // ~1 s if each built an Intl.DateTimeFormat
  });
});

describe('missingLocalDays', () => {
  const day = (iso: string) => Date.parse(iso) / 86_400_000;
  const dates = (zone: string, from: string, to: string) =>
    missingLocalDays(zone, day(from), day(to)).map((d) => new Date(d * 86_400_000).toISOString().slice(0, 10));

  it('finds the dates a date-line move skipped', () => {
    // Samoa and Tokelau moved west of the date line at the end of 2011,
    // Kiribati's Line and Phoenix Islands at the end of 1994, Kwajalein in 1993.
    expect(dates('Pacific/Apia', '1900-01-01', '2100-12-31')).toEqual(['2011-12-30']);
    expect(dates('Pacific/Fakaofo', '1900-01-01', '2100-12-31')).toEqual(['2011-12-30']);
    expect(dates('Pacific/Kiritimati', '1900-01-01', '2100-12-31')).toEqual(['1994-12-31']);
    expect(dates('Pacific/Kanton', '1900-01-01', '2100-12-31')).toEqual(['1994-12-31']);
    expect(dates('Pacific/Kwajalein', '1900-01-01', '2100-12-31')).toEqual(['1993-08-21']);
    expect(dates('Pacific/Apia', '2011-12-30', '2011-12-30')).toEqual(['2011-12-30']);
    expect(dates('Pacific/Apia', '2011-12-31', '2012-12-31')).toEqual([]);
  });

  it('finds none for DST gaps or westward moves', () => {
    for (const zone of [
      'Europe/Berlin',
      'America/New_York',
      'Australia/Lord_Howe',
      'America/Santiago',
      'Antarctica/Troll',
      'Pacific/Rarotonga',
      'UTC',
    ]) {
      expect(dates(zone, '1900-01-01', '2100-12-31'), zone).toEqual([]);
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

  it('answers the same before and after a year has its own table', () => {
    // A year is first answered by luxon directly, and gets a table of its
    // transitions once it has been asked as often as the table costs to build.
    const zone = 'Australia/Lord_Howe';
    const instants = Array.from({ length: 800 }, (_, i) => Date.UTC(2031, 0, 1) + ((i * 7_919_993_173) % (365 * 86_400_000)));
    const luxon = (t: number) => Math.round(IANAZone.create(zone).offset(t) * 60_000);
    expect(instants.map((t) => offsetAt(zone, t))).toEqual(instants.map(luxon));
    expect(instants.map((t) => offsetAt(zone, t))).toEqual(instants.map(luxon));
    // Lord Howe's transitions in 2031, to the second, from the table.
    expect(offsetAt(zone, Date.UTC(2031, 3, 5, 14, 59, 59))).toBe(11 * 3_600_000);
    expect(offsetAt(zone, Date.UTC(2031, 3, 5, 15, 0, 0))).toBe(10.5 * 3_600_000);
    expect(offsetAt(zone, Date.UTC(2031, 9, 4, 15, 29, 59))).toBe(10.5 * 3_600_000);
    expect(offsetAt(zone, Date.UTC(2031, 9, 4, 15, 30, 0))).toBe(11 * 3_600_000);
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
