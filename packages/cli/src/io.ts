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
