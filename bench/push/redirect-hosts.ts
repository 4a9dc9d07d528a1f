// A preload for the worker process (`node --import tsx --import
// ./bench/push/redirect-hosts.ts dist/apps/worker/src/main.js`): every TLS
// connection to a host:port named in BENCH_REDIRECTS (`{"fcm.googleapis.com:443":
// 40123, …}`) goes to that port on 127.0.0.1 instead, still verifying the
// certificate for the real host name. It does for the built worker what
// FcmPushProvider's `connect` option and ApnsPushProvider's address/port do for
// the tests (firebase-admin has no endpoint setting), with the worker's code
// and configuration untouched: node-apn's HTTP/2 session, firebase-admin's
// agent and its OAuth client all open their sockets through tls.connect. The
// fakes' certificate is trusted through NODE_EXTRA_CA_CERTS.
import tls from 'node:tls';

const redirects = JSON.parse(process.env.BENCH_REDIRECTS ?? '{}') as Record<string, number>;
const connect = tls.connect;

function redirected(...args: unknown[]): tls.TLSSocket {
  // tls.connect(options[, callback]) or tls.connect(port[, host][, options][, callback]).
  let options: tls.ConnectionOptions;
  let rest: unknown[];
  if (typeof args[0] === 'object' && args[0] !== null) {
    options = { ...(args[0] as tls.ConnectionOptions) };
    rest = args.slice(1);
  } else {
    let i = 1;
    options = { port: Number(args[0]) };
    if (typeof args[i] === 'string') options.host = args[i++] as string;
    if (typeof args[i] === 'object' && args[i] !== null) options = { ...(args[i++] as tls.ConnectionOptions), ...options };
    rest = args.slice(i);
  }
  const host = options.host ?? 'localhost';
  const port = redirects[`${host}:${options.port ?? 443}`];
  if (port !== undefined) options = { ...options, servername: options.servername || host, host: '127.0.0.1', port };
  return (connect as (...a: unknown[]) => tls.TLSSocket).call(tls, options, ...rest);
}

tls.connect = redirected as typeof tls.connect;
