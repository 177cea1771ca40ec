/**
 * The tree's worker threads: one pool for the whole process, shared by every insertion and
 * started on first use. It grows to as many threads as insertions run tasks at once (the
 * parallel levels decide that, spec 13.1), up to 64, and keeps them; idle workers do not keep
 * the process alive (piscina unrefs them), so nothing needs closing. A task is a whole
 * subtree (thousands of nodes) against a per-task cost of tens of microseconds.
 */

import { Piscina } from 'piscina';
import { fromTaskError, type SubtreeResult, type SubtreeTask, type TaskError } from './tasks.js';

/** Most tree worker threads. */
export const MAX_TREE_THREADS = 64;

let pool: Piscina | undefined;

/** The worker module next to this one, in whichever form (TypeScript source or build) runs. */
function workerFile(): URL {
  const ext = import.meta.url.endsWith('.ts') ? 'ts' : 'js';
  return new URL(`./tree-worker.${ext}`, import.meta.url);
}

/** The process's pool of tree workers. */
export function treeWorkers(): Piscina {
  pool ??= new Piscina({
    filename: workerFile().href,
    minThreads: 1,
    maxThreads: MAX_TREE_THREADS,
    idleTimeout: Number.POSITIVE_INFINITY,
  });
  return pool;
}

/** Runs a subtree task on `pool`; a failure in the worker is rethrown here with its code. */
export async function runOnWorker(pool: Piscina, task: SubtreeTask): Promise<SubtreeResult> {
  const result = (await pool.run(task)) as SubtreeResult | { error: TaskError };
  if ('error' in result) throw fromTaskError(result.error);
  return result;
}
