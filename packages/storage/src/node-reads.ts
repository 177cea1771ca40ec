/**
 * Aligned reads of tree nodes: the records of a list of labels, position by position, which
 * is what a preload's walk needs (it places each record in the slot of the label it asked
 * for). A driver may answer them itself (`Database.batchGetNodes`); any other is asked with
 * `batchGet` and its answer matched back by key.
 */

import { NodeLabel } from '@akd-ts/core';
import type { Database, NodeRecordBytes } from './database.js';
import { ByteWriter, LABEL_BYTES, writeRecord } from './record-codec.js';
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

/**
 * How many labels `labels` holds in the record codec's form (`batchGetNodeBytes`' argument).
 * @throws RangeError where its length is not a multiple of 34
 */
export function codecLabelCount(labels: Uint8Array): number {
  const count = labels.length / LABEL_BYTES;
  if (!Number.isInteger(count)) {
    throw new RangeError(`labels are ${LABEL_BYTES} bytes each, not ${labels.length} in all`);
  }
  return count;
}

/** The labels of `batchGetNodeBytes`' argument as label objects. */
export function codecLabels(labels: Uint8Array): NodeLabel[] {
  const out: NodeLabel[] = [];
  const end = codecLabelCount(labels) * LABEL_BYTES;
  for (let at = 0; at < end; at += LABEL_BYTES) {
    out.push(new NodeLabel(labels.slice(at + 2, at + 34), (labels[at]! << 8) | labels[at + 1]!));
  }
  return out;
}

/** Aligned records (`readNodeRecords`' answer) as `batchGetNodeBytes` answers: one buffer. */
export function nodeRecordBytes(records: readonly (TreeNodeRecord | undefined)[]): NodeRecordBytes {
  const w = new ByteWriter(256 * records.length + 1);
  const buffer = new Int32Array(records.length).fill(-1);
  const starts = new Int32Array(records.length).fill(-1);
  records.forEach((record, i) => {
    if (record === undefined) return;
    buffer[i] = 0;
    starts[i] = w.at;
    writeRecord(w, record);
  });
  return { buffers: [w.done()], buffer, starts };
}
