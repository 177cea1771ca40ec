/**
 * Giving back a large epoch's memory between its commit and its VRF proofs. The insertion's
 * arena, the record bytes its preload kept and the read answers (about 250 MB for an epoch of
 * 100,000 updates into 500,000 labels) are garbage once the epoch commits, but V8 frees them
 * only at its next full collection, and the proofs that follow fill the heap up to V8's limit
 * first: the writer's peak was the commit's leftovers plus the proofs' heap. One full
 * collection at that point, where the process exposes `gc` (node --expose-gc: the `akd`
 * command and the server's writer process do), lowered the peak of that epoch from 1.3-1.4 GB
 * to 1.0 GB. A small epoch leaves little behind and is not worth a full collection.
 */

import { treeWorkersGone } from './tree/arena/workers.js';

/** Versions an epoch publishes from which a collection follows its commit. */
export const LARGE_EPOCH_VERSIONS = 25_000;

/**
 * Collects garbage once, when the process exposes `gc` and the epoch published at least
 * {@link LARGE_EPOCH_VERSIONS} versions, after `settle` (by default: until the idle tree
 * workers, which still hold the arena, have exited).
 * @returns whether it collected.
 */
export async function releaseAfterLargeEpoch(
  versions: number,
  settle: () => Promise<void> = treeWorkersGone,
): Promise<boolean> {
  const gc = (globalThis as { gc?: () => void }).gc;
  if (typeof gc !== 'function' || versions < LARGE_EPOCH_VERSIONS) return false;
  await settle();
  gc();
  return true;
}
