/**
 * Runs an arena insertion (spec 8). The calling thread descends through large subtrees one
 * frame at a time. Without workers it inserts each subtree of at most `CHUNK` elements in one
 * synchronous call and gives the event loop a turn every few thousand nodes, so a server
 * sharing the thread keeps answering. With workers, frames within the parallel levels (spec
 * 13.1) run both sides at once, and each subtree below them is one task for a worker thread;
 * the calling thread only attaches and rehashes the frames above. New nodes go to slot
 * regions fixed by element ranges (at most two nodes per element, spec 8's bound), so
 * subtrees inserted at once never share a slot, and the result never depends on the degree.
 */

import { setImmediate } from 'node:timers/promises';
import type { Piscina } from 'piscina';
import type { TreeHasher } from '@akd-ts/core';
import { childLevels } from '../../parallelism.js';
import { NONE, type NodeArena } from './arena.js';
import type { PackedElements } from './elements.js';
import {
  attach,
  chooseNode,
  insertBelow,
  insertContext,
  middle,
  rehash,
  takesChildren,
  write,
  type InsertContext,
} from './insert.js';
import type { ConfigDescription } from '../../worker-config.js';
import { runOnWorker } from './workers.js';

/** Elements inserted in one synchronous call on the calling thread. */
const CHUNK = 1024;
/** Elements inserted between two turns of the event loop. */
const YIELD_EVERY = 2048;

/** Worker threads for an insertion, and how it splits its work among them. */
export interface ParallelInsertion {
  pool: Piscina;
  config: ConfigDescription;
  /** Parallel levels (spec 13.1). */
  levels: number;
  /** The least number of elements a worker task takes; smaller subtrees stay here. */
  minTask: number;
}

/** Slots an insertion of `count` elements may create: two per element, plus its frames. */
export function reservedSlots(count: number, minTask: number): number {
  return 2 * count + topSlots(count, minTask);
}

/**
 * Slots of the frames above the chunks and tasks: at most two new nodes per distinct element
 * range, and at most `2 count / size` ranges of `size` elements or more.
 */
function topSlots(count: number, minTask: number): number {
  return 4 * Math.ceil((2 * count) / Math.max(1, Math.min(CHUNK, minTask))) + 8;
}

interface Run {
  arena: NodeArena;
  el: PackedElements;
  hasher: TreeHasher;
  epoch: number;
  loaded: number;
  /** Context of the frames above the chunks, with a region of its own after the elements'. */
  top: InsertContext;
  parallel: ParallelInsertion | undefined;
  created: number;
  sinceYield: number;
}

/** Slot region of the subtree holding elements [lo, hi). */
function region(run: Run, lo: number, hi: number): [number, number] {
  return [run.loaded + 2 * lo, run.loaded + 2 * hi];
}

/** Inserts a small subtree on this thread, yielding now and then. */
async function chunk(run: Run, slot: number, lo: number, hi: number): Promise<number> {
  const [start, end] = region(run, lo, hi);
  const ctx = insertContext(run.arena, run.el, run.hasher, run.epoch, run.loaded, start, end);
  const node = insertBelow(ctx, slot, lo, hi);
  run.created += ctx.next - start;
  run.sinceYield += hi - lo;
  if (run.sinceYield >= YIELD_EVERY) {
    run.sinceYield = 0;
    await setImmediate();
  }
  return node;
}

/** Inserts a subtree on a worker thread. */
async function task(run: Run, p: ParallelInsertion, slot: number, lo: number, hi: number) {
  const [start, end] = region(run, lo, hi);
  const { node, created } = await runOnWorker(p.pool, {
    config: p.config,
    arena: run.arena.buffer,
    shape: run.arena.shape,
    labels: run.el.labels.buffer as SharedArrayBuffer,
    values: run.el.values.buffer as SharedArrayBuffer,
    count: run.el.count,
    epoch: run.epoch,
    loaded: run.loaded,
    slot,
    lo,
    hi,
    start,
    end,
  });
  run.created += created;
  return node;
}

async function frame(
  run: Run,
  slot: number,
  lo: number,
  hi: number,
  levels: number | undefined,
): Promise<number> {
  const p = run.parallel;
  // a new leaf (spec 8 case 2) is no work for a worker
  const big = p !== undefined && hi - lo >= p.minTask && (slot !== NONE || hi - lo > 1);
  if (big && levels === undefined) return task(run, p, slot, lo, hi);
  if (!big && hi - lo <= CHUNK) return chunk(run, slot, lo, hi);
  const top = run.top;
  const cur = chooseNode(top, slot, lo, hi);
  if (!takesChildren(top, cur)) return cur;
  const mid = middle(top, cur, lo, hi);
  const arena = run.arena;
  if (big) {
    // within the parallel levels: both sides at once; a failure is the left side's first, as
    // in a serial insertion
    const sub = childLevels(levels);
    const [left, right] = await Promise.allSettled([
      lo < mid ? frame(run, arena.left[cur]!, lo, mid, sub) : undefined,
      mid < hi ? frame(run, arena.right[cur]!, mid, hi, sub) : undefined,
    ]);
    if (left.status === 'rejected') throw left.reason;
    if (right.status === 'rejected') throw right.reason;
    if (left.value !== undefined) attach(top, cur, left.value);
    if (right.value !== undefined) attach(top, cur, right.value);
  } else {
    if (lo < mid) attach(top, cur, await frame(run, arena.left[cur]!, lo, mid, undefined));
    if (mid < hi) attach(top, cur, await frame(run, arena.right[cur]!, mid, hi, undefined));
  }
  rehash(top, cur);
  return cur;
}

/**
 * Inserts every element below the root (slot 0) at `epoch` and writes the root, like spec 8
 * step 4.
 * @returns the number of nodes created.
 */
export async function insertAll(
  arena: NodeArena,
  loaded: number,
  el: PackedElements,
  hasher: TreeHasher,
  epoch: number,
  parallel?: ParallelInsertion,
): Promise<number> {
  const topStart = loaded + 2 * el.count;
  const topEnd = topStart + topSlots(el.count, parallel?.minTask ?? CHUNK);
  const run: Run = {
    arena,
    el,
    hasher,
    epoch,
    loaded,
    top: insertContext(arena, el, hasher, epoch, loaded, topStart, topEnd),
    parallel,
    created: 0,
    sinceYield: 0,
  };
  const root = await frame(run, 0, 0, el.count, parallel?.levels);
  write(arena, root, root >= loaded);
  return run.created + (run.top.next - topStart);
}
