/**
 * Starting a pool of worker threads that may not load. A bundler (esbuild, webpack, rollup)
 * folds this package into one file: the worker modules are no longer files beside the code
 * that names them, `import.meta.url` is the bundle's (or, in CommonJS output, absent), and
 * piscina's own worker script, which it finds through `__dirname`, is gone too. Every pool of
 * the directory (tree insertion, VRF, audit verification) starts through here: it checks that
 * the worker script exists, starts the pool, and runs one probe task before the first real
 * one. When any step fails the caller either runs on its own thread (a warning, once per
 * kind of pool) or, when the workers were explicitly demanded, gets a WorkersUnavailableError.
 */

import { existsSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { Piscina } from 'piscina';

/** Worker threads were demanded but their script cannot be loaded here. */
export class WorkersUnavailableError extends Error {
  /** Which pool: "tree insertion", "VRF" or "audit verification". */
  readonly pool: string;
  /** Why it could not start. */
  readonly reason: string;

  constructor(pool: string, reason: string) {
    super(
      `${pool} worker threads are unavailable: ${reason}. A bundled build cannot start them; ` +
        'leave the number of threads to its default (the calling thread is used then) or ' +
        'keep @akd-ts/directory out of the bundle',
    );
    this.name = 'WorkersUnavailableError';
    this.pool = pool;
    this.reason = reason;
  }
}

/** Where a worker module named `stem` lies next to the module at `base`, or why it cannot. */
export function workerScript(base: string | undefined, stem: string): URL | string {
  if (typeof base !== 'string' || base === '') {
    return 'this module has no URL of its own (bundled as CommonJS?)';
  }
  let url: URL;
  try {
    url = new URL(`./${stem}.${base.endsWith('.ts') ? 'ts' : 'js'}`, base);
  } catch {
    return `cannot resolve ${stem} next to ${base}`;
  }
  if (url.protocol !== 'file:') return `the worker script ${url.href} is not a file`;
  const path = fileURLToPath(url);
  return existsSync(path) ? url : `no worker script at ${path}`;
}

type PoolOptions = Omit<NonNullable<ConstructorParameters<typeof Piscina>[0]>, 'filename'>;

/** A started pool, or the reason it did not start. */
export type StartedPool = { pool: Piscina; ready: Promise<string | undefined> } | string;

/**
 * Starts a pool on `script` (from workerScript). `ready` settles once a probe task (the worker
 * module's `probe` export) has run on it: undefined, or the reason it failed. A worker that
 * fails with no task in hand is reported to the pool's error listener instead of the
 * process.
 */
export function startPool(script: URL | string, options: PoolOptions): StartedPool {
  if (typeof script === 'string') return script;
  let pool: Piscina;
  try {
    pool = new Piscina({ ...options, filename: script.href });
  } catch (error) {
    // piscina locates its own worker script through __dirname, which an ES module bundle lacks
    return `the pool did not start (${(error as Error).message})`;
  }
  let failure: string | undefined;
  pool.on('error', (error: Error) => {
    failure ??= error.message;
  });
  const ready = pool
    .run(null, { name: 'probe' })
    .then(
      (answer: unknown) => (answer === true ? failure : (failure ?? 'the probe got no answer')),
      (error: Error) => `its worker did not load (${error.message})`,
    )
    .then(async (reason) => {
      if (reason !== undefined) await pool.destroy().catch(() => undefined);
      return reason;
    });
  return { pool, ready };
}

const warned = new Set<string>();

/**
 * What a caller does when its pool is unavailable: throws when the workers were `required`,
 * else warns once per kind of pool (process warning AKD_WORKERS_UNAVAILABLE) and lets the
 * caller run on its own thread.
 */
export function workersUnavailable(pool: string, reason: string, required: boolean): void {
  if (required) throw new WorkersUnavailableError(pool, reason);
  if (warned.has(pool)) return;
  warned.add(pool);
  process.emitWarning(
    `${pool} runs on the calling thread: its worker threads are unavailable (${reason})`,
    { code: 'AKD_WORKERS_UNAVAILABLE' },
  );
}

/**
 * Starts and probes a pool (startPool) named `name` for messages: the pool once it answered
 * its probe, or undefined when it cannot run here (see workersUnavailable).
 */
export async function openPool(
  name: string,
  script: URL | string,
  options: PoolOptions,
  required: boolean,
): Promise<Piscina | undefined> {
  const started = startPool(script, options);
  const reason = typeof started === 'string' ? started : await started.ready;
  if (reason === undefined && typeof started !== 'string') return started.pool;
  workersUnavailable(name, reason ?? 'unknown', required);
  return undefined;
}
