import { generateKeyPairSync, randomUUID } from 'node:crypto';
import http2 from 'node:http2';
import type { AddressInfo } from 'node:net';
import { decodeJwt, decodeProtectedHeader, importSPKI, jwtVerify } from 'jose';
import { answeringAfter } from './latency.js';
import { testCertificate } from './tls-certificate.js';

/** An APNs token-signing key pair: `privateKey` is what Apple's `.p8` file holds (PKCS#8 PEM). */
export interface ApnsSigningKey {
  keyId: string;
  teamId: string;
  privateKey: string;
  publicKey: string;
}

export function generateApnsSigningKey(keyId = 'KEY1234567', teamId = 'TEAM123456'): ApnsSigningKey {
  const { privateKey, publicKey } = generateKeyPairSync('ec', {
    namedCurve: 'P-256',
    privateKeyEncoding: { type: 'pkcs8', format: 'pem' },
    publicKeyEncoding: { type: 'spki', format: 'pem' },
  });
  return { keyId, teamId, privateKey, publicKey };
}

/** One scripted answer; `status` 200 unless given. */
export interface FakeApnsAnswer {
  status?: number;
  reason?: string;
  /** Milliseconds since the epoch, as APNs sends with 410. */
  timestamp?: number;
  headers?: Record<string, string>;
  delayMs?: number;
}

export interface FakeApnsRequest {
  path: string;
  /** The device token from the path. */
  token: string;
  /** Request headers, lower-case, including `apns-*` and `authorization`. */
  headers: Record<string, string>;
  /** The provider JWT as sent, without `bearer `. */
  jwt: string | undefined;
  /** Whether the JWT's ES256 signature, `kid` and `iss` checked out. */
  jwtValid: boolean;
  body: unknown;
  /** What the fake answered. */
  status: number;
  reason?: string;
}

export interface FakeApns {
  /** Pass these to ApnsPushProvider: `{ address, port, ca }`. */
  address: string;
  port: number;
  ca: string;
  requests: FakeApnsRequest[];
  /** Queue answers for a device token; once used up, the token gets 200. */
  answer(token: string, ...answers: FakeApnsAnswer[]): void;
  requestsFor(token: string): FakeApnsRequest[];
  reset(): void;
  stop(): Promise<void>;
}

/**
 * A local stand-in for api.push.apple.com: HTTP/2 over TLS, checking what
 * Apple checks (the JWT's ES256 signature, key id and team id, the path and
 * the topic) and answering what a test scripts, in Apple's error format.
 */
export async function startFakeApns(
  signing: Pick<ApnsSigningKey, 'keyId' | 'teamId' | 'publicKey'>,
  options: { latencyMs?: number } = {},
): Promise<FakeApns> {
  const { cert, key } = await testCertificate();
  const verifyKey = await importSPKI(signing.publicKey, 'ES256');
  const verified = new Map<string, boolean>();
  const scripts = new Map<string, FakeApnsAnswer[]>();
  const requests: FakeApnsRequest[] = [];

  const server = http2.createSecureServer({ cert, key, allowHTTP1: false });
  server.on(
    'stream',
    answeringAfter(options.latencyMs, (stream: http2.ServerHttp2Stream, rawHeaders: http2.IncomingHttpHeaders) => {
      let text = '';
      stream.setEncoding('utf8');
      stream.on('data', (chunk: string) => (text += chunk));
      stream.on('end', () => {
        void (async () => {
          const headers: Record<string, string> = {};
          for (const [name, value] of Object.entries(rawHeaders)) {
            if (typeof value === 'string' || typeof value === 'number') headers[name] = String(value);
          }
          const path = headers[':path'] ?? '';
          const token = /^\/3\/device\/([^/?]+)$/.exec(path)?.[1] ?? '';
          const authorization = headers.authorization ?? '';
          const jwt = /^bearer (.+)$/i.exec(authorization)?.[1];
          // A provider token is reused for many requests (20–60 minutes): verified once, as Apple caches it.
          let jwtValid = jwt ? (verified.get(jwt) ?? false) : false;
          if (jwt && !verified.has(jwt)) {
            try {
              const { protectedHeader } = await jwtVerify(jwt, verifyKey, { issuer: signing.teamId, algorithms: ['ES256'] });
              jwtValid = protectedHeader.kid === signing.keyId;
            } catch {
              jwtValid = false;
            }
            if (verified.size >= 1000) verified.clear();
            verified.set(jwt, jwtValid);
          }
          let body: unknown;
          try {
            body = text ? JSON.parse(text) : undefined;
          } catch {
            body = text;
          }

          // Apple's own checks come first, as the real service would answer them.
          let answer: FakeApnsAnswer;
          if (headers[':method'] !== 'POST' || !token) answer = { status: 404, reason: 'BadPath' };
          else if (!jwt) answer = { status: 403, reason: 'MissingProviderToken' };
          else if (!jwtValid) answer = { status: 403, reason: 'InvalidProviderToken' };
          else if (!headers['apns-topic']) answer = { status: 400, reason: 'MissingTopic' };
          else if (!['alert', 'background'].includes(headers['apns-push-type'] ?? '')) answer = { status: 400, reason: 'InvalidPushType' };
          // A background push must be priority 5 and carry no alert, sound or badge; an alert push must have an alert.
          else if (headers['apns-push-type'] === 'background' && (headers['apns-priority'] ?? '10') !== '5') {
            answer = { status: 400, reason: 'BadPriority' };
          } else if (headers['apns-push-type'] !== isBackground(body)) answer = { status: 400, reason: 'InvalidPushType' };
          else answer = scripts.get(token)?.shift() ?? { status: 200 };

          const status = answer.status ?? 200;
          requests.push({ path, token, headers, jwt, jwtValid, body, status, reason: answer.reason });
          if (answer.delayMs) await new Promise((resolve) => setTimeout(resolve, answer.delayMs));
          if (stream.destroyed) return;
          const apnsId = headers['apns-id'] ?? randomUUID().toUpperCase();
          stream.respond({ ':status': status, 'apns-id': apnsId, ...answer.headers });
          if (status === 200) return stream.end();
          const error: Record<string, unknown> = { reason: answer.reason ?? 'InternalServerError' };
          if (answer.timestamp !== undefined) error.timestamp = answer.timestamp;
          stream.end(JSON.stringify(error));
        })();
      });
    }),
  );
  // Clients close sessions abruptly in some tests; that is not the fake's failure.
  server.on('sessionError', () => undefined);

  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  const sessions = new Set<http2.ServerHttp2Session>();
  server.on('session', (session) => {
    sessions.add(session);
    session.on('close', () => sessions.delete(session));
  });

  return {
    address: '127.0.0.1',
    port,
    ca: cert,
    requests,
    answer(token, ...answers) {
      scripts.set(token, [...(scripts.get(token) ?? []), ...answers]);
    },
    requestsFor: (token) => requests.filter((request) => request.token === token),
    reset() {
      scripts.clear();
      requests.length = 0;
    },
    async stop() {
      for (const session of sessions) session.destroy();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}

/** Decoded parts of a provider JWT, for assertions. */
/** What Apple makes of an `aps`: content-available without alert, sound or badge is a background push. */
function isBackground(body: unknown): 'alert' | 'background' {
  const aps = (body as { aps?: Record<string, unknown> } | undefined)?.aps ?? {};
  const shows = aps.alert !== undefined || aps.sound !== undefined || aps.badge !== undefined;
  return aps['content-available'] === 1 && !shows ? 'background' : 'alert';
}

export function describeJwt(jwt: string): { kid: string | undefined; iss: string | undefined; iat: number | undefined } {
  const header = decodeProtectedHeader(jwt);
  const claims = decodeJwt(jwt);
  return { kid: header.kid, iss: claims.iss, iat: claims.iat };
}
