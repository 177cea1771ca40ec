/**
 * The `versions` layout's reads by label (database.ts `NodeLayout`, rule 4), for a store that
 * can read one version by its label and write epoch: a store of this layout keeps no index by
 * label, so a node's record is found by walking the tree from the root of an epoch, each
 * child by the write epoch its parent records (spec 9.2: the child's version visible at the
 * parent's epoch, which a later child version would have made the parent rewrite).
 */

import { NodeLabel } from '@akd-ts/core';
import type { NodeLayout } from './database.js';
import type { TreeNode, TreeNodeRecord } from './records.js';

/** A stored version of `label` written in `epoch`, or undefined. */
export type VersionLookup = (label: NodeLabel, epoch: bigint) => TreeNode | undefined;

/**
 * The version of `target` visible at `epoch`: from the root version written in `epoch`, down
 * the children whose labels prefix `target`. Undefined where the walk ends above it (`target`
 * was not in the tree at `epoch`, or no root of `epoch` is stored).
 */
export function versionAt(
  target: NodeLabel,
  epoch: bigint,
  find: VersionLookup,
): TreeNode | undefined {
  let node = find(NodeLabel.root(), epoch);
  while (node !== undefined && !node.label.equals(target)) {
    const left = node.leftChild;
    const right = node.rightChild;
    if (left !== undefined && node.leftEpoch !== undefined && left.isPrefixOf(target)) {
      node = find(left, node.leftEpoch);
    } else if (right !== undefined && node.rightEpoch !== undefined && right.isPrefixOf(target)) {
      node = find(right, node.rightEpoch);
    } else {
      return undefined;
    }
  }
  return node;
}

/**
 * `label`'s record as a store of the versions layout answers a read by label: its version
 * visible at `storeEpoch` (the newest root version's epoch), and the one visible just before
 * that version was written, where a walk from that epoch's root reaches one.
 */
export function recordByWalk(
  label: NodeLabel,
  storeEpoch: bigint | undefined,
  find: VersionLookup,
): TreeNodeRecord | undefined {
  if (storeEpoch === undefined) return undefined;
  const latest = versionAt(label, storeEpoch, find);
  if (latest === undefined) return undefined;
  const previous =
    latest.lastEpoch > 0n ? versionAt(label, latest.lastEpoch - 1n, find) : undefined;
  return { kind: 'treeNode', label, latest, previous };
}

/**
 * The records a versions store's writes store (rule 1): the latest version of each tree-node
 * record whose write epoch is past `storeEpoch` (the store's epoch before the write; undefined
 * for none). Where a batch holds one version twice, the later write wins.
 */
export function versionsToWrite(
  records: Iterable<TreeNodeRecord>,
  storeEpoch: bigint | undefined,
): TreeNode[] {
  const out: TreeNode[] = [];
  for (const r of records) {
    if (storeEpoch === undefined || r.latest.lastEpoch > storeEpoch) out.push(r.latest);
  }
  return out;
}

/** Checks that two aligned lists of a read by version have the same length. */
export function checkAligned(labels: number, epochs: number): void {
  if (labels !== epochs) {
    throw new RangeError(`${labels} labels but ${epochs} epochs: they must be aligned`);
  }
}

/**
 * Checks a `deleteNodeVersions` call before it deletes anything: a store of versions, aligned
 * lists, and every epoch below the store's epoch (`storeEpoch`, undefined for an empty store),
 * whose versions are the served tree's and never garbage.
 * @throws RangeError naming what is wrong
 */
export function checkDeletable(
  layout: NodeLayout | undefined,
  storeEpoch: bigint | undefined,
  labels: number,
  epochs: readonly bigint[],
): void {
  if (layout !== 'versions') {
    throw new RangeError('only a store of the versions layout deletes node versions');
  }
  checkAligned(labels, epochs.length);
  for (const epoch of epochs) {
    if (storeEpoch === undefined || epoch >= storeEpoch) {
      throw new RangeError(
        `a version of epoch ${epoch} is not below the store's epoch ${storeEpoch ?? 'none'}: it is never deleted`,
      );
    }
  }
}
