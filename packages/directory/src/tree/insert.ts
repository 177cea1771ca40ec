/**
 * Batch insertion into the compressed binary trie (spec 8). The shape of the tree depends only
 * on the set of leaves, but the stored records (previous copies, epochs, node count) depend on
 * the order of writes, which follows spec 8 exactly: a split's pushed-down node first, then
 * each child once its subtree is done, then the parent.
 */

import {
  AkdError,
  LEAF_LEN,
  type AzksElement,
  type Configuration,
  type NodeLabel,
} from '@akd-ts/core';
import { NodeType, type Transaction, type TreeNode } from '@akd-ts/storage';
import { newInterior, newLeaf, parentHash, setChild } from './nodes.js';
import { findNode, readNode, writeNode, type MaybePromise } from './node-io.js';

interface Inserted {
  node: TreeNode;
  isNew: boolean;
  /** Nodes created in this subtree. */
  count: number;
}

/** Insertion context shared by the whole recursion. */
interface Context {
  config: Configuration;
  tx: Transaction;
  epoch: bigint;
  /** Nodes rehashed since the event loop last had a turn. */
  sinceYield: number;
}

/**
 * Nodes rehashed between two turns of the event loop: with every read answered from the
 * cache the insertion would otherwise hold the thread for seconds, and a server sharing it
 * would stop answering lookups.
 */
const YIELD_EVERY = 4096;

/**
 * Sorts elements by label and checks they are leaves with distinct labels. Sorted full-length
 * labels make every subtree a contiguous range, so the recursion splits by binary search.
 */
export function prepareElements(elements: AzksElement[]): AzksElement[] {
  // a label's key orders like the label (length, then bytes) and compares natively
  const sorted = elements.slice().sort((a, b) => {
    const x = a.label.key;
    const y = b.label.key;
    return x < y ? -1 : x > y ? 1 : 0;
  });
  for (let i = 0; i < sorted.length; i++) {
    if (sorted[i]!.label.len !== LEAF_LEN) {
      throw new AkdError('DIRECTORY_TREE', `element ${sorted[i]!.label} is not a full-length leaf`);
    }
    if (i > 0 && sorted[i - 1]!.label.equals(sorted[i]!.label)) {
      throw new AkdError('DIRECTORY_TREE', `element ${sorted[i]!.label} appears twice`);
    }
  }
  return sorted;
}

/** First index in sorted[lo..hi) whose bit `bit` is 1 (all labels there share bits < `bit`). */
function splitIndex(sorted: AzksElement[], lo: number, hi: number, bit: number): number {
  while (lo < hi) {
    const mid = (lo + hi) >>> 1;
    if (sorted[mid]!.label.getBit(bit) === 0) lo = mid + 1;
    else hi = mid;
  }
  return lo;
}

/** The untouched child on one side, if any (awaited only when storage must be asked). */
function sibling(
  tx: Transaction,
  label: NodeLabel | undefined,
  epoch: bigint,
): MaybePromise<TreeNode | undefined> {
  return label === undefined ? undefined : findNode(tx, label, epoch);
}

/**
 * Inserts `sorted[lo..hi)` below the node `label` (or where there is none yet). A new leaf
 * needs no reads, so it is made here without the cost of an async call.
 */
function insertBelow(
  ctx: Context,
  label: NodeLabel | undefined,
  sorted: AzksElement[],
  lo: number,
  hi: number,
): MaybePromise<Inserted> {
  if (label === undefined && hi - lo === 1) {
    // spec 8 case 2: a new leaf
    const e = sorted[lo]!;
    return { node: newLeaf(e.label, e.value, ctx.epoch, ctx.config), isNew: true, count: 1 };
  }
  return insert(ctx, label, sorted, lo, hi);
}

/** Attaches a child below `cur` and writes it (spec 8 phase 2, after the child's recursion). */
function attach(ctx: Context, cur: TreeNode, child: Inserted): MaybePromise<void> {
  setChild(cur, child.node);
  return writeNode(ctx.tx, child.node, child.isNew);
}

async function insert(
  ctx: Context,
  label: NodeLabel | undefined,
  sorted: AzksElement[],
  lo: number,
  hi: number,
): Promise<Inserted> {
  const { config, tx, epoch } = ctx;
  const first = sorted[lo]!.label;
  // the set's longest common prefix is that of its first and last labels (sorted)
  const setPrefixLen = first.commonPrefixLength(sorted[hi - 1]!.label);
  let cur: TreeNode;
  let isNew: boolean;
  let count: number;

  // Phase 1: choose the node
  if (label !== undefined) {
    const read = readNode(tx, label, epoch);
    // a private copy: the node is about to change
    const existing = { ...(read instanceof Promise ? await read : read) };
    // lcp(label, lcp(set)): tree labels are never the configuration's empty label
    const prefixLen = Math.min(setPrefixLen, label.commonPrefixLength(first));
    if (prefixLen < label.len) {
      // case 1a: split the compressed edge with a new interior node above the existing one
      cur = newInterior(label.getPrefix(prefixLen), epoch, config);
      setChild(cur, existing);
      const written = writeNode(tx, existing, false);
      if (written instanceof Promise) await written;
      isNew = true;
      count = 1;
    } else {
      cur = existing;
      isNew = false;
      count = 0;
    }
  } else {
    // case 3: a new interior node at the set's common prefix
    cur = newInterior(first.getPrefix(setPrefixLen), epoch, config);
    isNew = true;
    count = 1;
  }

  // A leaf takes no children: an element equal to it is a no-op (spec 8 notes).
  if (cur.nodeType === NodeType.Leaf) return { node: cur, isNew, count };

  // Phase 2: distribute by the bit after cur's label, left subtree first
  const mid = splitIndex(sorted, lo, hi, cur.label.len);
  let left: Inserted | undefined;
  let right: Inserted | undefined;
  if (lo < mid) {
    const below = insertBelow(ctx, cur.leftChild, sorted, lo, mid);
    left = below instanceof Promise ? await below : below;
    const written = attach(ctx, cur, left);
    if (written instanceof Promise) await written;
    count += left.count;
  }
  if (mid < hi) {
    const below = insertBelow(ctx, cur.rightChild, sorted, mid, hi);
    right = below instanceof Promise ? await below : below;
    const written = attach(ctx, cur, right);
    if (written instanceof Promise) await written;
    count += right.count;
  }

  // Phase 3: rehash from the children visible at cur's epoch; a child just written is the
  // node in hand, the other one is read
  let leftNode = left?.node ?? sibling(tx, cur.leftChild, cur.lastEpoch);
  if (leftNode instanceof Promise) leftNode = await leftNode;
  let rightNode = right?.node ?? sibling(tx, cur.rightChild, cur.lastEpoch);
  if (rightNode instanceof Promise) rightNode = await rightNode;
  cur.hash = parentHash(config, leftNode, rightNode);
  if (++ctx.sinceYield >= YIELD_EVERY) {
    ctx.sinceYield = 0;
    await new Promise((resolve) => setImmediate(resolve));
  }
  return { node: cur, isNew, count };
}

/**
 * Inserts `sorted` (from `prepareElements`, non-empty) below the root at `epoch`, inside `tx`,
 * writing every changed node and the root.
 * @returns the number of nodes created.
 */
export async function insertElements(
  config: Configuration,
  tx: Transaction,
  root: NodeLabel,
  sorted: AzksElement[],
  epoch: bigint,
): Promise<number> {
  if (sorted.length === 0) return 0;
  const ctx: Context = { config, tx, epoch, sinceYield: 0 };
  const result = await insertBelow(ctx, root, sorted, 0, sorted.length);
  await writeNode(tx, result.node, result.isNew);
  return result.count;
}
