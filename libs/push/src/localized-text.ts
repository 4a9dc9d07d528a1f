import { DomainError, type FieldError } from '@nudge/config';

// Localized text: a title or body that is either one string or a map by BCP 47
// language tag. Each device gets the best variant for its own locale, then its
// user's, then the default. Pure functions: the API validates and normalizes
// with them, the delivery picks a variant per device with them.

/** One string, or one string per BCP 47 tag (`{"en": "Take your pill", "de": "Tablette nehmen"}`). */
export type LocalizedText = string | Record<string, string>;

export const MAX_LOCALIZED_VARIANTS = 50;

const LOCALE_SHAPE = /^[A-Za-z]{2,3}(-[A-Za-z0-9]{2,8})*$/;
const LOCALE_RULE = 'must be a BCP 47 language tag such as en-US';

/**
 * The canonical form of a BCP 47 tag (`de-at` → `de-AT`, `ZH-hant-tw` →
 * `zh-Hant-TW`), or null when it is not one. The one parser of tags: the API's
 * IsLocale and the matcher both use it.
 */
export function canonicalLocale(tag: string): string | null {
  if (tag.length > 35 || !LOCALE_SHAPE.test(tag)) return null;
  try {
    return Intl.getCanonicalLocales(tag)[0] ?? null;
  } catch {
    return null;
  }
}

/** Why `tag` is not a BCP 47 tag, or undefined when it is one. */
export function localeProblem(tag: string): string | undefined {
  return canonicalLocale(tag) === null ? LOCALE_RULE : undefined;
}

/** The tag's language subtag alone (`zh-Hant-TW` → `zh`). */
const languageOf = (canonical: string) => canonical.split('-')[0]!;

/**
 * The key of `available` (canonical tags) that best fits the first of
 * `preferred` that fits any, by RFC 4647 lookup: the tag itself (after
 * canonicalization), then with its last subtag dropped, and so on down to the
 * language (`zh-Hant-TW` → `zh-Hant` → `zh`; `de-AT` → `de`). A sibling is
 * never a match (`de-AT` does not take `de-CH`, `pt-BR` not `pt-PT`): a device
 * whose variant is missing gets the next preference, then the default. `und`
 * and malformed tags match nothing. Null: no preference fits.
 */
export function matchLocale(available: readonly string[], preferred: readonly (string | null | undefined)[]): string | null {
  const keys = new Set(available);
  for (const tag of preferred) {
    const canonical = tag ? canonicalLocale(tag) : null;
    if (!canonical || languageOf(canonical) === 'und') continue;
    const subtags = canonical.split('-');
    for (let n = subtags.length; n > 0; n--) {
      const candidate = subtags.slice(0, n).join('-');
      if (keys.has(candidate)) return candidate;
    }
  }
  return null;
}

/**
 * The variant of `text` this device shows: a string as it is; a map's best
 * match for the preferences (device locale, then user locale), else its
 * `defaultLocale` entry, else (a field whose map lacks the default) its first.
 */
export function pickText(text: LocalizedText, preferred: readonly (string | null | undefined)[], defaultLocale?: string | null): string {
  if (typeof text === 'string') return text;
  const keys = Object.keys(text);
  const key = matchLocale(keys, preferred) ?? (defaultLocale && defaultLocale in text ? defaultLocale : keys[0]!);
  return text[key]!;
}

/** The text shown where one string is needed (ops views, logs): the default variant. */
export function defaultText(text: LocalizedText, defaultLocale?: string | null): string {
  return pickText(text, [], defaultLocale);
}

/**
 * A title or body as a caller sent it, checked and with its tags
 * canonicalized: every key a BCP 47 tag (two keys may not name the same tag),
 * 1–50 variants, each a string of `minLength`–`maxLength` characters. The
 * errors name the variant (`title.de`).
 */
export function normalizeLocalizedText(
  field: string,
  value: unknown,
  limits: { minLength: number; maxLength: number },
): { text: LocalizedText; errors: FieldError[] } {
  const lengthRule = `must be a string of ${limits.minLength} to ${limits.maxLength} characters`;
  const checkString = (path: string, text: unknown): FieldError[] =>
    typeof text === 'string' && text.length >= limits.minLength && text.length <= limits.maxLength
      ? []
      : [{ path, message: `${path} ${lengthRule}` }];
  if (typeof value === 'string') return { text: value, errors: checkString(field, value) };
  if (value === null || typeof value !== 'object' || Array.isArray(value)) {
    return { text: '', errors: [{ path: field, message: `${field} must be a string or an object of strings by BCP 47 language tag` }] };
  }
  const entries = Object.entries(value as Record<string, unknown>);
  if (entries.length < 1 || entries.length > MAX_LOCALIZED_VARIANTS) {
    return { text: '', errors: [{ path: field, message: `${field} must have 1 to ${MAX_LOCALIZED_VARIANTS} languages` }] };
  }
  const errors: FieldError[] = [];
  const text: Record<string, string> = {};
  for (const [tag, variant] of entries) {
    const path = `${field}.${tag}`;
    const canonical = canonicalLocale(tag);
    if (!canonical) errors.push({ path, message: `${path}: ${LOCALE_RULE}` });
    else if (canonical in text) errors.push({ path, message: `${path}: names the same language as another key (${canonical})` });
    errors.push(...checkString(path, variant));
    if (canonical && typeof variant === 'string') text[canonical] = variant;
  }
  return { text, errors };
}

/**
 * The default language of a localized title and body: `defaultLocale` when
 * given (canonicalized; it must be a key of each map), else the first key of
 * the title's map (else the body's). Null when both are plain strings. Stored
 * with the text: jsonb does not keep the order of keys.
 */
export function resolveDefaultLocale(
  title: LocalizedText,
  body: LocalizedText | null | undefined,
  defaultLocale: unknown,
): { defaultLocale: string | null; errors: FieldError[] } {
  const maps = (
    [
      ['title', title],
      ['body', body],
    ] as const
  ).filter((entry): entry is ['title' | 'body', Record<string, string>] => entry[1] !== null && typeof entry[1] === 'object');
  if (defaultLocale === undefined || defaultLocale === null) {
    return { defaultLocale: maps.length > 0 ? Object.keys(maps[0]![1])[0]! : null, errors: [] };
  }
  const canonical = typeof defaultLocale === 'string' ? canonicalLocale(defaultLocale) : null;
  if (!canonical) return { defaultLocale: null, errors: [{ path: 'defaultLocale', message: `defaultLocale ${LOCALE_RULE}` }] };
  if (maps.length === 0) {
    return { defaultLocale: null, errors: [{ path: 'defaultLocale', message: 'defaultLocale needs a title or body given by language' }] };
  }
  const missing = maps.filter(([, map]) => !(canonical in map)).map(([field]) => field);
  if (missing.length > 0) {
    return {
      defaultLocale: null,
      errors: [{ path: 'defaultLocale', message: `defaultLocale ${canonical} must be one of the languages of ${missing.join(' and ')}` }],
    };
  }
  return { defaultLocale: canonical, errors: [] };
}

/** Each variant of a field with the path a 400 names it by (`title`, `title.de`). */
export function variantsOf(field: string, text: LocalizedText | null | undefined): { path: string; text: string }[] {
  if (text === null || text === undefined) return [];
  if (typeof text === 'string') return [{ path: field, text }];
  return Object.entries(text).map(([tag, variant]) => ({ path: `${field}.${tag}`, text: variant }));
}

export interface LocalizedFields {
  title: LocalizedText;
  body: LocalizedText | null;
  /** Null when title and body are both plain strings. */
  defaultLocale: string | null;
}

/**
 * A title, body and defaultLocale as a caller sent them, checked together and
 * canonicalized, or a 400 naming every offending field and variant.
 */
export function localizedFields(
  input: { title: unknown; body?: unknown; defaultLocale?: unknown },
  limits: { title: { minLength: number; maxLength: number }; body: { minLength: number; maxLength: number } },
): LocalizedFields {
  const title = normalizeLocalizedText('title', input.title, limits.title);
  const body = input.body === undefined || input.body === null ? null : normalizeLocalizedText('body', input.body, limits.body);
  const errors = [...title.errors, ...(body?.errors ?? [])];
  if (errors.length > 0) throw DomainError.invalid(errors);
  const resolved = resolveDefaultLocale(title.text, body?.text, input.defaultLocale);
  if (resolved.errors.length > 0) throw DomainError.invalid(resolved.errors);
  return { title: title.text, body: body?.text ?? null, defaultLocale: resolved.defaultLocale };
}
