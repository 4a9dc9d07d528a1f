import { describe, expect, it } from 'vitest';
import { DomainError } from '@nudge/config';
import { canonicalLocale, localizedFields, matchLocale, normalizeLocalizedText, pickText, resolveDefaultLocale } from './localized-text.js';
import { assertPayloadFits } from './payload-limit.js';

describe('canonicalLocale', () => {
  it.each([
    ['de-at', 'de-AT'],
    ['DE-AT', 'de-AT'],
    ['zh-hant-tw', 'zh-Hant-TW'],
    ['sr-latn', 'sr-Latn'],
    ['en', 'en'],
    ['iw', 'he'],
    ['und', 'und'],
  ])('%s → %s', (tag, canonical) => {
    expect(canonicalLocale(tag)).toBe(canonical);
  });

  it.each(['', 'en_US', 'x-klingon', 'e', 'english-language-tag', 'zz-ZZZZZZZZZZ', 'de-', '-de', 'de AT'])('%j is not a tag', (tag) => {
    expect(canonicalLocale(tag)).toBeNull();
  });
});

describe('matchLocale', () => {
  const keys = ['en', 'de', 'pt-BR', 'zh-Hant', 'sr-Latn', 'fr-CA'];

  it.each([
    // exact, after canonicalization
    [['de'], 'de'],
    [['pt-br'], 'pt-BR'],
    [['PT-BR'], 'pt-BR'],
    [['zh-Hant'], 'zh-Hant'],
    // the tag with its last subtags dropped, down to the language
    [['de-AT'], 'de'],
    [['de-at'], 'de'],
    [['zh-Hant-TW'], 'zh-Hant'],
    [['sr-Latn-RS'], 'sr-Latn'],
    [['en-GB'], 'en'],
    // siblings never match: pt-PT is not pt-BR, fr-FR not fr-CA, zh-Hans not zh-Hant
    [['pt-PT'], null],
    [['fr-FR'], null],
    [['fr'], null],
    [['zh-Hans-CN'], null],
    [['sr-Cyrl'], null],
    // und, malformed, missing
    [['und'], null],
    [['und-DE'], null],
    [['de_AT'], null],
    [[null, undefined, ''], null],
    // the first preference that fits wins: the device's, then the user's
    [['fr-FR', 'de-CH'], 'de'],
    [[null, 'pt-BR'], 'pt-BR'],
    [['en-US', 'de'], 'en'],
    [['und', 'de'], 'de'],
  ])('%j → %s', (preferred, expected) => {
    expect(matchLocale(keys, preferred)).toBe(expected);
  });

  it('does not take a bare language for a regional key: de-AT is not offered to de', () => {
    expect(matchLocale(['de-AT', 'en'], ['de'])).toBeNull();
    expect(matchLocale(['de-AT', 'en'], ['de-AT'])).toBe('de-AT');
  });
});

describe('pickText', () => {
  const title = { en: 'Take your pill', de: 'Tablette nehmen', 'pt-BR': 'Tome seu remédio' };

  it('gives each device its locale, else its user’s, else the default', () => {
    expect(pickText(title, ['de-AT', 'en'], 'en')).toBe('Tablette nehmen');
    expect(pickText(title, ['pt-BR', 'de'], 'en')).toBe('Tome seu remédio');
    expect(pickText(title, ['fr', null], 'en')).toBe('Take your pill');
    expect(pickText(title, [null, 'de'], 'en')).toBe('Tablette nehmen');
    expect(pickText(title, ['pt-PT', null], 'de')).toBe('Tablette nehmen');
  });

  it('passes a plain string through whatever the locales', () => {
    expect(pickText('Stretch', ['de'], null)).toBe('Stretch');
  });

  it('falls back per field: a body without the default language shows its first entry', () => {
    expect(pickText({ fr: 'Avec de l’eau' }, ['de'], 'de')).toBe('Avec de l’eau');
  });
});

describe('normalizeLocalizedText', () => {
  const limits = { minLength: 1, maxLength: 10 };

  it('canonicalizes the keys', () => {
    expect(normalizeLocalizedText('title', { 'de-at': 'Hallo', EN: 'Hi' }, limits)).toEqual({
      text: { 'de-AT': 'Hallo', en: 'Hi' },
      errors: [],
    });
  });

  it('names every offending variant', () => {
    const { errors } = normalizeLocalizedText('title', { en: 'Hi', en_US: 'Hi', de: '', fr: 'x'.repeat(11), es: 3 }, limits);
    expect(errors.map((e) => e.path)).toEqual(['title.en_US', 'title.de', 'title.fr', 'title.es']);
  });

  it('refuses two keys for one language, no keys, more than 50, and values that are neither', () => {
    expect(normalizeLocalizedText('title', { 'de-AT': 'a', 'de-at': 'b' }, limits).errors).toEqual([
      { path: 'title.de-at', message: expect.stringContaining('same language') },
    ]);
    expect(normalizeLocalizedText('title', {}, limits).errors[0]!.path).toBe('title');
    const many = Object.fromEntries(Array.from({ length: 51 }, (_, i) => [`x${String(i).padStart(2, '0')}`.replace('x', 'a'), 'a']));
    expect(normalizeLocalizedText('title', many, limits).errors[0]).toMatchObject({
      path: 'title',
      message: expect.stringContaining('1 to 50'),
    });
    expect(normalizeLocalizedText('title', ['en'], limits).errors[0]!.path).toBe('title');
    expect(normalizeLocalizedText('title', 7, limits).errors[0]!.path).toBe('title');
  });
});

describe('resolveDefaultLocale and localizedFields', () => {
  it('defaults to the first key of the title, else of the body; null for plain strings', () => {
    expect(resolveDefaultLocale({ fr: 'a', en: 'b' }, null, undefined).defaultLocale).toBe('fr');
    expect(resolveDefaultLocale('a', { es: 'b', de: 'c' }, undefined).defaultLocale).toBe('es');
    expect(resolveDefaultLocale('a', 'b', undefined).defaultLocale).toBeNull();
  });

  it('canonicalizes defaultLocale and requires it in every map', () => {
    expect(localizedFields({ title: { 'en-us': 'a', de: 'b' }, defaultLocale: 'EN-US' }, LIMITS)).toEqual({
      title: { 'en-US': 'a', de: 'b' },
      body: null,
      defaultLocale: 'en-US',
    });
    const refused = catchError(() => localizedFields({ title: { en: 'a', de: 'b' }, body: { de: 'c' }, defaultLocale: 'en' }, LIMITS));
    expect(refused.errors).toEqual([{ path: 'defaultLocale', message: 'defaultLocale en must be one of the languages of body' }]);
    expect(catchError(() => localizedFields({ title: 'a', defaultLocale: 'en' }, LIMITS)).errors![0]!.path).toBe('defaultLocale');
    expect(catchError(() => localizedFields({ title: { en: 'a' }, defaultLocale: 'en_GB' }, LIMITS)).errors![0]!.path).toBe(
      'defaultLocale',
    );
  });
});

describe('assertPayloadFits with localized text', () => {
  it('checks every variant and names the one that does not fit', () => {
    const fits = 'x'.repeat(1000);
    expect(() => assertPayloadFits({ title: { en: 'a', de: 'b' }, body: { en: fits, de: fits } })).not.toThrow();
    const refused = catchError(() => assertPayloadFits({ title: { en: 'a', de: 'b' }, body: { en: 'short', de: 'ü'.repeat(2100) } }));
    expect(refused.errors).toEqual([{ path: 'body.de', message: expect.stringMatching(/^body\.de: .*over the 4096-byte limit/) }]);
  });

  it('measures a title variant with the longest body of another language (a device may get that pair)', () => {
    // Each alone fits; the German title with the English body does not.
    const refused = catchError(() =>
      assertPayloadFits({ title: { en: 'a', de: 'ß'.repeat(1000) }, body: { en: 'ä'.repeat(1100), de: 'b' } }),
    );
    expect(refused.errors!.map((e) => e.path)).toEqual(['body.en']);
    expect(() => assertPayloadFits({ title: 'ß'.repeat(1000), body: 'b' })).not.toThrow();
    expect(() => assertPayloadFits({ title: 'a', body: 'ä'.repeat(1100) })).not.toThrow();
  });
});

const LIMITS = { title: { minLength: 1, maxLength: 200 }, body: { minLength: 0, maxLength: 1000 } };

function catchError(run: () => unknown): DomainError {
  try {
    run();
  } catch (error) {
    if (error instanceof DomainError) return error;
    throw error;
  }
  throw new Error('expected a DomainError');
}
