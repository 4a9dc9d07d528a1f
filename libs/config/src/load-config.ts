import { type AuthProviderConfig, type Config, DEVELOPMENT_JWT_SECRET, type Values, VARIABLES } from './config.schema.js';

export class ConfigError extends Error {
  constructor(readonly problems: string[]) {
    super(`Invalid configuration:\n${problems.map((p) => `  - ${p}`).join('\n')}`);
    this.name = 'ConfigError';
  }
}

type Env = Record<string, string | undefined>;

/**
 * Reads and validates the environment by the entries of VARIABLES. Throws a
 * ConfigError naming every bad variable; the value of a sensitive variable
 * never appears in the message. An empty value counts as unset.
 */
export function loadConfig(env: Env = process.env): Config {
  const problems: string[] = [];
  const given = (name: string): string | undefined => env[name]?.trim() || undefined;

  const read: Record<string, unknown> = {};
  const placed: Record<string, unknown> = {};
  for (const variable of VARIABLES) {
    const value = given(variable.name) ?? variable.default;
    const parsed = value === undefined ? { value: undefined } : variable.kind.parse(value);
    if ('expected' in parsed) {
      const got = variable.sensitive ? '' : `, got ${JSON.stringify(value)}`;
      problems.push(`${variable.name} must be ${parsed.expected}${got}`);
    }
    read[variable.name] = 'value' in parsed ? parsed.value : undefined;
    if (variable.at !== undefined) {
      const [group, key] = variable.at.split('.') as [string, string | undefined];
      if (key === undefined) placed[group] = read[variable.name];
      else ((placed[group] ??= {}) as Record<string, unknown>)[key] = read[variable.name];
    }
  }

  // Rules between variables, in the schema's order, after every bad value.
  const reported = new Set<string>();
  for (const variable of VARIABLES) {
    const isSet = given(variable.name) !== undefined;
    for (const name of isSet ? (variable.requires ?? []) : []) {
      if (given(name) === undefined && !reported.has(name)) {
        reported.add(name);
        problems.push(`${name} is required when ${variable.name} is set`);
      }
    }
    if (isSet && variable.onlyWith !== undefined && given(variable.onlyWith) === undefined) {
      problems.push(`${variable.name} is only used with ${variable.onlyWith}, which is not set`);
    }
  }

  const values = read as Values;
  const config = placed as Omit<Config, 'authJwtSecret' | 'usingDevelopmentSecret' | 'authProvider'>;
  // The production-secret rule reads two variables and substitutes a value, so it is written here.
  const usingDevelopmentSecret = given('AUTH_JWT_SECRET') === undefined;
  if (usingDevelopmentSecret && values.NODE_ENV === 'production') {
    problems.push('AUTH_JWT_SECRET is required when NODE_ENV=production');
  }
  if (problems.length > 0) throw new ConfigError(problems);

  return {
    ...config,
    authJwtSecret: values.AUTH_JWT_SECRET ?? DEVELOPMENT_JWT_SECRET,
    usingDevelopmentSecret,
    authProvider: identityProvider(values),
    // An access token is only for Expo's service: giving one turns it on.
    expo: { ...config.expo, enabled: config.expo.enabled || values.EXPO_ACCESS_TOKEN !== undefined },
  };
}

/** The AUTH_* variables as one object, present only when AUTH_JWKS_URL is (the schema's rules saw to the rest). */
function identityProvider(values: Values): AuthProviderConfig | undefined {
  if (values.AUTH_JWKS_URL === undefined) return undefined;
  return {
    jwksUrl: new URL(values.AUTH_JWKS_URL),
    // Required with the URL: without both, any token the provider signs for any
    // of its customers would pass (Firebase signs every project's tokens with the same keys).
    issuer: values.AUTH_ISSUER!,
    audience: values.AUTH_AUDIENCE!,
    userClaim: values.AUTH_USER_CLAIM,
    scopeClaim: values.AUTH_SCOPE_CLAIM,
    jwksCooldownSeconds: values.AUTH_JWKS_COOLDOWN_SECONDS,
  };
}
