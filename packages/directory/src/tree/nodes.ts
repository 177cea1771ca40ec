/**
 * Tree node helpers (spec 7): the root of a new tree, a node's child on one side, and a
 * node's value as its parent sees it.
 */

import { Direction, type Configuration, type NodeLabel } from '@akd-ts/core';
import { NodeType, type TreeNode } from '@akd-ts/storage';

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
    leftEpoch: undefined,
    rightEpoch: undefined,
    hash: config.emptyRootValue,
  };
}

/** The label of the child on `direction`, if any. */
export function childLabel(node: TreeNode, direction: Direction): NodeLabel | undefined {
  return direction === Direction.Left ? node.leftChild : node.rightChild;
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
