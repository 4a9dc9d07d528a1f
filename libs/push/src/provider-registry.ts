import type { QueryExecutor } from '@nudge/queue';
import { ApnsPushProvider, type ApnsProviderOptions } from './apns.provider.js';
import { ExpoPushProvider, type ExpoProviderOptions } from './expo.provider.js';
import { FcmPushProvider, type FcmProviderOptions } from './fcm.provider.js';
import type { PushPlatform, PushProvider } from './push-provider.js';
import { SimulatedPushProvider, type SimulatedPushProviderOptions } from './simulated.provider.js';
import { WebPushProvider, type WebPushProviderOptions } from './web-push.provider.js';

/** Shaped like the config lib's `apns` and `fcm` sections, without depending on it. */
export interface PushCredentials {
  apns?: {
    keyFile?: string;
    /** The `.p8` key's PEM text instead of its file (an app's credentials). */
    key?: string;
    keyId?: string;
    teamId?: string;
    topic?: string;
    production?: boolean;
  };
  fcm?: { serviceAccountFile?: string; serviceAccount?: FcmServiceAccount };
  webPush?: { vapidPublicKey?: string; vapidPrivateKey?: string; vapidSubject?: string };
  expo?: { enabled?: boolean; accessToken?: string; baseUrl?: string };
}

export interface PushProviderChoice {
  ios: 'apns' | 'simulated';
  android: 'fcm' | 'simulated';
  web: 'webpush' | 'simulated';
  expo: 'expo' | 'simulated';
}

/** The fields of a Firebase service-account JSON that firebase-admin needs. */
export interface FcmServiceAccount {
  project_id: string;
  client_email: string;
  private_key: string;
}

const APNS_SETTINGS = [
  ['keyFile', 'APNS_KEY_FILE'],
  ['keyId', 'APNS_KEY_ID'],
  ['teamId', 'APNS_TEAM_ID'],
  ['topic', 'APNS_TOPIC'],
] as const;

/** APNs once every APNS_* setting is present, FCM once a service account is, Web Push once the VAPID keys are; else simulated. */
export function choosePushProviders(credentials: PushCredentials): PushProviderChoice {
  const apns = credentials.apns ?? {};
  const vapid = credentials.webPush ?? {};
  return {
    ios: (apns.key || apns.keyFile) && apns.keyId && apns.teamId && apns.topic ? 'apns' : 'simulated',
    android: credentials.fcm?.serviceAccountFile || credentials.fcm?.serviceAccount ? 'fcm' : 'simulated',
    web: vapid.vapidPublicKey && vapid.vapidPrivateKey && vapid.vapidSubject ? 'webpush' : 'simulated',
    // Expo needs no credentials (an access token only with enhanced security): it is switched on.
    expo: credentials.expo?.enabled || credentials.expo?.accessToken ? 'expo' : 'simulated',
  };
}

/** One line for the boot log, e.g. `push: iOS via APNs (sandbox); Android simulated (FCM_SERVICE_ACCOUNT_FILE not set)`. */
export function describePushProviders(credentials: PushCredentials): string {
  const choice = choosePushProviders(credentials);
  const ios =
    choice.ios === 'apns'
      ? `iOS via APNs (${credentials.apns?.production ? 'production' : 'sandbox'})`
      : `iOS simulated (${APNS_SETTINGS.filter(([key]) => !credentials.apns?.[key])
          .map(([, name]) => name)
          .join(', ')} not set)`;
  const android = choice.android === 'fcm' ? 'Android via FCM' : 'Android simulated (FCM_SERVICE_ACCOUNT_FILE not set)';
  const web = choice.web === 'webpush' ? 'web via Web Push' : 'web simulated (VAPID_* not set)';
  const expo = choice.expo === 'expo' ? 'Expo via Expo push' : 'Expo simulated (EXPO_PUSH_ENABLED not set)';
  return `push: ${ios}; ${android}; ${web}; ${expo}; simulated pushes are recorded in simulated_pushes`;
}

export interface PushProviders {
  readonly choice: PushProviderChoice;
  readonly ios: PushProvider;
  readonly android: PushProvider;
  readonly web: PushProvider;
  readonly expo: PushProvider;
  forPlatform(platform: PushPlatform): PushProvider;
  close(): Promise<void>;
}

export interface PushProviderDependencies {
  /** Where the simulated provider records its pushes. */
  db: QueryExecutor;
  /** Merged over what the credentials give: endpoints, timeouts, clock (tests point these at the fakes). */
  apns?: Partial<ApnsProviderOptions>;
  fcm?: Partial<FcmProviderOptions>;
  webPush?: Partial<WebPushProviderOptions>;
  expo?: Partial<ExpoProviderOptions>;
  simulated?: SimulatedPushProviderOptions;
}

/** Builds the provider of each platform as `choosePushProviders` decides. */
export function createPushProviders(credentials: PushCredentials, deps: PushProviderDependencies): PushProviders {
  const choice = choosePushProviders(credentials);
  let simulated: SimulatedPushProvider | undefined;
  const simulatedProvider = () => (simulated ??= new SimulatedPushProvider(deps.db, deps.simulated));

  const apns = credentials.apns ?? {};
  const ios: PushProvider =
    choice.ios === 'apns'
      ? new ApnsPushProvider({
          key: apns.key,
          keyFile: apns.keyFile,
          keyId: apns.keyId!,
          teamId: apns.teamId!,
          topic: apns.topic!,
          production: apns.production ?? false,
          ...deps.apns,
        })
      : simulatedProvider();
  const android: PushProvider =
    choice.android === 'fcm'
      ? new FcmPushProvider({
          serviceAccountFile: credentials.fcm?.serviceAccountFile,
          serviceAccount: credentials.fcm?.serviceAccount,
          ...deps.fcm,
        })
      : simulatedProvider();

  const vapid = credentials.webPush ?? {};
  const web: PushProvider =
    choice.web === 'webpush'
      ? new WebPushProvider({
          vapidPublicKey: vapid.vapidPublicKey!,
          vapidPrivateKey: vapid.vapidPrivateKey!,
          vapidSubject: vapid.vapidSubject!,
          ...deps.webPush,
        })
      : simulatedProvider();

  const expo: PushProvider =
    choice.expo === 'expo'
      ? new ExpoPushProvider({ accessToken: credentials.expo?.accessToken, baseUrl: credentials.expo?.baseUrl, ...deps.expo })
      : simulatedProvider();

  const byPlatform: Record<PushPlatform, PushProvider> = { ios, android, web, expo };
  return {
    choice,
    ios,
    android,
    web,
    expo,
    forPlatform: (platform) => byPlatform[platform],
    async close() {
      await Promise.all([...new Set(Object.values(byPlatform))].map((provider) => provider.close()));
    },
  };
}
