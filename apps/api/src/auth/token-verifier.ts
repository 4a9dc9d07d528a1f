import type { webcrypto } from 'node:crypto';
import { Inject, Injectable } from '@nestjs/common';
import { createRemoteJWKSet, customFetch, decodeProtectedHeader, errors, type JWTPayload, jwtVerify } from 'jose';
import type { Logger } from 'pino';
import { type AuthProviderConfig, CONFIG, type Config, LOGGER } from '@nudge/config';
import {
  asInvalidToken,
  InvalidTokenError,
  scopesFrom,
  secretKey,
  type TokenClaims,
  userIdFrom,
  type VerifiedToken,
  verifySecretToken,
} from './jwt.js';

/** The identity provider's keys could not be fetched: the token is neither good nor bad yet (503). */
export class KeysUnavailableError extends Error {}

const PROVIDER_ALGORITHMS = ['RS256', 'ES256'];
/** Self-signed tokens remembered once verified; past this many, the oldest is forgotten first. */
export const VERIFIED_TOKENS_KEPT = 10_000;

/**
 * Verifies bearer tokens: HS256 with AUTH_JWT_SECRET (the self-signed path),
 * and, when AUTH_JWKS_URL is set, RS256/ES256 against the provider's keys.
 * The header's `alg` picks the path; each path accepts only its own
 * algorithms, so a token cannot pass one path's key off as the other's.
 */
@Injectable()
export class TokenVerifier {
  private readonly provider: ProviderKeys | undefined;
  private readonly secret: Promise<webcrypto.CryptoKey>;
  private readonly verified = new VerifiedTokens(VERIFIED_TOKENS_KEPT);

  constructor(
    @Inject(CONFIG) private readonly config: Config,
    @Inject(LOGGER) logger: Logger,
  ) {
    this.provider = config.authProvider
      ? new ProviderKeys(config.authProvider, (reason) =>
          logger.warn({ jwksUrl: config.authProvider?.jwksUrl.href, reason }, "the identity provider's keys cannot be fetched"),
        )
      : undefined;
    this.secret = secretKey(config.authJwtSecret);
  }

  async verify(token: string, now: Date): Promise<TokenClaims> {
    const known = this.verified.claims(token, now);
    if (known) return known;
    let alg: unknown;
    try {
      alg = decodeProtectedHeader(token).alg;
    } catch {
      throw new InvalidTokenError('the token is not valid');
    }
    if (typeof alg === 'string' && PROVIDER_ALGORITHMS.includes(alg) && this.provider) return this.provider.verify(token, now);
    const verified = await verifySecretToken(await this.secret, token, now);
    this.verified.remember(token, verified);
    return verified.claims;
  }
}

/**
 * Self-signed tokens already verified, by their exact text. A client sends the
 * same token with every request until it expires, and checking its HMAC again
 * each time was a tenth of a request's CPU. Only a token that passed
 * verification is kept, and a hit is still held to the token's `exp` and
 * `nbf` against the request's `now`, as jose holds it (`exp` is the first
 * second the token is refused). Provider tokens are not kept: their keys rotate.
 */
class VerifiedTokens {
  private readonly tokens = new Map<string, VerifiedToken>();

  constructor(private readonly capacity: number) {}

  claims(token: string, now: Date): TokenClaims | undefined {
    const verified = this.tokens.get(token);
    if (!verified) return undefined;
    const seconds = Math.floor(now.getTime() / 1000);
    if (
      (verified.expiresAt !== undefined && seconds >= verified.expiresAt) ||
      (verified.notBefore !== undefined && seconds < verified.notBefore)
    ) {
      this.tokens.delete(token);
      return undefined;
    }
    // A copy: a request's claims are its own.
    return { userId: verified.claims.userId, scopes: [...verified.claims.scopes] };
  }

  remember(token: string, verified: VerifiedToken): void {
    if (this.tokens.size >= this.capacity) this.tokens.delete(this.tokens.keys().next().value!);
    this.tokens.set(token, verified);
  }
}

class ProviderKeys {
  private readonly keys: ReturnType<typeof createRemoteJWKSet>;
  private lastFailureAt = -Infinity;

  constructor(
    private readonly settings: AuthProviderConfig,
    private readonly onFailure: (reason: string) => void,
  ) {
    const cooldownMs = settings.jwksCooldownSeconds * 1000;
    this.keys = createRemoteJWKSet(settings.jwksUrl, {
      // jose fetches again on an unknown `kid` once the cooldown has passed
      // since the last successful fetch, and dedupes concurrent fetches.
      cooldownDuration: cooldownMs,
      timeoutDuration: 5_000,
      // jose does not remember failures: with the provider down, every request
      // would fetch. A failed fetch holds further fetches for the cooldown too.
      [customFetch]: async (url: string, options: RequestInit) => {
        if (Date.now() - this.lastFailureAt < cooldownMs) throw new KeysUnavailableError('a recent fetch of the keys failed');
        let response: Response;
        try {
          response = await fetch(url, options);
        } catch (error) {
          this.lastFailureAt = Date.now();
          this.onFailure(String((error as Error).cause ?? error));
          if (error instanceof Error && error.name === 'TimeoutError') throw error; // jose makes it JWKSTimeout
          throw new KeysUnavailableError('the JWKS cannot be fetched');
        }
        if (!response.ok) {
          this.lastFailureAt = Date.now();
          this.onFailure(`HTTP ${response.status}`);
          throw new KeysUnavailableError(`the JWKS answered ${response.status}`);
        }
        return response;
      },
    });
  }

  async verify(token: string, now: Date): Promise<TokenClaims> {
    try {
      const { payload } = await jwtVerify(token, this.keys, {
        algorithms: PROVIDER_ALGORITHMS,
        issuer: this.settings.issuer,
        audience: this.settings.audience,
        currentDate: now,
      });
      return {
        userId: userIdFrom(claim(payload, this.settings.userClaim), `"${this.settings.userClaim}" claim`),
        scopes: this.settings.scopeClaim ? scopesFrom(claim(payload, this.settings.scopeClaim)) : [],
      };
    } catch (error) {
      // A key set that is not JSON or not a JWKS counts as a failed fetch.
      const badKeySet =
        error instanceof errors.JWKSInvalid ||
        (error instanceof errors.JOSEError && /^(Failed to parse|Expected 200 OK from) the JSON Web Key Set/.test(error.message));
      if (badKeySet) {
        this.lastFailureAt = Date.now();
        this.onFailure((error as Error).message);
      }
      if (badKeySet || error instanceof KeysUnavailableError || error instanceof errors.JWKSTimeout) {
        throw new KeysUnavailableError("the identity provider's keys cannot be fetched");
      }
      throw asInvalidToken(error);
    }
  }
}

/**
 * A claim by its name, or by a dotted path into nested objects
 * (`app_metadata.scopes`) when no claim has that exact name (Auth0's
 * namespaced claims are URLs, dots included).
 */
function claim(payload: JWTPayload, name: string): unknown {
  if (Object.hasOwn(payload, name)) return payload[name];
  let value: unknown = payload;
  for (const part of name.split('.')) {
    if (typeof value !== 'object' || value === null || !Object.hasOwn(value, part)) return undefined;
    value = (value as Record<string, unknown>)[part];
  }
  return value;
}
