// The four push services' local fakes in a process of their own (so their
// work — TLS, JSON, the Web Push decryption — does not share the client's
// event loop), each answering after BENCH_CONFIG.latencyMs, and Google's
// OAuth token endpoint (for a worker given a service-account file). Prints one
// line `SERVICES <json>` with how to reach them and serves until stdin closes.
import https from 'node:https';
import type { AddressInfo } from 'node:net';
import webpush from 'web-push';
import { generateApnsSigningKey, startFakeApns } from '../../test/push/fakes/fake-apns.js';
import { startFakeExpo } from '../../test/push/fakes/fake-expo.js';
import { startFakeFcm } from '../../test/push/fakes/fake-fcm.js';
import { startFakeWebPush } from '../../test/push/fakes/fake-web-push.js';
import { testCertificate } from '../../test/push/fakes/tls-certificate.js';

export interface FakeServices {
  /** The certificate every fake presents (valid for localhost, 127.0.0.1 and the real host names). */
  ca: string;
  apns: { address: string; port: number; ca: string; key: string; keyId: string; teamId: string };
  fcm: { port: number; ca: string; projectId: string; accessToken: string };
  /** `subscription`: one browser's; with `aliases` its endpoint + `.<n>` is the same browser (`webSubscription`). */
  web: { ca: string; subscription: string; vapid: { publicKey: string; privateKey: string } };
  expo: { baseUrl: string };
  /** Where a client that dials the real host (`host:443`) must go instead: the fake's port on 127.0.0.1. */
  redirects: Record<string, number>;
}

const { latencyMs } = JSON.parse(process.env.BENCH_CONFIG ?? '{}') as { latencyMs?: number };
const signing = generateApnsSigningKey();
const [apns, fcm, web, expo, oauth] = await Promise.all([
  startFakeApns(signing, { latencyMs }),
  startFakeFcm({ latencyMs }),
  startFakeWebPush({ latencyMs, aliases: true, decrypt: false }),
  startFakeExpo({ latencyMs }),
  startFakeOAuth(),
]);
const browser = web.browser();
const services: FakeServices = {
  ca: apns.ca,
  apns: { address: '127.0.0.1', port: apns.port, ca: apns.ca, key: signing.privateKey, keyId: signing.keyId, teamId: signing.teamId },
  fcm: { port: fcm.port, ca: fcm.ca, projectId: fcm.projectId, accessToken: fcm.accessToken },
  web: { ca: web.ca, subscription: browser.token, vapid: webpush.generateVAPIDKeys() },
  expo: { baseUrl: expo.baseUrl },
  redirects: {
    'api.sandbox.push.apple.com:443': apns.port,
    'fcm.googleapis.com:443': fcm.port,
    'www.googleapis.com:443': oauth.port,
    'oauth2.googleapis.com:443': oauth.port,
  },
};
// The fakes keep every request for the tests; here that is only memory.
setInterval(() => {
  apns.requests.length = 0;
  fcm.requests.length = 0;
  web.requests.length = 0;
  expo.requests.length = 0;
}, 1000).unref();
process.stdout.write(`SERVICES ${JSON.stringify(services)}\n`);
process.stdin.resume();
process.stdin.on('end', () => {
  oauth.server.closeAllConnections();
  oauth.server.close();
  void Promise.all([apns.stop(), fcm.stop(), web.stop(), expo.stop()]).then(() => process.exit(0));
});

/** Google's token endpoint as firebase-admin's service-account credential calls it: any grant gets the fake FCM's token. */
async function startFakeOAuth(): Promise<{ server: https.Server; port: number }> {
  const { cert, key } = await testCertificate();
  const server = https.createServer({ cert, key }, (req, res) => {
    req.resume();
    req.on('end', () => {
      res.writeHead(200, { 'content-type': 'application/json' });
      res.end(JSON.stringify({ access_token: fcm.accessToken, expires_in: 3600, token_type: 'Bearer' }));
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return { server, port: (server.address() as AddressInfo).port };
}
