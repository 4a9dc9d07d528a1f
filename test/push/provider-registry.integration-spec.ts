import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createPushProviders, describePushProviders } from '@nudge/push';
import { generateApnsSigningKey, startFakeApns, type FakeApns } from './fakes/fake-apns.js';
import { connectToFakeFcm, fakeFcmCredential, startFakeFcm, type FakeFcm } from './fakes/fake-fcm.js';

// How an end-to-end test wires the real providers to the fakes: credentials as
// the config lib reads them, endpoints and the FCM credential as overrides.
const signing = generateApnsSigningKey();
let apns: FakeApns;
let fcm: FakeFcm;
let folder: string;

beforeAll(async () => {
  [apns, fcm] = await Promise.all([startFakeApns(signing), startFakeFcm()]);
  folder = await mkdtemp(join(tmpdir(), 'nudge-push-registry-'));
});

afterAll(async () => {
  await Promise.all([apns.stop(), fcm.stop()]);
  await rm(folder, { recursive: true, force: true });
});

describe('createPushProviders', () => {
  it('uses APNs and FCM when both are configured, and each push reaches its service', async () => {
    const keyFile = join(folder, 'AuthKey.p8');
    await writeFile(keyFile, signing.privateKey);
    const credentials = {
      apns: { keyFile, keyId: signing.keyId, teamId: signing.teamId, topic: 'com.example.nudge', production: false },
      fcm: { serviceAccountFile: join(folder, 'unused-service-account.json') },
    };
    const providers = createPushProviders(credentials, {
      db: { query: async () => ({}) },
      apns: { address: apns.address, port: apns.port, ca: apns.ca },
      fcm: { credential: fakeFcmCredential(fcm), projectId: fcm.projectId, connect: connectToFakeFcm(fcm) },
    });
    try {
      expect(providers.choice).toEqual({ ios: 'apns', android: 'fcm', web: 'simulated', expo: 'simulated' });
      expect(describePushProviders(credentials)).toBe(
        'push: iOS via APNs (sandbox); Android via FCM; web simulated (VAPID_* not set); Expo simulated (EXPO_PUSH_ENABLED not set); simulated pushes are recorded in simulated_pushes',
      );
      const iosToken = 'cd'.repeat(32);
      expect(
        await providers.forPlatform('ios').send({ token: iosToken, platform: 'ios', title: 'Hi', collapseId: 'nudge:1' }),
      ).toMatchObject({ kind: 'sent' });
      expect(
        await providers.forPlatform('android').send({ token: 'fcm-registry', platform: 'android', title: 'Hi', collapseId: 'nudge:1' }),
      ).toMatchObject({ kind: 'sent' });
      expect(apns.requestsFor(iosToken)).toHaveLength(1);
      expect(fcm.requestsFor('fcm-registry')).toHaveLength(1);
    } finally {
      await providers.close();
    }
  });
});
