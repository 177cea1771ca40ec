/**
 * Runs the akd program in-process for tests: captured stdout and stderr, a chosen stdin, and
 * the upstream vectors written out as the files a user would pass.
 */

import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Readable } from 'node:stream';
import { toHex } from '@akd-ts/core';
import { run } from '../src/program.js';
import {
  loadVectors,
  type UpstreamVectors,
  type VectorConfig,
} from '../../../test/support/vectors.js';

export interface Outcome {
  code: number;
  stdout: string;
  stderr: string;
}

/** A command started in-process: its output so far, and its outcome once it ends. */
export interface Running {
  stdout(): string;
  stderr(): string;
  done: Promise<Outcome>;
}

/** Starts `akd <args>` without waiting for it; `stdin` is what `-` reads. */
export function start(
  args: string[],
  options: { stdin?: Uint8Array | string; env?: Record<string, string> } = {},
): Running {
  let stdout = '';
  let stderr = '';
  const done = run(args, {
    stdout: { write: (s: string) => (stdout += s) },
    stderr: { write: (s: string) => (stderr += s) },
    stdin: Readable.from(options.stdin === undefined ? [] : [options.stdin]),
    env: options.env ?? {},
  }).then((code) => ({ code, stdout, stderr }));
  return { stdout: () => stdout, stderr: () => stderr, done };
}

/** Runs `akd <args>`; `stdin` is what `-` reads. */
export async function akd(
  args: string[],
  options: { stdin?: Uint8Array | string; env?: Record<string, string> } = {},
): Promise<Outcome> {
  return start(args, options).done;
}

/**
 * Resolves once `condition()` holds, checking it every few milliseconds; fails the test with
 * `what` when it has not held within `timeoutMs` (a bound, never a pacing of the test).
 */
export async function eventually(
  condition: () => boolean,
  what: string,
  timeoutMs = 30_000,
): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!condition()) {
    if (Date.now() > deadline) throw new Error(`timed out waiting until ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 5));
  }
}

/** A temporary directory removed by `cleanup`. */
export function tempDir(): {
  dir: string;
  write: (name: string, bytes: Uint8Array) => string;
  cleanup: () => void;
} {
  const dir = mkdtempSync(join(tmpdir(), 'akd-cli-test-'));
  return {
    dir,
    write: (name, bytes) => {
      const path = join(dir, name);
      writeFileSync(path, bytes);
      return path;
    },
    cleanup: () => rmSync(dir, { recursive: true, force: true }),
  };
}

/** One configuration's vectors, with their proofs written to `dir`. */
export interface VectorCase {
  vectors: UpstreamVectors;
  lookupFile: string;
  completeFile: string;
  mostRecent1File: string;
  /** `--config ... --public-key ... --root ... --epoch ... --label ...` for the vector. */
  base: string[];
}

export function vectorCase(
  name: VectorConfig,
  write: (name: string, bytes: Uint8Array) => string,
): VectorCase {
  const vectors = loadVectors(name);
  return {
    vectors,
    lookupFile: write(`${name}-lookup.bin`, vectors.lookupProof),
    completeFile: write(`${name}-complete.bin`, vectors.historyComplete),
    mostRecent1File: write(`${name}-most-recent-1.bin`, vectors.historyMostRecent1),
    base: [
      '--config',
      name,
      '--public-key',
      toHex(vectors.publicKey),
      '--root',
      toHex(vectors.epochHash),
      '--epoch',
      String(vectors.epoch),
      '--label',
      new TextDecoder().decode(vectors.label),
    ],
  };
}

/** Replaces the value following `option` in `args`. */
export function withOption(args: string[], option: string, value: string): string[] {
  const i = args.indexOf(option);
  if (i < 0) throw new Error(`${option} not in args`);
  return [...args.slice(0, i + 1), value, ...args.slice(i + 2)];
}

/** Removes `option` and its value from `args`. */
export function withoutOption(args: string[], option: string): string[] {
  const i = args.indexOf(option);
  if (i < 0) throw new Error(`${option} not in args`);
  return [...args.slice(0, i), ...args.slice(i + 2)];
}
