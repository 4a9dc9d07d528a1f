import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import type { ApnsSigningKey, FakeApns } from './fake-apns.js';
import { connectToFakeFcm, fakeFcmCredential, type FakeFcm } from './fake-fcm.js';

/**
 * The environment and PushModule overrides that point the app's real APNs and
 * FCM clients at the local fakes: the `.p8` key written to `folder`, as the
 * environment would name it.
 */
export async function apnsAndFcmSettings(folder: string, signing: ApnsSigningKey, apns: FakeApns, fcm: FakeFcm) {
  const keyFile = join(folder, 'AuthKey.p8');
  await writeFile(keyFile, signing.privateKey);
  return {
    env: {
      APNS_KEY_FILE: keyFile,
      APNS_KEY_ID: signing.keyId,
      APNS_TEAM_ID: signing.teamId,
      APNS_TOPIC: 'com.example.nudge',
      // Never read: the credential override below stands in for the service account.
      FCM_SERVICE_ACCOUNT_FILE: join(folder, 'service-account.json'),
    },
    push: {
      apns: { address: apns.address, port: apns.port, ca: apns.ca },
      fcm: { credential: fakeFcmCredential(fcm), projectId: fcm.projectId, connect: connectToFakeFcm(fcm) },
    },
  };
}
