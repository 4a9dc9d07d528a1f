import { createECDH, createPrivateKey } from 'node:crypto';
import type { FieldError } from '@nudge/config';
import type { PushCredentials } from './provider-registry.js';
import { type SecretBox, secretFingerprint } from './secret-box.js';

// An app's push credentials: what PUT /v1/ops/apps/{appId} accepts, how they
// are checked (a key that does not parse is refused at the PUT, naming the
// field, rather than failing the first send), how they are stored (public
// parts in the clear, secrets sealed by SecretBox) and what GET shows.

export const APP_ID_PATTERN = /^[a-z0-9][a-z0-9._-]{0,63}$/;
/** The app of a device without one: the credentials of the environment (APNS_*, FCM_*, VAPID_*, EXPO_*). */
export const DEFAULT_APP_ID = 'default';

export interface AppCredentialsInput {
  apns?: { key: string; keyId: string; teamId: string; topic: string; production?: boolean } | null;
  /** The service-account JSON, as text or as the parsed object. */
  fcm?: { serviceAccount: string | Record<string, unknown> } | null;
  expo?: { accessToken: string } | null;
  webPush?: { publicKey: string; privateKey: string; subject: string } | null;
}

export const APP_PROVIDER_SECTIONS = ['apns', 'fcm', 'expo', 'webPush'] as const;
export type AppProviderSection = (typeof APP_PROVIDER_SECTIONS)[number];

/** One secret in a stored section: sealed, with its fingerprint beside it. */
interface StoredSecret {
  sealed: string;
  fingerprint: string;
}

/** The sections as stored (each secret sealed) or as shown (each secret masked). */
interface AppSections<Secret> {
  apns: { keyId: string; teamId: string; topic: string; production: boolean; key: Secret } | null;
  fcm: { projectId: string; clientEmail: string; serviceAccount: Secret } | null;
  expo: { accessToken: Secret } | null;
  webPush: { publicKey: string; subject: string; privateKey: Secret } | null;
}

/** What GET shows of a secret. */
export interface SecretView {
  set: true;
  fingerprint: string;
}

export type StoredAppCredentials = AppSections<StoredSecret>;
export type AppCredentialsView = AppSections<SecretView>;

interface ServiceAccount {
  project_id: string;
  client_email: string;
  private_key: string;
}

const APPLE_ID = /^[A-Z0-9]{10}$/;
const BUNDLE_ID = /^[A-Za-z0-9-]+(\.[A-Za-z0-9-]+)+$/;

/** Every problem of the given sections, each naming its field (`apns.key`, `fcm.serviceAccount`…). */
export function checkAppCredentials(input: AppCredentialsInput): FieldError[] {
  const errors: FieldError[] = [];
  const problem = (path: string, message: string) => errors.push({ path, message });
  if (input.apns) {
    if (!isP256PrivateKey(input.apns.key)) problem('apns.key', 'apns.key must be the .p8 file contents: a PEM EC (P-256) private key');
    if (!APPLE_ID.test(input.apns.keyId)) problem('apns.keyId', 'apns.keyId must be the 10-character key id (A-Z, 0-9)');
    if (!APPLE_ID.test(input.apns.teamId)) problem('apns.teamId', 'apns.teamId must be the 10-character team id (A-Z, 0-9)');
    if (input.apns.topic.length > 255 || !BUNDLE_ID.test(input.apns.topic)) {
      problem('apns.topic', 'apns.topic must be the app bundle id, e.g. com.example.app');
    }
  }
  if (input.fcm) {
    const account = serviceAccountOf(input.fcm.serviceAccount);
    if (typeof account === 'string') problem('fcm.serviceAccount', account);
  }
  if (input.expo && !/^[\x21-\x7e]{1,512}$/.test(input.expo.accessToken)) {
    problem('expo.accessToken', 'expo.accessToken must be 1 to 512 printable characters without spaces');
  }
  if (input.webPush) {
    const { publicKey, privateKey, subject } = input.webPush;
    const pub = base64url(publicKey);
    const priv = base64url(privateKey);
    if (!pub || pub.length !== 65 || pub[0] !== 4) {
      problem('webPush.publicKey', 'webPush.publicKey must be an uncompressed P-256 public key, base64url (65 bytes)');
    }
    if (!priv || priv.length !== 32) problem('webPush.privateKey', 'webPush.privateKey must be a P-256 private key, base64url (32 bytes)');
    else if (pub && pub.length === 65 && !publicKeyOf(priv)?.equals(pub)) {
      problem('webPush.privateKey', 'webPush.privateKey is not the private key of webPush.publicKey');
    }
    if (!/^(mailto:\S+|https:\/\/\S+)$/.test(subject)) problem('webPush.subject', 'webPush.subject must be a mailto: or https:// URL');
  }
  return errors;
}

/** The sections sealed for storage; call only with sections that checkAppCredentials passed (and a box when hasSecrets). */
export function sealAppCredentials(appId: string, input: AppCredentialsInput, box: SecretBox | undefined): Partial<StoredAppCredentials> {
  const sealed = (field: string, plaintext: string): StoredSecret => {
    if (!box) throw new Error('sealing needs NUDGE_SECRET_KEY');
    return { sealed: box.seal(plaintext, `${appId}/${field}`), fingerprint: secretFingerprint(plaintext) };
  };
  const stored: Partial<StoredAppCredentials> = {};
  if (input.apns !== undefined) {
    stored.apns = input.apns && {
      keyId: input.apns.keyId,
      teamId: input.apns.teamId,
      topic: input.apns.topic,
      production: input.apns.production ?? false,
      key: sealed('apns.key', input.apns.key),
    };
  }
  if (input.fcm !== undefined) {
    const account = input.fcm && (serviceAccountOf(input.fcm.serviceAccount) as ServiceAccount);
    stored.fcm = account && {
      projectId: account.project_id,
      clientEmail: account.client_email,
      serviceAccount: sealed('fcm.serviceAccount', JSON.stringify(account)),
    };
  }
  if (input.expo !== undefined) stored.expo = input.expo && { accessToken: sealed('expo.accessToken', input.expo.accessToken) };
  if (input.webPush !== undefined) {
    stored.webPush = input.webPush && {
      publicKey: input.webPush.publicKey,
      subject: input.webPush.subject,
      privateKey: sealed('webPush.privateKey', input.webPush.privateKey),
    };
  }
  return stored;
}

/** Whether any given section carries a secret (then NUDGE_SECRET_KEY is needed). */
export function hasSecrets(input: AppCredentialsInput): boolean {
  return APP_PROVIDER_SECTIONS.some((section) => Boolean(input[section]));
}

/** GET's view: public parts, and of each secret only that it is set and its fingerprint. */
export function viewAppCredentials(stored: StoredAppCredentials): AppCredentialsView {
  const shown = (secret: StoredSecret): SecretView => ({ set: true, fingerprint: secret.fingerprint });
  const { apns, fcm, expo, webPush } = stored;
  return {
    apns: apns && { keyId: apns.keyId, teamId: apns.teamId, topic: apns.topic, production: apns.production, key: shown(apns.key) },
    fcm: fcm && { projectId: fcm.projectId, clientEmail: fcm.clientEmail, serviceAccount: shown(fcm.serviceAccount) },
    expo: expo && { accessToken: shown(expo.accessToken) },
    webPush: webPush && { publicKey: webPush.publicKey, subject: webPush.subject, privateKey: shown(webPush.privateKey) },
  };
}

/**
 * The credentials the providers are built from, secrets opened. A platform
 * without a section is simulated, as it is for the environment's; Expo is on
 * when the environment turns it on or the app has a token. Throws a
 * SecretBoxError when a secret does not open (another NUDGE_SECRET_KEY).
 */
export function openAppCredentials(
  appId: string,
  stored: StoredAppCredentials,
  box: SecretBox,
  expo: { enabled: boolean; baseUrl?: string },
): PushCredentials {
  const open = (field: string, secret: StoredSecret) => box.open(secret.sealed, `${appId}/${field}`);
  const { apns, fcm, webPush } = stored;
  return {
    apns: apns
      ? { key: open('apns.key', apns.key), keyId: apns.keyId, teamId: apns.teamId, topic: apns.topic, production: apns.production }
      : {},
    fcm: fcm ? { serviceAccount: JSON.parse(open('fcm.serviceAccount', fcm.serviceAccount)) as ServiceAccount } : {},
    webPush: webPush
      ? {
          vapidPublicKey: webPush.publicKey,
          vapidPrivateKey: open('webPush.privateKey', webPush.privateKey),
          vapidSubject: webPush.subject,
        }
      : {},
    expo: {
      enabled: expo.enabled || Boolean(stored.expo),
      accessToken: stored.expo ? open('expo.accessToken', stored.expo.accessToken) : undefined,
      baseUrl: expo.baseUrl,
    },
  };
}

function isP256PrivateKey(pem: string): boolean {
  try {
    const key = createPrivateKey(pem);
    return key.asymmetricKeyType === 'ec' && key.asymmetricKeyDetails?.namedCurve === 'prime256v1';
  } catch {
    return false;
  }
}

/** The service account, or what is wrong with it. */
function serviceAccountOf(value: string | Record<string, unknown>): ServiceAccount | string {
  let parsed: unknown = value;
  if (typeof value === 'string') {
    try {
      parsed = JSON.parse(value);
    } catch {
      return 'fcm.serviceAccount must be the service-account JSON (as text or as an object)';
    }
  }
  const account = parsed as Partial<Record<keyof ServiceAccount, unknown>> | null;
  if (typeof account !== 'object' || account === null) return 'fcm.serviceAccount must be a JSON object';
  const missing = (['project_id', 'client_email', 'private_key'] as const).filter((k) => typeof account[k] !== 'string' || !account[k]);
  if (missing.length > 0) return `fcm.serviceAccount lacks ${missing.join(', ')}`;
  try {
    if (createPrivateKey(account.private_key as string).asymmetricKeyType !== 'rsa') throw new Error('not RSA');
  } catch {
    return 'fcm.serviceAccount.private_key must be a PEM RSA private key';
  }
  return {
    project_id: account.project_id as string,
    client_email: account.client_email as string,
    private_key: account.private_key as string,
  };
}

function base64url(text: string): Buffer | undefined {
  return /^[A-Za-z0-9_-]+={0,2}$/.test(text) ? Buffer.from(text, 'base64url') : undefined;
}

function publicKeyOf(privateKey: Buffer): Buffer | undefined {
  try {
    const ecdh = createECDH('prime256v1');
    ecdh.setPrivateKey(privateKey);
    return ecdh.getPublicKey();
  } catch {
    return undefined;
  }
}
