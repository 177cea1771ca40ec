/**
 * Membership and non-membership proofs (spec 10.1, 10.2): walk from the root toward a label,
 * collecting each level's sibling, and stop at the label or at the deepest node that prefixes
 * it. All reads are at the latest published epoch.
 */

import {
  Direction,
  PrefixOrdering,
  orderingToDirection,
  type AzksElement,
  type Configuration,
  type MembershipProof,
  type NodeLabel,
  type NonMembershipProof,
  type SiblingProof,
} from '@akd-ts/core';
import { NodeType, type RecordReader, type TreeNode } from '@akd-ts/storage';
import { childLabel, nodeValue } from './nodes.js';
import { readChild, readRoot, type MaybePromise } from './node-io.js';

/**
 * Reads the child of `node` on `direction` at `epoch`, if it has one there: the version `node`
 * records (`readChild`). A child the node names but the store cannot give at that epoch is
 * an error (upstream reads it as "no child"): it means the reader is too far behind the
 * writer, and a proof built without that child would not verify.
 *
 * Synchronous when the child is at hand (always, after a preload): the walks below await
 * only a real read, not each of the forty-odd nodes of a lookup's paths.
 */
function child(
  reader: RecordReader,
  node: TreeNode,
  direction: Direction,
  epoch: bigint,
): MaybePromise<TreeNode | undefined> {
  const label = childLabel(node, direction);
  if (label === undefined) return undefined;
  // the version the node was hashed with, which a cache kept across epochs may have replaced
  const recorded = direction === Direction.Left ? node.leftEpoch : node.rightEpoch;
  return readChild(reader, label, epoch, recorded);
}

function element(config: Configuration, node: TreeNode | undefined): AzksElement {
  return node === undefined
    ? { label: config.emptyLabel, value: config.emptyNodeHash }
    : { label: node.label, value: nodeValue(config, node) };
}

/**
 * The membership proof of `target`, or, when `target` is absent, of the deepest node whose
 * label prefixes it (spec 10.1 "longest-prefix node" walk). Returns that node too.
 */
export async function membershipWalk(
  config: Configuration,
  reader: RecordReader,
  root: NodeLabel,
  target: NodeLabel,
  epoch: bigint,
): Promise<{ node: TreeNode; proof: MembershipProof }> {
  const first = readRoot(reader, root, epoch);
  let cur = first instanceof Promise ? await first : first;
  let prev = cur;
  const path: SiblingProof[] = [];
  let ordering = cur.label.prefixOrdering(target);
  let equal = target.equals(cur.label);
  while (!equal && ordering !== PrefixOrdering.Invalid) {
    const direction = orderingToDirection(ordering)!;
    const on = child(reader, cur, direction, epoch);
    const next = on instanceof Promise ? await on : on;
    if (next === undefined) break; // only possible at the root
    const off = child(
      reader,
      cur,
      direction === Direction.Left ? Direction.Right : Direction.Left,
      epoch,
    );
    const other = off instanceof Promise ? await off : off;
    path.push({ label: cur.label, siblings: [element(config, other)], direction });
    prev = cur;
    cur = next;
    ordering = cur.label.prefixOrdering(target);
    equal = target.equals(cur.label);
  }
  if (!equal) {
    cur = prev;
    path.pop();
  }
  const hashVal = cur.nodeType === NodeType.Leaf ? nodeValue(config, cur) : cur.hash;
  return { node: cur, proof: { label: cur.label, hashVal, siblingProofs: path } };
}

/** The membership proof of `target` (spec 10.1). */
export async function membershipProof(
  config: Configuration,
  reader: RecordReader,
  root: NodeLabel,
  target: NodeLabel,
  epoch: bigint,
): Promise<MembershipProof> {
  return (await membershipWalk(config, reader, root, target, epoch)).proof;
}

/** The non-membership proof of `target` (spec 10.2). */
export async function nonMembershipProof(
  config: Configuration,
  reader: RecordReader,
  root: NodeLabel,
  target: NodeLabel,
  epoch: bigint,
): Promise<NonMembershipProof> {
  const { node, proof } = await membershipWalk(config, reader, root, target, epoch);
  const left = await child(reader, node, Direction.Left, epoch);
  const right = await child(reader, node, Direction.Right, epoch);
  return {
    label: target,
    longestPrefix: node.label,
    longestPrefixChildren: [element(config, left), element(config, right)],
    longestPrefixMembershipProof: proof,
  };
}
