/**
 * Tree-node reads answered in bytes (`Database.batchGetNodeBytes`): the statements of a batch
 * (node-bytes-sql.ts: the server writes the records) and their answer, in which every record
 * is measured as the codec reads it (storage's `foundRecordsAnswer`), so a row the server
 * wrote in a shape the walk would misread never reaches it.
 */

import { LABEL_BYTES, foundRecordsAnswer, type NodeRecordBytes } from '@akd-ts/storage';
import type { PgQuery, PgRow } from './client.js';

/**
 * The statements reading the `count` codec labels of `labels`, `size` a statement: each
 * takes its labels as they are, one bytea parameter (node-bytes-sql.ts), then whatever
 * `more` gives for its labels [from, to) (a read by version: their epochs).
 */
export function nodeBytesQueries(
  statement: PgQuery,
  labels: Uint8Array,
  count: number,
  size: number,
  more: (from: number, to: number) => unknown[] = () => [],
): PgQuery[] {
  const queries: PgQuery[] = [];
  for (let from = 0; from < count; from += size) {
    const to = Math.min(count, from + size);
    const chunk = Buffer.from(
      labels.buffer,
      labels.byteOffset + LABEL_BYTES * from,
      LABEL_BYTES * (to - from),
    );
    queries.push({ ...statement, values: [chunk, ...more(from, to)] });
  }
  return queries;
}

/**
 * The answer of a batch of `count` labels from the rows of its statements (`size` labels
 * each; storage's `foundRecordsAnswer`), or undefined where the rows must be read instead.
 */
export function nodeBytesAnswer(
  results: PgRow[][],
  count: number,
  size: number,
): NodeRecordBytes | undefined {
  return foundRecordsAnswer(
    count,
    size,
    results.map((rows) => rows.map((row) => [row['i'], row['rec']] as const)),
  );
}
