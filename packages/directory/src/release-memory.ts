/**
 * Giving back a large epoch's memory where V8 would keep it. Two points: after the insertion's
 * walk, whose read answers (it keeps a copy of what it needs of each) and any arena it
 * outgrew are garbage then; and between the commit and the VRF proofs, when the record bytes
 * the walk kept, the slot labels and the arena are (the tree workers' isolates hold the arena
 * until they end). V8 frees such garbage only at its next full collection, which came in the
 * commit, or in the proofs after they had filled the heap: the writer's peak was the garbage
 * plus what followed (bench/RESULTS.md, "Writer memory"). A collection runs only where the
 * process exposes `gc` (node --expose-gc: the `akd` command and the server's writer process
 * do). A small epoch leaves little behind and is not worth a full collection.
 */

import { getHeapStatistics } from 'node:v8';
import { endTreeWorkers } from './tree/arena/workers.js';

/** Versions (or tree elements) from which an epoch is large enough to collect after. */
export const LARGE_EPOCH_VERSIONS = 25_000;

/** The process's `gc` where it exposes one (node --expose-gc). */
function exposedGc(): (() => void) | undefined {
  const gc = (globalThis as { gc?: () => void }).gc;
  return typeof gc === 'function' ? gc : undefined;
}

/** The process's `gc` where it exposes one and `count` makes the epoch large. */
function gcFor(count: number): (() => void) | undefined {
  return count >= LARGE_EPOCH_VERSIONS ? exposedGc() : undefined;
}

/**
 * After the walk of an insertion of at least {@link LARGE_EPOCH_VERSIONS} elements, in a
 * process that exposes `gc`: collects garbage once. The buffers its reads answered with (it
 * keeps a copy of what it needs of each: tree/arena/load-bytes.ts) and any arena it outgrew
 * are garbage then, and the insertion that follows allocates little of V8's heap, so V8 would
 * free them only in the commit.
 * @returns whether it collected.
 */
export function collectAfterWalk(elements: number): boolean {
  const gc = gcFor(elements);
  if (gc === undefined) return false;
  gc();
  return true;
}

/**
 * Growth of V8's heap during a large walk after which it collects: a walk's reads leave
 * short-lived objects behind, level after level, which V8 promotes and then keeps until the
 * heap reaches its next limit. At 2,000,000 labels the walk of 100,000 new labels grew the
 * heap from 102 to 354 MB, 80 MB of it live, which set the writer's peak; a collection costs
 * about 60 ms there, against a walk of 5 s.
 */
export const WALK_GARBAGE_BYTES = 64 * 2 ** 20;

/**
 * In a process that exposes `gc`: a function to call after each step of a long task that
 * leaves short-lived objects behind step after step, which collects garbage whenever V8's
 * heap has grown by `growth` bytes since the function was made or since its last collection;
 * undefined without `gc`. A task that keeps its heap flat never pays for a collection.
 */
export function heapGrowthCollector(growth = WALK_GARBAGE_BYTES): (() => boolean) | undefined {
  const gc = exposedGc();
  if (gc === undefined) return undefined;
  const used = () => getHeapStatistics().used_heap_size;
  let base = used();
  return () => {
    if (used() - base < growth) return false;
    gc();
    base = used();
    return true;
  };
}

/**
 * For the walk of an insertion of at least {@link LARGE_EPOCH_VERSIONS} elements, in a
 * process that exposes `gc`: a function the walk calls after each batched read, which
 * collects garbage whenever the heap has grown by {@link WALK_GARBAGE_BYTES} since the walk
 * began or since its last collection; undefined otherwise.
 */
export function walkCollector(
  elements: number,
  growth = WALK_GARBAGE_BYTES,
): (() => boolean) | undefined {
  return gcFor(elements) === undefined ? undefined : heapGrowthCollector(growth);
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
  const gc = gcFor(versions);
  if (gc === undefined) return false;
  await endWorkers();
  gc();
  return true;
}
