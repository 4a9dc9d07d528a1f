const VISIBLE = 4;

/**
 * A push token as API responses and logs show it: `…a1b2`. Short tokens show
 * nothing, since their last four characters would be most of the secret.
 */
export function maskPushToken(token: string): string {
  // A web subscription's JSON ends with its keys' punctuation: its endpoint is what tells two apart.
  const endpoint = /^\{"endpoint":"([^"]+)"/.exec(token)?.[1];
  if (endpoint) return maskPushToken(endpoint);
  if (token.length < VISIBLE * 2) return '…';
  return `…${token.slice(-VISIBLE)}`;
}
