/**
 * Reading tree nodes (spec 9.2): a read returns the version of a node's record visible at a
 * target epoch (its latest copy, or the previous one a reader one epoch behind needs).
 *
 * Reads answer synchronously when the record is in the transaction log or the cache (always
 * the case after a preload), and return a promise only when the database must be asked: the
 * tree code then awaits only real reads, not the tens of thousands of cached ones.
 *
 * Nodes returned are the stored, shared objects: copy one (`{ ...node }`) before changing it.
 */

import { AkdError, isAkdError, type NodeLabel } from '@akd-ts/core';
import {
  nodeAtEpoch,
  nodeKey,
  type RecordReader,
  type TreeNode,
  type TreeNodeRecord,
} from '@akd-ts/storage';

/** A value now, or later when storage has to be asked. */
export type MaybePromise<T> = T | Promise<T>;

async function findStored(
  reader: RecordReader,
  label: NodeLabel,
  epoch: bigint,
): Promise<TreeNode | undefined> {
  let record: TreeNodeRecord;
  try {
    record = await reader.get(nodeKey(label));
  } catch (e) {
    if (isAkdError(e, 'STORAGE_NOT_FOUND')) return undefined;
    throw e;
  }
  return nodeAtEpoch(record, epoch);
}

/** The version of `label` visible at `epoch`, or undefined when there is none. */
export function findNode(
  reader: RecordReader,
  label: NodeLabel,
  epoch: bigint,
): MaybePromise<TreeNode | undefined> {
  const cached = reader.peekNode(label);
  if (cached !== undefined) return nodeAtEpoch(cached, epoch);
  return findStored(reader, label, epoch);
}

function required(node: TreeNode | undefined, label: NodeLabel, epoch: bigint): TreeNode {
  if (node === undefined) {
    throw new AkdError('STORAGE_NOT_FOUND', `tree node ${label} at epoch ${epoch} not found`);
  }
  return node;
}

/** Like `findNode`, but a missing node is `STORAGE_NOT_FOUND`. */
export function readNode(
  reader: RecordReader,
  label: NodeLabel,
  epoch: bigint,
): MaybePromise<TreeNode> {
  const found = findNode(reader, label, epoch);
  return found instanceof Promise
    ? found.then((n) => required(n, label, epoch))
    : required(found, label, epoch);
}
