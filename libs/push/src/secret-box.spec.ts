import { randomBytes } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { SecretBox, SecretBoxError, secretFingerprint } from './secret-box.js';

describe('SecretBox', () => {
  const box = new SecretBox(randomBytes(32));

  it('opens what it sealed, and the sealed text does not contain the secret', () => {
    const sealed = box.seal('-----BEGIN PRIVATE KEY-----abc', 'shop/apns.key');
    expect(sealed).not.toContain('PRIVATE');
    expect(sealed.startsWith(`v1.${box.keyId}.`)).toBe(true);
    expect(box.open(sealed, 'shop/apns.key')).toBe('-----BEGIN PRIVATE KEY-----abc');
  });

  it('seals the same secret differently each time (a fresh IV)', () => {
    expect(box.seal('token', 'a/expo.accessToken')).not.toBe(box.seal('token', 'a/expo.accessToken'));
  });

  it('refuses a value moved to another app or field, or altered', () => {
    const sealed = box.seal('token', 'a/expo.accessToken');
    expect(() => box.open(sealed, 'b/expo.accessToken')).toThrow(SecretBoxError);
    const parts = sealed.split('.');
    const body = Buffer.from(parts[3]!, 'base64url');
    body[0]! ^= 1;
    expect(() => box.open([...parts.slice(0, 3), body.toString('base64url')].join('.'), 'a/expo.accessToken')).toThrow(/does not open/);
  });

  it('says so when the value was sealed under another NUDGE_SECRET_KEY', () => {
    const other = new SecretBox(randomBytes(32));
    expect(other.keyId).not.toBe(box.keyId);
    expect(() => other.open(box.seal('token', 'a/x'), 'a/x')).toThrow(/another NUDGE_SECRET_KEY/);
  });

  it('derives the same key from the same secret (a restart reads what was sealed before)', () => {
    const secret = randomBytes(48);
    expect(new SecretBox(secret).open(new SecretBox(Buffer.from(secret)).seal('s', 'w'), 'w')).toBe('s');
  });

  it('refuses a short secret', () => {
    expect(() => new SecretBox(randomBytes(16))).toThrow(SecretBoxError);
  });

  it('fingerprints with four hex characters of a hash, never the secret itself', () => {
    expect(secretFingerprint('abcdefgh')).toMatch(/^…[0-9a-f]{4}$/);
    expect(secretFingerprint('abcdefgh')).not.toBe(secretFingerprint('abcdefgi'));
  });
});
