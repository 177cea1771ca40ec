/**
 * Worker-thread side of the tree pool: runs subtree insertions on arenas shared with the
 * calling thread (tasks.ts). Errors come back as data, so an AkdError keeps its code.
 */

import {
  runSubtreeTask,
  taskError,
  type SubtreeResult,
  type SubtreeTask,
  type TaskError,
} from './tasks.js';

/** Runs one task (piscina calls the default export). */
export default function run(task: SubtreeTask): SubtreeResult | { error: TaskError } {
  try {
    return runSubtreeTask(task);
  } catch (e) {
    return { error: taskError(e) };
  }
}

/** Answers the pool's start-up probe (worker-pool.ts): this module and its imports loaded. */
export function probe(): true {
  return true;
}
