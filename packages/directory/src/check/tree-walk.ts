/**
 * The full check of a stored tree: every node reachable from the root at one epoch is read
 * once, in batches, and checked against its children (node-check.ts), so a wrong hash,
 * epoch, pointer or missing node anywhere in the tree is found. A node's hash is checked
 * against its children's stored values, so the checks of all nodes together recompute the
 * root hash from the leaves. Depth first, batch by batch: memory holds the unchecked nodes of
 * one path down the tree, not a level of it.
 */

import { AkdError, type Configuration, type NodeLabel } from '@akd-ts/core';
import {
  NodeType,
  nodeAtEpoch,
  readWalkNodes,
  type Database,
  type TreeNode,
} from '@akd-ts/storage';
import { childrenProblem, hasChildren, leafProblem } from './node-check.js';

/** A write epoch no version has (2^63 - 1 is the largest a store keeps). */
const NONE = (1n << 63n) - 1n;

/** Parents whose children one read fetches, by default. */
const DEFAULT_BATCH = 2_000;

/** Names `node` in a message: the root, or a node by its label. */
function corrupt(node: TreeNode, epoch: bigint, problem: string): AkdError {
  const name = node.nodeType === NodeType.Root ? 'the root' : `tree node ${node.label}`;
  return new AkdError('STORAGE_CORRUPT', `${name} at epoch ${epoch}: ${problem}`, {
    field: `nodes.${node.label}`,
  });
}

/**
 * Reads the children of `parents` (nodes with children) at `epoch` in one read and checks
 * each parent against them, and each child without children as a leaf.
 * @returns the children that have children of their own, and how many children there were.
 * @throws AkdError `STORAGE_CORRUPT` naming the first node found wrong.
 */
export async function checkChildrenOf(
  config: Configuration,
  db: Database,
  parents: readonly TreeNode[],
  epoch: bigint,
): Promise<{ parents: TreeNode[]; children: number }> {
  const labels: NodeLabel[] = [];
  // a store of versions finds each child by the write epoch its parent records; one that
  // records none is read as none (childProblem then names it)
  const epochs: bigint[] = [];
  for (const p of parents) {
    if (p.leftChild !== undefined) {
      labels.push(p.leftChild);
      epochs.push(p.leftEpoch ?? NONE);
    }
    if (p.rightChild !== undefined) {
      labels.push(p.rightChild);
      epochs.push(p.rightEpoch ?? NONE);
    }
  }
  const records = await readWalkNodes(db, labels, epochs);
  const parentsAsWritten = db.nodeLayout === 'versions';
  const next: TreeNode[] = [];
  let at = 0;
  const take = () => {
    const record = records[at++];
    return record === undefined ? undefined : nodeAtEpoch(record, epoch);
  };
  for (const node of parents) {
    const left = node.leftChild === undefined ? undefined : take();
    const right = node.rightChild === undefined ? undefined : take();
    // a wrong leaf is named itself, before its parent's hash (which its fields enter) fails
    for (const child of [left, right]) {
      if (child === undefined) continue;
      if (hasChildren(child)) next.push(child);
      else {
        const wrong = leafProblem(child);
        if (wrong !== undefined) throw corrupt(child, epoch, wrong);
      }
    }
    const problem = childrenProblem(config, { node, left, right }, parentsAsWritten);
    if (problem !== undefined) throw corrupt(node, epoch, problem);
  }
  return { parents: next, children: labels.length };
}

/**
 * Checks every node below `root` (the root's version at `epoch`, itself included), reading
 * the version of each node visible at `epoch`.
 * @returns how many nodes were reached, the root included.
 * @throws AkdError `STORAGE_CORRUPT` naming the first node found wrong.
 */
export async function walkTree(
  config: Configuration,
  db: Database,
  root: TreeNode,
  epoch: bigint,
  batch = DEFAULT_BATCH,
): Promise<bigint> {
  let reached = 1n;
  const pending: TreeNode[][] = hasChildren(root) ? [[root]] : [];
  while (pending.length > 0) {
    const top = pending[pending.length - 1]!;
    const parents = top.length > batch ? top.splice(top.length - batch) : pending.pop()!;
    const step = await checkChildrenOf(config, db, parents, epoch);
    reached += BigInt(step.children);
    if (step.parents.length > 0) pending.push(step.parents);
  }
  return reached;
}
