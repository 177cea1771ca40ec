/**
 * The streams and environment a command runs with. Commands never touch `process` directly, so
 * tests run the whole program in-process with captured output and a stdin of their choosing.
 */

/** Where text goes: `process.stdout`, `process.stderr`, or a test's capture. */
export interface TextSink {
  write(chunk: string): unknown;
  /** Set by terminals; help text wraps to this width. */
  columns?: number;
  isTTY?: boolean;
}

/** What `run` reads from and writes to. */
export interface CliIo {
  stdout: TextSink;
  stderr: TextSink;
  /** Read only when an option names `-` (for example `--proof -`). */
  stdin: AsyncIterable<Uint8Array | string>;
  /** Environment variables (default `process.env`); `AKD_DEBUG=1` prints stack traces. */
  env?: Record<string, string | undefined>;
  /**
   * The bytes of each argument as the process received them (argv-text.ts), so that bytes
   * that are not UTF-8 are refused rather than read as U+FFFD. In-process callers pass
   * strings, which are checked for lone surrogates instead.
   */
  argvBytes?: readonly Uint8Array[];
}

/**
 * The real process's streams.
 *
 * @example
 * ```ts
 * process.exitCode = await run(process.argv.slice(2), processIo());
 * ```
 */
export function processIo(): CliIo {
  return { stdout: process.stdout, stderr: process.stderr, stdin: process.stdin, env: process.env };
}
