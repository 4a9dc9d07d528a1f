// `npm run token -- USER_ID [--scope ops] [--expires-in 30d]`: prints a bearer
// token signed with AUTH_JWT_SECRET (or the development secret).
import { parseArgs } from 'node:util';
import { ConfigError, loadConfig } from '@nudge/config';
import { signToken } from '../auth/jwt.js';

const { values, positionals } = parseArgs({
  allowPositionals: true,
  options: { scope: { type: 'string', multiple: true }, 'expires-in': { type: 'string', default: '30d' } },
});
const userId = positionals[0];
if (!userId || userId.length > 128) {
  console.error('usage: npm run token -- USER_ID [--scope ops] [--expires-in 30d]   (USER_ID: 1 to 128 characters)');
  process.exit(2);
}
try {
  const config = loadConfig();
  if (config.usingDevelopmentSecret) console.error('note: AUTH_JWT_SECRET is not set; signing with the development secret');
  console.log(await signToken(config.authJwtSecret, { userId, scopes: values.scope ?? [], expiresIn: values['expires-in'] }));
} catch (error) {
  console.error(error instanceof ConfigError ? error.message : String(error));
  process.exit(1);
}
