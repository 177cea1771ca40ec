/**
 * How the akd command fails. Exit status 0 means the command did what was asked (a proof
 * verified); 1 means it did not (an invalid proof, a storage error, an unexpected failure); 2
 * means the command line itself was wrong. Every failure is reported in one line without a
 * stack trace, unless AKD_DEBUG=1 asks for one.
 */

import { CommanderError } from 'commander';
import { isAkdError } from '@akd-ts/core';
import type { CliIo } from './io.js';
import { MissingDriverError } from '@akd-ts/server/drivers';

/** Exit statuses of the akd command. */
export const EXIT = { ok: 0, failed: 1, usage: 2 } as const;

/**
 * A mistake in the command line (a malformed option value, an unreadable file). Exits 2.
 *
 * @example
 * ```ts
 * throw new UsageError("--epoch: expected a non-negative integer, got 'x'");
 * ```
 */
export class UsageError extends Error {
  constructor(message: string, options?: { cause?: unknown }) {
    super(message, options);
    this.name = 'UsageError';
  }
}

/**
 * A failure the command explains in full, without a catalogue code: `akd serve` stopping on
 * its own, saying why. Exits 1, reported as `error: <message>` (not as an unexpected error).
 *
 * @example
 * ```ts
 * throw new CommandFailure('akd serve stopped: the proof process keeps exiting');
 * ```
 */
export class CommandFailure extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'CommandFailure';
  }
}

/** Keeps a reason on one line: messages may embed newlines from nested causes. */
function oneLine(text: string): string {
  return text.replace(/\s*\n\s*/g, ' ').trim();
}

/**
 * Reports `error` on stderr and returns the exit status it maps to. Commander has already
 * printed its own usage errors, so those only map to a status here. `helpHint` follows a usage
 * error on a second line, the way commander's own usage errors end.
 *
 * @example
 * ```ts
 * try { await program.parseAsync(argv, { from: 'user' }) } catch (e) { return reportFailure(e, io) }
 * ```
 */
export function reportFailure(error: unknown, io: CliIo, helpHint?: string): number {
  const debug = (io.env ?? process.env)['AKD_DEBUG'] === '1';
  if (error instanceof CommanderError) {
    // --help and --version end parsing through the same exception, with status 0
    return error.exitCode === 0 ? EXIT.ok : EXIT.usage;
  }
  if (error instanceof UsageError) {
    io.stderr.write(`usage error: ${oneLine(error.message)}\n`);
    if (helpHint !== undefined) io.stderr.write(`${helpHint}\n`);
    return EXIT.usage;
  }
  if (isAkdError(error)) {
    io.stderr.write(`error: ${error.code}: ${oneLine(error.message)}\n`);
  } else if (error instanceof CommandFailure || error instanceof MissingDriverError) {
    io.stderr.write(`error: ${oneLine(error.message)}\n`);
  } else {
    // A bug or an environment failure: still one line, and never a success status
    const name = error instanceof Error ? error.name : 'Error';
    const message = error instanceof Error ? error.message : String(error);
    const hint = debug ? '' : ' (set AKD_DEBUG=1 for a stack trace)';
    io.stderr.write(`error: unexpected ${name}: ${oneLine(message)}${hint}\n`);
  }
  if (debug && error instanceof Error && error.stack !== undefined) {
    io.stderr.write(`${error.stack}\n`);
  }
  return EXIT.failed;
}
