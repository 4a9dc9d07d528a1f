import { AsyncLocalStorage } from 'node:async_hooks';
import http2 from 'node:http2';
import type { Duplex } from 'node:stream';

export const FCM_HOST = 'fcm.googleapis.com';

/** What a connection to FCM needs: where it goes, the name TLS verifies, and the ALPN offer (h2). */
export interface FcmConnectOptions {
  host: string;
  port: number;
  servername: string;
  ALPNProtocols: string[];
}

/** Opens the TLS connection of firebase-admin's HTTP/2 session to fcm.googleapis.com:443. */
export type FcmConnect = (options: FcmConnectOptions) => Duplex;

const routes = new AsyncLocalStorage<FcmConnect>();
let installed = false;

/**
 * Runs `send` with every HTTP/2 session it opens to FCM on `connect`'s socket.
 * firebase-admin has no endpoint setting and no connection hook for HTTP/2:
 * `sendEach` calls `http2.connect('https://fcm.googleapis.com')` itself,
 * synchronously. So `http2.connect` gets a process-wide wrapper, installed
 * the first time a `connect` is used, that adds `createConnection` only for
 * FCM and only inside this context; every other caller (and a provider
 * without `connect`, as in production) gets the plain library path.
 *
 * A routed session also sends `:scheme: https` where firebase-admin 13.10
 * sends `https:` (its url.parse protocol; TODO b/401051826 in api-request.js).
 * Google's front end accepts that, but nghttp2 (Node's HTTP/2 server, so the
 * fake; strict relays) resets the stream with PROTOCOL_ERROR
 * (firebase-admin-node#2865).
 */
export function routingFcm<T>(connect: FcmConnect | undefined, send: () => T): T {
  if (!connect) return send();
  installRoute();
  return routes.run(connect, send);
}

function installRoute(): void {
  if (installed) return;
  installed = true;
  const plain = http2.connect.bind(http2) as (...args: unknown[]) => http2.ClientHttp2Session;
  const routed = (authority: string | URL, ...rest: unknown[]): http2.ClientHttp2Session => {
    const connect = routes.getStore();
    if (!connect || new URL(String(authority)).hostname !== FCM_HOST) return plain(authority, ...rest);
    const [options, listener] =
      typeof rest[0] === 'function' ? [{}, rest[0]] : [(rest[0] ?? {}) as http2.SecureClientSessionOptions, rest[1]];
    const ALPNProtocols = (options.ALPNProtocols as string[] | undefined) ?? ['h2'];
    const createConnection = () => connect({ host: FCM_HOST, port: 443, servername: FCM_HOST, ALPNProtocols });
    return withHttpsScheme(plain(authority, { ...options, createConnection }, ...(listener ? [listener] : [])));
  };
  (http2 as { connect: unknown }).connect = routed;
}

function withHttpsScheme(session: http2.ClientHttp2Session): http2.ClientHttp2Session {
  const request = session.request.bind(session);
  session.request = (headers, options) =>
    request(headers?.[':scheme'] === 'https:' ? { ...headers, ':scheme': 'https' } : headers, options);
  return session;
}
