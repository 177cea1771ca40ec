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
  // started once for the process; an unavailable pool is not retried
  started ??= startPool(workerScript(import.meta.url, 'tree-worker'), {
    minThreads: 1,
    maxThreads: MAX_TREE_THREADS,
    idleTimeout: Number.POSITIVE_INFINITY,
  });
  const reason = typeof started === 'string' ? started : await started.ready;
  if (reason === undefined && typeof started !== 'string') return started.pool;
  workersUnavailable(POOL, reason ?? 'unknown', required);
  return undefined;
}

/** Runs a subtree task on `pool`; a failure in the worker is rethrown here with its code. */
export async function runOnWorker(pool: Piscina, task: SubtreeTask): Promise<SubtreeResult> {
  const result = (await pool.run(task)) as SubtreeResult | { error: TaskError };
  if ('error' in result) throw fromTaskError(result.error);
  return result;
}
