import { execFile } from 'node:child_process';
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';

export interface TestCertificate {
  /** PEM of the self-signed certificate: what clients pass as `ca`. */
  cert: string;
  key: string;
}

/** Host names the certificate is valid for: the fakes answer as themselves and as the real hosts. */
export const CERTIFICATE_HOSTS = [
  'localhost',
  'fcm.googleapis.com',
  'api.sandbox.push.apple.com',
  'www.googleapis.com',
  'oauth2.googleapis.com',
];

let pending: Promise<TestCertificate> | undefined;

/**
 * A self-signed P-256 certificate for localhost (and the provider host names),
 * made once per test process with openssl. Clients trust it through `ca`, so
 * TLS verification stays on exactly as in production.
 */
export function testCertificate(): Promise<TestCertificate> {
  pending ??= generate();
  return pending;
}

async function generate(): Promise<TestCertificate> {
  const folder = await mkdtemp(join(tmpdir(), 'nudge-test-tls-'));
  try {
    const keyFile = join(folder, 'key.pem');
    const certFile = join(folder, 'cert.pem');
    const san = [...CERTIFICATE_HOSTS.map((host) => `DNS:${host}`), 'IP:127.0.0.1'].join(',');
    await promisify(execFile)('openssl', [
      'req',
      '-x509',
      '-newkey',
      'ec',
      '-pkeyopt',
      'ec_paramgen_curve:prime256v1',
      '-keyout',
      keyFile,
      '-out',
      certFile,
      '-days',
      '2',
      '-nodes',
      '-subj',
      '/CN=localhost',
      '-addext',
      `subjectAltName=${san}`,
    ]);
    return { cert: await readFile(certFile, 'utf8'), key: await readFile(keyFile, 'utf8') };
  } finally {
    await rm(folder, { recursive: true, force: true });
  }
}
