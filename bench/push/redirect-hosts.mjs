// A preload for the worker process (`node --import ./bench/push/redirect-hosts.mjs
// dist/apps/worker/src/main.js`): every TLS connection to a host:port named in
// BENCH_REDIRECTS (`{"fcm.googleapis.com:443": 40123, …}`) goes to that port on
// 127.0.0.1 instead, still verifying the certificate for the real host name.
// It does for the built worker what FcmPushProvider's `connect` option and
// ApnsPushProvider's address/port do for the tests (firebase-admin has no
// endpoint setting), with the worker's code and configuration untouched:
// node-apn's HTTP/2 session, firebase-admin's HTTP/2 session (http2.connect
// dials through tls.connect) and its OAuth client all open their sockets
// through tls.connect. The fakes' certificate is trusted
// through NODE_EXTRA_CA_CERTS. Plain JavaScript, so that the worker runs
// without a TypeScript loader, as in production.
import http2 from 'node:http2';
import tls from 'node:tls';

/** @type {Record<string, number>} */
const redirects = JSON.parse(process.env.BENCH_REDIRECTS ?? '{}');
const connect = tls.connect;

/** tls.connect(options[, callback]) or tls.connect(port[, host][, options][, callback]). */
function redirected(...args) {
  let options;
  let rest;
  if (typeof args[0] === 'object' && args[0] !== null) {
    options = { ...args[0] };
    rest = args.slice(1);
  } else {
    let i = 1;
    options = { port: Number(args[0]) };
    if (typeof args[i] === 'string') options.host = args[i++];
    if (typeof args[i] === 'object' && args[i] !== null) options = { ...args[i++], ...options };
    rest = args.slice(i);
  }
  const host = options.host ?? 'localhost';
  const port = redirects[`${host}:${options.port ?? 443}`];
  if (port !== undefined) options = { ...options, servername: options.servername || host, host: '127.0.0.1', port };
  return connect.call(tls, options, ...rest);
}

tls.connect = redirected;

// firebase-admin 13.10 sends `:scheme: https:` on its HTTP/2 streams (url.parse's
// protocol, its TODO b/401051826). Google accepts that; the fake, Node's nghttp2
// server, resets the stream with PROTOCOL_ERROR. So a redirected session sends
// `https`, as FcmPushProvider's `connect` does (libs/push/src/fcm-connect.ts).
const connectHttp2 = http2.connect;
http2.connect = function connectRedirected(authority, ...rest) {
  const session = connectHttp2.call(http2, authority, ...rest);
  const url = new URL(String(authority));
  if (redirects[`${url.hostname}:${url.port || 443}`] !== undefined) {
    const request = session.request.bind(session);
    session.request = (headers, options) =>
      request(headers?.[':scheme'] === 'https:' ? { ...headers, ':scheme': 'https' } : headers, options);
  }
  return session;
};
