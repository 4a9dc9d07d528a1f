import { webcrypto } from 'node:crypto';
import { errors, jwtVerify, SignJWT } from 'jose';
import { LONE_SURROGATE } from '../http/body-guard.js';

// A user id is stored as text: control characters (NUL above all) are refused.
// eslint-disable-next-line no-control-regex -- matching control characters is the point
const CONTROL_CHARACTERS = /[\u0000-\u001f\u007f-\u009f]/;

export interface TokenClaims {
  /** The user id: an opaque string of at most 128 characters. */
  userId: string;
  scopes: string[];
}

const encoder = new TextEncoder();

export async function signToken(
  secret: string,
  claims: { userId: string; scopes?: string[]; expiresIn?: string | number; now?: Date },
): Promise<string> {
  const issuedAt = Math.floor((claims.now ?? new Date()).getTime() / 1000);
  const jwt = new SignJWT({ scope: (claims.scopes ?? []).join(' ') })
    .setProtectedHeader({ alg: 'HS256', typ: 'JWT' })
    .setSubject(claims.userId)
    .setIssuedAt(issuedAt);
  if (claims.expiresIn !== undefined) {
    jwt.setExpirationTime(typeof claims.expiresIn === 'number' ? issuedAt + claims.expiresIn : claims.expiresIn);
  }
  return jwt.sign(encoder.encode(secret));
}

export class InvalidTokenError extends Error {}

/** A verified token's claims and the window in which they hold (epoch seconds; undefined: unbounded). */
export interface VerifiedToken {
  claims: TokenClaims;
  expiresAt?: number;
  notBefore?: number;
}

/**
 * The secret as the key HS256 tokens are verified with, to import once: given
 * the raw secret, jose imports it again on every verification.
 */
export function secretKey(secret: string): Promise<webcrypto.CryptoKey> {
  return webcrypto.subtle.importKey('raw', encoder.encode(secret), { name: 'HMAC', hash: 'SHA-256' }, false, ['verify']);
}

/**
 * Verifies an HS256 bearer token (the self-signed path). Only HS256 is
 * accepted, so `alg: none` and tokens signed with another algorithm are refused.
 */
export async function verifyToken(secret: string, token: string, now: Date): Promise<TokenClaims> {
  return (await verifySecretToken(await secretKey(secret), token, now)).claims;
}

/** verifyToken, with the window the claims hold in (for a cache of verified tokens). */
export async function verifySecretToken(key: webcrypto.CryptoKey, token: string, now: Date): Promise<VerifiedToken> {
  try {
    const { payload } = await jwtVerify(token, key, { algorithms: ['HS256'], currentDate: now });
    return {
      claims: { userId: userIdFrom(payload.sub, 'subject'), scopes: scopesFrom(payload.scope) },
      expiresAt: payload.exp,
      notBefore: payload.nbf,
    };
  } catch (error) {
    throw asInvalidToken(error);
  }
}

/** A user id as the API accepts it, or InvalidTokenError naming the claim. */
export function userIdFrom(value: unknown, what: string): string {
  // Control characters never make a sensible id, and a NUL cannot be stored in a text column (a 500).
  // A lone surrogate is stored as U+FFFD: "a\uD800" and "a\uDFFF" would be one user.
  if (
    typeof value !== 'string' ||
    value.length === 0 ||
    value.length > 128 ||
    CONTROL_CHARACTERS.test(value) ||
    LONE_SURROGATE.test(value)
  ) {
    throw new InvalidTokenError(`the token has no valid ${what}`);
  }
  return value;
}

/** Scopes from a space-separated string or an array of strings; anything else is none. */
export function scopesFrom(value: unknown): string[] {
  if (typeof value === 'string') return value.split(' ').filter(Boolean);
  if (Array.isArray(value)) return value.filter((scope): scope is string => typeof scope === 'string');
  return [];
}

/** jose's errors as the one error the guard turns into a 401; InvalidTokenError passes through. */
export function asInvalidToken(error: unknown): InvalidTokenError {
  if (error instanceof InvalidTokenError) return error;
  if (error instanceof errors.JWTExpired) return new InvalidTokenError('the token has expired');
  if (error instanceof errors.JWTClaimValidationFailed && (error.claim === 'iss' || error.claim === 'aud')) {
    return new InvalidTokenError(`the token's ${error.claim === 'iss' ? 'issuer' : 'audience'} is not accepted`);
  }
  return new InvalidTokenError('the token is not valid');
}
