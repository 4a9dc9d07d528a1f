// Rewrites the table of docs/configuration.md from the config schema.
import { readFileSync, writeFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { withConfigurationTable } from '../configuration-docs.js';

const page = fileURLToPath(new URL('../../../../docs/configuration.md', import.meta.url));
writeFileSync(page, withConfigurationTable(readFileSync(page, 'utf8')));
console.log(`wrote ${page}`);
