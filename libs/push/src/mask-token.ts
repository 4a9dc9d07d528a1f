const VISIBLE = 4;

/**
 * A push token as API responses and logs show it: `…a1b2`. Short tokens show
 * nothing, since their last four characters would be most of the secret.
 */
export function maskPushToken(token: string): string {
  if (token.length < VISIBLE * 2) return '…';
  return `…${token.slice(-VISIBLE)}`;
}
