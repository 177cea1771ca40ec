/**
 * Side-by-side measurement with upstream: finds the `akd-rs` command (upstream facebook/akd
 * as a command-line driver: `AKD_ORACLE`, or `../shared/oracle/akd-rs` beside the checkout),
 * and runs any command in a child process under `/usr/bin/time -v`, so both sides report
 * their peak memory (maxRSS) the same way. Benchmarks alternate our runs with upstream's in
 * one process tree, so both see the same machine.
 */

import { spawnSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import { basename, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { buildSync } from 'esbuild';

const ROOT = fileURLToPath(new URL('../..', import.meta.url));
const TIME = '/usr/bin/time';

/** The upstream command, or undefined when there is none here (`--no-upstream` too). */
export function upstreamCommand(args: string[]): string | undefined {
  if (args.includes('--no-upstream')) return undefined;
  const candidates = [
    process.env['AKD_ORACLE'],
    join(ROOT, '../shared/oracle/akd-rs'),
    join(ROOT, '../../shared/oracle/akd-rs'),
  ];
  return candidates.find((c): c is string => c !== undefined && c !== '' && existsSync(c));
}

export interface Measured {
  /** The last JSON line the command printed. */
  json: Record<string, unknown>;
  /** Peak resident memory of the child, in MB. */
  maxRssMb: number | null;
  /** Wall time of the whole child process, in ms. */
  processMs: number;
}

/**
 * Runs `command args` to completion under `/usr/bin/time -v` when it exists and parses the
 * last line of its output as JSON.
 * @throws Error when the command fails.
 */
export function measure(command: string, args: string[], env: NodeJS.ProcessEnv = {}): Measured {
  const timed = existsSync(TIME);
  const start = performance.now();
  const r = spawnSync(timed ? TIME : command, timed ? ['-v', command, ...args] : args, {
    encoding: 'utf8',
    maxBuffer: 1 << 28,
    env: { ...process.env, ...env },
  });
  const processMs = performance.now() - start;
  if (r.status !== 0) throw new Error(`${command} ${args.join(' ')} failed: ${r.stderr}`);
  const rss = /Maximum resident set size \(kbytes\): (\d+)/.exec(r.stderr);
  const lines = r.stdout.trim().split('\n');
  return {
    json: JSON.parse(lines[lines.length - 1]!) as Record<string, unknown>,
    maxRssMb: rss ? Math.round(Number(rss[1]) / 1024) : null,
    processMs,
  };
}

/** Bundles written by this process, by source URL: a run's children all run the same one. */
const bundled = new Map<string, string>();

/**
 * A benchmark file bundled into JavaScript (its own and bench/support modules; packages stay
 * imports of their compiled output), written beside the support modules so that their paths
 * relative to `import.meta.url` still hold: `bench/support/.<name>.compiled.mjs`. Bundled once
 * per process.
 */
function compiledBenchmark(file: string): string {
  const done = bundled.get(file);
  if (done !== undefined) return done;
  const source = fileURLToPath(file);
  const out = join(ROOT, 'bench/support', `.${basename(source, '.ts')}.compiled.mjs`);
  buildSync({
    entryPoints: [source],
    bundle: true,
    packages: 'external',
    platform: 'node',
    format: 'esm',
    target: 'node20',
    outfile: out,
    logLevel: 'error',
  });
  bundled.set(file, out);
  return out;
}

/**
 * Runs this benchmark file again in a child process (compiled packages, fresh heap), node
 * started with `nodeFlags` (as `akd` starts itself, for instance). By default the child
 * compiles the benchmark's TypeScript as it loads (scripts/bench-loader.mjs); with `plain`
 * it runs the file bundled into JavaScript beforehand, with no loader: the loader's module
 * hooks run on a thread of their own, about 37 MB of resident memory that a deployed process
 * (`akd publish`, a proof server) does not have, so a child whose peak memory is the figure
 * runs plain.
 */
export function measureSelf(
  file: string,
  args: string[],
  env: NodeJS.ProcessEnv = {},
  nodeFlags: string[] = [],
  plain = false,
): Measured {
  const script = plain
    ? [compiledBenchmark(file)]
    : ['--import', join(ROOT, 'scripts/bench-loader.mjs'), fileURLToPath(file)];
  return measure(process.execPath, [...nodeFlags, ...script, ...args], env);
}

/** `ours / upstream`, rounded, or null without an upstream figure. */
export function ratio(ours: number, upstream: number | null | undefined): number | null {
  return upstream === null || upstream === undefined || upstream === 0
    ? null
    : Number((ours / upstream).toFixed(2));
}
