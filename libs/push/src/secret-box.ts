import { createCipheriv, createDecipheriv, createHash, hkdfSync, randomBytes } from 'node:crypto';

// The apps' push credentials at rest: AES-256-GCM under a key derived from
// NUDGE_SECRET_KEY with HKDF-SHA256. A sealed value reads
// `v1.<key id>.<iv>.<ciphertext + tag>` (base64url); the key id (8 hex
// characters of a hash of the derived key) tells a value sealed under another
// NUDGE_SECRET_KEY from a tampered one. The additional data binds each value
// to where it is stored (`<app id>/apns.key`), so a sealed value copied into
// another app or field does not open.

const VERSION = 'v1';
const INFO = 'nudge app credentials v1';

export class SecretBoxError extends Error {
  override name = 'SecretBoxError';
}

export class SecretBox {
  private readonly key: Buffer;
  /** Names the key in each sealed value; changes with NUDGE_SECRET_KEY. */
  readonly keyId: string;

  constructor(secret: Buffer) {
    if (secret.length < 32) throw new SecretBoxError('the secret key must be at least 32 bytes');
    this.key = Buffer.from(hkdfSync('sha256', secret, Buffer.alloc(0), INFO, 32));
    this.keyId = createHash('sha256').update(this.key).digest('hex').slice(0, 8);
  }

  seal(plaintext: string, where: string): string {
    const iv = randomBytes(12);
    const cipher = createCipheriv('aes-256-gcm', this.key, iv);
    cipher.setAAD(Buffer.from(where, 'utf8'));
    const body = Buffer.concat([cipher.update(plaintext, 'utf8'), cipher.final(), cipher.getAuthTag()]);
    return [VERSION, this.keyId, iv.toString('base64url'), body.toString('base64url')].join('.');
  }

  /** The plaintext; throws a SecretBoxError saying why it cannot (another key, or a damaged value). */
  open(sealed: string, where: string): string {
    const [version, keyId, iv, body] = sealed.split('.');
    if (version !== VERSION || !keyId || !iv || !body) throw new SecretBoxError(`${where}: not a sealed value`);
    if (keyId !== this.keyId) {
      throw new SecretBoxError(
        `${where}: sealed under another NUDGE_SECRET_KEY (key ${keyId}, this one is ${this.keyId}); PUT the credentials again`,
      );
    }
    const bytes = Buffer.from(body, 'base64url');
    if (bytes.length < 16) throw new SecretBoxError(`${where}: not a sealed value`);
    try {
      const decipher = createDecipheriv('aes-256-gcm', this.key, Buffer.from(iv, 'base64url'));
      decipher.setAAD(Buffer.from(where, 'utf8'));
      decipher.setAuthTag(bytes.subarray(bytes.length - 16));
      return Buffer.concat([decipher.update(bytes.subarray(0, bytes.length - 16)), decipher.final()]).toString('utf8');
    } catch {
      throw new SecretBoxError(`${where}: the sealed value does not open (damaged, or moved from another app or field)`);
    }
  }
}

/** What GET shows of a secret: that it is set, and the last 4 hex characters of its SHA-256 (to tell two keys apart). */
export function secretFingerprint(plaintext: string): string {
  return `…${createHash('sha256').update(plaintext, 'utf8').digest('hex').slice(-4)}`;
}
