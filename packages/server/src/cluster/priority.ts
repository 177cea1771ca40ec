/**
 * Lowering the CPU priority of a whole process, for the writer of `akd serve`. On Linux a nice
 * value belongs to a thread: `os.setPriority()` changes the calling thread only, while the
 * threads V8 started with the process (garbage collection, compilation) keep theirs, so the
 * writer's collections of a multi-gigabyte heap would still take the cores from the proof
 * servers at full priority. Threads started later (worker threads, libuv's pool) inherit their
 * creator's value, so after this call they run at the lower priority too.
 */

import { existsSync, readdirSync } from 'node:fs';
import { setPriority } from 'node:os';

/** What `lowerPriority` did. */
export interface PriorityChange {
  /** Listed threads now at the new priority (0 where the system lists none). */
  threads: number;
  /** Threads that could not be changed (ended meanwhile). */
  failed: number;
}

/** The ids of this process's threads, where the system lists them (Linux), else none. */
export function ownThreads(): number[] {
  if (!existsSync('/proc/self/task')) return [];
  return readdirSync('/proc/self/task').map(Number);
}

/**
 * Sets `nice` (0 to 19) for this thread and every thread `threads` lists.
 *
 * @throws RangeError / Error when `nice` is out of range or the calling thread cannot be changed
 */
export function lowerPriority(nice: number, threads: () => number[] = ownThreads): PriorityChange {
  setPriority(nice);
  let changed = 0;
  let failed = 0;
  for (const tid of threads()) {
    try {
      setPriority(tid, nice);
      changed++;
    } catch {
      failed++;
    }
  }
  return { threads: changed, failed };
}
