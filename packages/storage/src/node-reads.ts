/**
 * Aligned reads of tree nodes: the records of a list of labels, position by position, which
 * is what a preload's walk needs (it places each record in the slot of the label it asked
 * for). A driver may answer them itself (`Database.batchGetNodes`); any other is asked with
 * `batchGet` and its answer matched back by key.
 */

import type { NodeLabel } from '@akd-ts/core';
import type { Database } from './database.js';
import { nodeKey, type DbRecord, type TreeNodeRecord } from './records.js';

/** The records of `labels` in `db`, aligned with them (undefined where none is stored). */
export function readNodeRecords(
  db: Database,
  labels: readonly NodeLabel[],
): Promise<(TreeNodeRecord | undefined)[]> {
  if (db.batchGetNodes !== undefined) return db.batchGetNodes(labels);
  return db.batchGet(labels.map(nodeKey)).then((found) => alignNodes(labels, found));
}

/** `found` (a `batchGet` answer, any order) placed at the positions of `labels`. */
export function alignNodes(
  labels: readonly NodeLabel[],
  found: readonly DbRecord[],
): (TreeNodeRecord | undefined)[] {
  const byKey = new Map<string, TreeNodeRecord>();
  for (const record of found) if (record.kind === 'treeNode') byKey.set(record.label.key, record);
  return labels.map((label) => byKey.get(label.key));
}
