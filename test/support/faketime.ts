import { spawnSync } from 'node:child_process';
import { constants } from 'node:fs';
import { aptInstall, type AptOptions, hasAccess } from './apt.js';

// libfaketime (Debian's `libfaketime`, which the `faketime` command uses):
// LD_PRELOAD it into one process with FAKETIME="+45s" and that process's
// clock runs 45 s ahead, nothing else's. Found at LIBFAKETIME_PATH, where
// `dpkg -L libfaketime` puts it, or Debian's usual path; else installed with
// apt-get when root; else the tests that need it are skipped with the reason.

export type LibfaketimeLookup = { path: string } | { path: null; reason: string };

const DEFAULT_CANDIDATES = ['/usr/lib/x86_64-linux-gnu/faketime/libfaketime.so.1', '/usr/lib/aarch64-linux-gnu/faketime/libfaketime.so.1'];

const readable = (path: string) => hasAccess(path, constants.R_OK);

function fromDpkg(): string | undefined {
  const run = spawnSync('dpkg', ['-L', 'libfaketime'], { encoding: 'utf8' });
  if (run.status !== 0) return undefined;
  return run.stdout.split('\n').find((line) => line.endsWith('/libfaketime.so.1') && readable(line));
}

export function findLibfaketime(options: AptOptions & { env?: Record<string, string | undefined> } = {}): LibfaketimeLookup {
  const env = options.env ?? process.env;
  if (env.LIBFAKETIME_PATH) {
    return readable(env.LIBFAKETIME_PATH)
      ? { path: env.LIBFAKETIME_PATH }
      : { path: null, reason: `LIBFAKETIME_PATH=${env.LIBFAKETIME_PATH} is not a readable file` };
  }
  const found = fromDpkg() ?? DEFAULT_CANDIDATES.find(readable);
  if (found) return { path: found };
  const howTo = "install Debian's libfaketime (apt-get install libfaketime) or set LIBFAKETIME_PATH to run it";
  const failed = aptInstall('libfaketime', 'libfaketime', options);
  if (failed !== null) return { path: null, reason: `${failed}: ${howTo}` };
  const installed = fromDpkg() ?? DEFAULT_CANDIDATES.find(readable);
  return installed ? { path: installed } : { path: null, reason: 'apt-get installed libfaketime, yet no libfaketime.so.1 was found' };
}
