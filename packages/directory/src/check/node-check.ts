/**
 * What must hold between a tree node and its children as stored (spec 7, 8): each child is
 * stored, lies below the node on its side, names it as parent and was written in the epoch the
 * node records for it; the node's hash is the hash of its children's values; its `last_epoch`
 * is the newest of theirs and its `min_descendant_epoch` the oldest. The consistency check applies it to the root, and the
 * full check to every interior node.
 */

import {
  Direction,
  orderingToDirection,
  bytesEqual,
  type Configuration,
  type NodeLabel,
} from '@akd-ts/core';
import { NodeType, type TreeNode } from '@akd-ts/storage';
import { nodeValue } from '../tree/nodes.js';

/** The length of a leaf's label in a directory's tree (a VRF output, spec 5.4). */
const LEAF_LABEL_LEN = 256;

/** A node and its children, read at one epoch: undefined where a child label has no node. */
export interface NodeWithChildren {
  node: TreeNode;
  left: TreeNode | undefined;
  right: TreeNode | undefined;
}

const SIDES = [
  { name: 'left', direction: Direction.Left, of: (n: NodeWithChildren) => n.left },
  { name: 'right', direction: Direction.Right, of: (n: NodeWithChildren) => n.right },
] as const;

function childOn(node: TreeNode, direction: Direction): NodeLabel | undefined {
  return direction === Direction.Left ? node.leftChild : node.rightChild;
}

function childEpochOn(node: TreeNode, direction: Direction): bigint | undefined {
  return direction === Direction.Left ? node.leftEpoch : node.rightEpoch;
}

/** Whether `node` has a child on either side. */
export function hasChildren(node: TreeNode): boolean {
  return node.leftChild !== undefined || node.rightChild !== undefined;
}

/** Where a child does not fit below its parent, or undefined. */
function childProblem(
  node: TreeNode,
  side: (typeof SIDES)[number],
  child: TreeNode | undefined,
  parentsAsWritten: boolean,
): string | undefined {
  const label = childOn(node, side.direction)!;
  if (child === undefined) return `its ${side.name} child ${label} is not stored`;
  if (orderingToDirection(node.label.prefixOrdering(label)) !== side.direction) {
    return `its ${side.name} child ${label} does not lie below it on that side`;
  }
  // a store of versions keeps the parent a version was written with: a later epoch may have
  // put a node between them (NodeLayout rule 2), so that parent is one of the node's own
  const parentFits = parentsAsWritten
    ? child.parent.isPrefixOf(node.label)
    : child.parent.equals(node.label);
  if (!parentFits) {
    return `its ${side.name} child ${label} names ${child.parent} as its parent`;
  }
  // the write epoch the node records names the child's version a walk by epoch reads
  const recorded = childEpochOn(node, side.direction);
  if (recorded !== child.lastEpoch) {
    return (
      `its ${side.name} child ${label} was written in epoch ${child.lastEpoch} ` +
      `but it records epoch ${recorded ?? 'none'}`
    );
  }
  if (child.nodeType === NodeType.Root) return `its ${side.name} child ${label} is a root`;
  if (child.nodeType === NodeType.Leaf && hasChildren(child)) {
    return `its ${side.name} child ${label} is a leaf with children`;
  }
  return undefined;
}

/**
 * What is wrong between `n.node`, which has at least one child, and its children, or
 * undefined when nothing is: the messages name the child and the field. Each child's own
 * fields are checked before the node's hash, which they enter, so the message names the
 * child that is wrong rather than the hash that fails because of it. `parentsAsWritten`: the
 * children come from a store of versions, whose parents are those they were written with.
 */
export function childrenProblem(
  config: Configuration,
  n: NodeWithChildren,
  parentsAsWritten = false,
): string | undefined {
  const { node } = n;
  // a node's own type was checked where its parent read it (childProblem)
  const present = SIDES.filter((s) => childOn(node, s.direction) !== undefined);
  if (node.nodeType === NodeType.Interior && present.length === 1) {
    return 'it is an interior node with one child';
  }
  let newest = 0n;
  let oldest: bigint | undefined;
  const values: Uint8Array[] = [];
  for (const side of SIDES) {
    const child = side.of(n);
    if (childOn(node, side.direction) === undefined) {
      values.push(config.emptyNodeHash, config.nodeLabelValue(config.emptyLabel));
      continue;
    }
    const problem = childProblem(node, side, child, parentsAsWritten);
    if (problem !== undefined) return problem;
    values.push(nodeValue(config, child!), config.nodeLabelValue(child!.label));
    if (child!.lastEpoch > newest) newest = child!.lastEpoch;
    if (oldest === undefined || child!.minDescendantEpoch < oldest) {
      oldest = child!.minDescendantEpoch;
    }
  }
  const [lv, ll, rv, rl] = values as [Uint8Array, Uint8Array, Uint8Array, Uint8Array];
  if (!bytesEqual(config.computeParentHashFromChildren(lv, ll, rv, rl), node.hash)) {
    return 'its stored hash is not the hash of its children';
  }
  if (node.lastEpoch !== newest) {
    return `it was last written in epoch ${node.lastEpoch} but its newest child in epoch ${newest}`;
  }
  if (node.minDescendantEpoch !== oldest) {
    return (
      `its oldest descendant epoch is ${node.minDescendantEpoch} ` +
      `but its children's is ${oldest}`
    );
  }
  return undefined;
}

/** What is wrong with `leaf`, a node without children, or undefined. */
export function leafProblem(leaf: TreeNode): string | undefined {
  if (leaf.nodeType !== NodeType.Leaf) return 'it has no children but is not a leaf';
  if (leaf.label.len !== LEAF_LABEL_LEN) return `it is a leaf of length ${leaf.label.len}`;
  if (leaf.minDescendantEpoch !== leaf.lastEpoch) {
    return (
      `it is a leaf of epoch ${leaf.lastEpoch} ` +
      `with oldest descendant epoch ${leaf.minDescendantEpoch}`
    );
  }
  return undefined;
}
