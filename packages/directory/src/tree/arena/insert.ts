/**
 * Batch insertion (spec 8) on a node arena: the same three phases as the specification
 * (choose the node, distribute the elements to both sides, rehash), over slot indices. The
 * functions here are synchronous and touch only the slots of the subtree they work on and the
 * new slots of their own region, so worker threads run them on disjoint subtrees of one
 * shared arena. The write rule of spec 9.2 is kept per slot (`write`): which copies the
 * transaction would store decides each record's previous copy, exactly as if every write had
 * gone to the transaction log in the specification's order.
 */

import { AkdError, NodeLabel, type TreeHasher } from '@akd-ts/core';
import { NodeType } from '@akd-ts/storage';
import { Copy, NONE, UNLOADED, type NodeArena } from './arena.js';
import { bitAt, commonBits, splitIndex, type PackedElements } from './elements.js';

/** One thread's view of an insertion: the shared arena and elements, and its slot region. */
export interface InsertContext {
  readonly arena: NodeArena;
  readonly el: PackedElements;
  readonly hasher: TreeHasher;
  /** The insertion's epoch (spec 8 step 3). */
  readonly epoch: number;
  /** Slots below this index were loaded; the others are created by this insertion. */
  readonly loaded: number;
  /** Next free slot of this context's region, and the region's end. */
  next: number;
  end: number;
  /** Scratch for leaf values during a rehash. */
  readonly leftValue: Uint8Array;
  readonly rightValue: Uint8Array;
}

export function insertContext(
  arena: NodeArena,
  el: PackedElements,
  hasher: TreeHasher,
  epoch: number,
  loaded: number,
  start: number,
  end: number,
): InsertContext {
  return {
    arena,
    el,
    hasher,
    epoch,
    loaded,
    next: start,
    end,
    leftValue: new Uint8Array(32),
    rightValue: new Uint8Array(32),
  };
}

/** The label of a slot as a NodeLabel (for messages). */
export function slotLabel(arena: NodeArena, slot: number): NodeLabel {
  return new NodeLabel(arena.labels.slice(32 * slot, 32 * slot + 32), arena.lens[slot]!);
}

function allocate(ctx: InsertContext): number {
  if (ctx.next >= ctx.end) throw new Error('node arena region exhausted');
  return ctx.next++;
}

/** A new leaf for element `i` (spec 8 case 2). */
function newLeaf(ctx: InsertContext, i: number): number {
  const a = ctx.arena;
  const slot = allocate(ctx);
  const labels = ctx.el.labels;
  const values = ctx.el.values;
  const at = 32 * slot;
  const from = 32 * i;
  for (let k = 0; k < 32; k++) {
    a.labels[at + k] = labels[from + k]!;
    a.hashes[at + k] = values[from + k]!;
  }
  a.lens[slot] = 256;
  a.types[slot] = NodeType.Leaf;
  a.lastEpoch[slot] = ctx.epoch;
  a.minEpoch[slot] = ctx.epoch;
  a.changed[slot] = 1;
  return slot;
}

/**
 * A new interior node at the first `len` bits of the label at `off` of `src` (spec 8 cases 1a
 * and 3; `get_prefix` semantics of spec 4.2). Its hash is set by its rehash.
 */
function newInterior(ctx: InsertContext, src: Uint8Array, off: number, len: number): number {
  const a = ctx.arena;
  const slot = allocate(ctx);
  const at = 32 * slot;
  if (len >= 256) a.labels.set(src.subarray(off, off + 32), at);
  else if (len > 0) {
    const full = len >> 3;
    for (let i = 0; i < full; i++) a.labels[at + i] = src[off + i]!;
    const rem = len & 7;
    if (rem !== 0) a.labels[at + full] = src[off + full]! & (0xff << (8 - rem));
  }
  a.lens[slot] = len >= 256 ? 256 : Math.max(0, len);
  a.types[slot] = NodeType.Interior;
  a.lastEpoch[slot] = ctx.epoch;
  a.minEpoch[slot] = ctx.epoch;
  a.changed[slot] = 1;
  return slot;
}

/**
 * Records a write of `slot` (spec 9.2 `write`): a new node keeps no previous copy; another
 * keeps the stored copy visible at `lastEpoch - 1`, looked up among the copies the
 * transaction would hold (the source record's, or this insertion's earlier write).
 */
export function write(a: NodeArena, slot: number, isNew: boolean): void {
  const epoch = a.lastEpoch[slot]!;
  if (isNew) a.storedPrevious[slot] = Copy.None;
  else {
    const target = epoch > 0 ? epoch - 1 : 0;
    if (a.storedLatest[slot] !== Copy.None && a.storedLatestEpoch[slot]! <= target) {
      a.storedPrevious[slot] = a.storedLatest[slot]!;
      a.storedPreviousEpoch[slot] = a.storedLatestEpoch[slot]!;
    } else if (a.storedPrevious[slot] === Copy.None || a.storedPreviousEpoch[slot]! > target) {
      a.storedPrevious[slot] = Copy.None;
    }
  }
  a.storedLatest[slot] = Copy.Written;
  a.storedLatestEpoch[slot] = epoch;
  a.written[slot] = 1;
}

/** Attaches `child` below `parent` (spec 8 `set_child`). */
function setChild(a: NodeArena, parent: number, child: number): void {
  const plen = a.lens[parent]!;
  if (
    plen >= a.lens[child]! ||
    commonBits(a.labels, 32 * parent, a.labels, 32 * child, plen) < plen
  ) {
    throw new AkdError(
      'DIRECTORY_TREE',
      `node ${slotLabel(a, child)} has no direction below ${slotLabel(a, parent)}`,
    );
  }
  if (bitAt(a.labels, 32 * child, plen) === 0) a.left[parent] = child;
  else a.right[parent] = child;
  a.parent[child] = parent;
  if (a.lastEpoch[child]! > a.lastEpoch[parent]!) a.lastEpoch[parent] = a.lastEpoch[child]!;
  const pm = a.minEpoch[parent]!;
  const cm = a.minEpoch[child]!;
  a.minEpoch[parent] = pm === 0 || cm < pm ? cm : pm;
  a.changed[parent] = 1;
}

/** Attaches a child whose subtree is done, then writes it (spec 8 phase 2). */
export function attach(ctx: InsertContext, cur: number, child: number): void {
  setChild(ctx.arena, cur, child);
  write(ctx.arena, child, child >= ctx.loaded);
}

function notFound(ctx: InsertContext, slot: number): AkdError {
  return new AkdError(
    'STORAGE_NOT_FOUND',
    `tree node ${slotLabel(ctx.arena, slot)} at epoch ${ctx.epoch} not found`,
  );
}

/**
 * Phase 1 (spec 8): the node that takes elements [lo, hi) below `slot` (NONE: no node there
 * yet): the existing node, or a new interior node above it or in its place.
 */
export function chooseNode(ctx: InsertContext, slot: number, lo: number, hi: number): number {
  const a = ctx.arena;
  const labels = ctx.el.labels;
  // the set's longest common prefix is that of its first and last labels (sorted)
  const setPrefixLen = commonBits(labels, 32 * lo, labels, 32 * (hi - 1), 256);
  if (slot === NONE) return newInterior(ctx, labels, 32 * lo, setPrefixLen);
  if (slot === UNLOADED || a.types[slot] === 0) throw notFound(ctx, slot);
  const len = a.lens[slot]!;
  const prefixLen = Math.min(setPrefixLen, commonBits(a.labels, 32 * slot, labels, 32 * lo, len));
  if (prefixLen >= len) return slot;
  // case 1a: split the compressed edge with a new interior node above the existing one
  const cur = newInterior(ctx, a.labels, 32 * slot, prefixLen);
  setChild(a, cur, slot);
  write(a, slot, false);
  return cur;
}

/** Whether phase 2 applies: a leaf takes no children (an element equal to it is a no-op). */
export function takesChildren(ctx: InsertContext, cur: number): boolean {
  return ctx.arena.types[cur] !== NodeType.Leaf;
}

/** The first element of [lo, hi) on the right of `cur` (phase 2). */
export function middle(ctx: InsertContext, cur: number, lo: number, hi: number): number {
  const bit = ctx.arena.lens[cur]!;
  if (bit >= 256) throw new RangeError(`bit index ${bit} out of range`);
  return splitIndex(ctx.el, lo, hi, bit);
}

/**
 * Which version of child `c` a read at epoch `t` sees (spec 9.2): 0 none (no child, no
 * record, or none visible at `t`), 1 the slot's own, 2 its source record's earlier version.
 */
function versionAt(a: NodeArena, c: number, t: number): number {
  if (c < 0) {
    if (c === UNLOADED) throw new Error('a rehash read a child the walk did not load');
    return 0;
  }
  if (a.types[c] === 0) return 0;
  if (a.lastEpoch[c]! <= t) return 1;
  // a child newer than its parent (only in a tree that breaks the epoch invariant)
  const i = a.alt[c]!;
  return i >= 0 && a.altType[i] !== 0 && a.altEpoch[i]! <= t ? 2 : 0;
}

/** The value of child `c` as its parent sees it (spec 7.3 `node_value`) into `out`. */
function childValue(ctx: InsertContext, c: number, version: number, out: Uint8Array): void {
  const a = ctx.arena;
  if (version === 0) {
    out.set(ctx.hasher.emptyNodeHash);
    return;
  }
  const own = version === 1;
  const hashes = own ? a.hashes : a.altHashes;
  const at = own ? 32 * c : 32 * a.alt[c]!;
  const type = own ? a.types[c]! : a.altType[a.alt[c]!]!;
  if (type === NodeType.Leaf) {
    const epoch = own ? a.lastEpoch[c]! : a.altEpoch[a.alt[c]!]!;
    ctx.hasher.leafValue(hashes, at, epoch, out, 0);
  } else {
    for (let i = 0; i < 32; i++) out[i] = hashes[at + i]!;
  }
}

/** The label value of slot `c`, computed once per slot; returns its offset in `labelValues`. */
function labelValueAt(ctx: InsertContext, c: number): number {
  const a = ctx.arena;
  const at = a.shape.labelValueLength * c;
  if (a.hasLabelValue[c] === 0) {
    ctx.hasher.labelValue(a.labels, 32 * c, a.lens[c]!, a.labelValues, at);
    a.hasLabelValue[c] = 1;
  }
  return at;
}

/**
 * Phase 3 (spec 8, 7.3): the stored hash of `cur` from its children as visible at its epoch
 * (a child just written is the node in hand, whose epoch never exceeds its parent's).
 */
export function rehash(ctx: InsertContext, cur: number): void {
  const a = ctx.arena;
  const h = ctx.hasher;
  const t = a.lastEpoch[cur]!;
  const l = a.left[cur]!;
  const r = a.right[cur]!;
  const lver = versionAt(a, l, t);
  const rver = versionAt(a, r, t);
  childValue(ctx, l, lver, ctx.leftValue);
  childValue(ctx, r, rver, ctx.rightValue);
  const ll = lver === 0 ? h.emptyLabelValue : a.labelValues;
  const llOff = lver === 0 ? 0 : labelValueAt(ctx, l);
  const rl = rver === 0 ? h.emptyLabelValue : a.labelValues;
  const rlOff = rver === 0 ? 0 : labelValueAt(ctx, r);
  h.parentHash(ctx.leftValue, 0, ll, llOff, ctx.rightValue, 0, rl, rlOff, a.hashes, 32 * cur);
  a.changed[cur] = 1;
}

/** Inserts [lo, hi) below `slot` (NONE: where there is no node yet) and returns the node. */
export function insertBelow(ctx: InsertContext, slot: number, lo: number, hi: number): number {
  if (slot === NONE && hi - lo === 1) return newLeaf(ctx, lo);
  const cur = chooseNode(ctx, slot, lo, hi);
  if (!takesChildren(ctx, cur)) return cur;
  const a = ctx.arena;
  const mid = middle(ctx, cur, lo, hi);
  if (lo < mid) attach(ctx, cur, insertBelow(ctx, a.left[cur]!, lo, mid));
  if (mid < hi) attach(ctx, cur, insertBelow(ctx, a.right[cur]!, mid, hi));
  rehash(ctx, cur);
  return cur;
}
