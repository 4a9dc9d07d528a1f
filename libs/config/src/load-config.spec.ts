import { describe, expect, it } from 'vitest';
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
});
