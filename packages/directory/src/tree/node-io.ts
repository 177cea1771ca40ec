/**
 * Reading and writing tree nodes with their previous copies (spec 9.2). Reads return the
 * version visible at a target epoch, as a private copy the caller may change; writes keep
 * exactly one earlier version, chosen by the rule that makes readers one epoch behind safe and
 * the stored records byte-identical to upstream's.
 */

import { AkdError, type NodeLabel } from '@akd-ts/core';
import {
  nodeAtEpoch,
  nodeKey,
  type RecordReader,
  type Transaction,
  type TreeNode,
  type TreeNodeRecord,
} from '@akd-ts/storage';

function isNotFound(e: unknown): boolean {
  return e instanceof AkdError && e.code === 'STORAGE_NOT_FOUND';
}

/** The version of `label` visible at `epoch`, or undefined when there is none. */
export async function findNode(
  reader: RecordReader,
  label: NodeLabel,
  epoch: bigint,
): Promise<TreeNode | undefined> {
  let record: TreeNodeRecord;
  try {
    record = await reader.get(nodeKey(label));
  } catch (e) {
    if (isNotFound(e)) return undefined;
    throw e;
  }
  const node = nodeAtEpoch(record, epoch);
  return node === undefined ? undefined : { ...node };
}

/** Like `findNode`, but a missing node is `STORAGE_NOT_FOUND`. */
export async function readNode(
  reader: RecordReader,
  label: NodeLabel,
  epoch: bigint,
): Promise<TreeNode> {
  const node = await findNode(reader, label, epoch);
  if (node === undefined) {
    throw new AkdError('STORAGE_NOT_FOUND', `tree node ${label} at epoch ${epoch} not found`);
  }
  return node;
}

/**
 * Logs `node` in the transaction with its previous copy (spec 9.2 `write`): none for a new
 * node, otherwise the stored version visible at `lastEpoch - 1`. The node must not be changed
 * afterwards.
 */
export async function writeNode(tx: Transaction, node: TreeNode, isNew: boolean): Promise<void> {
  const target = node.lastEpoch > 0n ? node.lastEpoch - 1n : 0n;
  const previous = isNew ? undefined : await findNode(tx, node.label, target);
  tx.set({ kind: 'treeNode', label: node.label, latest: node, previous });
}
