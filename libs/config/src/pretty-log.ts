// Log lines for a person at a terminal: `12:00:01.234 INFO  message  key=value`,
// the level in colour, an error's stack below it. A few lines instead of
// pino-pretty and its dozen dependencies; machines (a pipe, a file, production)
// keep getting pino's JSON.

const LEVELS: Record<number, [name: string, colour: string]> = {
  10: ['TRACE', '\u001b[90m'],
  20: ['DEBUG', '\u001b[36m'],
  30: ['INFO ', '\u001b[32m'],
  40: ['WARN ', '\u001b[33m'],
  50: ['ERROR', '\u001b[31m'],
  60: ['FATAL', '\u001b[35m'],
};
const RESET = '\u001b[0m';
const DIM = '\u001b[2m';
// Shown in the line's head, or of no use to a person reading along.
const HIDDEN = new Set(['level', 'time', 'msg', 'pid', 'hostname', 'err']);

/** Pretty only for a person: stdout is a terminal and this is not production. */
export function prettyByDefault(stream: { isTTY?: boolean }, nodeEnv: string | undefined): boolean {
  return stream.isTTY === true && nodeEnv !== 'production';
}

/** A pino destination that rewrites each JSON line for a terminal before writing it to `out`. */
export class PrettyLogStream {
  constructor(
    private readonly out: { write(text: string): unknown },
    private readonly colours = true,
  ) {}

  write(chunk: string): boolean {
    for (const line of chunk.split('\n')) if (line) this.out.write(this.format(line) + '\n');
    return true;
  }

  format(line: string): string {
    let entry: Record<string, unknown>;
    try {
      entry = JSON.parse(line) as Record<string, unknown>;
    } catch {
      return line;
    }
    const paint = (colour: string, text: string) => (this.colours ? `${colour}${text}${RESET}` : text);
    const [name, colour] = LEVELS[entry.level as number] ?? [String(entry.level).padEnd(5), ''];
    const time = typeof entry.time === 'string' ? entry.time.slice(11, 23) : '';
    const fields = Object.entries(entry)
      .filter(([key, value]) => !HIDDEN.has(key) && value !== undefined)
      .map(([key, value]) => `${key}=${typeof value === 'string' && !/[\s"=]/.test(value) ? value : JSON.stringify(value)}`);
    let text = `${paint(DIM, time)} ${paint(colour, name)} ${String(entry.msg ?? '')}`;
    if (fields.length > 0) text += `  ${paint(DIM, fields.join(' '))}`;
    const err = entry.err as { stack?: string; message?: string } | undefined;
    // A stack's `at` lines are indented already; its first line is brought in line with them.
    if (err) text += `\n    ${err.stack ?? err.message ?? JSON.stringify(err)}`;
    return text;
  }
}
