// The one environment schema shared by the API and the worker. Each entry says
// how to read one variable; `loadConfig` applies all of them and reports every
// bad variable at once, so a broken deployment fails at boot with one message.

export type Role = 'all' | 'api' | 'worker';

export interface Config {
  nodeEnv: string;
  databaseUrl: string | undefined;
  port: number;
  role: Role;
  authJwtSecret: string;
  /** True when AUTH_JWT_SECRET was not set and the development secret is in use. */
  usingDevelopmentSecret: boolean;
  /** Tokens from an identity provider (RS256/ES256 against its JWKS); undefined: HS256 only. */
  authProvider: AuthProviderConfig | undefined;
  workerConcurrency: number;
  /** Slots of a worker process that only send_notification jobs use (a reminder herd cannot take them); 0: they share workerConcurrency. */
  notificationConcurrency: number;
  jobLeaseSeconds: number;
  /** How long a handler may run before its signal is aborted and the attempt fails (seconds), and how long it then has to stop before its job is given up to the reaper. */
  jobTimeouts: { sendReminderSeconds: number; sendNotificationSeconds: number; graceSeconds: number };
  reminderJitterSeconds: number;
  jobRetentionDays: number;
  /** Dead jobs are kept longer than other finished ones, for someone to look at or retry. */
  jobDeadRetentionDays: number;
  /** Events (the feed, and what webhook deliveries read) are pruned after this many hours. */
  eventsRetentionHours: number;
  skipMigrations: boolean;
  logLevel: string;
  workerHealthFile: string | undefined;
  /** 0: off. Otherwise the worker serves its own /metrics (its per-process counters) on this port. */
  workerMetricsPort: number;
  /** Requests per minute per user (token subject); 0 disables. */
  rateLimitPerMinute: number;
  /** Requests per minute per client IP, authenticated or not; 0 disables. */
  rateLimitPerIpPerMinute: number;
  /** Event pushes (send_notification) per user in a rolling hour; over it they are skipped (rate_limited). 0: no cap. */
  notificationsPerUserPerHour: number;
  apns: {
    keyFile: string | undefined;
    keyId: string | undefined;
    teamId: string | undefined;
    topic: string | undefined;
    production: boolean;
  };
  fcm: { serviceAccountFile: string | undefined };
  /** Web Push (VAPID); all three set, or none (simulated web pushes). */
  webPush: { vapidPublicKey: string | undefined; vapidPrivateKey: string | undefined; vapidSubject: string | undefined };
  /** Expo's push service: on when enabled or given an access token; else simulated. */
  expo: { enabled: boolean; accessToken: string | undefined; baseUrl: string };
  /** Sends a second per provider and app, shared by every worker (docs/pacing.md); undefined: unpaced until the provider answers 429. */
  pacing: { fcm: number; expo: number; apns: number | undefined; webpush: number | undefined };
  /** Testing only: every simulated push hangs for good (a wedged worker). */
  simulatedPushHang: boolean;
  /** NUDGE_SECRET_KEY decoded (at least 32 bytes): seals the apps' push credentials (docs/apps.md); undefined: apps cannot hold secrets. */
  secretKey: Buffer | undefined;
  /** OpenTelemetry (docs/tracing.md): spans are exported over OTLP/HTTP only when otlpEndpoint is set. */
  tracing: { otlpEndpoint: string | undefined; serviceName: string | undefined };
}

export interface AuthProviderConfig {
  jwksUrl: URL;
  issuer: string;
  audience: string;
  /** The claim that holds the user id (`sub`). */
  userClaim: string;
  /** The claim that lists a token's scopes; undefined: provider tokens carry none (never ops). */
  scopeClaim: string | undefined;
  /** At most one JWKS fetch per this many seconds (an unknown `kid` or a failed fetch waits this long). */
  jwksCooldownSeconds: number;
}

export interface VariableSpec {
  name: string;
  description: string;
  /** Secrets are never printed, not even in the error that rejects them. */
  sensitive?: boolean;
  default?: string;
}

/** Every variable Nudge reads; docs/configuration.md lists them (test/app/docs.integration-spec.ts checks it). */
export const VARIABLES: readonly VariableSpec[] = [
  { name: 'NODE_ENV', description: '`production` requires AUTH_JWT_SECRET', default: 'development' },
  { name: 'DATABASE_URL', description: 'PostgreSQL URL; unset: an embedded PostgreSQL under ./.data/postgres', sensitive: true },
  { name: 'PORT', description: 'HTTP port of the API', default: '3000' },
  { name: 'ROLE', description: '`all` (API and worker in one process), `api` or `worker`', default: 'all' },
  { name: 'AUTH_JWT_SECRET', description: 'HS256 secret for bearer tokens (at least 32 characters)', sensitive: true },
  {
    name: 'AUTH_JWKS_URL',
    description:
      "an identity provider's JWKS URL (https; http only on loopback): RS256 and ES256 tokens verified against its keys; unset: HS256 tokens only",
  },
  { name: 'AUTH_ISSUER', description: 'the `iss` that provider tokens must carry; required with AUTH_JWKS_URL' },
  { name: 'AUTH_AUDIENCE', description: 'the `aud` that provider tokens must carry; required with AUTH_JWKS_URL' },
  {
    name: 'AUTH_USER_CLAIM',
    description: 'the claim of a provider token that holds the user id (at most 128 characters, no control characters)',
    default: 'sub',
  },
  {
    name: 'AUTH_SCOPE_CLAIM',
    description:
      'the claim of a provider token that lists its scopes (a space-separated string or an array); `ops` in it grants ops; unset: provider tokens never grant ops',
  },
  {
    name: 'AUTH_JWKS_COOLDOWN_SECONDS',
    description: 'at most one JWKS fetch per this many seconds (an unknown `kid` refetches once the cooldown has passed)',
    default: '30',
  },
  {
    name: 'WORKER_CONCURRENCY',
    description: 'jobs one worker process runs at once (a batch of reminders takes one slot per job)',
    default: '100',
  },
  {
    name: 'NOTIFICATION_CONCURRENCY',
    description:
      'slots of each worker process for send_notification jobs alone, so a reminder herd never delays them (0: they share WORKER_CONCURRENCY)',
    default: '20',
  },
  { name: 'JOB_LEASE_SECONDS', description: 'how long a claimed job is held before the reaper returns it', default: '60' },
  {
    name: 'SEND_REMINDER_TIMEOUT_SECONDS',
    description: 'a batch of send_reminder jobs running longer than this is aborted and retried',
    default: '120',
  },
  {
    name: 'SEND_NOTIFICATION_TIMEOUT_SECONDS',
    description: 'a send_notification job running longer than this is aborted and retried',
    default: '30',
  },
  {
    name: 'JOB_TIMEOUT_GRACE_SECONDS',
    description:
      'how long a timed-out handler has to stop before its job is given up to the reaper (its slot stays taken until it returns)',
    default: '10',
  },
  { name: 'REMINDER_JITTER_SECONDS', description: 'spread of reminders due at the same minute (0 disables)', default: '0' },
  { name: 'JOB_RETENTION_DAYS', description: 'succeeded and cancelled jobs are pruned after this many days', default: '14' },
  { name: 'JOB_DEAD_RETENTION_DAYS', description: 'dead jobs are pruned after this many days', default: '30' },
  {
    name: 'EVENTS_RETENTION_HOURS',
    description: 'events (GET /v1/ops/events, and what webhook deliveries read) are pruned after this many hours',
    default: '168',
  },
  { name: 'SKIP_MIGRATIONS', description: '`1` skips migrating at boot', default: '0' },
  { name: 'LOG_LEVEL', description: 'pino level', default: 'info' },
  { name: 'WORKER_HEALTH_FILE', description: 'a file the worker touches every few seconds, for container healthchecks' },
  { name: 'WORKER_METRICS_PORT', description: 'a port on which a worker process serves /metrics (0: off)', default: '0' },
  {
    name: 'RATE_LIMIT_PER_MINUTE',
    description: 'API requests per minute per user (token subject; ops tokens exempt); 0 disables',
    default: '600',
  },
  { name: 'RATE_LIMIT_PER_IP_PER_MINUTE', description: 'API requests per minute per client IP; 0 disables', default: '6000' },
  {
    name: 'NOTIFICATIONS_PER_USER_PER_HOUR',
    description: 'event pushes (send_notification) per user in a rolling hour, beyond which they are skipped (rate_limited); 0: no cap',
    default: '0',
  },
  { name: 'APNS_KEY_FILE', description: 'path of the APNs `.p8` token key; unset: simulated iOS pushes' },
  { name: 'APNS_KEY_ID', description: 'APNs key id' },
  { name: 'APNS_TEAM_ID', description: 'Apple team id' },
  { name: 'APNS_TOPIC', description: 'the app bundle id' },
  { name: 'APNS_PRODUCTION', description: '`true` for the production APNs endpoint', default: 'false' },
  {
    name: 'FCM_SERVICE_ACCOUNT_FILE',
    description: 'path of the Firebase service-account JSON; unset: simulated Android pushes',
    sensitive: false,
  },
  {
    name: 'OTEL_EXPORTER_OTLP_ENDPOINT',
    description:
      "an OpenTelemetry collector's OTLP/HTTP base URL (`http://localhost:4318`); spans go to its `/v1/traces` (docs/tracing.md); unset: tracing is off",
  },
  {
    name: 'OTEL_SERVICE_NAME',
    description: "the `service.name` of this process's spans; unset: `nudge-api`, `nudge-worker`, or `nudge` for ROLE=all",
  },
  {
    name: 'VAPID_PUBLIC_KEY',
    description: 'Web Push VAPID public key (base64url; `npx web-push generate-vapid-keys`); unset: simulated web pushes',
  },
  { name: 'VAPID_PRIVATE_KEY', description: 'Web Push VAPID private key (base64url)', sensitive: true },
  {
    name: 'VAPID_SUBJECT',
    description: 'a `mailto:` or `https:` contact the push services can reach about your pushes',
  },
  {
    name: 'EXPO_PUSH_ENABLED',
    description: "`1` sends `expo` devices' pushes through Expo's push service (implied by EXPO_ACCESS_TOKEN); `0`: simulated",
    default: '0',
  },
  {
    name: 'EXPO_ACCESS_TOKEN',
    description: 'an Expo access token, for projects with enhanced push security on',
    sensitive: true,
  },
  { name: 'EXPO_BASE_URL', description: "where Expo's push API is (a relay, or a local fake in tests)", default: 'https://exp.host' },
  {
    name: 'FCM_MAX_PER_SECOND',
    description: 'FCM sends a second per app, shared by all worker processes (docs/pacing.md); a 429 slows it down',
    default: '10000',
  },
  {
    name: 'EXPO_MAX_PER_SECOND',
    description: "Expo push sends a second per app, shared by all worker processes (Expo's limit is 600)",
    default: '600',
  },
  {
    name: 'APNS_MAX_PER_SECOND',
    description: 'APNs sends a second per app, shared by all worker processes; unset: unpaced until APNs answers 429 TooManyRequests',
  },
  {
    name: 'WEB_PUSH_MAX_PER_SECOND',
    description: 'Web Push sends a second, shared by all worker processes; unset: unpaced until a push service answers 429',
  },
  {
    name: 'NUDGE_SECRET_KEY',
    description:
      "at least 32 random bytes as hex or base64 (`openssl rand -base64 32`): the key that encrypts the apps' push credentials (docs/apps.md); unset: apps cannot hold secrets",
    sensitive: true,
  },
  {
    name: 'SIMULATED_PUSH_HANG',
    description: 'testing only: `1` makes every simulated push of this process hang for good, deaf to its timeout (a wedged worker)',
    default: '0',
  },
];

export const DEVELOPMENT_JWT_SECRET = 'nudge-development-secret-do-not-use-in-production';
