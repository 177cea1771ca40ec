/**
 * Command-line arguments must be well-formed text: a label typed as text becomes its UTF-8
 * bytes, so an argument holding bytes that are not UTF-8 (from the shell: `$'\xff'`) or a
 * lone surrogate (in-process callers) is refused, naming the option, rather than silently
 * turned into U+FFFD, which would look up or publish another label. Bytes go through `hex:`.
 *
 * Node decodes the process's arguments lossily before any code runs, so bin.ts reads the raw
 * bytes the kernel passed (/proc/self/cmdline, on Linux) and hands them to `run`.
 */

import { readFileSync } from 'node:fs';
import { isUtf8, isWellFormedText, utf8 } from '@akd-ts/core';
import { UsageError } from './errors.js';

/** Stands for an argument whose bytes are unknown and may not have been UTF-8. */
const NOT_UTF8 = Uint8Array.of(0xff);

/**
 * The bytes of each of the process's last `args.length` arguments as the kernel passed them.
 * Where they cannot be read (no /proc), an argument holding U+FFFD (which is what invalid
 * bytes decode to) is taken as invalid, since it cannot be told apart.
 *
 * @example rawArguments(process.argv.slice(2))
 */
export function rawArguments(
  args: readonly string[],
  cmdline = '/proc/self/cmdline',
): Uint8Array[] {
  const fallback = () => args.map((a) => (a.includes('\ufffd') ? NOT_UTF8 : utf8(a)));
  let raw: Buffer;
  try {
    raw = readFileSync(cmdline);
  } catch {
    return fallback();
  }
  // NUL-separated, NUL-terminated; the script's arguments come last
  const parts: Uint8Array[] = [];
  let start = 0;
  for (let i = 0; i < raw.length; i++) {
    if (raw[i] === 0) {
      parts.push(new Uint8Array(raw.subarray(start, i)));
      start = i + 1;
    }
  }
  if (parts.length < args.length) return fallback();
  const mine = parts.slice(parts.length - args.length);
  // the kernel's bytes must decode to what Node gave us, or they are not these arguments
  const same = mine.every((b, i) => Buffer.from(b).toString('utf8') === args[i]);
  return same ? mine : fallback();
}

/** The name of the option `args[i]` belongs to, for the error message. */
function optionOf(args: readonly string[], i: number): string {
  const arg = args[i]!;
  if (arg.startsWith('--') && arg.includes('=')) return arg.slice(0, arg.indexOf('='));
  const previous = args[i - 1];
  if (previous !== undefined && /^--?[A-Za-z]/.test(previous) && !previous.includes('=')) {
    return previous;
  }
  return `argument ${i + 1}`;
}

/**
 * Refuses arguments that are not well-formed text.
 *
 * @param raw the bytes of each argument as the process received them, when known
 * @throws UsageError naming the option, e.g. `--label: not valid UTF-8 ...`
 * @example checkArgumentText(['lookup', '--label', '\ud800']) // throws
 */
export function checkArgumentText(args: readonly string[], raw?: readonly Uint8Array[]): void {
  for (let i = 0; i < args.length; i++) {
    const bytes = raw?.[i];
    const reason =
      bytes !== undefined && !isUtf8(bytes)
        ? 'is not valid UTF-8'
        : !isWellFormedText(args[i]!)
          ? 'holds a lone surrogate, which is not text'
          : undefined;
    if (reason !== undefined) {
      throw new UsageError(
        `${optionOf(args, i)}: the argument ${reason}; write bytes as hex:<hex> (labels) instead`,
      );
    }
  }
}
