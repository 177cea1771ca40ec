/**
 * Runs an arena insertion on the calling thread (spec 8): the recursion descends through
 * large subtrees one frame at a time and inserts each subtree of at most `CHUNK` elements in
 * one synchronous call, giving the event loop a turn every few thousand nodes, so a server
 * sharing the thread keeps answering. New nodes go to slot regions fixed by element ranges
 * (at most two per element, spec 8's bound), so the same layout serves threads that insert
 * disjoint subtrees at once.
 */

import { setImmediate } from 'node:timers/promises';
import type { TreeHasher } from '@akd-ts/core';
import type { NodeArena } from './arena.js';
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

/** Elements inserted in one synchronous call. */
const CHUNK = 1024;
/** Elements inserted between two turns of the event loop. */
const YIELD_EVERY = 2048;

/** Slots an insertion of `count` elements may create: two per element, plus the frames above chunks. */
export function reservedSlots(count: number): number {
  return 2 * count + topSlots(count);
}

function topSlots(count: number): number {
  return 4 * Math.ceil(count / CHUNK) + 8;
}

interface Run {
  arena: NodeArena;
  el: PackedElements;
  hasher: TreeHasher;
  epoch: number;
  loaded: number;
  /** Context of the frames above the chunks, with a region of its own after the elements'. */
  top: InsertContext;
  created: number;
  sinceYield: number;
}

/** The context of the subtree holding elements [lo, hi): its own slot region. */
function regionContext(run: Run, lo: number, hi: number): InsertContext {
  const base = run.loaded;
  return insertContext(
    run.arena,
    run.el,
    run.hasher,
    run.epoch,
    base,
    base + 2 * lo,
    base + 2 * hi,
  );
}

async function frame(run: Run, slot: number, lo: number, hi: number): Promise<number> {
  if (hi - lo <= CHUNK) {
    const ctx = regionContext(run, lo, hi);
    const start = ctx.next;
    const node = insertBelow(ctx, slot, lo, hi);
    run.created += ctx.next - start;
    run.sinceYield += hi - lo;
    if (run.sinceYield >= YIELD_EVERY) {
      run.sinceYield = 0;
      await setImmediate();
    }
    return node;
  }
  const top = run.top;
  const cur = chooseNode(top, slot, lo, hi);
  if (!takesChildren(top, cur)) return cur;
  const mid = middle(top, cur, lo, hi);
  if (lo < mid) attach(top, cur, await frame(run, run.arena.left[cur]!, lo, mid));
  if (mid < hi) attach(top, cur, await frame(run, run.arena.right[cur]!, mid, hi));
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
): Promise<number> {
  const topStart = loaded + 2 * el.count;
  const run: Run = {
    arena,
    el,
    hasher,
    epoch,
    loaded,
    top: insertContext(arena, el, hasher, epoch, loaded, topStart, topStart + topSlots(el.count)),
    created: 0,
    sinceYield: 0,
  };
  const root = await frame(run, 0, 0, el.count);
  write(arena, root, root >= loaded);
  return run.created + (run.top.next - topStart);
}
