/**
 * Audit blobs stored in parts (schema version 5, schema.sql): the `audit_blobs` row holds the
 * first part and the blob's size, `audit_blob_parts` the others, numbered from 1. A blob is
 * tens of megabytes for an epoch of 100,000 updates and grows with the epoch; bound whole to
 * one statement, SQLite copies it twice (the parameter, then the record it builds), which was
 * the writer's peak memory. In parts, each statement copies 1 MiB. Reading joins the parts
 * into one buffer of the blob's size, a part at a time.
 */

import { corruptRow } from './errors.js';

/** Bytes in each part but the last. */
export const AUDIT_BLOB_PART_BYTES = 1 << 20;

/**
 * `data` cut into parts: views, not copies.
 * @example blobParts(new Uint8Array(2_500_000)).map((p) => p.length) // [1048576, 1048576, 402848]
 */
export function blobParts(data: Uint8Array): Uint8Array[] {
  const parts = [data.subarray(0, AUDIT_BLOB_PART_BYTES)];
  for (let at = AUDIT_BLOB_PART_BYTES; at < data.length; at += AUDIT_BLOB_PART_BYTES) {
    parts.push(data.subarray(at, at + AUDIT_BLOB_PART_BYTES));
  }
  return parts;
}

/** The statements a connection reads blobs with (SELECT_AUDIT_BLOB_SQL, ..._PARTS_SQL). */
export interface BlobStatements {
  /** epoch, previous_hash, current_hash, data (the first part), size; raw rows. */
  row: { get(epoch: bigint): unknown };
  /** part, data of one epoch, by part; raw rows. */
  parts: { iterate(epoch: bigint): Iterable<unknown> };
}

/**
 * The row of the audit blob of `epoch` as (epoch, previous_hash, current_hash, data) with its
 * whole data, or undefined when none is stored.
 * @throws AkdError `STORAGE_CORRUPT` when the parts are not 1, 2, ... each full but the last,
 * adding up to the size
 */
export function readAuditBlobRow(read: BlobStatements, epoch: bigint): unknown[] | undefined {
  const row = read.row.get(epoch) as unknown[] | undefined;
  if (row === undefined) return undefined;
  const [, , , first, size] = row;
  // a blob of one part (every blob written before parts) is the row itself
  if (!(first instanceof Uint8Array) || typeof size !== 'bigint' || BigInt(first.length) === size) {
    return row.slice(0, 4);
  }
  const bad = (problem: string) => corruptRow('audit_blob_parts', `epoch=${epoch}`, problem);
  if (
    size < 0n ||
    size > BigInt(Number.MAX_SAFE_INTEGER) ||
    first.length !== AUDIT_BLOB_PART_BYTES
  ) {
    throw bad(`the blob has ${size} bytes and its first part ${first.length}`);
  }
  const data = new Uint8Array(Number(size));
  data.set(first);
  let at = first.length;
  let expected = 1n;
  for (const [part, bytes] of read.parts.iterate(epoch) as Iterable<[bigint, unknown]>) {
    if (part !== expected || !(bytes instanceof Uint8Array)) {
      throw bad(`part ${part} where part ${expected} was expected`);
    }
    const full = at + bytes.length < data.length;
    if (at + bytes.length > data.length || (full && bytes.length !== AUDIT_BLOB_PART_BYTES)) {
      throw bad(`part ${part} has ${bytes.length} bytes at offset ${at} of ${size}`);
    }
    data.set(bytes, at);
    at += bytes.length;
    expected++;
  }
  if (at !== data.length) throw bad(`the parts hold ${at} of the blob's ${size} bytes`);
  return [row[0], row[1], row[2], data];
}
