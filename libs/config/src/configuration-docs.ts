import { VARIABLES, type VariableSpec } from './config.schema.js';
import { code } from './variable-kinds.js';

// docs/configuration.md's table of variables is rendered from VARIABLES, so the
// page cannot say another default, range or rule than the loader applies.
// `npx tsx libs/config/src/cli/configuration-docs.ts` rewrites it; a test
// (test/app/docs.integration-spec.ts) fails while the page differs.

export const TABLE_START = '<!-- table: rendered from VARIABLES by `npx tsx libs/config/src/cli/configuration-docs.ts` -->';
export const TABLE_END = '<!-- end of table -->';

/** The kind's range or words, then the rules and secrecy the loader applies. */
function accepts(variable: VariableSpec): string {
  const notes = [variable.kind.accepts];
  if (variable.requires) notes.push(`needs ${variable.requires.map(code).join(', ')}`);
  if (variable.onlyWith) notes.push(`only with ${code(variable.onlyWith)}`);
  if (variable.sensitive) notes.push('secret: never echoed');
  return notes.join('; ');
}

const cell = (markdown: string) => markdown.replaceAll('|', '\\|');

export function configurationTable(variables: readonly VariableSpec[] = VARIABLES): string {
  const rows = variables.map((v) =>
    [code(v.name), v.default === undefined ? '—' : code(v.default), accepts(v), v.description].map(cell).join(' | '),
  );
  return ['| variable | default | accepts | meaning |', '|---|---|---|---|', ...rows.map((row) => `| ${row} |`)].join('\n');
}

/** The page with the table between its markers replaced by the rendered one. */
export function withConfigurationTable(page: string): string {
  const start = page.indexOf(TABLE_START);
  const end = page.indexOf(TABLE_END);
  if (start < 0 || end < start) throw new Error(`the page has no ${TABLE_START} … ${TABLE_END} block`);
  return `${page.slice(0, start + TABLE_START.length)}\n\n${configurationTable()}\n\n${page.slice(end)}`;
}
