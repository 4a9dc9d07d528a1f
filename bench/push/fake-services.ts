// The four push services' local fakes in a process of their own (so their
// work — TLS, JSON, the Web Push decryption — does not share the client's
// event loop), each answering after BENCH_CONFIG.latencyMs. Prints one line
// `SERVICES <json>` with how to reach them and serves until stdin closes.
import webpush from 'web-push';
import { generateApnsSigningKey, startFakeApns } from '../../test/push/fakes/fake-apns.js';
import { startFakeExpo } from '../../test/push/fakes/fake-expo.js';
import { startFakeFcm } from '../../test/push/fakes/fake-fcm.js';
import { startFakeWebPush } from '../../test/push/fakes/fake-web-push.js';

export interface FakeServices {
  apns: { address: string; port: number; ca: string; key: string; keyId: string; teamId: string };
  fcm: { port: number; ca: string; projectId: string; accessToken: string };
  web: { ca: string; subscription: string; vapid: { publicKey: string; privateKey: string } };
  expo: { baseUrl: string };
}

const { latencyMs } = JSON.parse(process.env.BENCH_CONFIG ?? '{}') as { latencyMs?: number };
const signing = generateApnsSigningKey();
const [apns, fcm, web, expo] = await Promise.all([
  startFakeApns(signing, { latencyMs }),
  startFakeFcm({ latencyMs }),
  startFakeWebPush({ latencyMs }),
  startFakeExpo({ latencyMs }),
]);
const browser = web.browser();
const services: FakeServices = {
  apns: { address: '127.0.0.1', port: apns.port, ca: apns.ca, key: signing.privateKey, keyId: signing.keyId, teamId: signing.teamId },
  fcm: { port: fcm.port, ca: fcm.ca, projectId: fcm.projectId, accessToken: fcm.accessToken },
  web: { ca: web.ca, subscription: browser.token, vapid: webpush.generateVAPIDKeys() },
  expo: { baseUrl: expo.baseUrl },
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
  void Promise.all([apns.stop(), fcm.stop(), web.stop(), expo.stop()]).then(() => process.exit(0));
});
