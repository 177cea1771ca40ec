/**
 * The `akd` command line: builds the commander program and runs it in-process. Commands are
 * added by one `add...Commands(program, io)` function per area (see commands/), and every
 * failure becomes an exit status here (errors.ts), so no command calls process.exit.
 */

import { readFileSync } from 'node:fs';
import { Command } from 'commander';
import { checkArgumentText } from './argv-text.js';
import { addAuditBlobCommands } from './commands/audit-blobs.js';
import { addVrfCommands } from './commands/vrf.js';
import { addLayoutCommands } from './commands/layout.js';
import { addBackupCommands } from './commands/backup.js';
import { addDirectoryCommands } from './commands/directory.js';
import { addFailoverCommands } from './commands/failover.js';
import { addProofCommands } from './commands/proofs.js';
import { addServeCommands } from './commands/serve.js';
import { addEvidenceCommand, addMonitorCommands } from './commands/monitor.js';
import { addVerifyCommands } from './commands/verify.js';
import { EXIT, reportFailure } from './errors.js';
import type { CliIo } from './io.js';

// package.json is one directory above both src/ and dist/, so this works built or not
const VERSION = (
  JSON.parse(readFileSync(new URL('../package.json', import.meta.url), 'utf8')) as {
    version: string;
  }
).version;

const ROOT_HELP = `
Commands by task:
  run a directory    init, publish, epoch, serve
  keep it safe       backup, restore (SQLite); fence, promote (PostgreSQL fail-over);
                     vrf backfill (store the VRF proofs of an older store, once);
                     vrf migrate (keep an older store's VRF proofs as rows by label);
                     layout migrate (keep tree nodes as versions appended by epoch);
                     layout collect (delete node versions no reader reaches any more)
  serve proofs       lookup, history; audit (one append-only proof between two epochs)
  audit a directory  audit export (write its audit blobs to a folder);
                     audit verify (check a folder or listing of audit blobs as one chain,
                     and keep following it); audit witness (serve its signed heads with
                     Plexi's witness API)
  check proofs       verify lookup, verify history (against a root you trust);
                     verify audit (one append-only proof against root hashes you trust);
                     verify head (a witness's signed head, in Plexi's format);
                     verify evidence (what a client caught a server doing)
  watch a directory  monitor (it only grows, and a label is as expected)

Exit status:
  0  done (for verify: the proof is valid)
  1  failed (for verify: the proof is invalid); stderr gives the error code and reason
  2  usage error (a missing or malformed option, an unreadable file)

Run 'akd <command> --help' for a command's options and an example.
Set AKD_DEBUG=1 to print stack traces of unexpected errors.
`;

/** `akd verify lookup`, for hints pointing at the right --help. */
function commandPath(cmd: Command): string {
  const names: string[] = [];
  for (let c: Command | null = cmd; c !== null; c = c.parent) names.unshift(c.name());
  return names.join(' ');
}

function helpHint(cmd: Command): string {
  return `(see '${commandPath(cmd)} --help')`;
}

/** Every usage error ends with a pointer to the help of the command that was mistyped. */
function addHelpHints(cmd: Command): void {
  cmd.showHelpAfterError(helpHint(cmd));
  for (const sub of cmd.commands) addHelpHints(sub);
}

/**
 * Builds the `akd` program writing to `io`. Commander does not exit the process: it throws a
 * CommanderError that {@link run} maps to an exit status.
 *
 * @example
 * ```ts
 * buildProgram(processIo()).helpInformation(); // the text of `akd --help`
 * ```
 */
export function buildProgram(io: CliIo): Command {
  const program = new Command('akd')
    .description('Auditable key directory (key transparency), byte-compatible with facebook/akd')
    .version(VERSION, '-V, --version', 'print the version')
    .helpOption('-h, --help', 'print help')
    .exitOverride()
    .configureOutput({
      writeOut: (s) => io.stdout.write(s),
      writeErr: (s) => io.stderr.write(s),
      // commander only reports command-line mistakes; say so in the same words as ours
      outputError: (s, write) => write(s.replace(/^error: /, 'usage error: ')),
      getOutHelpWidth: () => (io.stdout.isTTY === true ? (io.stdout.columns ?? 80) : 80),
      getErrHelpWidth: () => (io.stderr.isTTY === true ? (io.stderr.columns ?? 80) : 80),
      getOutHasColors: () => false,
      getErrHasColors: () => false,
    })
    .addHelpText('after', ROOT_HELP);
  addDirectoryCommands(program, io);
  addAuditBlobCommands(addProofCommands(program, io), io);
  addVerifyCommands(program, io);
  addEvidenceCommand(
    program.commands.find((c) => c.name() === 'verify')!,
    io,
  );
  addMonitorCommands(program, io);
  addServeCommands(program, io);
  addVrfCommands(program, io);
  addLayoutCommands(program, io);
  addBackupCommands(program, io);
  addFailoverCommands(program, io);
  addHelpHints(program);
  return program;
}

/**
 * Runs `akd` with `argv` (the arguments after the command name) and resolves to the exit
 * status; it never rejects, and output goes only to `io`.
 *
 * @example
 * ```ts
 * const status = await run(['verify', 'audit', '--help'], processIo()); // 0
 * ```
 */
export async function run(argv: readonly string[], io: CliIo): Promise<number> {
  let active: Command | undefined;
  try {
    checkArgumentText(argv, io.argvBytes);
    const program = buildProgram(io);
    program.hook('preAction', (_program, actionCommand) => {
      active = actionCommand;
    });
    await program.parseAsync([...argv], { from: 'user' });
    return EXIT.ok;
  } catch (e) {
    return reportFailure(e, io, active === undefined ? undefined : helpHint(active));
  }
}
