import { createECDH, createPublicKey, createDecipheriv, hkdfSync, randomBytes, verify } from 'node:crypto';
import type { IncomingMessage, ServerResponse } from 'node:http';
import https from 'node:https';
import type { AddressInfo } from 'node:net';
import { answeringAfter } from './latency.js';
import { testCertificate } from './tls-certificate.js';

/** One scripted answer; 201 Created unless `status` says otherwise. */
export interface FakeWebPushAnswer {
  status: number;
  headers?: Record<string, string>;
  body?: string;
}

/** A browser's subscription: what the app sends as `pushToken`, and the private half the fake decrypts with. */
export interface FakeBrowser {
  id: string;
  subscription: { endpoint: string; keys: { p256dh: string; auth: string } };
  /** `JSON.stringify(subscription)`, as the API is sent it. */
  token: string;
  privateKey: Buffer;
  auth: Buffer;
}

export interface FakeWebPushRequest {
  browser: string;
  status: number;
  headers: Record<string, string | undefined>;
  /** The VAPID JWT's claims, once its ES256 signature checked out against the `k=` key; null when it did not. */
  vapid: { aud: string; sub: string; exp: number; publicKey: string } | null;
  /** The payload decrypted with the browser's keys (RFC 8291), as a service worker would get it. */
  payload: unknown;
}

export interface FakeWebPush {
  origin: string;
  ca: string;
  requests: FakeWebPushRequest[];
  /** A new subscription whose endpoint is on this fake. */
  browser(): FakeBrowser;
  answer(browser: FakeBrowser, ...answers: FakeWebPushAnswer[]): void;
  requestsFor(browser: FakeBrowser): FakeWebPushRequest[];
  stop(): Promise<void>;
}

/**
 * A local push service (RFC 8030) such as a browser vendor runs: it takes
 * `POST /push/<id>`, checks the VAPID `Authorization: vapid t=…, k=…` header
 * (RFC 8292) by verifying the JWT's signature, and decrypts the aes128gcm body
 * (RFC 8188 / 8291) with the subscription's private key — written here from
 * the RFCs with node:crypto, not with the library under test.
 */
export async function startFakeWebPush(
  options: {
    latencyMs?: number;
    aliases?: boolean;
    /** false: the payload is not decrypted (`payload` null), as a real push service never does (the bench). */
    decrypt?: boolean;
  } = {},
): Promise<FakeWebPush> {
  const { cert, key } = await testCertificate();
  const browsers = new Map<string, FakeBrowser>();
  const scripts = new Map<string, FakeWebPushAnswer[]>();
  const requests: FakeWebPushRequest[] = [];
  let counter = 0;
  // A VAPID JWT is reused for hours: checked once per header.
  const checked = new Map<string, FakeWebPushRequest['vapid']>();
  const vapidOf = (header: string | undefined) => {
    if (header === undefined) return null;
    if (!checked.has(header)) {
      if (checked.size >= 1000) checked.clear();
      checked.set(header, checkVapid(header));
    }
    return checked.get(header)!;
  };

  const server = https.createServer(
    { cert, key },
    answeringAfter(options.latencyMs, (req: IncomingMessage, res: ServerResponse) => {
      const chunks: Buffer[] = [];
      req.on('data', (chunk: Buffer) => chunks.push(chunk));
      req.on('end', () => {
        const path = /^\/push\/([^/?]+)$/.exec(req.url ?? '')?.[1] ?? '';
        // With `aliases`, `<id>.<n>` is browser <id> too: many subscriptions sharing one key pair (the bench's web devices).
        const id = options.aliases ? path.replace(/\.\d+$/, '') : path;
        const browser = browsers.get(id);
        const answer = scripts.get(id)?.shift() ?? {
          status: 201,
          headers: { location: `${origin}/message/${randomBytes(6).toString('hex')}` },
        };
        const status = browser ? answer.status : 404;
        const headers: Record<string, string | undefined> = {};
        for (const name of ['authorization', 'ttl', 'urgency', 'topic', 'content-encoding', 'content-type']) {
          headers[name] = req.headers[name] as string | undefined;
        }
        let payload: unknown = null;
        if (browser && options.decrypt !== false) {
          try {
            payload = JSON.parse(decryptAes128gcm(Buffer.concat(chunks), browser).toString('utf8'));
          } catch (error) {
            payload = { undecryptable: (error as Error).message };
          }
        }
        requests.push({ browser: id, status, headers, vapid: vapidOf(headers.authorization), payload });
        res.writeHead(status, answer.headers ?? {});
        res.end(answer.body ?? '');
      });
    }),
  );
  // Node's default of 5 s is the keep-alive hint the client's agent times its
  // idle sockets by, so a request sent on a socket as the server closes it
  // ends in "socket hang up" (the bench saw one in 200,000 pushes). Push
  // services keep idle connections for minutes; so does the fake.
  server.keepAliveTimeout = 120_000;
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const origin = `https://localhost:${(server.address() as AddressInfo).port}`;

  return {
    origin,
    ca: cert,
    requests,
    browser() {
      counter += 1;
      const id = `b${counter}-${randomBytes(8).toString('hex')}`;
      const ecdh = createECDH('prime256v1');
      ecdh.generateKeys();
      const auth = randomBytes(16);
      const subscription = {
        endpoint: `${origin}/push/${id}`,
        keys: { p256dh: ecdh.getPublicKey().toString('base64url'), auth: auth.toString('base64url') },
      };
      const browser = { id, subscription, token: JSON.stringify(subscription), privateKey: ecdh.getPrivateKey(), auth };
      browsers.set(id, browser);
      return browser;
    },
    answer(browser, ...answers) {
      scripts.set(browser.id, [...(scripts.get(browser.id) ?? []), ...answers]);
    },
    requestsFor(browser) {
      return requests.filter((r) => r.browser === browser.id);
    },
    stop: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

/** RFC 8291 §3.4 key derivation and RFC 8188 §2 record layout (one record, the last). */
function decryptAes128gcm(body: Buffer, browser: FakeBrowser): Buffer {
  const salt = body.subarray(0, 16);
  const idLength = body.readUInt8(20);
  const senderPublicKey = body.subarray(21, 21 + idLength);
  const record = body.subarray(21 + idLength);

  const ecdh = createECDH('prime256v1');
  ecdh.setPrivateKey(browser.privateKey);
  const shared = ecdh.computeSecret(senderPublicKey);
  const keyInfo = Buffer.concat([Buffer.from('WebPush: info\0'), ecdh.getPublicKey(), senderPublicKey]);
  const ikm = Buffer.from(hkdfSync('sha256', shared, browser.auth, keyInfo, 32));
  const cek = Buffer.from(hkdfSync('sha256', ikm, salt, Buffer.from('Content-Encoding: aes128gcm\0'), 16));
  const nonce = Buffer.from(hkdfSync('sha256', ikm, salt, Buffer.from('Content-Encoding: nonce\0'), 12));

  const decipher = createDecipheriv('aes-128-gcm', cek, nonce);
  decipher.setAuthTag(record.subarray(record.length - 16));
  const padded = Buffer.concat([decipher.update(record.subarray(0, record.length - 16)), decipher.final()]);
  // Padding: the delimiter 0x02 (last record), then zeros.
  let end = padded.length - 1;
  while (end >= 0 && padded[end] === 0) end -= 1;
  if (padded[end] !== 2) throw new Error('no last-record delimiter');
  return padded.subarray(0, end);
}

/** `vapid t=<JWT>, k=<public key>`: the JWT's claims if its ES256 signature verifies with k. */
function checkVapid(header: string | undefined): FakeWebPushRequest['vapid'] {
  const match = /^vapid t=([^,\s]+),\s*k=([A-Za-z0-9_-]+)$/.exec(header ?? '');
  if (!match) return null;
  const [, jwt, k] = match as unknown as [string, string, string];
  const [head, claims, signature] = jwt.split('.') as [string, string, string];
  const point = Buffer.from(k, 'base64url');
  if (point.length !== 65) return null;
  const publicKey = createPublicKey({
    key: { kty: 'EC', crv: 'P-256', x: point.subarray(1, 33).toString('base64url'), y: point.subarray(33).toString('base64url') },
    format: 'jwk',
  });
  const ok = verify(
    'sha256',
    Buffer.from(`${head}.${claims}`),
    { key: publicKey, dsaEncoding: 'ieee-p1363' },
    Buffer.from(signature, 'base64url'),
  );
  if (!ok) return null;
  const parsed = JSON.parse(Buffer.from(claims, 'base64url').toString('utf8')) as { aud: string; sub: string; exp: number };
  return { aud: parsed.aud, sub: parsed.sub, exp: parsed.exp, publicKey: k };
}
