// How a variable's text becomes a value. Each kind says what it accepts twice
// from one place: `parse` for the loader, `accepts` for docs/configuration.md.

/** The value, or what the variable must be (the boot error says `NAME must be <expected>`). */
export type Parsed<T> = { value: T } | { expected: string };

export interface Kind<T> {
  /** What the variable accepts, as the `accepts` column of docs/configuration.md shows it (markdown). */
  readonly accepts: string;
  /** The bounds of an integer kind, for tests that walk the schema. */
  readonly min?: number;
  readonly max?: number;
  /** The words a one-of kind accepts. */
  readonly values?: readonly string[];
  parse(text: string): Parsed<T>;
}

/** A word as markdown code, as docs/configuration.md shows names and values. */
export const code = (word: string) => `\`${word}\``;

export function integer(min: number, max: number): Kind<number> {
  return {
    accepts: `${min}–${max}`,
    min,
    max,
    parse: (text) =>
      /^\d+$/.test(text) && Number(text) >= min && Number(text) <= max
        ? { value: Number(text) }
        : { expected: `a whole number from ${min} to ${max}` },
  };
}

export function oneOf<const T extends string>(...values: T[]): Kind<T> {
  return {
    accepts: values.map(code).join(', '),
    values,
    parse: (text) => (values.includes(text as T) ? { value: text as T } : { expected: `one of ${values.join(', ')}` }),
  };
}

const FLAG = oneOf('true', 'false', '1', '0');

/** `true` or `1` is on, `false` or `0` off. */
export const flag: Kind<boolean> = {
  accepts: '`1`/`true` or `0`/`false`',
  values: FLAG.values,
  parse: (text) => {
    const parsed = FLAG.parse(text);
    return 'value' in parsed ? { value: parsed.value === 'true' || parsed.value === '1' } : parsed;
  },
};

/** Any text; `what` says what it is for the docs (a path, an id). */
export function text(what = 'text'): Kind<string> {
  return { accepts: what, parse: (value) => ({ value }) };
}

/** A secret of at least `length` characters. */
export function secret(length: number): Kind<string> {
  return {
    accepts: `at least ${length} characters`,
    parse: (value) => (value.length >= length ? { value } : { expected: `at least ${length} characters long` }),
  };
}

/** 32 bytes or more, as hex or base64 (standard or url-safe); a passphrase is refused. */
export const secretKey: Kind<Buffer> = {
  accepts: 'at least 32 bytes, hex or base64',
  parse: (value) => {
    const bytes = /^(?:[0-9a-fA-F]{2})+$/.test(value)
      ? Buffer.from(value, 'hex')
      : /^[A-Za-z0-9+/_-]+={0,2}$/.test(value)
        ? Buffer.from(value, 'base64')
        : undefined;
    return bytes && bytes.length >= 32
      ? { value: bytes }
      : { expected: 'at least 32 random bytes as hex or base64 (e.g. `openssl rand -base64 32`)' };
  },
};

function urlOf(value: string): URL | undefined {
  try {
    return new URL(value);
  } catch {
    return undefined;
  }
}

export const postgresUrl: Kind<string> = {
  accepts: '`postgres://` or `postgresql://` URL',
  parse: (value) => (/^postgres(ql)?:\/\//.test(value) ? { value } : { expected: 'a postgres:// or postgresql:// URL' }),
};

const LOOPBACK_HOSTS = new Set(['127.0.0.1', 'localhost', '[::1]']);

/** A service's URL: https, or http on loopback only (a test's fake, a sidecar); keys or pushes over plain HTTP could be read or swapped on the way. */
export const serviceUrl: Kind<string> = {
  accepts: '`https://` URL (`http://` only on loopback)',
  parse: (value) => {
    const url = urlOf(value);
    return url && (url.protocol === 'https:' || (url.protocol === 'http:' && LOOPBACK_HOSTS.has(url.hostname)))
      ? { value }
      : { expected: 'an https:// URL (http:// only on loopback)' };
  },
};

/** An OTLP/HTTP base URL: the exporter appends `/v1/traces`, so a query or fragment would end up in the middle. */
export const otlpUrl: Kind<string> = {
  accepts: '`http://` or `https://` URL without query',
  parse: (value) => {
    const url = urlOf(value);
    return url && (url.protocol === 'http:' || url.protocol === 'https:') && !url.search && !url.hash
      ? { value }
      : { expected: 'an http:// or https:// URL without query' };
  },
};

/** A contact a push service can reach (VAPID `sub`). */
export const contactUrl: Kind<string> = {
  accepts: '`mailto:` or `https://` URL',
  parse: (value) => (/^(mailto:|https:\/\/)/.test(value) ? { value } : { expected: 'a mailto: or https:// URL' }),
};
