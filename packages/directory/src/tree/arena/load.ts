/**
 * Loads the part of the tree an insertion reads into a node arena (spec 8, 13.2): a
 * breadth-first walk from the root that continues below every node some element lies under,
 * taking both of its children (the one that changes and the sibling its rehash reads). It is
 * the insertion's preload: records the transaction log or the cache hold are taken from
 * there, the others are read in one batched read per level, so a cache is warmed as a
 * preload would warm it. With parallel levels the frontier is cut in halves that continue as
 * independent walks, and their reads are in flight together.
 *
 * Each walk carries the range of sorted elements below its nodes, so deciding whether to go
 * further is a comparison with the range's ends, not a search of all elements.
 */

import { AkdError, type NodeLabel } from '@akd-ts/core';
import {
  NodeType,
  nodeAtEpoch,
  type RecordReader,
  type TreeNode,
  type TreeNodeRecord,
} from '@akd-ts/storage';
import { childLevels } from '../../parallelism.js';
import { MIN_SPLIT, batchRead, type PreloadOptions, type PreloadStats } from '../preload.js';
import { Copy, NONE, NodeArena, UNLOADED } from './arena.js';
import { rangeBelow, splitIndex, type PackedElements } from './elements.js';

/** The loaded nodes: slots [0, count) of the arena, with the records they came from. */
export interface LoadedTree {
  arena: NodeArena;
  count: number;
  /** The label each slot was asked for. */
  labels: NodeLabel[];
  /** The record found for each slot (from the log, the cache or storage), if any. */
  records: (TreeNodeRecord | undefined)[];
  /** The version of each record visible at the insertion's epoch (spec 9.2), if any. */
  visible: (TreeNode | undefined)[];
}

/** The walk's growing state; slot numbers are assigned in the order nodes are found. */
interface Walk {
  reader: RecordReader;
  epoch: bigint;
  el: PackedElements;
  maxBatchSize: number;
  stats: PreloadStats | undefined;
  labels: NodeLabel[];
  records: (TreeNodeRecord | undefined)[];
  visible: (TreeNode | undefined)[];
  /** Element range each slot's subtree may hold. */
  lo: number[];
  hi: number[];
  /** Child slots, or NONE / UNLOADED. */
  left: number[];
  right: number[];
}

function addSlot(w: Walk, label: NodeLabel, lo: number, hi: number): number {
  const slot = w.labels.length;
  w.labels.push(label);
  w.records.push(undefined);
  w.visible.push(undefined);
  w.lo.push(lo);
  w.hi.push(hi);
  w.left.push(NONE);
  w.right.push(NONE);
  return slot;
}

/** Finds the records of `frontier`: the log and cache first, then batched storage reads. */
async function fetchRecords(w: Walk, frontier: number[], parallel: boolean): Promise<void> {
  const missing: number[] = [];
  for (const slot of frontier) {
    const cached = w.reader.peekNode(w.labels[slot]!);
    if (cached !== undefined) w.records[slot] = cached;
    else missing.push(slot);
  }
  if (missing.length === 0) return;
  const found = await batchRead(
    w.reader,
    missing.map((s) => w.labels[s]!),
    w.maxBatchSize,
    parallel,
    w.stats,
  );
  const byKey = new Map<string, number>();
  for (const slot of missing) byKey.set(w.labels[slot]!.key, slot);
  for (const record of found) {
    const slot = byKey.get(record.label.key);
    if (slot !== undefined) w.records[slot] = record;
  }
}

/** Takes the children of the frontier's nodes that some element lies under. */
function expand(w: Walk, frontier: number[]): number[] {
  const next: number[] = [];
  const el = w.el;
  for (const slot of frontier) {
    const record = w.records[slot];
    const node = record === undefined ? undefined : nodeAtEpoch(record, w.epoch);
    w.visible[slot] = node;
    if (node === undefined) continue;
    const label = w.labels[slot]!;
    const [lo, hi] =
      node.nodeType === NodeType.Leaf
        ? [0, 0]
        : rangeBelow(el, w.lo[slot]!, w.hi[slot]!, label.val, 0, label.len);
    if (lo === hi) {
      // not expanded: its children stay unread, their labels in the record
      if (node.leftChild !== undefined) w.left[slot] = UNLOADED;
      if (node.rightChild !== undefined) w.right[slot] = UNLOADED;
      continue;
    }
    const mid = splitIndex(el, lo, hi, label.len);
    if (node.leftChild !== undefined) {
      const child = addSlot(w, node.leftChild, lo, mid);
      w.left[slot] = child;
      next.push(child);
    }
    if (node.rightChild !== undefined) {
      const child = addSlot(w, node.rightChild, mid, hi);
      w.right[slot] = child;
      next.push(child);
    }
  }
  return next;
}

async function walk(
  w: Walk,
  frontier: number[],
  levels: number | undefined,
  depth: number,
): Promise<void> {
  if (frontier.length === 0) return;
  if (w.stats !== undefined && depth + 1 > w.stats.levels) w.stats.levels = depth + 1;
  await fetchRecords(w, frontier, levels !== undefined);
  const next = expand(w, frontier);
  // a small frontier continues as one walk: two tiny reads cost more round trips than they save
  if (levels === undefined || next.length < MIN_SPLIT) return walk(w, next, levels, depth + 1);
  const half = next.length >> 1;
  const sub = childLevels(levels);
  await Promise.all([
    walk(w, next.slice(0, half), sub, depth + 1),
    walk(w, next.slice(half), sub, depth + 1),
  ]);
}

const MAX_EPOCH = BigInt(Number.MAX_SAFE_INTEGER);

function epochNumber(e: bigint, label: NodeLabel): number {
  if (e > MAX_EPOCH || e < 0n) {
    throw new AkdError('STORAGE_CORRUPT', `tree node ${label} has an epoch beyond 2^53: ${e}`);
  }
  return Number(e);
}

/** Copies the walk's nodes into arena slots [0, count). */
function fill(w: Walk, arena: NodeArena, labelValueOwner: object): void {
  const lvLen = arena.shape.labelValueLength;
  let alts = 0;
  for (let s = 0; s < w.labels.length; s++) {
    const label = w.labels[s]!;
    arena.labels.set(label.val, 32 * s);
    arena.lens[s] = label.len;
    arena.left[s] = w.left[s]!;
    arena.right[s] = w.right[s]!;
    const memo = label.peekMemo(labelValueOwner);
    if (memo !== undefined && memo.length === lvLen) {
      arena.labelValues.set(memo, lvLen * s);
      arena.hasLabelValue[s] = 1;
    }
    const record = w.records[s];
    if (record !== undefined) {
      arena.storedLatest[s] = Copy.Latest;
      arena.storedLatestEpoch[s] = Number(record.latest.lastEpoch);
      if (record.previous !== undefined) {
        arena.storedPrevious[s] = Copy.Previous;
        arena.storedPreviousEpoch[s] = Number(record.previous.lastEpoch);
      }
    }
    const node = w.visible[s];
    if (node === undefined) continue;
    if (node.hash.length !== 32) {
      throw new AkdError(
        'STORAGE_CORRUPT',
        `tree node ${label} has a ${node.hash.length}-byte hash`,
      );
    }
    arena.types[s] = node.nodeType;
    arena.lastEpoch[s] = epochNumber(node.lastEpoch, label);
    arena.minEpoch[s] = epochNumber(node.minDescendantEpoch, label);
    arena.hashes.set(node.hash, 32 * s);
    // a child newer than its parent may be read below its visible version (spec 9.2)
    alts = alternative(w, arena, node, w.left[s]!, alts);
    alts = alternative(w, arena, node, w.right[s]!, alts);
  }
}

/** Gives `child` of `node` its alternative version if it is newer than `node`. */
function alternative(w: Walk, arena: NodeArena, node: TreeNode, child: number, alts: number) {
  const c = child >= 0 ? w.visible[child] : undefined;
  if (c === undefined || c.lastEpoch <= node.lastEpoch) return alts;
  const record = w.records[child]!;
  const older = c === record.latest ? record.previous : undefined;
  arena.alt[child] = alts;
  if (older !== undefined && older.hash.length === 32) {
    arena.altType[alts] = older.nodeType;
    arena.altEpoch[alts] = epochNumber(older.lastEpoch, w.labels[child]!);
    arena.altHashes.set(older.hash, 32 * alts);
  }
  return alts + 1;
}

/** Children newer than their parent, which `fill` gives an alternative version. */
function countAlternatives(w: Walk): number {
  let n = 0;
  for (let s = 0; s < w.labels.length; s++) {
    const node = w.visible[s];
    if (node === undefined) continue;
    const l = w.left[s]!;
    const r = w.right[s]!;
    if (l >= 0 && (w.visible[l]?.lastEpoch ?? 0n) > node.lastEpoch) n++;
    if (r >= 0 && (w.visible[r]?.lastEpoch ?? 0n) > node.lastEpoch) n++;
  }
  return n;
}

/**
 * Loads the nodes an insertion of `el` below `root` at `epoch` reads, into a new arena with
 * `reserve` further slots for the nodes it will create.
 * @param labelValueOwner the configuration whose label values labels may already hold
 */
export async function loadTree(
  reader: RecordReader,
  root: NodeLabel,
  epoch: bigint,
  el: PackedElements,
  options: PreloadOptions,
  reserve: number,
  labelValueLength: number,
  labelValueOwner: object,
): Promise<LoadedTree> {
  const w: Walk = {
    reader,
    epoch,
    el,
    maxBatchSize: Math.max(1, options.maxBatchSize),
    stats: options.stats,
    labels: [],
    records: [],
    visible: [],
    lo: [],
    hi: [],
    left: [],
    right: [],
  };
  addSlot(w, root, 0, el.count);
  await walk(w, [0], options.levels, 0);
  const count = w.labels.length;
  const arena = NodeArena.create({
    capacity: count + reserve,
    labelValueLength,
    altCapacity: countAlternatives(w),
  });
  fill(w, arena, labelValueOwner);
  return { arena, count, labels: w.labels, records: w.records, visible: w.visible };
}
