import { errors, jwtVerify, SignJWT } from 'jose';

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

/**
 * Verifies an HS256 bearer token. Only HS256 is accepted, so `alg: none` and
 * tokens signed with another algorithm are refused.
 */
export async function verifyToken(secret: string, token: string, now: Date): Promise<TokenClaims> {
  try {
    const { payload } = await jwtVerify(token, encoder.encode(secret), {
      algorithms: ['HS256'],
      currentDate: now,
    });
    const userId = payload.sub;
    // Control characters never make a sensible id, and a NUL cannot be stored in a text column (a 500).
    if (typeof userId !== 'string' || userId.length === 0 || userId.length > 128 || CONTROL_CHARACTERS.test(userId)) {
      throw new InvalidTokenError('the token has no valid subject');
    }
    const scope = payload.scope;
    const scopes = typeof scope === 'string' ? scope.split(' ').filter(Boolean) : Array.isArray(scope) ? scope.map(String) : [];
    return { userId, scopes };
  } catch (error) {
    if (error instanceof InvalidTokenError) throw error;
    if (error instanceof errors.JWTExpired) throw new InvalidTokenError('the token has expired');
    throw new InvalidTokenError('the token is not valid');
  }
}
