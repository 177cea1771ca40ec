/**
 * The V8 settings a publishing process wants, whichever way the command was started. The bin
 * shim's `#!` line passes `--expose-gc --no-allocation-site-pretenuring` (bin/akd.js says
 * why), but `node path/to/akd.js`, as process managers and service files often start a
 * command, skips that line: a publish of 100,000 updates into 500,000 labels then peaked at
 * 1.0-1.2 GB instead of about 0.7 (bench/RESULTS.md, "Writer memory as operators start it").
 * Both settings can be made at run time, before the work that needs them starts.
 */

import { setFlagsFromString } from 'node:v8';
import { runInNewContext } from 'node:vm';

/** What `ensureWriterFlags` had to set itself. */
export interface WriterFlags {
  /** `gc` was missing and is now the one a fresh context exposes. */
  gc: boolean;
  /** Allocation-site pretenuring was on and is now off. */
  pretenuring: boolean;
}

/** The flag that turns allocation-site pretenuring off. */
const NO_PRETENURING = '--no-allocation-site-pretenuring';

/**
 * Exposes `globalThis.gc` (which @akd-ts/directory's release-memory.ts calls after a large
 * epoch's walk and commit) and turns allocation-site pretenuring off, unless the process was
 * started with them.
 */
export function ensureWriterFlags(
  execArgv: readonly string[] = process.execArgv,
  holder: { gc?: unknown } = globalThis,
): WriterFlags {
  const done: WriterFlags = { gc: false, pretenuring: false };
  if (!execArgv.includes(NO_PRETENURING)) {
    setFlagsFromString(NO_PRETENURING);
    done.pretenuring = true;
  }
  if (typeof holder.gc !== 'function') {
    // a context made after the flag is set gets `gc`; collecting is per isolate, so that
    // function collects the main context's garbage too
    setFlagsFromString('--expose-gc');
    holder.gc = runInNewContext('gc') as () => void;
    done.gc = true;
  }
  return done;
}
