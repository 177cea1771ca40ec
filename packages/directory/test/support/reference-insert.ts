/**
 * A reference batch insertion for differential tests: spec 8 transcribed over node objects,
 * every write logged in the transaction in the specification's order (a split's pushed-down
 * node first, then each child once its subtree is done, then the parent), and every read
 * through the transaction. The directory's arena insertion must store exactly what this does.
 */

import {
  AkdError,
  LEAF_LEN,
  PrefixOrdering,
  type AzksElement,
  type Configuration,
  type NodeLabel,
} from '@akd-ts/core';
import { NodeType, type Transaction, type TreeNode } from '@akd-ts/storage';
import { nodeValue } from '../../src/tree/nodes.js';
import { findNode, readNode, type MaybePromise } from '../../src/tree/node-io.js';

interface Inserted {
  node: TreeNode;
  isNew: boolean;
  /** Nodes created in this subtree. */
  count: number;
}

/** A new leaf: its raw value, inserted at `epoch`, not yet attached (spec 8 case 2). */
export function newLeaf(
  label: NodeLabel,
  value: Uint8Array,
  epoch: bigint,
  config: Configuration,
): TreeNode {
  return {
    label,
    lastEpoch: epoch,
    minDescendantEpoch: epoch,
    parent: config.emptyLabel,
    nodeType: NodeType.Leaf,
    leftChild: undefined,
    rightChild: undefined,
    leftEpoch: undefined,
    rightEpoch: undefined,
    hash: value,
  };
}

const ZERO_HASH = new Uint8Array(32);

/** A new interior node at `label`, created at `epoch` (spec 8 cases 1a and 3). */
export function newInterior(label: NodeLabel, epoch: bigint, config: Configuration): TreeNode {
  return {
    label,
    lastEpoch: epoch,
    minDescendantEpoch: epoch,
    parent: config.emptyLabel,
    nodeType: NodeType.Interior,
    leftChild: undefined,
    rightChild: undefined,
    leftEpoch: undefined,
    rightEpoch: undefined,
    hash: ZERO_HASH,
  };
}

/**
 * Attaches `child` below `parent` (spec 8 `set_child`), mutating both: the child slot, the
 * child's parent pointer, and the parent's epochs.
 */
export function setChild(parent: TreeNode, child: TreeNode): void {
  const ordering = parent.label.prefixOrdering(child.label);
  if (ordering === PrefixOrdering.Invalid) {
    throw new AkdError(
      'DIRECTORY_TREE',
      `node ${child.label} has no direction below ${parent.label}`,
    );
  }
  if (ordering === PrefixOrdering.WithZero) parent.leftChild = child.label;
  else parent.rightChild = child.label;
  child.parent = parent.label;
  if (child.lastEpoch > parent.lastEpoch) parent.lastEpoch = child.lastEpoch;
  parent.minDescendantEpoch =
    parent.minDescendantEpoch === 0n || child.minDescendantEpoch < parent.minDescendantEpoch
      ? child.minDescendantEpoch
      : parent.minDescendantEpoch;
}

/**
 * The stored hash of a non-leaf node from its children (spec 7.3); missing children count as
 * the empty node.
 */
export function parentHash(
  config: Configuration,
  left: TreeNode | undefined,
  right: TreeNode | undefined,
): Uint8Array {
  const lv = left === undefined ? config.emptyNodeHash : nodeValue(config, left);
  const ll = config.nodeLabelValue(left === undefined ? config.emptyLabel : left.label);
  const rv = right === undefined ? config.emptyNodeHash : nodeValue(config, right);
  const rl = config.nodeLabelValue(right === undefined ? config.emptyLabel : right.label);
  return config.computeParentHashFromChildren(lv, ll, rv, rl);
}

/**
 * Logs `node` in the transaction with its previous copy (spec 9.2 `write`): none for a new
 * node, otherwise the stored version visible at `lastEpoch - 1`. The node must not be changed
 * afterwards.
 */
export function writeNode(tx: Transaction, node: TreeNode, isNew: boolean): MaybePromise<void> {
  const set = (previous: TreeNode | undefined) =>
    tx.set({ kind: 'treeNode', label: node.label, latest: node, previous });
  if (isNew) return set(undefined);
  const target = node.lastEpoch > 0n ? node.lastEpoch - 1n : 0n;
  const previous = findNode(tx, node.label, target);
  return previous instanceof Promise ? previous.then(set) : set(previous);
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
  // the versions hashed are the ones a walk by write epoch must read
  cur.leftEpoch = leftNode?.lastEpoch;
  cur.rightEpoch = rightNode?.lastEpoch;
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
  const result = await insertBelow(ctx, root, sorted, 0, sorted.length);
  await writeNode(tx, result.node, result.isNew);
  return result.count;
}
