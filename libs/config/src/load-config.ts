import { type AuthProviderConfig, type Config, DEVELOPMENT_JWT_SECRET, type Role, VARIABLES } from './config.schema.js';

export class ConfigError extends Error {
  constructor(readonly problems: string[]) {
    super(`Invalid configuration:\n${problems.map((p) => `  - ${p}`).join('\n')}`);
    this.name = 'ConfigError';
  }
}

type Env = Record<string, string | undefined>;

/**
 * Reads and validates the environment. Throws a ConfigError naming every bad
 * variable; the value of a sensitive variable never appears in the message.
 */
export function loadConfig(env: Env = process.env): Config {
  const problems: string[] = [];
  const raw = (name: string): string | undefined => {
    const value = env[name];
    if (value !== undefined && value.trim() !== '') return value.trim();
    return VARIABLES.find((v) => v.name === name)?.default;
  };
  const shown = (name: string, value: string) => (VARIABLES.find((v) => v.name === name)?.sensitive ? '(hidden)' : JSON.stringify(value));

  const integer = (name: string, min: number, max: number): number => {
    const value = raw(name) ?? '';
    if (!/^\d+$/.test(value) || Number(value) < min || Number(value) > max) {
      problems.push(`${name} must be a whole number from ${min} to ${max}, got ${shown(name, value)}`);
      return min;
    }
    return Number(value);
  };
  const oneOf = <T extends string>(name: string, allowed: readonly T[]): T => {
    const value = raw(name) ?? '';
    if (!allowed.includes(value as T)) {
      problems.push(`${name} must be one of ${allowed.join(', ')}, got ${shown(name, value)}`);
      return allowed[0];
    }
    return value as T;
  };
  const optionalInteger = (name: string, min: number, max: number): number | undefined =>
    raw(name) === undefined ? undefined : integer(name, min, max);
  const flag = (name: string): boolean => oneOf(name, ['true', 'false', '1', '0'] as const) === 'true' || raw(name) === '1';

  const nodeEnv = raw('NODE_ENV') ?? 'development';
  const databaseUrl = raw('DATABASE_URL');
  if (databaseUrl !== undefined && !/^postgres(ql)?:\/\//.test(databaseUrl)) {
    problems.push('DATABASE_URL must be a postgres:// or postgresql:// URL');
  }

  let authJwtSecret = raw('AUTH_JWT_SECRET');
  let usingDevelopmentSecret = false;
  if (authJwtSecret === undefined) {
    if (nodeEnv === 'production') problems.push('AUTH_JWT_SECRET is required when NODE_ENV=production');
    authJwtSecret = DEVELOPMENT_JWT_SECRET;
    usingDevelopmentSecret = true;
  } else if (authJwtSecret.length < 32) {
    problems.push('AUTH_JWT_SECRET must be at least 32 characters long');
  }

  const authProvider = identityProvider(raw, integer, problems);

  const apns = {
    keyFile: raw('APNS_KEY_FILE'),
    keyId: raw('APNS_KEY_ID'),
    teamId: raw('APNS_TEAM_ID'),
    topic: raw('APNS_TOPIC'),
    production: flag('APNS_PRODUCTION'),
  };
  if (apns.keyFile !== undefined) {
    for (const [name, value] of [
      ['APNS_KEY_ID', apns.keyId],
      ['APNS_TEAM_ID', apns.teamId],
      ['APNS_TOPIC', apns.topic],
    ] as const) {
      if (value === undefined) problems.push(`${name} is required when APNS_KEY_FILE is set`);
    }
  }

  const webPush = {
    vapidPublicKey: raw('VAPID_PUBLIC_KEY'),
    vapidPrivateKey: raw('VAPID_PRIVATE_KEY'),
    vapidSubject: raw('VAPID_SUBJECT'),
  };
  const vapid = [
    ['VAPID_PUBLIC_KEY', webPush.vapidPublicKey],
    ['VAPID_PRIVATE_KEY', webPush.vapidPrivateKey],
    ['VAPID_SUBJECT', webPush.vapidSubject],
  ] as const;
  if (vapid.some(([, value]) => value !== undefined)) {
    for (const [name, value] of vapid) if (value === undefined) problems.push(`${name} is required when any VAPID_* variable is set`);
  }
  if (webPush.vapidSubject !== undefined && !/^(mailto:|https:\/\/)/.test(webPush.vapidSubject)) {
    problems.push('VAPID_SUBJECT must be a mailto: or https:// URL');
  }

  const expoBaseUrl = raw('EXPO_BASE_URL')!;
  serviceUrl(expoBaseUrl, 'EXPO_BASE_URL', problems);

  const config: Config = {
    nodeEnv,
    databaseUrl,
    port: integer('PORT', 1, 65535),
    role: oneOf<Role>('ROLE', ['all', 'api', 'worker']),
    authJwtSecret,
    usingDevelopmentSecret,
    authProvider,
    workerConcurrency: integer('WORKER_CONCURRENCY', 1, 1000),
    notificationConcurrency: integer('NOTIFICATION_CONCURRENCY', 0, 1000),
    jobLeaseSeconds: integer('JOB_LEASE_SECONDS', 5, 86_400),
    jobTimeouts: {
      sendReminderSeconds: integer('SEND_REMINDER_TIMEOUT_SECONDS', 1, 3_600),
      sendNotificationSeconds: integer('SEND_NOTIFICATION_TIMEOUT_SECONDS', 1, 3_600),
      graceSeconds: integer('JOB_TIMEOUT_GRACE_SECONDS', 0, 600),
    },
    reminderJitterSeconds: integer('REMINDER_JITTER_SECONDS', 0, 3_600),
    jobRetentionDays: integer('JOB_RETENTION_DAYS', 1, 3_650),
    jobDeadRetentionDays: integer('JOB_DEAD_RETENTION_DAYS', 1, 3_650),
    eventsRetentionHours: integer('EVENTS_RETENTION_HOURS', 25, 87_600),
    skipMigrations: flag('SKIP_MIGRATIONS'),
    logLevel: oneOf('LOG_LEVEL', ['trace', 'debug', 'info', 'warn', 'error', 'fatal', 'silent'] as const),
    workerHealthFile: raw('WORKER_HEALTH_FILE'),
    workerMetricsPort: integer('WORKER_METRICS_PORT', 0, 65535),
    rateLimitPerMinute: integer('RATE_LIMIT_PER_MINUTE', 0, 1_000_000),
    rateLimitPerIpPerMinute: integer('RATE_LIMIT_PER_IP_PER_MINUTE', 0, 1_000_000),
    notificationsPerUserPerHour: integer('NOTIFICATIONS_PER_USER_PER_HOUR', 0, 1_000_000),
    apns,
    fcm: { serviceAccountFile: raw('FCM_SERVICE_ACCOUNT_FILE') },
    webPush,
    expo: {
      enabled: flag('EXPO_PUSH_ENABLED') || raw('EXPO_ACCESS_TOKEN') !== undefined,
      accessToken: raw('EXPO_ACCESS_TOKEN'),
      baseUrl: expoBaseUrl,
    },
    pacing: {
      fcm: integer('FCM_MAX_PER_SECOND', 1, 1_000_000),
      expo: integer('EXPO_MAX_PER_SECOND', 1, 1_000_000),
      apns: optionalInteger('APNS_MAX_PER_SECOND', 1, 1_000_000),
      webpush: optionalInteger('WEB_PUSH_MAX_PER_SECOND', 1, 1_000_000),
    },
    simulatedPushHang: flag('SIMULATED_PUSH_HANG'),
    secretKey: secretKey(raw('NUDGE_SECRET_KEY'), problems),
    tracing: { otlpEndpoint: otlpEndpoint(raw, problems), serviceName: raw('OTEL_SERVICE_NAME') },
  };
  if (problems.length > 0) throw new ConfigError(problems);
  return config;
}

function otlpEndpoint(raw: (name: string) => string | undefined, problems: string[]): string | undefined {
  const value = raw('OTEL_EXPORTER_OTLP_ENDPOINT');
  if (value === undefined) return undefined;
  let url: URL | undefined;
  try {
    url = new URL(value);
  } catch {
    // reported below
  }
  if (!url || (url.protocol !== 'http:' && url.protocol !== 'https:') || url.search || url.hash) {
    problems.push(`OTEL_EXPORTER_OTLP_ENDPOINT must be an http:// or https:// URL without query, got ${JSON.stringify(value)}`);
    return undefined;
  }
  return value;
}

/** NUDGE_SECRET_KEY: 32 bytes or more, as hex or base64 (standard or url-safe); a passphrase is refused. */
function secretKey(value: string | undefined, problems: string[]): Buffer | undefined {
  if (value === undefined) return undefined;
  const bytes = /^(?:[0-9a-fA-F]{2})+$/.test(value)
    ? Buffer.from(value, 'hex')
    : /^[A-Za-z0-9+/_-]+={0,2}$/.test(value)
      ? Buffer.from(value, 'base64')
      : undefined;
  if (!bytes || bytes.length < 32) {
    problems.push('NUDGE_SECRET_KEY must be at least 32 random bytes as hex or base64 (e.g. `openssl rand -base64 32`)');
    return undefined;
  }
  return bytes;
}

const LOOPBACK_HOSTS = new Set(['127.0.0.1', 'localhost', '[::1]']);
const PROVIDER_ONLY = ['AUTH_ISSUER', 'AUTH_AUDIENCE', 'AUTH_SCOPE_CLAIM'] as const;

function identityProvider(
  raw: (name: string) => string | undefined,
  integer: (name: string, min: number, max: number) => number,
  problems: string[],
): AuthProviderConfig | undefined {
  const jwksCooldownSeconds = integer('AUTH_JWKS_COOLDOWN_SECONDS', 1, 3_600);
  const url = raw('AUTH_JWKS_URL');
  if (url === undefined) {
    for (const name of PROVIDER_ONLY) {
      if (raw(name) !== undefined) problems.push(`${name} is only used with AUTH_JWKS_URL, which is not set`);
    }
    return undefined;
  }
  // Keys fetched over plain HTTP could be swapped on the way; loopback is for tests and sidecars.
  const jwksUrl = serviceUrl(url, 'AUTH_JWKS_URL', problems);
  // Without both, any token the provider signs for any of its customers would
  // pass (Firebase signs every project's tokens with the same keys).
  const issuer = raw('AUTH_ISSUER');
  const audience = raw('AUTH_AUDIENCE');
  if (issuer === undefined) problems.push('AUTH_ISSUER is required when AUTH_JWKS_URL is set');
  if (audience === undefined) problems.push('AUTH_AUDIENCE is required when AUTH_JWKS_URL is set');
  return {
    jwksUrl: jwksUrl ?? new URL('https://invalid.invalid/'),
    issuer: issuer ?? '',
    audience: audience ?? '',
    userClaim: raw('AUTH_USER_CLAIM') ?? 'sub',
    scopeClaim: raw('AUTH_SCOPE_CLAIM'),
    jwksCooldownSeconds,
  };
}

/** A service's URL: https, or http on loopback only (a test's fake, a sidecar); undefined (and a problem) otherwise. */
function serviceUrl(value: string, name: string, problems: string[]): URL | undefined {
  let parsed: URL | undefined;
  try {
    parsed = new URL(value);
  } catch {
    // reported below
  }
  if (!parsed || !(parsed.protocol === 'https:' || (parsed.protocol === 'http:' && LOOPBACK_HOSTS.has(parsed.hostname)))) {
    problems.push(`${name} must be an https:// URL (http:// only on loopback), got ${JSON.stringify(value)}`);
    return undefined;
  }
  return parsed;
}
