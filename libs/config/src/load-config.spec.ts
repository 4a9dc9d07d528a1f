import { describe, expect, it } from 'vitest';
import { VARIABLES } from './config.schema.js';
import { ConfigError, loadConfig } from './load-config.js';

function problemsOf(env: Record<string, string>): string[] {
  try {
    loadConfig(env);
  } catch (error) {
    if (error instanceof ConfigError) return error.problems;
    throw error;
  }
  return [];
}

describe('loadConfig', () => {
  it('applies defaults for an empty environment', () => {
    const config = loadConfig({});
    expect(config.port).toBe(3000);
    expect(config.role).toBe('all');
    expect(config.usingDevelopmentSecret).toBe(true);
    expect(config.databaseUrl).toBeUndefined();
    expect(config.jobRetentionDays).toBe(14);
    expect(config.jobDeadRetentionDays).toBe(30);
  });

  it('reads the OpenTelemetry endpoint and service name, off by default, and refuses an endpoint that is not an http(s) URL', () => {
    expect(loadConfig({}).tracing).toEqual({ otlpEndpoint: undefined, serviceName: undefined });
    expect(loadConfig({ OTEL_EXPORTER_OTLP_ENDPOINT: 'http://collector:4318', OTEL_SERVICE_NAME: 'reminders' }).tracing).toEqual({
      otlpEndpoint: 'http://collector:4318',
      serviceName: 'reminders',
    });
    for (const bad of ['localhost:4318', 'grpc://collector:4317', 'http://collector:4318/?x=1', 'not a url']) {
      expect(problemsOf({ OTEL_EXPORTER_OTLP_ENDPOINT: bad }), bad).toEqual([
        `OTEL_EXPORTER_OTLP_ENDPOINT must be an http:// or https:// URL without query, got ${JSON.stringify(bad)}`,
      ]);
    }
  });

  it('reads JOB_DEAD_RETENTION_DAYS and refuses a bad one', () => {
    expect(loadConfig({ JOB_DEAD_RETENTION_DAYS: '90' }).jobDeadRetentionDays).toBe(90);
    expect(problemsOf({ JOB_DEAD_RETENTION_DAYS: '0' }).join('\n')).toMatch(/JOB_DEAD_RETENTION_DAYS/);
  });

  it('reads the push pace per provider: FCM and Expo capped by default, APNs and Web Push unpaced unless set', () => {
    expect(loadConfig({}).pacing).toEqual({ fcm: 10_000, expo: 600, apns: undefined, webpush: undefined });
    expect(loadConfig({ EXPO_MAX_PER_SECOND: '40', APNS_MAX_PER_SECOND: '500' }).pacing).toMatchObject({ expo: 40, apns: 500 });
    expect(problemsOf({ FCM_MAX_PER_SECOND: '0', APNS_MAX_PER_SECOND: 'fast' })).toEqual([
      'FCM_MAX_PER_SECOND must be a whole number from 1 to 1000000, got "0"',
      'APNS_MAX_PER_SECOND must be a whole number from 1 to 1000000, got "fast"',
    ]);
  });

  it('reads the job timeouts and the notification slots, and refuses bad ones', () => {
    const config = loadConfig({});
    expect(config.jobTimeouts).toEqual({ sendReminderSeconds: 120, sendNotificationSeconds: 30, graceSeconds: 10 });
    expect(config.notificationConcurrency).toBe(20);
    expect(loadConfig({ SEND_NOTIFICATION_TIMEOUT_SECONDS: '5', JOB_TIMEOUT_GRACE_SECONDS: '0' }).jobTimeouts).toMatchObject({
      sendNotificationSeconds: 5,
      graceSeconds: 0,
    });
    expect(loadConfig({ NOTIFICATION_CONCURRENCY: '0' }).notificationConcurrency).toBe(0);
    const problems = problemsOf({ SEND_REMINDER_TIMEOUT_SECONDS: '0', JOB_TIMEOUT_GRACE_SECONDS: '-1', NOTIFICATION_CONCURRENCY: 'x' });
    expect(problems.join('\n')).toMatch(
      /SEND_REMINDER_TIMEOUT_SECONDS[\s\S]*JOB_TIMEOUT_GRACE_SECONDS|JOB_TIMEOUT_GRACE_SECONDS[\s\S]*SEND_REMINDER/,
    );
    expect(problems).toHaveLength(3);
  });

  it('names every bad variable at once', () => {
    const problems = problemsOf({ PORT: 'abc', ROLE: 'both', WORKER_CONCURRENCY: '-1' });
    expect(problems).toHaveLength(3);
    expect(problems[0]).toMatch(/^PORT /);
    expect(problems.join('\n')).toMatch(/ROLE/);
    expect(problems.join('\n')).toMatch(/WORKER_CONCURRENCY/);
  });

  it('requires AUTH_JWT_SECRET in production', () => {
    expect(problemsOf({ NODE_ENV: 'production' })).toEqual(['AUTH_JWT_SECRET is required when NODE_ENV=production']);
    expect(problemsOf({ NODE_ENV: 'production', AUTH_JWT_SECRET: 'x'.repeat(32) })).toEqual([]);
  });

  it('never echoes a sensitive value', () => {
    const problems = problemsOf({ AUTH_JWT_SECRET: 'short-secret', DATABASE_URL: 'mysql://user:hunter2@db/x' });
    expect(problems.join('\n')).not.toContain('short-secret');
    expect(problems.join('\n')).not.toContain('hunter2');
    expect(problems).toHaveLength(2);
  });

  it('reads NUDGE_SECRET_KEY as at least 32 bytes of hex or base64, and never echoes a bad one', () => {
    expect(loadConfig({}).secretKey).toBeUndefined();
    const bytes = Buffer.from(Array.from({ length: 32 }, (_, i) => i * 7));
    expect(loadConfig({ NUDGE_SECRET_KEY: bytes.toString('hex') }).secretKey).toEqual(bytes);
    expect(loadConfig({ NUDGE_SECRET_KEY: bytes.toString('base64') }).secretKey).toEqual(bytes);
    expect(loadConfig({ NUDGE_SECRET_KEY: bytes.toString('base64url') }).secretKey).toEqual(bytes);
    for (const bad of ['a passphrase of words', 'c2hvcnQ=', 'ab'.repeat(16).slice(1)]) {
      const problems = problemsOf({ NUDGE_SECRET_KEY: bad });
      expect(problems).toEqual([expect.stringMatching(/^NUDGE_SECRET_KEY must be at least 32 random bytes/)]);
      expect(problems[0]).not.toContain(bad);
    }
  });

  it('requires the rest of the APNs settings once a key file is given', () => {
    expect(problemsOf({ APNS_KEY_FILE: '/k.p8' })).toHaveLength(3);
  });

  it('reads an identity provider only with its issuer and audience, over https (http only on loopback)', () => {
    expect(loadConfig({}).authProvider).toBeUndefined();
    const provider = {
      AUTH_JWKS_URL: 'https://example.supabase.co/auth/v1/.well-known/jwks.json',
      AUTH_ISSUER: 'https://example.supabase.co/auth/v1',
      AUTH_AUDIENCE: 'authenticated',
    };
    expect(loadConfig(provider).authProvider).toMatchObject({
      issuer: provider.AUTH_ISSUER,
      audience: 'authenticated',
      userClaim: 'sub',
      scopeClaim: undefined,
      jwksCooldownSeconds: 30,
    });
    expect(problemsOf({ AUTH_JWKS_URL: provider.AUTH_JWKS_URL })).toEqual([
      'AUTH_ISSUER is required when AUTH_JWKS_URL is set',
      'AUTH_AUDIENCE is required when AUTH_JWKS_URL is set',
    ]);
    expect(problemsOf({ ...provider, AUTH_JWKS_URL: 'http://keys.example.com/jwks.json' })[0]).toMatch(
      /^AUTH_JWKS_URL must be an https:\/\/ URL/,
    );
    expect(problemsOf({ ...provider, AUTH_JWKS_URL: 'http://127.0.0.1:8080/jwks.json' })).toEqual([]);
    expect(problemsOf({ AUTH_ISSUER: 'https://issuer' })).toEqual(['AUTH_ISSUER is only used with AUTH_JWKS_URL, which is not set']);
  });

  describe('applies every declaration of the schema', () => {
    const at = (config: unknown, path: string) => path.split('.').reduce((node: any, key) => node?.[key], config);

    it('accepts both ends of every declared range and refuses one past each, with the range in the message', () => {
      const integers = VARIABLES.filter((v) => v.kind.min !== undefined);
      expect(integers.map((v) => v.name)).toEqual(expect.arrayContaining(['PORT', 'JOB_RETENTION_DAYS', 'EVENTS_RETENTION_HOURS']));
      for (const { name, kind } of integers) {
        const [min, max] = [kind.min!, kind.max!];
        for (const inside of [min, max]) expect(problemsOf({ [name]: String(inside) }), `${name}=${inside}`).toEqual([]);
        for (const outside of [min - 1, max + 1]) {
          expect(problemsOf({ [name]: String(outside) }), `${name}=${outside}`).toEqual([
            `${name} must be a whole number from ${min} to ${max}, got "${outside}"`,
          ]);
        }
      }
    });

    it('pins the ranges that operators rely on', () => {
      expect(problemsOf({ JOB_RETENTION_DAYS: '3651', EVENTS_RETENTION_HOURS: '24', PORT: '65536' })).toEqual([
        'PORT must be a whole number from 1 to 65535, got "65536"',
        'JOB_RETENTION_DAYS must be a whole number from 1 to 3650, got "3651"',
        'EVENTS_RETENTION_HOURS must be a whole number from 25 to 87600, got "24"',
      ]);
    });

    it('accepts every declared word of a choice and refuses any other', () => {
      const choices = VARIABLES.filter((v) => v.kind.values !== undefined);
      expect(choices.map((v) => v.name)).toEqual(expect.arrayContaining(['ROLE', 'LOG_LEVEL', 'SKIP_MIGRATIONS']));
      for (const { name, kind } of choices) {
        for (const word of kind.values!) expect(problemsOf({ [name]: word }), `${name}=${word}`).toEqual([]);
        expect(problemsOf({ [name]: 'bogus' })).toEqual([`${name} must be one of ${kind.values!.join(', ')}, got "bogus"`]);
      }
    });

    it("puts each variable's value where its declaration says, and its default when unset", () => {
      const defaults = loadConfig({});
      for (const variable of VARIABLES.filter((v) => v.at !== undefined)) {
        if (variable.default === undefined) expect(at(defaults, variable.at!), variable.name).toBeUndefined();
        else expect(at(defaults, variable.at!), variable.name).toEqual(at(loadConfig({ [variable.name]: variable.default }), variable.at!));
      }
      expect(
        loadConfig({ JOB_TIMEOUT_GRACE_SECONDS: '7', APNS_PRODUCTION: '1', LOG_LEVEL: 'warn', APNS_MAX_PER_SECOND: '9' }),
      ).toMatchObject({
        jobTimeouts: { graceSeconds: 7 },
        apns: { production: true },
        logLevel: 'warn',
        pacing: { apns: 9 },
      });
      expect(at(defaults, 'expo.baseUrl')).toBe('https://exp.host');
    });

    it('never echoes the value of any variable marked sensitive, whatever its kind refuses', () => {
      const secrets = VARIABLES.filter((v) => v.sensitive);
      expect(secrets.map((v) => v.name)).toEqual(expect.arrayContaining(['DATABASE_URL', 'AUTH_JWT_SECRET', 'NUDGE_SECRET_KEY']));
      for (const { name, kind } of secrets) {
        const bad = 'hunter2 !';
        if ('value' in kind.parse(bad)) continue; // the kind takes any text: nothing to refuse
        const problems = problemsOf({ [name]: bad });
        expect(problems.join('\n'), name).toMatch(new RegExp(`^${name} must be`));
        expect(problems.join('\n'), name).not.toContain('hunter2');
      }
    });

    it('names only declared variables in its rules, and keeps the three VAPID_* together', () => {
      const names = new Set(VARIABLES.map((v) => v.name));
      for (const v of VARIABLES)
        for (const other of [...(v.requires ?? []), ...(v.onlyWith ? [v.onlyWith] : [])]) expect(names).toContain(other);
      expect(problemsOf({ VAPID_PUBLIC_KEY: 'k', VAPID_SUBJECT: 'mailto:ops@example.com' })).toEqual([
        'VAPID_PRIVATE_KEY is required when VAPID_PUBLIC_KEY is set',
      ]);
      expect(problemsOf({ VAPID_SUBJECT: 'someone' })).toEqual([
        'VAPID_SUBJECT must be a mailto: or https:// URL, got "someone"',
        'VAPID_PUBLIC_KEY is required when VAPID_SUBJECT is set',
        'VAPID_PRIVATE_KEY is required when VAPID_SUBJECT is set',
      ]);
    });

    it('turns Expo on with an access token alone', () => {
      expect(loadConfig({}).expo.enabled).toBe(false);
      expect(loadConfig({ EXPO_ACCESS_TOKEN: 't' }).expo).toMatchObject({ enabled: true, accessToken: 't' });
    });
  });
});
