// A preload for the worker process (`node --import ./bench/push/redirect-hosts.mjs
// dist/apps/worker/src/main.js`): every TLS connection to a host:port named in
// BENCH_REDIRECTS (`{"fcm.googleapis.com:443": 40123, …}`) goes to that port on
// 127.0.0.1 instead, still verifying the certificate for the real host name.
// It does for the built worker what FcmPushProvider's `connect` option and
// ApnsPushProvider's address/port do for the tests (firebase-admin has no
// endpoint setting), with the worker's code and configuration untouched:
// node-apn's HTTP/2 session, firebase-admin's agent and its OAuth client all
// open their sockets through tls.connect. The fakes' certificate is trusted
// through NODE_EXTRA_CA_CERTS. Plain JavaScript, so that the worker runs
// without a TypeScript loader, as in production.
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
