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

/** A child that does not hold the version its parent records for it (spec 9.2). */
export function notAtRecordedEpoch(
  label: NodeLabel,
  epoch: bigint,
  recorded: bigint,
  record: TreeNodeRecord | undefined,
): AkdError {
  const held = record === undefined ? undefined : nodeAtEpoch(record, epoch)?.lastEpoch;
  const wanted = label.len === 0 ? 'the root is' : 'its parent records the version';
  return new AkdError(
    'STORAGE_NOT_FOUND',
    `tree node ${label} at epoch ${epoch}: ${wanted} written in epoch ${recorded}, ` +
      `the store holds ${held === undefined ? 'none' : `that of epoch ${held}`}`,
  );
}

/**
 * `readNode` of a child whose parent records the write epoch of its version (`recorded`, the
 * parent's `leftEpoch` or `rightEpoch`; undefined: no check). A cached record that lacks that
 * version was cached before a later epoch rewrote the node (a reader keeps its cache across
 * epochs): the version is read from the store by its write epoch, and cached. A store that
 * does not hold it either is `STORAGE_NOT_FOUND`.
 */
export function readChild(
  reader: RecordReader,
  label: NodeLabel,
  epoch: bigint,
  recorded: bigint | undefined,
): MaybePromise<TreeNode> {
  if (recorded === undefined) return readNode(reader, label, epoch);
  const cached = reader.peekNode(label);
  const node = cached === undefined ? undefined : nodeAtEpoch(cached, epoch);
  return node?.lastEpoch === recorded ? node : readStoredChild(reader, label, epoch, recorded);
}

/**
 * The root's version of `epoch`: a publish rewrites the root, so the root visible at a
 * published epoch was written in it, and is read by that version as any child is.
 */
export function readRoot(
  reader: RecordReader,
  root: NodeLabel,
  epoch: bigint,
): MaybePromise<TreeNode> {
  return readChild(reader, root, epoch, epoch);
}

/**
 * The version of child `label` written at `recorded`, read from the store by that epoch past
 * the cache (which then keeps it); `STORAGE_NOT_FOUND` when the store does not hold it.
 */
export async function readStoredChild(
  reader: RecordReader,
  label: NodeLabel,
  epoch: bigint,
  recorded: bigint,
): Promise<TreeNode> {
  const [record] = await reader.readNodes([label], [recorded]);
  if (record !== undefined) reader.cacheNodes([record]);
  const node = record === undefined ? undefined : nodeAtEpoch(record, epoch);
  if (node?.lastEpoch !== recorded) throw notAtRecordedEpoch(label, epoch, recorded, record);
  return node;
}
