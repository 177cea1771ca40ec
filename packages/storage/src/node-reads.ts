/**
 * Aligned reads of tree nodes: the records of a list of labels, position by position, which
 * is what a preload's walk needs (it places each record in the slot of the label it asked
 * for). A driver may answer them itself (`Database.batchGetNodes`); any other is asked with
 * `batchGet` and its answer matched back by key.
 */

import { NodeLabel } from '@akd-ts/core';
import type { Database, NodeRecordBytes } from './database.js';
import {
  ByteReader,
  ByteWriter,
  LABEL_BYTES,
  RECORD_KIND,
  readRecord,
  treeNodeBodyLength,
  writeRecord,
} from './record-codec.js';
import { nodeKey, type DbRecord, type TreeNodeRecord } from './records.js';

/** The records of `labels` in `db`, aligned with them (undefined where none is stored). */
export function readNodeRecords(
  db: Database,
  labels: readonly NodeLabel[],
): Promise<(TreeNodeRecord | undefined)[]> {
  if (db.batchGetNodes !== undefined) return db.batchGetNodes(labels);
  return db.batchGet(labels.map(nodeKey)).then((found) => alignNodes(labels, found));
}

/**
 * The tree-node records a walk reads: the versions of `labels` written in `epochs` (aligned)
 * from a store of versions, which has no other way to find them; the records of `labels` by
 * label from a store of records (`readNodeRecords`: their previous copies are what a commit
 * keeps for a node it rewrites only for a new parent), which the caller checks for the
 * version it wanted. A store that answers those reads in bytes is asked for bytes, decoded
 * here: SQLite writes each record itself, and 13 nodes read in 119 us that way against 169 us
 * as rows of nineteen columns decoded into objects (bench/RESULTS.md, storage-sqlite).
 */
export async function readWalkNodes(
  db: Database,
  labels: readonly NodeLabel[],
  epochs: readonly bigint[] | undefined,
): Promise<(TreeNodeRecord | undefined)[]> {
  const versions = db.nodeLayout === 'versions';
  // a store of versions answers by label with walks from the root, in bytes or not
  if (readsNodeBytes(db) && (epochs !== undefined || !versions)) {
    const asked = codecLabelBytes(labels);
    const byVersion = epochs === undefined ? undefined : BigUint64Array.from(epochs);
    return recordsOfBytes(await readWalkNodeBytes(db, asked, byVersion));
  }
  if (epochs !== undefined && versions) return db.batchGetNodeVersions!(labels, epochs);
  return readNodeRecords(db, labels);
}

/** `labels` in the record codec's form: `batchGetNodeBytes`' argument. */
export function codecLabelBytes(labels: readonly NodeLabel[]): Uint8Array {
  const w = new ByteWriter(LABEL_BYTES * labels.length + 1);
  for (const label of labels) w.label(label);
  return w.written();
}

/**
 * The records of an answer in bytes, aligned with the labels asked for (undefined where none
 * is stored), each decoded from a copy of its own bytes: the answer's buffers may be the
 * store's memory, and a record viewing a statement's joined buffer would keep all of it alive.
 * @throws RangeError where a record's bytes do not frame as the codec's
 */
export function recordsOfBytes(answer: NodeRecordBytes): (TreeNodeRecord | undefined)[] {
  const { buffers, buffer, starts } = answer;
  const out: (TreeNodeRecord | undefined)[] = [];
  for (let i = 0; i < buffer.length; i++) {
    const b = buffer[i]!;
    if (b < 0) {
      out.push(undefined);
      continue;
    }
    const bytes = buffers[b]!;
    const start = starts[i]!;
    if (bytes[start] !== RECORD_KIND.treeNode) throw new RangeError('not a tree-node record');
    const own = bytes.slice(start, start + 1 + treeNodeBodyLength(bytes, start + 1));
    out.push(readRecord(new ByteReader(own)) as TreeNodeRecord);
  }
  return out;
}

/**
 * Whether `db` answers the tree-node reads a walk makes in bytes: by version where it keeps
 * versions (`batchGetNodeVersionBytes`), by label otherwise (`batchGetNodeBytes`).
 */
export function readsNodeBytes(db: Database): boolean {
  return db.nodeLayout === 'versions'
    ? db.batchGetNodeVersionBytes !== undefined
    : db.batchGetNodeBytes !== undefined;
}

/**
 * `readWalkNodes` in bytes (`readsNodeBytes` must hold): `labels` in the record codec's form.
 * @throws RangeError where a store of versions is not given `epochs`
 */
export function readWalkNodeBytes(
  db: Database,
  labels: Uint8Array,
  epochs: BigUint64Array | undefined,
): Promise<NodeRecordBytes> {
  if (db.nodeLayout !== 'versions') return db.batchGetNodeBytes!(labels);
  if (epochs === undefined) throw new RangeError('a store of versions reads nodes by version');
  return db.batchGetNodeVersionBytes!(labels, epochs);
}

/** `record`'s copy written in `epoch` as a record of its own, or undefined. */
export function copyOfEpoch(record: TreeNodeRecord, epoch: bigint): TreeNodeRecord | undefined {
  const { latest, previous } = record;
  const version =
    latest.lastEpoch === epoch ? latest : previous?.lastEpoch === epoch ? previous : undefined;
  return version === undefined
    ? undefined
    : { kind: 'treeNode', label: record.label, latest: version, previous: undefined };
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

/**
 * The answer of `batchGetNodeBytes` for `count` labels from what a driver's statements found,
 * for a driver whose server writes each record: per statement (one per chunk of `size`
 * labels), rows of a position within the chunk (from 1) and that label's record as a byte
 * string. A statement's records are joined into one buffer. Undefined where a position is
 * not in its chunk or a record is not exactly one tree-node record as the codec reads it
 * (one the server wrote from a row it should not have): the driver then reads the rows
 * through its own decoder, which names what is wrong.
 */
export function foundRecordsAnswer(
  count: number,
  size: number,
  statements: readonly (readonly (readonly [unknown, unknown])[])[],
): NodeRecordBytes | undefined {
  const buffers: Uint8Array[] = [];
  const buffer = new Int32Array(count).fill(-1);
  const starts = new Int32Array(count).fill(-1);
  for (let q = 0; q < statements.length; q++) {
    const rows = statements[q]!;
    if (rows.length === 0) continue;
    const end = Math.min(count, (q + 1) * size);
    let at = 0;
    for (const [i, record] of rows) {
      const position = q * size + (i as number) - 1;
      if (!Number.isInteger(i) || position < q * size || position >= end) return undefined;
      if (!(record instanceof Uint8Array) || !isTreeNodeRecord(record)) return undefined;
      buffer[position] = buffers.length;
      starts[position] = at;
      at += record.length;
    }
    // in the order their starts were given
    const joined = new Uint8Array(at);
    let o = 0;
    for (const [, record] of rows) {
      joined.set(record as Uint8Array, o);
      o += (record as Uint8Array).length;
    }
    buffers.push(joined);
  }
  return { buffers, buffer, starts };
}

/**
 * `foundRecordsAnswer` for a driver whose server joins each statement's records into one byte
 * string: per statement, `be32(position within the chunk, from 1) || record` for each label
 * found, one after another (undefined or empty where none was). The answer's buffers are
 * views of the joined bytes: no per-row object or allocation, which for a preload of
 * hundreds of thousands of nodes was most of what its reads allocated. Undefined where a
 * position is not in its chunk or a record does not frame as one tree-node record, and where
 * the bytes end inside a record: the driver then reads the rows through its own decoder.
 */
export function joinedRecordsAnswer(
  count: number,
  size: number,
  statements: readonly (Uint8Array | undefined)[],
): NodeRecordBytes | undefined {
  const buffers: Uint8Array[] = [];
  const buffer = new Int32Array(count).fill(-1);
  const starts = new Int32Array(count).fill(-1);
  for (let q = 0; q < statements.length; q++) {
    const joined = statements[q];
    if (joined === undefined || joined.length === 0) continue;
    const end = Math.min(count, (q + 1) * size);
    let at = 0;
    while (at < joined.length) {
      if (at + 5 > joined.length) return undefined;
      const i =
        ((joined[at]! << 24) | (joined[at + 1]! << 16) | (joined[at + 2]! << 8)) + joined[at + 3]!;
      const position = q * size + i - 1;
      if (i < 1 || position >= end || joined[at + 4] !== RECORD_KIND.treeNode) return undefined;
      let length: number;
      try {
        length = 1 + treeNodeBodyLength(joined, at + 5);
      } catch (e) {
        if (e instanceof RangeError) return undefined;
        throw e;
      }
      buffer[position] = buffers.length;
      starts[position] = at + 4;
      at += 4 + length;
    }
    // a plain view (a driver's Buffer would make the walk's copies, `slice`, views)
    buffers.push(new Uint8Array(joined.buffer, joined.byteOffset, joined.byteLength));
  }
  return { buffers, buffer, starts };
}

/** Whether `bytes` is one tree-node record as the codec reads it, and nothing more. */
function isTreeNodeRecord(bytes: Uint8Array): boolean {
  try {
    return bytes[0] === RECORD_KIND.treeNode && 1 + treeNodeBodyLength(bytes, 1) === bytes.length;
  } catch (e) {
    if (e instanceof RangeError) return false;
    throw e;
  }
}
