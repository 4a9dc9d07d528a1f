import { describe, expect, it } from 'vitest';
import { choosePushProviders, createPushProviders, describePushProviders } from './provider-registry.js';

const apns = { keyFile: '/keys/AuthKey.p8', keyId: 'KEY1234567', teamId: 'TEAM123456', topic: 'com.example.app' };

describe('choosePushProviders', () => {
  it('simulates both platforms without credentials', () => {
    expect(choosePushProviders({})).toEqual({ ios: 'simulated', android: 'simulated', web: 'simulated', expo: 'simulated' });
    expect(describePushProviders({})).toBe(
      'push: iOS simulated (APNS_KEY_FILE, APNS_KEY_ID, APNS_TEAM_ID, APNS_TOPIC not set); ' +
        'Android simulated (FCM_SERVICE_ACCOUNT_FILE not set); web simulated (VAPID_* not set); ' +
        'Expo simulated (EXPO_PUSH_ENABLED not set); ' +
        'simulated pushes are recorded in simulated_pushes',
    );
  });

  it('uses APNs only when every APNs setting is there', () => {
    expect(choosePushProviders({ apns })).toEqual({ ios: 'apns', android: 'simulated', web: 'simulated', expo: 'simulated' });
    expect(choosePushProviders({ apns: { ...apns, topic: undefined } }).ios).toBe('simulated');
    expect(describePushProviders({ apns: { ...apns, topic: '' } })).toMatch(/iOS simulated \(APNS_TOPIC not set\)/);
    expect(describePushProviders({ apns: { ...apns, production: true } })).toMatch(/iOS via APNs \(production\)/);
  });

  it('uses FCM when a service-account file is configured', () => {
    expect(choosePushProviders({ fcm: { serviceAccountFile: '/keys/sa.json' } })).toEqual({
      ios: 'simulated',
      android: 'fcm',
      web: 'simulated',
      expo: 'simulated',
    });
  });

  it('uses Web Push only when the two VAPID keys and the subject are there', () => {
    const webPush = { vapidPublicKey: 'BPub', vapidPrivateKey: 'priv', vapidSubject: 'mailto:ops@example.com' };
    expect(choosePushProviders({ webPush }).web).toBe('webpush');
    expect(choosePushProviders({ webPush: { ...webPush, vapidSubject: undefined } }).web).toBe('simulated');
    expect(describePushProviders({ webPush })).toMatch(/; web via Web Push;/);
  });

  it('uses Expo when switched on or given an access token (Expo itself needs no credentials)', () => {
    expect(choosePushProviders({ expo: { enabled: true } }).expo).toBe('expo');
    expect(choosePushProviders({ expo: { enabled: false, accessToken: 'tok' } }).expo).toBe('expo');
    expect(choosePushProviders({ expo: { enabled: false } }).expo).toBe('simulated');
  });

  it('shares one simulated provider between platforms', async () => {
    const providers = createPushProviders({}, { db: { query: async () => ({}) } });
    expect(providers.ios).toBe(providers.android);
    expect(providers.web).toBe(providers.ios);
    expect(providers.forPlatform('android').name).toBe('simulated');
    expect(providers.forPlatform('web').name).toBe('simulated');
    expect(providers.forPlatform('expo').name).toBe('simulated');
    await providers.close();
  });
});
