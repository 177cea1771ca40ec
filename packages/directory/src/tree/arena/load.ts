/**
 * Loads the part of the tree an insertion reads into a node arena (spec 8, 13.2): a
 * breadth-first walk from the root that continues below every node some element lies under,
 * taking both of its children (the one that changes and the sibling its rehash reads). It is
 * the insertion's preload: records the transaction log or the cache hold are taken from
 * there, the others are read in one batched read per level, so a cache is warmed as a
 * preload would warm it. With parallel levels the frontier is cut in halves that continue as
 * independent walks, and their reads are in flight together: once the reads are seen to wait
 * on round trips rather than work on this thread (read-pacing.ts), or always with
 * `splitAlways`.
 *
 * Each walk carries the range of sorted elements below its nodes, so deciding whether to go
 * further is a comparison with the range's ends, not a search of all elements; and each node
 * is copied into its slot as soon as its record arrives, while the record is at hand. Where
 * the database answers in bytes, the walk reads those instead (load-bytes.ts).
 */

import type { NodeLabel } from '@akd-ts/core';
import {
  NodeType,
  nodeAtEpoch,
  type RecordReader,
  type TreeNode,
  type TreeNodeRecord,
} from '@akd-ts/storage';
import { childLevels } from '../../parallelism.js';
import { MIN_SPLIT, readInChunks, type PreloadOptions } from '../preload.js';
import { ReadPacing } from '../read-pacing.js';
import { Copy, NodeArena, UNLOADED } from './arena.js';
import { rangeBelow, splitIndex, type PackedElements } from './elements.js';
import {
  fetchBytes,
  keepWrittenRecords,
  slotLabel,
  slotRecord,
  slotVisible,
} from './load-bytes.js';
import {
  copy32,
  corrupt,
  endWalk,
  recordedEpochs,
  recordedNumber,
  reserve,
  takeSlot,
  type Walk,
} from './walk-state.js';

/** The loaded nodes: slots [0, count) of the arena, with the records they came from. */
export class LoadedTree {
  readonly #w: Walk;

  constructor(w: Walk) {
    this.#w = w;
  }

  get arena(): NodeArena {
    return this.#w.arena;
  }

  get count(): number {
    return this.#w.count;
  }

  /** Whether the store keeps node versions: its commit writes no previous copy. */
  get keepsVersions(): boolean {
    return this.#w.versions;
  }

  /*
   * With `keep` false, what a walk over bytes builds for a slot is not kept for the next call
   * (a commit in chunks builds each record once and lets it go once written).
   */

  /** The label slot `slot` was asked for. */
  label(slot: number, keep = true): NodeLabel {
    return slotLabel(this.#w, slot, keep);
  }

  /**
   * The record found for a slot (from the log, the cache or storage), if any. Of a record
   * read in bytes, what the walk kept (load-bytes.ts `keepRead`): nothing for a node no
   * element reaches, and no previous version where the insertion will not read it.
   */
  record(slot: number, keep = true): TreeNodeRecord | undefined {
    return slotRecord(this.#w, slot, keep);
  }

  /** The version of a slot's record visible at the insertion's epoch (spec 9.2), if any. */
  visible(slot: number, keep = true): TreeNode | undefined {
    return slotVisible(this.#w, slot, keep);
  }

  /**
   * Lets go of the records of the slots the insertion did not write, once it is done: a
   * commit builds records of written slots only (batch.ts), and the nodes an insertion only
   * read (the siblings it took hashes from, the nodes beside its paths) are most of a large
   * preload. A walk over bytes keeps the written slots' record bytes, and reads again the few
   * its reads let go of too early (load-bytes.ts `readAgain`); `record`, `visible` and
   * `label` of another slot then answer as for a slot without a record (labels are built
   * again from the arena).
   */
  keepWritten(): Promise<void> {
    return keepWrittenRecords(this.#w);
  }
}

function addSlot(
  w: Walk,
  label: NodeLabel,
  lo: number,
  hi: number,
  parentEpoch: number,
  recorded: number,
): number {
  const slot = takeSlot(w, lo, hi, parentEpoch, recorded);
  const a = w.arena;
  copy32(a.labels, 32 * slot, label.val, 0);
  a.lens[slot] = label.len;
  const memo = label.peekMemo(w.owner);
  const n = a.shape.labelValueLength;
  if (memo !== undefined && memo.length === n) {
    a.labelValues.set(memo, n * slot);
    a.hasLabelValue[slot] = 1;
  }
  w.labels[slot] = label;
  w.records[slot] = undefined;
  w.visible[slot] = undefined;
  return slot;
}

/**
 * Finds the records of `frontier`: those the log or the cache hold, then the others from
 * storage in reads of at most `maxBatchSize` labels (in bytes where the database answers so):
 * one after another in a serial walk, all at once in a parallel one (their round trips then
 * overlap). Nodes read in bytes are expanded onto `next` as their reads answer.
 */
async function fetchRecords(
  w: Walk,
  frontier: number[],
  parallel: boolean,
  next: number[],
): Promise<void> {
  const records = w.records;
  let missing = frontier;
  // a walk over bytes with nothing logged or cached has no label object to build for a peek,
  // and keeps none of those it builds for one (a record found gets its own)
  if (!w.bytes || w.reader.mayHoldNodes()) {
    const peeked = w.reader.peekNodes(frontier.map((s) => slotLabel(w, s, !w.bytes)));
    missing = [];
    for (let i = 0; i < frontier.length; i++) {
      const record = peeked[i];
      if (record !== undefined) records[frontier[i]!] = record;
      else missing.push(frontier[i]!);
    }
  }
  if (missing.length === 0) return;
  if (w.bytes) return fetchBytes(w, missing, parallel, next);
  const read = async (slots: number[]) => {
    const found = await w.reader.readNodes(
      slots.map((s) => w.labels[s]!),
      recordedEpochs(w, slots),
    );
    for (let i = 0; i < slots.length; i++) {
      const record = found[i];
      if (record === undefined) continue;
      records[slots[i]!] = record;
      w.fromStorage[slots[i]!] = 1;
    }
    w.collectGarbage?.();
  };
  await w.pacing.observe(() => readInChunks(missing, w.maxBatchSize, parallel, w.stats, read));
}

function epochNumber(e: bigint, label: NodeLabel): number {
  // one conversion instead of two comparisons of bigints: every epoch from 2^53 up converts
  // to 2^53 or more, so the range check on the double is the check on the bigint
  const n = Number(e);
  if (!(n >= 0 && n <= Number.MAX_SAFE_INTEGER))
    throw corrupt(label, `has an epoch beyond 2^53: ${e}`);
  return n;
}

function checkHash(node: TreeNode, label: NodeLabel): void {
  if (node.hash.length !== 32) {
    throw corrupt(label, `has a ${node.hash.length}-byte hash`);
  }
}

/**
 * Copies a slot's record into the arena: the stored copies (spec 9.2) and the version visible
 * at the insertion's epoch. A node newer than its parent (a tree that breaks the epoch
 * invariant) may be read below that version, so it also gets its record's earlier version.
 */
function fillSlot(w: Walk, slot: number, record: TreeNodeRecord, node: TreeNode | undefined) {
  const a = w.arena;
  a.storedLatest[slot] = Copy.Latest;
  a.storedLatestEpoch[slot] = Number(record.latest.lastEpoch);
  if (record.previous !== undefined) {
    a.storedPrevious[slot] = Copy.Previous;
    a.storedPreviousEpoch[slot] = Number(record.previous.lastEpoch);
  }
  if (node === undefined) return;
  const label = w.labels[slot]!;
  checkHash(node, label);
  a.types[slot] = node.nodeType;
  const lastEpoch = epochNumber(node.lastEpoch, label);
  a.lastEpoch[slot] = lastEpoch;
  a.minEpoch[slot] = epochNumber(node.minDescendantEpoch, label);
  copy32(a.hashes, 32 * slot, node.hash, 0);
  if (lastEpoch <= w.parentEpoch[slot]!) return;
  const older = node === record.latest ? record.previous : undefined;
  reserve(w, 0, 1);
  const alt = w.alts++;
  const b = w.arena;
  b.alt[slot] = alt;
  if (older === undefined) return;
  checkHash(older, label);
  b.altType[alt] = older.nodeType;
  b.altEpoch[alt] = epochNumber(older.lastEpoch, label);
  copy32(b.altHashes, 32 * alt, older.hash, 0);
}

/**
 * Copies the frontier's records, and takes the children of nodes some element lies under
 * onto `next` (where those read in bytes already are). Records read from storage are cached
 * (the cache is warmed as a preload warms it) except those of expanded nodes: the insertion
 * writes a new version of each of them, which its commit caches in their place.
 */
function expand(w: Walk, frontier: number[], next: number[]): void {
  const keep: TreeNodeRecord[] = [];
  const el = w.el;
  for (const slot of frontier) {
    const record = w.records[slot];
    if (record === undefined) continue;
    const node = nodeAtEpoch(record, w.epoch);
    w.visible[slot] = node;
    fillSlot(w, slot, record, node);
    const label = w.labels[slot]!;
    const [lo, hi] =
      node === undefined || node.nodeType === NodeType.Leaf
        ? [0, 0]
        : rangeBelow(el, w.lo[slot]!, w.hi[slot]!, label.val, 0, label.len);
    if (node === undefined || lo === hi) {
      if (w.fromStorage[slot] === 1) keep.push(record);
      if (node === undefined) continue;
      // not expanded: its children stay unread, their labels in the record
      if (node.leftChild !== undefined) w.arena.left[slot] = UNLOADED;
      if (node.rightChild !== undefined) w.arena.right[slot] = UNLOADED;
      continue;
    }
    const mid = splitIndex(el, lo, hi, label.len);
    // the slot's epoch, checked by fillSlot, is its children's parent epoch
    const epoch = w.arena.lastEpoch[slot]!;
    if (node.leftChild !== undefined) {
      const child = addSlot(w, node.leftChild, lo, mid, epoch, recordedNumber(node.leftEpoch));
      w.arena.left[slot] = child;
      next.push(child);
    }
    if (node.rightChild !== undefined) {
      const child = addSlot(w, node.rightChild, mid, hi, epoch, recordedNumber(node.rightEpoch));
      w.arena.right[slot] = child;
      next.push(child);
    }
  }
  if (keep.length > 0) w.reader.cacheNodes(keep);
}

async function walk(
  w: Walk,
  frontier: number[],
  levels: number | undefined,
  depth: number,
): Promise<void> {
  if (frontier.length === 0) return;
  const stats = w.stats;
  if (stats !== undefined) {
    if (depth + 1 > stats.levels) stats.levels = depth + 1;
    stats.nodes = (stats.nodes ?? 0) + frontier.length;
  }
  const parallel = levels !== undefined && (w.splitAlways || w.pacing.split);
  const next: number[] = [];
  await fetchRecords(w, frontier, parallel, next);
  expand(w, frontier, next);
  if (!parallel) {
    const chunk = w.chunkNodes;
    if (chunk === undefined || next.length <= chunk) return walk(w, next, levels, depth + 1);
    // halves in label order, the left one to the leaves first (PreloadOptions.chunkNodes)
    const half = next.length >> 1;
    await walk(w, next.slice(0, half), levels, depth + 1);
    return walk(w, next.slice(half), levels, depth + 1);
  }
  // a small frontier continues as one walk: two tiny reads cost more round trips than they save
  if (next.length < MIN_SPLIT) return walk(w, next, levels, depth + 1);
  if (stats !== undefined) stats.splits = (stats.splits ?? 0) + 1;
  const half = next.length >> 1;
  const sub = childLevels(levels);
  await Promise.all([
    walk(w, next.slice(0, half), sub, depth + 1),
    walk(w, next.slice(half), sub, depth + 1),
  ]);
}

/**
 * The slots a walk for `elements` elements starts with: the nodes it is expected to read,
 * then `reserved`. A walk that outgrows its arena copies it into one twice as large, and the
 * end of the walk copies it again for the insertion's slots where those no longer fit: each
 * copy holds two arenas at once until the old one is collected. Room never used costs little
 * (only the pages of the slots' links are written: `NodeArena.create`), so the estimate errs
 * high. In a tree of `treeNodes` nodes (about half of them leaves), an element's path shares
 * its top with the others' and reads up to two nodes a level below that (the node and its
 * sibling): 2.9 nodes an element were read for 200,000 elements into 500,000 leaves, 4.3 for
 * 100,000, 7.7 for 100,000 into 2,000,000, against 4.6, 6.2 and 9.8 estimated. An estimate of
 * 1.5 a level (7.6 there) was short by 2%: the end of the walk copied its 146 MB arena for
 * the insertion's slots, and the two raised the writer's peak by 125 MB. Room a slot leaves
 * unused costs its 16 bytes of links. Without the tree's size, two an element.
 */
export function walkCapacity(elements: number, reserved: number, treeNodes?: number): number {
  const k = Math.max(1, elements);
  const read =
    treeNodes === undefined
      ? 2 * k
      : Math.min(treeNodes + 1, Math.ceil(k * (1 + 2 * Math.log2(1 + treeNodes / 2 / k))));
  return read + 64 + reserved;
}

/**
 * Loads the nodes an insertion of `el` below `root` at `epoch` reads, into a new arena with
 * `reserved` further slots for the nodes it will create.
 * @param labelValueOwner the configuration whose label values labels may already hold
 * @param treeNodes the nodes the tree holds (the AZKS record's count), to size the arena
 */
export async function loadTree(
  reader: RecordReader,
  root: NodeLabel,
  epoch: bigint,
  el: PackedElements,
  options: PreloadOptions,
  reserved: number,
  labelValueLength: number,
  labelValueOwner: object,
  treeNodes?: number,
): Promise<LoadedTree> {
  const capacity = walkCapacity(el.count, reserved, treeNodes);
  const w: Walk = {
    reader,
    epoch,
    epochNumber: Number(epoch),
    el,
    maxBatchSize: Math.max(1, options.maxBatchSize),
    stats: options.stats,
    owner: labelValueOwner,
    arena: NodeArena.create({ capacity, labelValueLength, altCapacity: 0 }),
    count: 0,
    alts: 0,
    pacing: options.pacing ?? new ReadPacing(),
    splitAlways: options.splitAlways === true,
    chunkNodes: options.chunkNodes,
    labels: [],
    records: [],
    visible: [],
    lo: new Int32Array(capacity),
    hi: new Int32Array(capacity),
    parentEpoch: new Float64Array(capacity),
    recorded: new Float64Array(capacity),
    fromStorage: new Uint8Array(capacity),
    bytes: reader.readsNodeBytes(),
    versions: options.storeKeepsVersions === true,
    collectGarbage: options.collectGarbage,
    answers: [],
    answerViews: [],
    answerOf: new Int32Array(capacity),
    answerAt: new Int32Array(capacity),
  };
  // nothing is newer than the root's "parent"; the root visible at the insertion's epoch is
  // that of the epoch before, written in it (a publish rewrites the root)
  addSlot(w, root, 0, el.count, Infinity, recordedNumber(epoch - 1n));
  await walk(w, [0], options.levels, 0);
  endWalk(w, reserved);
  return new LoadedTree(w);
}
