import { Inject, Injectable } from '@nestjs/common';
import type pg from 'pg';
import type { Logger } from 'pino';
import { Clock, CONFIG, type Config, DomainError, LOGGER } from '@nudge/config';
import { PG_POOL, withTransaction } from '@nudge/database';
import {
  type AppCredentialsInput,
  type AppCredentialsView,
  checkAppCredentials,
  DEFAULT_APP_ID,
  hasSecrets,
  sealAppCredentials,
  viewAppCredentials,
} from './app-credentials.js';
import { type AppRow, findApp, listApps, listProviderFailures, type ProviderFailure, putApp } from './apps.repository.js';
import { SecretBox } from './secret-box.js';

export interface ProviderFailureView {
  provider: string;
  reason: string;
  since: Date;
  checkedAt: Date;
}

export interface AppView extends AppCredentialsView {
  id: string;
  name: string;
  version: number;
  /** Providers that rejected these credentials: the app's sends to them wait. */
  failing: ProviderFailureView[];
  createdAt: Date;
  updatedAt: Date;
}

/** The ops side of apps: PUT, GET, and the default app's failures (docs/apps.md). */
@Injectable()
export class AppsService {
  private readonly box: SecretBox | undefined;

  constructor(
    @Inject(PG_POOL) private readonly pool: pg.Pool,
    private readonly clock: Clock,
    @Inject(CONFIG) config: Pick<Config, 'secretKey'>,
    @Inject(LOGGER) private readonly logger: Pick<Logger, 'info'>,
  ) {
    this.box = config.secretKey && new SecretBox(config.secretKey);
  }

  /**
   * Creates or replaces app `id`: its name, and each credential section given
   * (null removes one, an absent one is kept). Checked whole before anything
   * is written; every PUT is a new version, which workers pick up on their
   * next send, and clears the app's failure marks.
   */
  async put(id: string, input: AppCredentialsInput & { name: string }): Promise<{ app: AppView; created: boolean }> {
    if (id === DEFAULT_APP_ID) {
      throw DomainError.invalid([
        { path: 'appId', message: 'appId "default" is the credentials of the environment (APNS_*, FCM_*, VAPID_*, EXPO_*)' },
      ]);
    }
    const errors = checkAppCredentials(input);
    if (errors.length > 0) throw DomainError.invalid(errors);
    if (hasSecrets(input) && !this.box) {
      throw new DomainError(
        'unavailable',
        'NUDGE_SECRET_KEY is not set: Nudge cannot encrypt the credentials, so it does not store them. Set it (docs/apps.md) and PUT again.',
      );
    }
    const sections = sealAppCredentials(id, input, this.box);
    const now = this.clock.now();
    const { app, created } = await withTransaction(this.pool, (tx) => putApp(tx, { id, name: input.name, sections }, now));
    // Which sections changed, never their contents.
    const changed = Object.keys(sections);
    this.logger.info({ appId: id, version: app.version, sections: changed }, created ? 'app created' : 'app credentials replaced');
    return { app: viewOf(app, []), created };
  }

  async get(id: string): Promise<AppView> {
    const app = await findApp(this.pool, id);
    if (!app) throw DomainError.notFound(`App ${id}`);
    return viewOf(app, await listProviderFailures(this.pool, id));
  }

  /** Every app, and the providers failing for the default app (the environment's credentials). */
  async list(): Promise<{ apps: AppView[]; defaultApp: { failing: ProviderFailureView[] } }> {
    const [apps, failures] = await Promise.all([listApps(this.pool), listProviderFailures(this.pool)]);
    const of = (appId: string) => failures.filter((f) => f.appId === appId);
    return { apps: apps.map((app) => viewOf(app, of(app.id))), defaultApp: { failing: of(DEFAULT_APP_ID).map(failureView) } };
  }
}

function viewOf(app: AppRow, failures: ProviderFailure[]): AppView {
  return {
    id: app.id,
    name: app.name,
    version: app.version,
    ...viewAppCredentials(app),
    // Marks of an older version were for credentials since replaced.
    failing: failures.filter((f) => f.appVersion === app.version).map(failureView),
    createdAt: app.createdAt,
    updatedAt: app.updatedAt,
  };
}

function failureView(f: ProviderFailure): ProviderFailureView {
  return { provider: f.provider, reason: f.reason, since: f.since, checkedAt: f.checkedAt };
}
