/**
 * The tree's worker threads: one pool for the whole process, shared by every insertion and
 * started on first use. It grows to as many threads as insertions run tasks at once (the
 * parallel levels decide that, spec 13.1), up to 64; idle workers do not keep the process
 * alive (piscina unrefs them), so nothing needs closing. A worker idle for
 * {@link TREE_IDLE_MS} exits: its isolate still references the last arena it attached (a
 * SharedArrayBuffer lives while any thread holds it), and an idle isolate never collects
 * garbage, so a worker kept for the next insertion would keep the last one's arena mapped
 * (140 MB for an epoch of 100,000 updates into 500,000 labels) through the epoch's proofs and
 * every idle minute after. Starting a worker again costs tens of milliseconds. A task is a whole
 * subtree (thousands of nodes) against a per-task cost of tens of microseconds. Where the
 * worker script cannot load (a bundled build), insertions run on the calling thread.
 */

import type { Piscina } from 'piscina';
import { startPool, workerScript, workersUnavailable } from '../../worker-pool.js';
import { fromTaskError, type SubtreeResult, type SubtreeTask, type TaskError } from './tasks.js';

/** Most tree worker threads. */
export const MAX_TREE_THREADS = 64;

/** How long a tree worker waits idle before it exits (and lets its last arena go). */
export const TREE_IDLE_MS = 1_000;

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
    minThreads: 0,
    maxThreads: MAX_TREE_THREADS,
    idleTimeout: TREE_IDLE_MS,
  });
  const reason = typeof started === 'string' ? started : await started.ready;
  if (reason === undefined && typeof started !== 'string') return started.pool;
  workersUnavailable(POOL, reason ?? 'unknown', required);
  return undefined;
}

/**
 * Resolves once no tree worker is left (idle ones exit {@link TREE_IDLE_MS} after their last
 * task), or after `limitMs` when some stay busy. A synchronous commit blocks the timers that
 * end idle workers: right after it, they are due but have not run, and a collection then would
 * find the arena still held by the workers' isolates.
 */
export async function treeWorkersGone(limitMs = 2 * TREE_IDLE_MS): Promise<void> {
  if (started === undefined || typeof started === 'string') return;
  const pool = started.pool;
  if (pool.threads.length === 0) return;
  let timer: ReturnType<typeof setTimeout> | undefined;
  let onDestroy: (() => void) | undefined;
  await new Promise<void>((resolve) => {
    timer = setTimeout(resolve, limitMs);
    // piscina announces a worker's end before it drops the worker from its list
    onDestroy = () =>
      queueMicrotask(() => {
        if (pool.threads.length === 0) resolve();
      });
    pool.on('workerDestroy', onDestroy);
  });
  clearTimeout(timer);
  pool.off('workerDestroy', onDestroy!);
}

/** Runs a subtree task on `pool`; a failure in the worker is rethrown here with its code. */
export async function runOnWorker(pool: Piscina, task: SubtreeTask): Promise<SubtreeResult> {
  const result = (await pool.run(task)) as SubtreeResult | { error: TaskError };
  if ('error' in result) throw fromTaskError(result.error);
  return result;
}
