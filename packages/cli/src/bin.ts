#!/usr/bin/env node
/**
 * Entry point of the `akd` command (package.json bin -> bin/akd.js -> here): runs the program
 * on the process's arguments and streams, and sets the exit status. All logic is in program.ts.
 */

import { rawArguments } from './argv-text.js';
import { processIo } from './io.js';
import { run } from './program.js';
import { ensureWriterFlags } from './writer-flags.js';

// before any command allocates: a publish's memory depends on them (writer-flags.ts)
ensureWriterFlags();

// A closed pipe (`akd ... | head`) ends the command quietly; other write failures get one
// line, never the stack trace an unhandled 'error' event would print.
process.stdout.on('error', (e: NodeJS.ErrnoException) => {
  if (e.code !== 'EPIPE') process.stderr.write(`error: cannot write output: ${e.message}\n`);
  process.exit(e.code === 'EPIPE' ? (process.exitCode ?? 0) : 1);
});

const args = process.argv.slice(2);
process.exitCode = await run(args, { ...processIo(), argvBytes: rawArguments(args) });
