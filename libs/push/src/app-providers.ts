import { DEFAULT_APP_ID } from './app-credentials.js';
import type { PushProviders } from './provider-registry.js';
import type { PushOutcome, PushPlatform, PushProvider, PushProviderName } from './push-provider.js';

/**
 * The providers of each app, built from its credentials on first use and
 * cached by (app, version): a PUT of new credentials makes a new version, so
 * the next send builds new providers (and closes the old ones once their
 * sends have had time to finish) without a restart. The default app is the
 * providers of the environment.
 */
export interface AppProviderSource {
  /** The app's credentials built into providers; throws when they cannot be (a secret that does not open). */
  build(appId: string): Promise<{ version: number; providers: PushProviders } | undefined>;
}

/** How long replaced providers stay open for the sends already under way on them. */
const CLOSE_REPLACED_AFTER_MS = 60_000;

interface Entry {
  version: number;
  providers: Promise<PushProviders>;
}

export class AppProviders {
  private readonly apps = new Map<string, Entry>();
  /** Replaced providers, closed when their timer fires (or at close). */
  private readonly retired = new Map<Promise<PushProviders>, NodeJS.Timeout>();

  constructor(
    readonly defaults: PushProviders,
    private readonly source?: AppProviderSource,
  ) {}

  /** The providers of `appId` at `version` (its `apps.version`, read with the device); the default app's for 'default'. */
  async forApp(appId: string, version: number | null): Promise<PushProviders> {
    if (appId === DEFAULT_APP_ID || version === null || !this.source) return this.defaults;
    const cached = this.apps.get(appId);
    if (cached && cached.version >= version) return cached.providers;
    const entry: Entry = {
      version,
      providers: this.load(appId).then(({ providers, usable }) => {
        // Not kept when they could not be built (a database error, a key that does not open): the next send tries again.
        if (!usable && this.apps.get(appId) === entry) this.apps.delete(appId);
        return providers;
      }),
    };
    this.apps.set(appId, entry);
    if (cached) this.retire(cached.providers);
    return entry.providers;
  }

  async close(): Promise<void> {
    for (const timer of this.retired.values()) clearTimeout(timer);
    const all = [...this.apps.values()].map((entry) => entry.providers).concat([...this.retired.keys()]);
    this.apps.clear();
    this.retired.clear();
    await Promise.all([this.defaults.close(), ...all.map(closeProviders)]);
  }

  private async load(appId: string): Promise<{ providers: PushProviders; usable: boolean }> {
    try {
      const built = await this.source!.build(appId);
      if (!built) return { providers: failingProviders(`app ${appId} does not exist`), usable: false };
      return { providers: built.providers, usable: true };
    } catch (error) {
      // Every send of the app answers configuration_error with the reason, and waits (PushDelivery marks it failing).
      const reason = `the credentials of app ${appId} cannot be used: ${error instanceof Error ? error.message : String(error)}`;
      return { providers: failingProviders(reason), usable: false };
    }
  }

  private retire(providers: Promise<PushProviders>): void {
    const timer = setTimeout(() => {
      this.retired.delete(providers);
      void closeProviders(providers);
    }, CLOSE_REPLACED_AFTER_MS);
    timer.unref();
    this.retired.set(providers, timer);
  }
}

async function closeProviders(providers: Promise<PushProviders>): Promise<void> {
  try {
    await (await providers).close();
  } catch {
    // Closing is best effort: a provider that fails to close holds nothing we need.
  }
}

const PROVIDER_OF: Record<PushPlatform, PushProviderName> = { ios: 'apns', android: 'fcm', web: 'webpush', expo: 'expo' };

/** Providers that answer every send with `configuration_error`: an app whose credentials cannot be opened. */
function failingProviders(reason: string): PushProviders {
  const of = (platform: PushPlatform): PushProvider => ({
    name: PROVIDER_OF[platform],
    send: async (): Promise<PushOutcome> => ({ kind: 'configuration_error', reason }),
    close: async () => undefined,
  });
  const byPlatform = { ios: of('ios'), android: of('android'), web: of('web'), expo: of('expo') };
  return {
    choice: { ios: 'apns', android: 'fcm', web: 'webpush', expo: 'expo' },
    ...byPlatform,
    forPlatform: (platform) => byPlatform[platform],
    close: async () => undefined,
  };
}
