/**
 * Stored VRF proofs <-> the statements of vrf-proof-sql.ts: the labels and keys of a read, its
 * rows back to records, and the columns of the rows a write appends.
 */

import {
  VRF_PROOF_ROW_BYTES,
  VrfProofPicker,
  checkOwnVrfProofKeys,
  vrfProofKeyBytes,
  type UserStateAndVrfProofs,
  type ValueStateRecord,
  type VrfProofKey,
  type VrfProofRow,
} from '@akd-ts/storage';
import { byteaArray } from './array-literal.js';
import type { PgRow } from './client.js';
import { addVrfProofEntriesRow, decodeValueStateRow, decodeVrfProofRow } from './codec.js';
import type { TableNames } from './queries.js';

/**
 * The keys of one read statement, with their labels: whole labels, as every row of a label
 * must be merged with the others to tell which nonce stands.
 */
export interface VrfProofReadChunk {
  labels: Uint8Array[];
  keys: VrfProofKey[];
}

/**
 * The keys `picker` asks for, grouped by label into chunks of about `size` keys (a label's
 * keys never split; a label with more than `size` is a chunk of its own).
 */
export function vrfProofReadChunks(picker: VrfProofPicker, size: number): VrfProofReadChunk[] {
  const out: VrfProofReadChunk[] = [];
  let chunk: VrfProofReadChunk = { labels: [], keys: [] };
  for (const group of picker.groups()) {
    if (chunk.keys.length > 0 && chunk.keys.length + group.keys.length > size) {
      out.push(chunk);
      chunk = { labels: [], keys: [] };
    }
    chunk.labels.push(group.label);
    chunk.keys.push(...group.keys);
  }
  if (chunk.keys.length > 0) out.push(chunk);
  return out;
}

/** The values of a `vrfProofRead` statement: the chunk's labels and its keys' bytes. */
export function vrfProofReadValues(chunk: VrfProofReadChunk): string[] {
  return [byteaArray(chunk.labels, 32), byteaArray(chunk.keys.map(vrfProofKeyBytes), 41)];
}

/**
 * Adds the rows a `vrfProofRead` statement returned to `picker`: the older layout's rows
 * count as written before every row of `vrf_proof_rows`, whose rows come in seq order (the
 * order the picker merges them in). Chunks hold disjoint labels, so one picker takes them all.
 * @throws AkdError `STORAGE_CORRUPT` naming the table and the row's key
 */
export function addVrfProofReadRows(
  picker: VrfProofPicker,
  rows: PgRow[],
  display: TableNames,
): void {
  for (const row of rows) {
    if (row.src === 0) {
      picker.addRecord(decodeVrfProofRow(row, display.vrfProofs, display.vrfNonces));
    } else {
      const own = { label: row.key, seq: row.seq, entries: row.value };
      addVrfProofEntriesRow(picker, own, display.vrfProofRows);
    }
  }
}

/** The values of a `vrfProofInsert` statement: the rows' labels and entries. */
export function vrfProofRowValues(rows: VrfProofRow[]): string[] {
  const labels = rows.map((r) => r.label);
  const entries = rows.map((r) => r.entries);
  return [byteaArray(labels, 32), byteaArray(entries, VRF_PROOF_ROW_BYTES / 2)];
}

/**
 * The answer of a `userStateProofs` statement (queries.ts): the state its first row holds
 * (`src` 0), and the proofs among `keys(state)` that the label's rows after it hold; undefined
 * when no state matched.
 * @throws AkdError `STORAGE_CORRUPT` naming the table and the row's key; RangeError for keys
 *   of another label
 */
export function userStateProofsAnswer(
  rows: PgRow[],
  username: Uint8Array,
  keys: (state: ValueStateRecord) => VrfProofKey[],
  display: TableNames,
): UserStateAndVrfProofs | undefined {
  const first = rows[0];
  if (first === undefined || first.src !== 0) return undefined;
  const state = decodeValueStateRow(first, display.valueStates);
  const wanted = keys(state);
  checkOwnVrfProofKeys(username, wanted);
  const picker = new VrfProofPicker(wanted);
  for (let i = 1; i < rows.length; i++) {
    const row = rows[i]!;
    const own = { label: row.username, seq: row.seq, entries: row.entries };
    addVrfProofEntriesRow(picker, own, display.vrfProofRows);
  }
  return { state, proofs: picker.records() };
}
