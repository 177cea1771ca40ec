/**
 * The tree's worker threads: one pool for the whole process, shared by every insertion and
 * started on first use. It grows to as many threads as insertions run tasks at once (the
 * parallel levels decide that, spec 13.1), up to 64, and keeps them; idle workers do not keep
 * the process alive (piscina unrefs them), so nothing needs closing. A task is a whole
 * subtree (thousands of nodes) against a per-task cost of tens of microseconds. Where the
 * worker script cannot load (a bundled build), insertions run on the calling thread.
 */

import type { Piscina } from 'piscina';
import { startPool, workerScript, workersUnavailable } from '../../worker-pool.js';
import { fromTaskError, type SubtreeResult, type SubtreeTask, type TaskError } from './tasks.js';

/** Most tree worker threads. */
export const MAX_TREE_THREADS = 64;

/** The name warnings and errors give this pool. */
const POOL = 'tree insertion';

let started: ReturnType<typeof startPool> | undefined;

/**
 * The process's pool of tree workers, or undefined when they cannot load here: the insertion
 * then runs on the calling thread (with one process warning), unless the workers were
 * `required` (a fixed degree), which throws WorkersUnavailableError.
 */
export async function treeWorkers(required: boolean): Promise<Piscina | undefined> {
  // started once for the process (again after endTreeWorkers); an unavailable pool is not
  // retried
  const pool = (started ??= startPool(workerScript(import.meta.url, 'tree-worker'), {
    minThreads: 1,
    maxThreads: MAX_TREE_THREADS,
    idleTimeout: Number.POSITIVE_INFINITY,
  }));
  const reason = typeof pool === 'string' ? pool : await pool.ready;
  if (reason === undefined && typeof pool !== 'string') return pool.pool;
  workersUnavailable(POOL, reason ?? 'unknown', required);
  return undefined;
}

/** Insertions that hold the pool now (see holdTreeWorkers). */
let holders = 0;

/**
 * Marks an insertion that may use the pool, from before it asks for it until the returned
 * function is called: endTreeWorkers leaves the pool alone meanwhile.
 */
export function holdTreeWorkers(): () => void {
  holders++;
  let held = true;
  return () => {
    if (held) holders--;
    held = false;
  };
}

/**
 * Ends the pool's workers when no insertion holds it; the next insertion starts a new pool.
 * A worker's isolate keeps the SharedArrayBuffer of the last arena it attached and never
 * collects while idle, so a kept pool holds the last insertion's arena (140 MB for an epoch
 * of 100,000 updates into 500,000 labels) until the next one. Worth it after a large epoch
 * only: starting the workers again costs tens of milliseconds (seconds where they load
 * TypeScript sources).
 * @returns whether a pool was ended.
 */
export async function endTreeWorkers(): Promise<boolean> {
  const pool = started;
  if (holders > 0 || pool === undefined || typeof pool === 'string') return false;
  started = undefined;
  await pool.pool.destroy().catch(() => undefined);
  return true;
}

/** Runs a subtree task on `pool`; a failure in the worker is rethrown here with its code. */
export async function runOnWorker(pool: Piscina, task: SubtreeTask): Promise<SubtreeResult> {
  const result = (await pool.run(task)) as SubtreeResult | { error: TaskError };
  if ('error' in result) throw fromTaskError(result.error);
  return result;
}
