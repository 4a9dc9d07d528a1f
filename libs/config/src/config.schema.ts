// The one environment schema shared by the API and the worker. Each entry is
// the whole truth about one variable: how it is read (its kind, with the range
// or words it accepts), its default, whether it is a secret, the variables it
// goes with, and where it lands in `Config`. `loadConfig` applies the entries,
// the `Config` type is derived from them, and docs/configuration.md's table is
// rendered from them (configuration-docs.ts; a test keeps the page equal).
import {
  contactUrl,
  flag,
  integer,
  type Kind,
  oneOf,
  otlpUrl,
  postgresUrl,
  secret,
  secretKey,
  serviceUrl,
  text,
} from './variable-kinds.js';

export interface VariableSpec {
  name: string;
  /** The meaning, in markdown (links relative to docs/); the range, rules and secrecy are rendered from the fields below. */
  description: string;
  kind: Kind<unknown>;
  default?: string;
  /** Secrets are never printed, not even in the error that rejects them. */
  sensitive?: boolean;
  /** Where the value lands in `Config`: `port`, or `group.key` (`jobTimeouts.graceSeconds`). None: `loadConfig` assembles it by hand. */
  at?: string;
  /** Variables that must be set too when this one is. */
  requires?: readonly string[];
  /** A variable without which this one means nothing (setting it alone is a mistake). */
  onlyWith?: string;
}

const LOG_LEVELS = oneOf('trace', 'debug', 'info', 'warn', 'error', 'fatal', 'silent');

const SCHEMA = [
  {
    name: 'NODE_ENV',
    description: '`production` requires `AUTH_JWT_SECRET` (the Docker image sets `production`)',
    kind: text(),
    default: 'development',
    at: 'nodeEnv',
  },
  {
    name: 'DATABASE_URL',
    description:
      'the PostgreSQL to use; unset: an embedded PostgreSQL 18 under `./.data/postgres`, started with the process and stopped with it',
    kind: postgresUrl,
    sensitive: true,
    at: 'databaseUrl',
  },
  { name: 'PORT', description: 'HTTP port of the API', kind: integer(1, 65535), default: '3000', at: 'port' },
  {
    name: 'ROLE',
    description:
      '`all` (API and worker in one process, what `npm start` runs), `api` or `worker`; `apps/worker` always runs as `worker`, and the API refuses to start with `ROLE=worker`',
    kind: oneOf('all', 'api', 'worker'),
    default: 'all',
    at: 'role',
  },
  {
    name: 'AUTH_JWT_SECRET',
    description:
      'HS256 secret for bearer tokens; required when `NODE_ENV=production`, otherwise unset means a development secret, with a warning',
    kind: secret(32),
    sensitive: true,
  },
  {
    name: 'AUTH_JWKS_URL',
    description:
      "an identity provider's JWKS URL: RS256 and ES256 bearer tokens are verified against its keys, which are cached and fetched again when a token names an unknown `kid`. Unset: HS256 tokens only. See [API: tokens from an identity provider](api.md#tokens-from-an-identity-provider)",
    kind: serviceUrl,
    requires: ['AUTH_ISSUER', 'AUTH_AUDIENCE'],
  },
  {
    name: 'AUTH_ISSUER',
    description: 'the `iss` a provider token must carry',
    kind: text(),
    onlyWith: 'AUTH_JWKS_URL',
  },
  {
    name: 'AUTH_AUDIENCE',
    description:
      "the `aud` a provider token must carry (a provider such as Firebase signs every project's tokens with the same keys: the audience is what makes them yours)",
    kind: text(),
    onlyWith: 'AUTH_JWKS_URL',
  },
  {
    name: 'AUTH_USER_CLAIM',
    description:
      "the claim of a provider token that holds the user id (its value: at most 128 characters, no control characters; otherwise 401). A name with dots is tried as is first (Auth0's `https://…/uid`), then as a path into nested objects",
    kind: text('a claim name'),
    default: 'sub',
  },
  {
    name: 'AUTH_SCOPE_CLAIM',
    description:
      'the claim of a provider token that lists its scopes, a space-separated string or an array (`permissions`, `app_metadata.nudge_scopes`); `ops` in it opens the ops and service routes. Unset: provider tokens never carry a scope, and ops tokens come from `npm run token`',
    kind: text('a claim name'),
    onlyWith: 'AUTH_JWKS_URL',
  },
  {
    name: 'AUTH_JWKS_COOLDOWN_SECONDS',
    description:
      'at most one fetch of the JWKS per this many seconds: a token with an unknown `kid` fetches again only after it, and so does a failed fetch (meanwhile such tokens get 503)',
    kind: integer(1, 3_600),
    default: '30',
  },
  {
    name: 'WORKER_CONCURRENCY',
    description: 'jobs one worker process runs at once (a batch of reminders takes one slot per job)',
    kind: integer(1, 1000),
    default: '100',
    at: 'workerConcurrency',
  },
  {
    name: 'NOTIFICATION_CONCURRENCY',
    description:
      'slots of each worker process that only `send_notification` jobs use, claimed apart from the other kinds, so a herd of reminders never delays an event push by more than a batch; `0`: they share `WORKER_CONCURRENCY`',
    kind: integer(0, 1000),
    default: '20',
    at: 'notificationConcurrency',
  },
  {
    name: 'JOB_LEASE_SECONDS',
    description:
      'how long a claimed job is held before the reaper returns it to the queue; a live worker renews the lease of the jobs it runs',
    kind: integer(5, 86_400),
    default: '60',
    at: 'jobLeaseSeconds',
  },
  {
    name: 'SEND_REMINDER_TIMEOUT_SECONDS',
    description:
      'a batch of `send_reminder` jobs whose handler runs longer than this has its provider calls aborted and its jobs retried with backoff (an attempt used)',
    kind: integer(1, 3_600),
    default: '120',
    at: 'jobTimeouts.sendReminderSeconds',
  },
  {
    name: 'SEND_NOTIFICATION_TIMEOUT_SECONDS',
    description: 'the same for one `send_notification` job',
    kind: integer(1, 3_600),
    default: '30',
    at: 'jobTimeouts.sendNotificationSeconds',
  },
  {
    name: 'JOB_TIMEOUT_GRACE_SECONDS',
    description:
      'how long a timed-out handler has to stop; one that does not is given up: its lease is no longer renewed and the reaper of any worker returns the job once the lease lapses, while the hung handler keeps its slot until it returns (see operations: a wedged worker)',
    kind: integer(0, 600),
    default: '10',
    at: 'jobTimeouts.graceSeconds',
  },
  {
    name: 'REMINDER_JITTER_SECONDS',
    description: 'spreads reminders due at the same minute over this many seconds, deterministically per occurrence (0 disables)',
    kind: integer(0, 3_600),
    default: '0',
    at: 'reminderJitterSeconds',
  },
  {
    name: 'JOB_RETENTION_DAYS',
    description: 'succeeded and cancelled jobs and their `job_runs` are pruned this many days after they finished',
    kind: integer(1, 3_650),
    default: '14',
    at: 'jobRetentionDays',
  },
  {
    name: 'JOB_DEAD_RETENTION_DAYS',
    description: 'dead jobs are kept longer, to be looked at or retried, and pruned this many days after they died',
    kind: integer(1, 3_650),
    default: '30',
    at: 'jobDeadRetentionDays',
  },
  {
    name: 'EVENTS_RETENTION_HOURS',
    description:
      'events are kept this many hours, then pruned hourly: the pull feed `GET /v1/ops/events` serves what is kept, and a webhook delivery whose event was pruned ends unsent. At least 25, so an event outlives its 24 h of webhook retries. See [webhooks](webhooks.md)',
    kind: integer(25, 87_600),
    default: '168',
    at: 'eventsRetentionHours',
  },
  {
    name: 'SKIP_MIGRATIONS',
    description: 'on: do not migrate at boot (run `npm run migrate` yourself)',
    kind: flag,
    default: '0',
    at: 'skipMigrations',
  },
  {
    name: 'LOG_LEVEL',
    description:
      'pino level. Logs are JSON lines, except on a terminal outside `NODE_ENV=production`, where they are written for reading (`12:00:01.234 INFO  message  key=value`; `NO_COLOR` turns the colours off)',
    kind: LOG_LEVELS,
    default: 'info',
    at: 'logLevel',
  },
  {
    name: 'WORKER_HEALTH_FILE',
    description: 'a file a worker process (`apps/worker`) touches every 10 s while it runs, for container healthchecks',
    kind: text('a file path'),
    at: 'workerHealthFile',
  },
  {
    name: 'WORKER_METRICS_PORT',
    description:
      'a worker process (`apps/worker`) serves its own `/metrics` (its completed, failed and retried counters and durations) on this port; `0`: off',
    kind: integer(0, 65535),
    default: '0',
    at: 'workerMetricsPort',
  },
  {
    name: 'RATE_LIMIT_PER_MINUTE',
    description:
      "API requests per minute per user (the token's subject; ops-scope tokens are exempt); over it: 429 with `Retry-After`. `0` disables",
    kind: integer(0, 1_000_000),
    default: '600',
    at: 'rateLimitPerMinute',
  },
  {
    name: 'RATE_LIMIT_PER_IP_PER_MINUTE',
    description:
      "API requests per minute per client IP, checked before authentication; `0` disables (behind a proxy every client has the proxy's IP: raise it or disable it). `/health` and `/metrics` are never limited",
    kind: integer(0, 1_000_000),
    default: '6000',
    at: 'rateLimitPerIpPerMinute',
  },
  {
    name: 'NOTIFICATIONS_PER_USER_PER_HOUR',
    description:
      'event pushes (`send_notification` jobs) a user may get in a rolling hour; one more is skipped (`rate_limited`) when its job runs. Reminders are not counted or capped; time-sensitive notifications count but are not held back. `0`: no cap. See [preferences](preferences.md#the-hourly-cap)',
    kind: integer(0, 1_000_000),
    default: '0',
    at: 'notificationsPerUserPerHour',
  },
  {
    name: 'APNS_KEY_FILE',
    description: 'path of the APNs `.p8` token key; unset: simulated iOS pushes',
    kind: text('a file path'),
    at: 'apns.keyFile',
    requires: ['APNS_KEY_ID', 'APNS_TEAM_ID', 'APNS_TOPIC'],
  },
  { name: 'APNS_KEY_ID', description: 'the APNs key id', kind: text(), at: 'apns.keyId' },
  { name: 'APNS_TEAM_ID', description: 'the Apple team id', kind: text(), at: 'apns.teamId' },
  { name: 'APNS_TOPIC', description: "the app's bundle id", kind: text(), at: 'apns.topic' },
  {
    name: 'APNS_PRODUCTION',
    description: 'on: the production APNs endpoint; off: the sandbox',
    kind: flag,
    default: 'false',
    at: 'apns.production',
  },
  {
    name: 'FCM_SERVICE_ACCOUNT_FILE',
    description: 'path of the Firebase service-account JSON; unset: simulated Android pushes',
    kind: text('a file path'),
    at: 'fcm.serviceAccountFile',
  },
  {
    name: 'OTEL_EXPORTER_OTLP_ENDPOINT',
    description:
      "an OpenTelemetry collector's OTLP/HTTP base URL (`http://localhost:4318`): spans from the API request through the queue to the provider call go to its `/v1/traces`; unset: tracing is off and costs nothing ([tracing](tracing.md))",
    kind: otlpUrl,
    at: 'tracing.otlpEndpoint',
  },
  {
    name: 'OTEL_SERVICE_NAME',
    description: "the `service.name` of this process's spans; unset: `nudge-api`, `nudge-worker`, or `nudge` for `ROLE=all`",
    kind: text(),
    at: 'tracing.serviceName',
  },
  {
    name: 'VAPID_PUBLIC_KEY',
    description:
      'Web Push VAPID public key, base64url (`npx web-push generate-vapid-keys` makes a pair; the browser subscribes with this key as `applicationServerKey`); unset: simulated web pushes. The three `VAPID_*` are set together or not at all',
    kind: text('base64url'),
    at: 'webPush.vapidPublicKey',
    requires: ['VAPID_PRIVATE_KEY', 'VAPID_SUBJECT'],
  },
  {
    name: 'VAPID_PRIVATE_KEY',
    description: 'Web Push VAPID private key',
    kind: text('base64url'),
    sensitive: true,
    at: 'webPush.vapidPrivateKey',
    requires: ['VAPID_PUBLIC_KEY', 'VAPID_SUBJECT'],
  },
  {
    name: 'VAPID_SUBJECT',
    description: 'a contact that push services can reach about your pushes',
    kind: contactUrl,
    at: 'webPush.vapidSubject',
    requires: ['VAPID_PUBLIC_KEY', 'VAPID_PRIVATE_KEY'],
  },
  {
    name: 'EXPO_PUSH_ENABLED',
    description:
      "on: the pushes of `expo` devices go through Expo's push service; off: simulated. Expo needs no credentials unless the project has enhanced push security on",
    kind: flag,
    default: '0',
    at: 'expo.enabled',
  },
  {
    name: 'EXPO_ACCESS_TOKEN',
    description: 'an Expo access token, for projects with enhanced push security; setting it also turns Expo push on',
    kind: text(),
    sensitive: true,
    at: 'expo.accessToken',
  },
  {
    name: 'EXPO_BASE_URL',
    description: "where Expo's push API is: a relay, or a local fake in tests",
    kind: serviceUrl,
    default: 'https://exp.host',
    at: 'expo.baseUrl',
  },
  {
    name: 'FCM_MAX_PER_SECOND',
    description:
      "FCM sends a second per app, shared by all worker processes through PostgreSQL; a 429 (`QUOTA_EXCEEDED`) halves it for a while. FCM's default quota is 600,000 a minute per project. See [pacing](pacing.md)",
    kind: integer(1, 1_000_000),
    default: '10000',
    at: 'pacing.fcm',
  },
  {
    name: 'EXPO_MAX_PER_SECOND',
    description:
      'Expo push sends a second per app, shared by all worker processes (Expo allows 600 a second per project); a 429 halves it for a while',
    kind: integer(1, 1_000_000),
    default: '600',
    at: 'pacing.expo',
  },
  {
    name: 'APNS_MAX_PER_SECOND',
    description:
      'APNs sends a second per app, shared by all worker processes; unset: unpaced until APNs answers 429 `TooManyRequests`, then adaptive (half the rate it was sending at, climbing back)',
    kind: integer(1, 1_000_000),
    at: 'pacing.apns',
  },
  {
    name: 'WEB_PUSH_MAX_PER_SECOND',
    description:
      'Web Push sends a second, shared by all worker processes; unset: unpaced until a push service answers 429, then adaptive as APNs',
    kind: integer(1, 1_000_000),
    at: 'pacing.webpush',
  },
  {
    name: 'NUDGE_SECRET_KEY',
    description:
      'random bytes (`openssl rand -base64 32`): encrypts the push credentials of the apps (`PUT /v1/ops/apps/{appId}`, [apps](apps.md)); unset: an app can hold no secret',
    kind: secretKey,
    sensitive: true,
    at: 'secretKey',
  },
  {
    name: 'SIMULATED_PUSH_HANG',
    description:
      'testing only: on makes every simulated push of this process hang for good, deaf to its signal (a wedged worker, as a provider call that cannot be interrupted would make it); test/reliability/wedged-worker sets it in one of two workers',
    kind: flag,
    default: '0',
    at: 'simulatedPushHang',
  },
] as const satisfies readonly VariableSpec[];

/** Every variable Nudge reads, in the order of docs/configuration.md. */
export const VARIABLES: readonly VariableSpec[] = SCHEMA;

// The `Config` type, derived from the entries: a variable with a default is
// always there, one without may be undefined; `at: 'group.key'` nests.
type Variable = (typeof SCHEMA)[number];
type ValueOf<V> = V extends { kind: Kind<infer T> } ? (V extends { default: string } ? T : T | undefined) : never;
type At<V> = V extends { at: infer A extends string } ? A : never;
// Written over a type parameter so that they distribute: a variable without `at` (never) lands nowhere.
type GroupOf<A> = A extends `${infer G}.${string}` ? G : never;
type KeyIn<A, G extends string> = A extends `${G}.${infer K}` ? K : never;
type TopKey<A> = A extends `${string}.${string}` ? never : A;

/** Each variable's value by name, as the loader read it. */
export type Values = { [V in Variable as V['name']]: ValueOf<V> };
type TopLevel = { [V in Variable as TopKey<At<V>>]: ValueOf<V> };
type Group<G extends string> = { [V in Variable as KeyIn<At<V>, G>]: ValueOf<V> };
type Groups = { [G in GroupOf<At<Variable>>]: Group<G> };

export type Config = TopLevel &
  Groups & {
    /** AUTH_JWT_SECRET, or the development secret outside production. */
    authJwtSecret: string;
    /** True when AUTH_JWT_SECRET was not set and the development secret is in use. */
    usingDevelopmentSecret: boolean;
    /** Tokens from an identity provider (RS256/ES256 against its JWKS); undefined: HS256 only. */
    authProvider: AuthProviderConfig | undefined;
  };

export type Role = Config['role'];

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

export const DEVELOPMENT_JWT_SECRET = 'nudge-development-secret-do-not-use-in-production';
