/**
 * Tree node helpers (spec 7): creating nodes, attaching a child (`set_child` of spec 8), and a
 * node's value as its parent sees it.
 */

import {
  AkdError,
  Direction,
  PrefixOrdering,
  type Configuration,
  type NodeLabel,
} from '@akd-ts/core';
import { NodeType, type TreeNode } from '@akd-ts/storage';

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
    hash: ZERO_HASH,
  };
}

/** The root of a new tree (spec 7.4): epoch 0, its own parent, the empty-root value. */
export function newRoot(root: NodeLabel, config: Configuration): TreeNode {
  return {
    label: root,
    lastEpoch: 0n,
    minDescendantEpoch: 0n,
    parent: root,
    nodeType: NodeType.Root,
    leftChild: undefined,
    rightChild: undefined,
    hash: config.emptyRootValue,
  };
}

/** The label of the child on `direction`, if any. */
export function childLabel(node: TreeNode, direction: Direction): NodeLabel | undefined {
  return direction === Direction.Left ? node.leftChild : node.rightChild;
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
 * A node's value as seen from its parent (spec 7.3): a leaf's value bound to its insertion
 * epoch, otherwise the stored hash.
 */
export function nodeValue(config: Configuration, node: TreeNode): Uint8Array {
  return node.nodeType === NodeType.Leaf
    ? config.hashLeafWithCommitment(node.hash, node.lastEpoch)
    : node.hash;
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
