/**
 * Batch insertion into the compressed binary trie (spec 8). The shape of the tree depends only
 * on the set of leaves, but the stored records (previous copies, epochs, node count) depend on
 * the order of writes, which follows spec 8 exactly: a split's pushed-down node first, then
 * each child once its subtree is done, then the parent.
 */

import {
  AkdError,
  Direction,
  LEAF_LEN,
  compareNodeLabels,
  type AzksElement,
  type Configuration,
  type NodeLabel,
} from '@akd-ts/core';
import { NodeType, type Transaction, type TreeNode } from '@akd-ts/storage';
import { childLabel, newInterior, newLeaf, parentHash, setChild } from './nodes.js';
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
}

/**
 * Sorts elements by label and checks they are leaves with distinct labels. Sorted full-length
 * labels make every subtree a contiguous range, so the recursion splits by binary search.
 */
export function prepareElements(elements: AzksElement[]): AzksElement[] {
  const sorted = elements.slice().sort((a, b) => compareNodeLabels(a.label, b.label));
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

/** Longest common prefix of the sorted range (that of its first and last labels). */
function rangePrefix(ctx: Context, sorted: AzksElement[], lo: number, hi: number): NodeLabel {
  return sorted[lo]!.label.longestCommonPrefix(sorted[hi - 1]!.label, ctx.config.emptyLabel);
}

/** The untouched child on one side, if any (awaited only when storage must be asked). */
function sibling(
  tx: Transaction,
  label: NodeLabel | undefined,
  epoch: bigint,
): MaybePromise<TreeNode | undefined> {
  return label === undefined ? undefined : findNode(tx, label, epoch);
}

/** Inserts one side's range below `cur`, attaches the result and writes it (spec 8 phase 2). */
async function insertChild(
  ctx: Context,
  cur: TreeNode,
  direction: Direction,
  sorted: AzksElement[],
  lo: number,
  hi: number,
): Promise<Inserted> {
  const child = await insert(ctx, childLabel(cur, direction), sorted, lo, hi);
  setChild(cur, child.node);
  const written = writeNode(ctx.tx, child.node, child.isNew);
  if (written instanceof Promise) await written;
  return child;
}

async function insert(
  ctx: Context,
  label: NodeLabel | undefined,
  sorted: AzksElement[],
  lo: number,
  hi: number,
): Promise<Inserted> {
  const { config, tx, epoch } = ctx;
  let cur: TreeNode;
  let isNew: boolean;
  let count: number;

  // Phase 1: choose the node
  if (label !== undefined) {
    const read = readNode(tx, label, epoch);
    // a private copy: the node is about to change
    const existing = { ...(read instanceof Promise ? await read : read) };
    const prefix = label.longestCommonPrefix(rangePrefix(ctx, sorted, lo, hi), config.emptyLabel);
    if (prefix.len < label.len) {
      // split the compressed edge: a new interior node above the existing one
      cur = newInterior(prefix, epoch, config);
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
  } else if (hi - lo === 1) {
    const e = sorted[lo]!;
    return { node: newLeaf(e.label, e.value, epoch, config), isNew: true, count: 1 };
  } else {
    cur = newInterior(rangePrefix(ctx, sorted, lo, hi), epoch, config);
    isNew = true;
    count = 1;
  }

  // A leaf takes no children: an element equal to it is a no-op (spec 8 notes).
  if (cur.nodeType === NodeType.Leaf) return { node: cur, isNew, count };

  // Phase 2: distribute by the bit after cur's label
  const mid = splitIndex(sorted, lo, hi, cur.label.len);
  let left: Inserted | undefined;
  let right: Inserted | undefined;
  if (lo < mid) {
    left = await insertChild(ctx, cur, Direction.Left, sorted, lo, mid);
    count += left.count;
  }
  if (mid < hi) {
    right = await insertChild(ctx, cur, Direction.Right, sorted, mid, hi);
    count += right.count;
  }

  // Phase 3: rehash from the children visible at cur's epoch; a child just written is the
  // node in hand, the other one is read
  let leftNode = left?.node ?? sibling(tx, cur.leftChild, cur.lastEpoch);
  if (leftNode instanceof Promise) leftNode = await leftNode;
  let rightNode = right?.node ?? sibling(tx, cur.rightChild, cur.lastEpoch);
  if (rightNode instanceof Promise) rightNode = await rightNode;
  cur.hash = parentHash(config, leftNode, rightNode);
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
  const ctx: Context = { config, tx, epoch };
  const result = await insert(ctx, root, sorted, 0, sorted.length);
  await writeNode(tx, result.node, result.isNew);
  return result.count;
}
