/**
 * Giving back a large epoch's memory between its commit and its VRF proofs. The record bytes
 * the insertion's preload kept, its slot labels and its dead read answers (about 270 MB for an
 * epoch of 100,000 updates into 500,000 labels) are garbage once the epoch commits, but V8
 * frees them only at its next full collection, and the proofs that follow fill the heap up to
 * V8's limit first: the writer's peak was the commit's leftovers plus the proofs' heap. One
 * full collection at that point, where the process exposes `gc` (node --expose-gc: the `akd`
 * command and the server's writer process do), takes that away (bench/RESULTS.md, "the
 * commit's garbage collected before the proofs"). A small epoch leaves little behind and is
 * not worth a full collection. The arena itself is held by the tree workers' isolates until
 * they end.
 */

import { endTreeWorkers } from './tree/arena/workers.js';

/** Versions an epoch publishes from which a collection follows its commit. */
export const LARGE_EPOCH_VERSIONS = 25_000;

/**
 * After the walk of an insertion of at least {@link LARGE_EPOCH_VERSIONS} elements, in a
 * process that exposes `gc`: collects garbage once. The buffers its reads answered with (it
 * keeps a copy of what it needs of each: tree/arena/load-bytes.ts) and any arena it outgrew
 * are garbage then, and the insertion that follows allocates little of V8's heap, so V8 would
 * free them only in the commit.
 * @returns whether it collected.
 */
export function collectAfterWalk(elements: number): boolean {
  const gc = (globalThis as { gc?: () => void }).gc;
  if (typeof gc !== 'function' || elements < LARGE_EPOCH_VERSIONS) return false;
  gc();
  return true;
}

/**
 * After an epoch of at least {@link LARGE_EPOCH_VERSIONS} versions, in a process that exposes
 * `gc`: ends the idle tree workers (which hold the arena: `endTreeWorkers`), then collects
 * garbage once.
 * @returns whether it collected.
 */
export async function releaseAfterLargeEpoch(
  versions: number,
  endWorkers: () => Promise<boolean> = endTreeWorkers,
): Promise<boolean> {
  const gc = (globalThis as { gc?: () => void }).gc;
  if (typeof gc !== 'function' || versions < LARGE_EPOCH_VERSIONS) return false;
  await endWorkers();
  gc();
  return true;
}
