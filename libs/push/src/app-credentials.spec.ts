import { generateKeyPairSync, randomBytes } from 'node:crypto';
import webpush from 'web-push';
import { describe, expect, it } from 'vitest';
import {
  checkAppCredentials,
  openAppCredentials,
  sealAppCredentials,
  viewAppCredentials,
  type StoredAppCredentials,
} from './app-credentials.js';
import { SecretBox } from './secret-box.js';

const encoding = { publicKeyEncoding: { type: 'spki', format: 'pem' }, privateKeyEncoding: { type: 'pkcs8', format: 'pem' } } as const;
const pem = (type: 'ec' | 'rsa', curve = 'prime256v1'): string =>
  type === 'ec'
    ? generateKeyPairSync('ec', {
        namedCurve: curve,
        publicKeyEncoding: encoding.publicKeyEncoding,
        privateKeyEncoding: encoding.privateKeyEncoding,
      }).privateKey
    : generateKeyPairSync('rsa', {
        modulusLength: 2048,
        publicKeyEncoding: encoding.publicKeyEncoding,
        privateKeyEncoding: encoding.privateKeyEncoding,
      }).privateKey;

const p8 = pem('ec');
const rsa = pem('rsa');
const vapid = webpush.generateVAPIDKeys();
const input = {
  apns: { key: p8, keyId: 'ABC123DEFG', teamId: 'TEAM123456', topic: 'com.example.app' },
  fcm: { serviceAccount: { project_id: 'p1', client_email: 'a@p1.iam.gserviceaccount.com', private_key: rsa } },
  expo: { accessToken: 'expo-token' },
  webPush: { publicKey: vapid.publicKey, privateKey: vapid.privateKey, subject: 'https://example.com/contact' },
};

describe('app credentials', () => {
  it('accepts well-formed credentials', () => {
    expect(checkAppCredentials(input)).toEqual([]);
  });

  it('names each field that is wrong', () => {
    const paths = (i: Parameters<typeof checkAppCredentials>[0]) => checkAppCredentials(i).map((e) => e.path);
    expect(paths({ apns: { ...input.apns, key: rsa } })).toEqual(['apns.key']);
    expect(paths({ apns: { ...input.apns, key: pem('ec', 'secp384r1') } })).toEqual(['apns.key']);
    expect(paths({ apns: { ...input.apns, key: 'not a key', teamId: 'team', topic: 'app' } })).toEqual([
      'apns.key',
      'apns.teamId',
      'apns.topic',
    ]);
    expect(paths({ fcm: { serviceAccount: '{"project_id": "p"' } })).toEqual(['fcm.serviceAccount']);
    expect(checkAppCredentials({ fcm: { serviceAccount: { project_id: 'p' } } })[0]!.message).toMatch(/lacks client_email, private_key/);
    expect(paths({ fcm: { serviceAccount: { ...input.fcm.serviceAccount, private_key: p8 } } })).toEqual(['fcm.serviceAccount']);
    expect(paths({ expo: { accessToken: 'has space' } })).toEqual(['expo.accessToken']);
    expect(paths({ webPush: { ...input.webPush, publicKey: 'AAAA' } })).toEqual(['webPush.publicKey']);
    expect(paths({ webPush: { ...input.webPush, privateKey: webpush.generateVAPIDKeys().privateKey } })).toEqual(['webPush.privateKey']);
  });

  it('seals every secret, shows none, and opens them back for the providers', () => {
    const box = new SecretBox(randomBytes(32));
    const stored = sealAppCredentials('shop', input, box) as StoredAppCredentials;
    const text = JSON.stringify(stored) + JSON.stringify(viewAppCredentials(stored));
    for (const secret of [p8.split('\n')[1]!, rsa.split('\n')[1]!, 'expo-token', vapid.privateKey]) expect(text).not.toContain(secret);
    const opened = openAppCredentials('shop', stored, box, { enabled: false });
    expect(opened.apns).toMatchObject({ key: p8, keyId: 'ABC123DEFG', topic: 'com.example.app', production: false });
    expect(opened.fcm?.serviceAccount).toEqual(input.fcm.serviceAccount);
    expect(opened.expo).toMatchObject({ enabled: true, accessToken: 'expo-token' });
    expect(opened.webPush?.vapidPrivateKey).toBe(vapid.privateKey);
    // Bound to the app: another app's id does not open them.
    expect(() => openAppCredentials('other', stored, box, { enabled: false })).toThrow(/does not open/);
  });

  it('null removes a section, absent keeps it', () => {
    expect(sealAppCredentials('shop', { apns: null }, undefined)).toEqual({ apns: null });
    expect(sealAppCredentials('shop', {}, undefined)).toEqual({});
  });
});
