/**
 * Tree-node reads answered in bytes (`Database.batchGetNodeBytes`): the statements of a batch
 * (node-bytes-sql.ts: the server writes the records) and their answer. Every record is
 * measured here as the codec reads it (storage's `skipRecord`), so a row the server wrote in
 * a shape the walk would misread never reaches it, and a statement's records are joined into
 * one buffer for the walk.
 */

import {
  LABEL_BYTES,
  RECORD_KIND,
  treeNodeBodyLength,
  type NodeRecordBytes,
} from '@akd-ts/storage';
import type { PgQuery, PgRow } from './client.js';

/**
 * The statements reading the `count` codec labels of `labels`, `size` a statement: each
 * takes its labels as they are, one bytea parameter (node-bytes-sql.ts).
 */
export function nodeBytesQueries(
  statement: PgQuery,
  labels: Uint8Array,
  count: number,
  size: number,
): PgQuery[] {
  const queries: PgQuery[] = [];
  for (let from = 0; from < count; from += size) {
    const to = Math.min(count, from + size);
    const chunk = Buffer.from(
      labels.buffer,
      labels.byteOffset + LABEL_BYTES * from,
      LABEL_BYTES * (to - from),
    );
    queries.push({ ...statement, values: [chunk] });
  }
  return queries;
}

/**
 * The answer of a batch of `count` labels from the rows of its statements (`size` labels
 * each: a position from 1 and a record per node found), a buffer per statement; or undefined
 * where a row has no record (one the server does not write) or a record that does not
 * measure as the codec's: the caller then reads rows instead.
 */
export function nodeBytesAnswer(
  results: PgRow[][],
  count: number,
  size: number,
): NodeRecordBytes | undefined {
  const buffers: Uint8Array[] = [];
  const buffer = new Int32Array(count).fill(-1);
  const starts = new Int32Array(count).fill(-1);
  for (let q = 0; q < results.length; q++) {
    const rows = results[q]!;
    if (rows.length === 0) continue;
    const records: Uint8Array[] = [];
    let at = 0;
    for (const { i, rec } of rows) {
      const position = q * size + (i as number) - 1;
      const inChunk = Number.isInteger(i) && position >= q * size && position < (q + 1) * size;
      if (!inChunk || position >= count || !(rec instanceof Uint8Array)) return undefined;
      if (!measures(rec)) return undefined;
      buffer[position] = buffers.length;
      starts[position] = at;
      records.push(rec);
      at += rec.length;
    }
    buffers.push(Buffer.concat(records, at));
  }
  return { buffers, buffer, starts };
}

/** Whether `bytes` is one tree-node record as the codec reads it, and nothing more. */
function measures(bytes: Uint8Array): boolean {
  try {
    return bytes[0] === RECORD_KIND.treeNode && 1 + treeNodeBodyLength(bytes, 1) === bytes.length;
  } catch (e) {
    if (e instanceof RangeError) return false;
    throw e;
  }
}
