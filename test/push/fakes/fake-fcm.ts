import { randomUUID } from 'node:crypto';
import type { IncomingMessage, ServerResponse } from 'node:http';
import http2, { type Http2ServerRequest, type Http2ServerResponse, type Http2Session } from 'node:http2';
import type { AddressInfo } from 'node:net';
import tls from 'node:tls';
import type { FcmConnect } from '@nudge/push';
import { answeringAfter } from './latency.js';
import { testCertificate } from './tls-certificate.js';

/** One scripted answer; a 200 with a message name unless `status` says otherwise. */
export interface FakeFcmAnswer {
  status?: number;
  /** The canonical status string, e.g. `NOT_FOUND`, `INVALID_ARGUMENT`, `UNAVAILABLE`. */
  grpcStatus?: string;
  /** The FcmError code in `details`, e.g. `UNREGISTERED`, `QUOTA_EXCEEDED`. */
  errorCode?: string;
  message?: string;
  headers?: Record<string, string>;
  /** Send this text instead of a JSON error (a proxy's HTML page, say). */
  rawBody?: string;
  /** No answer: the connection goes, as when a front end restarts (HTTP/2: a GOAWAY naming the stream before this one). */
  dropConnection?: boolean;
}

export interface FakeFcmRequest {
  method: string;
  path: string;
  /** `host` (HTTP/1.1) or `:authority` (HTTP/2). */
  host: string | undefined;
  /** '2.0' or '1.1'. */
  httpVersion: string;
  authorization: string | undefined;
  /** The parsed v1 body: `{ message: {...}, validate_only? }`. */
  body: { message?: Record<string, unknown> & { token?: string } } & Record<string, unknown>;
  status: number;
}

export interface FakeFcm {
  port: number;
  ca: string;
  projectId: string;
  /** The bearer token the fake accepts; give it to the provider's credential. */
  accessToken: string;
  requests: FakeFcmRequest[];
  /** TLS connections accepted so far. */
  readonly connections: number;
  answer(token: string, ...answers: FakeFcmAnswer[]): void;
  requestsFor(token: string): FakeFcmRequest[];
  reset(): void;
  stop(): Promise<void>;
}

/**
 * A local stand-in for fcm.googleapis.com's HTTP v1 send endpoint, speaking
 * what firebase-admin speaks: HTTP/2 (`sendEach`) and HTTPS/1.1 (`send`), as
 * the ALPN offer decides, with a JSON body.
 * It checks the path, host and bearer token and answers scripted errors in the
 * v1 format, `{error: {code, message, status, details: [FcmError]}}`.
 */
export async function startFakeFcm(options: { projectId?: string; accessToken?: string; latencyMs?: number } = {}): Promise<FakeFcm> {
  const projectId = options.projectId ?? 'nudge-test';
  const accessToken = options.accessToken ?? `ya29.test-${randomUUID()}`;
  const { cert, key } = await testCertificate();
  const scripts = new Map<string, FakeFcmAnswer[]>();
  const requests: FakeFcmRequest[] = [];
  const sockets = new Set<tls.TLSSocket>();
  const sessions = new Set<Http2Session>();
  let connections = 0;

  type Request = IncomingMessage | Http2ServerRequest;
  type Response = ServerResponse | Http2ServerResponse;
  const server = http2.createSecureServer(
    { cert, key, allowHTTP1: true },
    answeringAfter(options.latencyMs, (req: Request, res: Response) => {
      let text = '';
      req.setEncoding('utf8');
      req.on('data', (chunk: string) => (text += chunk));
      req.on('end', () => {
        let body: FakeFcmRequest['body'];
        try {
          body = JSON.parse(text) as FakeFcmRequest['body'];
        } catch {
          body = {};
        }
        const token = typeof body.message?.token === 'string' ? body.message.token : '';
        // HTTP/2 names the port in :authority; 443 is the default either way.
        const host = (req.headers.host ?? (req.headers[':authority'] as string | undefined))?.replace(/:443$/, '');
        let answer: FakeFcmAnswer;
        if (host !== 'fcm.googleapis.com') {
          answer = { status: 404, grpcStatus: 'NOT_FOUND', message: `no such host ${host}` };
        } else if (req.method !== 'POST' || req.url !== `/v1/projects/${projectId}/messages:send`) {
          answer = { status: 404, grpcStatus: 'NOT_FOUND', message: `no such method ${req.url}` };
        } else if (req.headers.authorization !== `Bearer ${accessToken}`) {
          answer = { status: 401, grpcStatus: 'UNAUTHENTICATED', message: 'Request had invalid authentication credentials.' };
        } else {
          answer = scripts.get(token)?.shift() ?? {};
        }
        const status = answer.status ?? 200;
        requests.push({
          method: req.method ?? '',
          path: req.url ?? '',
          host,
          httpVersion: req.httpVersion,
          authorization: req.headers.authorization,
          body,
          status,
        });
        if (answer.dropConnection) {
          // HTTP/2: a GOAWAY that takes the streams before this one and refuses it and the rest.
          if ('stream' in req) req.stream.session?.goaway(http2.constants.NGHTTP2_NO_ERROR, req.stream.id! - 2);
          else req.socket.destroy();
          return;
        }
        if (answer.rawBody !== undefined) {
          // Both response types take writeHead(status, headers); TypeScript cannot call the union.
          (res as ServerResponse).writeHead(status, { 'content-type': 'text/html', ...answer.headers });
          res.end(answer.rawBody);
          return;
        }
        (res as ServerResponse).writeHead(status, { 'content-type': 'application/json; charset=UTF-8', ...answer.headers });
        if (status === 200) {
          res.end(JSON.stringify({ name: `projects/${projectId}/messages/${randomUUID()}` }));
          return;
        }
        const error: Record<string, unknown> = {
          code: status,
          message: answer.message ?? answer.errorCode ?? 'error',
          status: answer.grpcStatus ?? 'UNKNOWN',
        };
        if (answer.errorCode) {
          error.details = [{ '@type': 'type.googleapis.com/google.firebase.fcm.v1.FcmError', errorCode: answer.errorCode }];
        }
        res.end(JSON.stringify({ error }));
      });
    }),
  );
  server.on('secureConnection', (socket: tls.TLSSocket) => {
    connections += 1;
    sockets.add(socket);
    socket.once('close', () => sockets.delete(socket));
  });
  server.on('session', (session: Http2Session) => {
    sessions.add(session);
    session.once('close', () => sessions.delete(session));
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;

  return {
    port,
    ca: cert,
    projectId,
    accessToken,
    requests,
    get connections() {
      return connections;
    },
    answer(token, ...answers) {
      scripts.set(token, [...(scripts.get(token) ?? []), ...answers]);
    },
    requestsFor: (token) => requests.filter((request) => request.body.message?.token === token),
    reset() {
      scripts.clear();
      requests.length = 0;
    },
    async stop() {
      sessions.forEach((session) => session.destroy());
      sockets.forEach((socket) => socket.destroy());
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}

/**
 * The FcmPushProvider `connect` option that reaches this fake: the TCP
 * connection goes to 127.0.0.1, while TLS still verifies the certificate for
 * fcm.googleapis.com against the fake's CA and offers the provider's ALPN (h2).
 */
export function connectToFakeFcm(fake: Pick<FakeFcm, 'port' | 'ca'>): FcmConnect {
  return (options) =>
    tls.connect({
      host: '127.0.0.1',
      port: fake.port,
      ca: fake.ca,
      servername: options.servername,
      ALPNProtocols: options.ALPNProtocols,
    });
}

/** A firebase-admin credential that hands out the fake's token without any OAuth call. */
export function fakeFcmCredential(fake: Pick<FakeFcm, 'accessToken'>) {
  return {
    getAccessToken: async () => ({ access_token: fake.accessToken, expires_in: 3600 }),
  };
}
