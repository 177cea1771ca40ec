/**
 * @akd-ts/cli: the `akd` command, also usable in-process (tests, embedding) through `run`.
 */

export { buildProgram, run } from './program.js';
export { processIo } from './io.js';
export type { CliIo, TextSink } from './io.js';
export { EXIT, UsageError, reportFailure } from './errors.js';
