// Device pushes per second through each real client — @parse/node-apn,
// firebase-admin, web-push, and Nudge's Expo client — against the local fakes
// of their services, run in a process of their own and answering after a
// realistic 20–50 ms. Each client sends `messages` pushes with `inFlight`
// outstanding at a time, as a worker's batch would; every one must come back
// `sent`. Figures are medians of `runs` rounds, the clients interleaved.
import https from 'node:https';
import {
  ApnsPushProvider,
  ExpoPushProvider,
  FcmPushProvider,
  WebPushProvider,
  type PushMessage,
  type PushPlatform,
  type PushProvider,
} from '@nudge/push';
import { connectToFakeFcm } from '../../test/push/fakes/fake-fcm.js';
import { median } from '../support/stats.js';
import type { FakeServices } from './fake-services.js';
import { startFakeServices } from './services.js';

export const CLIENTS = ['apns', 'fcm', 'webpush', 'expo'] as const;
export type ClientName = (typeof CLIENTS)[number];

export interface ClientFigures {
  latencyMs: number;
  messages: number;
  inFlight: number;
  /** pushes per second, per client, every run. */
  runs: Record<ClientName, number[]>;
  median: Record<ClientName, number>;
}

export async function clientsBench(
  options: { messages: number; inFlight: number; latencyMs: number; runs: number },
  log: (line: string) => void,
): Promise<ClientFigures> {
  const fakes = await startFakeServices(options.latencyMs);
  try {
    const services = fakes.services;
    const runs = Object.fromEntries(CLIENTS.map((c) => [c, [] as number[]])) as Record<ClientName, number[]>;
    for (let round = 0; round < options.runs; round++) {
      for (const name of CLIENTS) {
        const { provider, platform, token } = clientFor(name, services);
        try {
          await sendAll(provider, platform, token, 20, options.inFlight); // warm: connections, keys
          const started = performance.now();
          await sendAll(provider, platform, token, options.messages, options.inFlight);
          const rate = options.messages / ((performance.now() - started) / 1000);
          runs[name].push(rate);
          log(
            `clients run ${round + 1}/${options.runs} ${name}: ${options.messages} pushes in flight ${options.inFlight} = ${Math.round(rate)}/s`,
          );
        } finally {
          await provider.close();
        }
      }
    }
    const medians = Object.fromEntries(CLIENTS.map((c) => [c, median(runs[c])])) as Record<ClientName, number>;
    return { latencyMs: options.latencyMs, messages: options.messages, inFlight: options.inFlight, runs, median: medians };
  } finally {
    await fakes.stop();
  }
}

function clientFor(name: ClientName, s: FakeServices): { provider: PushProvider; platform: PushPlatform; token: (i: number) => string } {
  switch (name) {
    case 'apns':
      return {
        provider: new ApnsPushProvider({ ...s.apns, topic: 'com.example.bench' }),
        platform: 'ios',
        token: (i) => i.toString(16).padStart(64, '0'),
      };
    case 'fcm':
      return {
        provider: new FcmPushProvider({
          credential: { getAccessToken: async () => ({ access_token: s.fcm.accessToken, expires_in: 3600 }) },
          projectId: s.fcm.projectId,
          connect: connectToFakeFcm(s.fcm),
        }),
        platform: 'android',
        token: (i) => `bench-fcm-token-${i}`,
      };
    case 'webpush':
      return {
        provider: new WebPushProvider({
          vapidPublicKey: s.web.vapid.publicKey,
          vapidPrivateKey: s.web.vapid.privateKey,
          vapidSubject: 'mailto:bench@example.com',
          agent: new https.Agent({ ca: s.web.ca, keepAlive: true }),
        }),
        platform: 'web',
        token: () => s.web.subscription,
      };
    case 'expo':
      return {
        provider: new ExpoPushProvider({ baseUrl: s.expo.baseUrl }),
        platform: 'expo',
        token: (i) => `ExponentPushToken[bench${i}]`,
      };
  }
}

/** `count` pushes, `inFlight` outstanding: single sends, or the provider's batches of 100 (Expo). */
async function sendAll(
  provider: PushProvider,
  platform: PushPlatform,
  token: (i: number) => string,
  count: number,
  inFlight: number,
): Promise<void> {
  const message = (i: number): PushMessage => ({
    token: token(i),
    platform,
    title: 'Stretch',
    body: 'Two minutes',
    collapseId: `nudge:bench:${i}`,
  });
  const batch = provider.sendMany ? 100 : 1;
  let next = 0;
  let failed = 0;
  const lanes = Array.from({ length: Math.max(1, Math.floor(inFlight / batch)) }, async () => {
    while (next < count) {
      const from = next;
      next = Math.min(count, next + batch);
      const messages = Array.from({ length: next - from }, (_, k) => message(from + k));
      const outcomes = batch > 1 ? await provider.sendMany!(messages) : [await provider.send(messages[0]!)];
      failed += outcomes.filter((o) => o.kind !== 'sent').length;
    }
  });
  await Promise.all(lanes);
  if (failed > 0) throw new Error(`${provider.name}: ${failed} of ${count} pushes not sent`);
}
