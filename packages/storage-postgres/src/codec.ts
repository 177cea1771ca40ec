/**
 * Rows <-> records. Writes become PostgreSQL array literals, one per column, for the
 * `unnest(...)` upserts; reads are decoded strictly, because a row may have been written by
 * anything (another driver version, a hand-run script, a broken disk). A row that does not
 * decode to a valid record fails with `STORAGE_CORRUPT` naming the table, the key (hex) and
 * the column, never with a crash or a wrong record.
 */

import { AkdError, NodeLabel } from '@akd-ts/core';
import {
  NodeType,
  type AzksRecord,
  type TreeNode,
  type TreeNodeRecord,
  type ValueStateRecord,
  type VrfProofRecord,
  NONCE_BYTES,
  type VrfProofPicker,
  vrfProofKeyFromBytes,
  vrfProofRecordOf,
} from '@akd-ts/storage';
import { ArrayLiteral } from './array-literal.js';
import type { PgRow } from './client.js';

/** The largest epoch, version or count a bigint column stores (see `Database`). */
export const MAX_STORED = (1n << 63n) - 1n;
const HASH_BYTES = 32;
const LABEL_KEY_BYTES = 36;
const NODE_TYPES: ReadonlySet<number> = new Set(Object.values(NodeType));

export function hex(bytes: Uint8Array): string {
  return Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength).toString('hex');
}

/**
 * `bytes` as a plain Uint8Array over the same memory (pg hands out Buffers, whose `slice` does
 * not copy). No copy: records are immutable values, so sharing pg's buffer is safe.
 */
function view(bytes: Uint8Array): Uint8Array {
  return new Uint8Array(bytes.buffer, bytes.byteOffset, bytes.byteLength);
}

/**
 * Checks a u64 of a record before it is written: bigint columns hold up to 2^63 - 1.
 * @throws TypeError when `v` is not a bigint; RangeError naming `field` when out of range.
 */
export function checkStored(v: bigint, field: string): bigint {
  if (typeof v !== 'bigint') throw new TypeError(`${field} must be a bigint`);
  if (v < 0n || v > MAX_STORED) {
    throw new RangeError(
      `${field} = ${v} is outside 0 .. 2^63 - 1, the range the PostgreSQL driver stores`,
    );
  }
  return v;
}

/** The 36-byte storage key of a label, `be32(len) || val` (spec 9.1), as hex. */
export function labelKeyHex(label: NodeLabel): string {
  return label.len.toString(16).padStart(8, '0') + hex(label.val);
}

/** The 36-byte storage key of a label as bytes. */
export function labelKey(label: NodeLabel): Buffer {
  return Buffer.from(labelKeyHex(label), 'hex');
}

// --- writing: array literals -------------------------------------------------------------

/** Checks a node version before it is written; `which` names it only when one is wrong. */
function checkNode(record: TreeNodeRecord, which: 'latest' | 'previous'): void {
  const node = record[which]!;
  const field = () => `treeNode ${labelKeyHex(record.label)} ${which}`;
  if (typeof node.lastEpoch !== 'bigint' || node.lastEpoch < 0n || node.lastEpoch > MAX_STORED) {
    checkStored(node.lastEpoch, `${field()}.lastEpoch`);
  }
  const min = node.minDescendantEpoch;
  if (typeof min !== 'bigint' || min < 0n || min > MAX_STORED) {
    checkStored(min, `${field()}.minDescendantEpoch`);
  }
  if (!NODE_TYPES.has(node.nodeType)) {
    throw new RangeError(`${field()}.nodeType ${String(node.nodeType)} is not 1, 2 or 3`);
  }
  if (!(node.hash instanceof Uint8Array) || node.hash.length !== HASH_BYTES) {
    throw new RangeError(`${field()}.hash must be ${HASH_BYTES} bytes`);
  }
  checkChildEpoch(node.leftEpoch, node.leftChild, () => `${field()}.leftEpoch`);
  checkChildEpoch(node.rightEpoch, node.rightChild, () => `${field()}.rightEpoch`);
}

/** A child's write epoch: stored in range, and only with its child (the decoder's rule). */
function checkChildEpoch(
  epoch: bigint | undefined,
  child: NodeLabel | undefined,
  field: () => string,
): void {
  if (epoch === undefined) return;
  if (child === undefined) throw new RangeError(`${field()} is set without its child`);
  if (typeof epoch !== 'bigint' || epoch < 0n || epoch > MAX_STORED) checkStored(epoch, field());
}

/**
 * Checks what the tables cannot store or the decoder would refuse, before anything is written.
 * @throws RangeError (or TypeError) naming the record and the field.
 */
export function checkRecord(r: TreeNodeRecord | ValueStateRecord): void {
  if (r.kind === 'treeNode') {
    checkNode(r, 'latest');
    if (r.previous !== undefined) checkNode(r, 'previous');
    return;
  }
  const field = () => `valueState ${hex(r.username)}`;
  if (typeof r.epoch !== 'bigint' || r.epoch < 0n || r.epoch > MAX_STORED) {
    checkStored(r.epoch, `${field()} epoch`);
  }
  if (typeof r.version !== 'bigint' || r.version < 0n || r.version > MAX_STORED) {
    checkStored(r.version, `${field()} version`);
  }
  if (!(r.value instanceof Uint8Array)) throw new TypeError(`${field()} value must be bytes`);
}

/** The 19 column arrays of the nodes upsert (records already checked), in column order. */
export function nodeColumns(records: TreeNodeRecord[]): string[] {
  const n = records.length;
  const keys = () => new ArrayLiteral(n * 80);
  const ints = () => new ArrayLiteral(n * 8);
  const c = [keys(), ints(), ints(), keys(), ints(), keys(), keys(), keys()];
  const p = [ints(), ints(), keys(), ints(), keys(), keys(), keys()];
  // the child epochs, appended to the table after the columns above (schema version 4)
  const e = [ints(), ints(), ints(), ints()];
  for (const r of records) {
    const { latest, previous } = r;
    c[0]!.labelKey(r.label);
    c[1]!.int(latest.lastEpoch);
    c[2]!.int(latest.minDescendantEpoch);
    c[3]!.labelKey(latest.parent);
    c[4]!.int(latest.nodeType);
    c[5]!.labelKey(latest.leftChild);
    c[6]!.labelKey(latest.rightChild);
    c[7]!.bytes(latest.hash);
    p[0]!.int(previous?.lastEpoch);
    p[1]!.int(previous?.minDescendantEpoch);
    p[2]!.labelKey(previous?.parent);
    p[3]!.int(previous?.nodeType);
    p[4]!.labelKey(previous?.leftChild);
    p[5]!.labelKey(previous?.rightChild);
    p[6]!.bytes(previous?.hash);
    e[0]!.int(latest.leftEpoch);
    e[1]!.int(latest.rightEpoch);
    e[2]!.int(previous?.leftEpoch);
    e[3]!.int(previous?.rightEpoch);
  }
  return [...c, ...p, ...e].map(String);
}

/** The 6 column arrays of the value_states upsert (records already checked). */
export function valueStateColumns(records: ValueStateRecord[]): string[] {
  const n = records.length;
  const cols = [
    new ArrayLiteral(n * 40),
    new ArrayLiteral(n * 8),
    new ArrayLiteral(n * 4),
    new ArrayLiteral(n * 4),
    new ArrayLiteral(n * 70),
    new ArrayLiteral(n * 40),
  ];
  for (const r of records) {
    cols[0]!.bytes(r.username);
    cols[1]!.int(r.epoch);
    cols[2]!.int(r.version);
    cols[3]!.int(r.label.len);
    cols[4]!.bytes(r.label.val);
    cols[5]!.bytes(r.value);
  }
  return cols.map(String);
}

/** Parameters of the azks upsert. */
export function azksValues(r: AzksRecord): string[] {
  return [
    checkStored(r.latestEpoch, 'azks.latestEpoch').toString(),
    checkStored(r.numNodes, 'azks.numNodes').toString(),
  ];
}

// --- reading: strict decoding -------------------------------------------------------------

/** Reads the columns of one row; every problem names the table, the key and the column. */
class RowReader {
  constructor(
    private readonly table: string,
    /** The row's key for messages, computed only when one is needed. */
    private readonly key: () => string,
    private readonly row: PgRow,
  ) {}

  fail(column: string, problem: string): never {
    throw new AkdError(
      'STORAGE_CORRUPT',
      `corrupt row in ${this.table}, key ${this.key()}: ${column} ${problem}`,
      { field: `${this.table}.${column}` },
    );
  }

  isNull(column: string): boolean {
    return this.row[column] === null || this.row[column] === undefined;
  }

  /** A bigint column (pg returns int8 as a decimal string) in 0 .. 2^63 - 1. */
  int8(column: string): bigint {
    const v = this.row[column];
    let n: bigint | undefined;
    if (typeof v === 'string' && DECIMAL.test(v)) n = BigInt(v);
    else if (typeof v === 'number' && Number.isSafeInteger(v)) n = BigInt(v);
    else if (v === null || v === undefined) this.fail(column, 'is NULL');
    else this.fail(column, `is not an integer (${typeof v})`);
    if (n! < 0n || n! > MAX_STORED) this.fail(column, `${n} is out of range`);
    return n!;
  }

  int(column: string, allowed: (n: number) => boolean): number {
    const v = this.row[column];
    if (v === null || v === undefined) this.fail(column, 'is NULL');
    if (typeof v !== 'number' || !Number.isInteger(v) || !allowed(v)) {
      this.fail(column, `${String(v)} is out of range`);
    }
    return v;
  }

  bytes(column: string, length?: number): Uint8Array {
    const v = this.row[column];
    if (v === null || v === undefined) this.fail(column, 'is NULL');
    if (!(v instanceof Uint8Array)) this.fail(column, `is not bytea (${typeof v})`);
    if (length !== undefined && v.length !== length) {
      this.fail(column, `has ${v.length} bytes, not ${length}`);
    }
    return view(v);
  }

  /** A label stored as its 36-byte key, `be32(len) || val`. */
  label(column: string): NodeLabel {
    const key = this.bytes(column, LABEL_KEY_BYTES);
    const len = ((key[0]! << 24) | (key[1]! << 16) | (key[2]! << 8) | key[3]!) >>> 0;
    if (len > 256) this.fail(column, `has label length ${len} > 256`);
    return new NodeLabel(key.subarray(4), len);
  }

  optLabel(column: string): NodeLabel | undefined {
    return this.isNull(column) ? undefined : this.label(column);
  }

  /**
   * A child's write epoch, NULL for none: a bigint column that may be set only where the
   * child is (`child` says whether it is, `childColumn` names it).
   */
  childEpoch(
    column: string,
    child: NodeLabel | undefined,
    childColumn: string,
  ): bigint | undefined {
    if (this.isNull(column)) return undefined;
    if (child === undefined) this.fail(column, `is set while ${childColumn} is NULL`);
    return this.int8(column);
  }

  nodeType(column: string): NodeType {
    return this.int(column, isNodeType) as NodeType;
  }
}

const DECIMAL = /^-?\d{1,20}$/;
const isNodeType = (n: number) => NODE_TYPES.has(n);

/** The hex of a key column, for error messages (whatever the column holds). */
function keyText(v: unknown): string {
  return v instanceof Uint8Array ? hex(v) : String(v);
}

/** Column names of one node version, built once (not per row). */
const columnsOf = (prefix: string) => ({
  lastEpoch: `${prefix}last_epoch`,
  minDescendantEpoch: `${prefix}min_descendant_epoch`,
  parent: `${prefix}parent`,
  nodeType: `${prefix}node_type`,
  leftChild: `${prefix}left_child`,
  rightChild: `${prefix}right_child`,
  leftEpoch: `${prefix}left_epoch`,
  rightEpoch: `${prefix}right_epoch`,
  hash: `${prefix}hash`,
});
type NodeColumns = ReturnType<typeof columnsOf>;
const LATEST = columnsOf('');
const PREVIOUS = columnsOf('p_');
/** The previous copy exists iff all of these are set (spec 14.8). */
const PREVIOUS_REQUIRED = [
  PREVIOUS.lastEpoch,
  PREVIOUS.minDescendantEpoch,
  PREVIOUS.parent,
  PREVIOUS.nodeType,
  PREVIOUS.hash,
];

/** Columns set only with a previous copy, which its absence leaves NULL too. */
const PREVIOUS_OPTIONAL = [
  PREVIOUS.leftChild,
  PREVIOUS.rightChild,
  PREVIOUS.leftEpoch,
  PREVIOUS.rightEpoch,
];

function readNode(r: RowReader, label: NodeLabel, c: NodeColumns): TreeNode {
  const leftChild = r.optLabel(c.leftChild);
  const rightChild = r.optLabel(c.rightChild);
  return {
    label,
    lastEpoch: r.int8(c.lastEpoch),
    minDescendantEpoch: r.int8(c.minDescendantEpoch),
    parent: r.label(c.parent),
    nodeType: r.nodeType(c.nodeType),
    leftChild,
    rightChild,
    leftEpoch: r.childEpoch(c.leftEpoch, leftChild, c.leftChild),
    rightEpoch: r.childEpoch(c.rightEpoch, rightChild, c.rightChild),
    hash: r.bytes(c.hash, HASH_BYTES),
  };
}

/** A `nodes` row as a record (spec 14.8: a previous copy exists iff its columns are set). */
export function decodeNodeRow(row: PgRow, table: string): TreeNodeRecord {
  const r = new RowReader(table, () => keyText(row.label), row);
  const label = r.label('label');
  const latest = readNode(r, label, LATEST);
  let set = 0;
  for (const c of PREVIOUS_REQUIRED) if (!r.isNull(c)) set++;
  let previous: TreeNode | undefined;
  if (set === PREVIOUS_REQUIRED.length) {
    previous = readNode(r, label, PREVIOUS);
  } else if (set > 0 || PREVIOUS_OPTIONAL.some((c) => !r.isNull(c))) {
    r.fail('p_*', 'describe a partial previous node (some columns NULL)');
  }
  return { kind: 'treeNode', label, latest, previous };
}

/** A `value_states` row as a record. */
export function decodeValueStateRow(row: PgRow, table: string): ValueStateRecord {
  const r = new RowReader(table, () => `${keyText(row.username)} epoch ${String(row.epoch)}`, row);
  const len = r.int('node_label_len', (n) => n >= 0 && n <= 256);
  return {
    kind: 'valueState',
    username: r.bytes('username'),
    epoch: r.int8('epoch'),
    version: r.int8('version'),
    label: new NodeLabel(r.bytes('node_label_val', 32), len),
    value: r.bytes('value'),
  };
}

/** The `azks` row as a record. */
export function decodeAzksRow(row: PgRow, table: string): AzksRecord {
  const r = new RowReader(table, () => keyText(row.id), row);
  return { kind: 'azks', latestEpoch: r.int8('latest_epoch'), numNodes: r.int8('num_nodes') };
}

/** A `settings` row's value. */
export function decodeSettingRow(row: PgRow, table: string): string {
  const value = row.value;
  if (typeof value === 'string') return value;
  const r = new RowReader(table, () => JSON.stringify(row.name), row);
  return r.fail('value', value === null ? 'is NULL' : 'is not text');
}

/**
 * An `audit_blobs` row's info: (epoch, previous_hash, current_hash, size).
 * @throws AkdError `STORAGE_CORRUPT` naming the table and the epoch.
 */
export function decodeAuditBlobRow(
  row: PgRow,
  table: string,
): { epoch: bigint; previousHash: Uint8Array; currentHash: Uint8Array; size: number } {
  const r = new RowReader(table, () => `epoch=${String(row.epoch)}`, row);
  return {
    epoch: r.int8('epoch'),
    previousHash: r.bytes('previous_hash', 32),
    currentHash: r.bytes('current_hash', 32),
    size: r.int('size', (n) => n >= 0),
  };
}

/**
 * The head of an `audit_blobs` row read in pieces: its info and the bytes actually stored,
 * which must be the `size` column's.
 * @throws AkdError `STORAGE_CORRUPT` naming the table and the epoch.
 */
export function decodeAuditBlobHead(
  row: PgRow,
  table: string,
): { epoch: bigint; previousHash: Uint8Array; currentHash: Uint8Array; size: number } {
  const info = decodeAuditBlobRow(row, table);
  const r = new RowReader(table, () => `epoch=${String(row.epoch)}`, row);
  const stored = r.int('stored', (n) => n >= 0);
  if (stored !== info.size) r.fail('data', `holds ${stored} bytes where size says ${info.size}`);
  return info;
}

/**
 * One piece of an audit blob (`substring(data from ...)`).
 * @throws AkdError `STORAGE_CORRUPT` naming the table and the epoch.
 */
export function decodeAuditBlobPiece(row: PgRow, table: string, epoch: bigint): Uint8Array {
  return new RowReader(table, () => `epoch=${epoch}`, row).bytes('data');
}

/**
 * A `vrf_proofs` row: (key, value), see @akd-ts/storage vrf-proofs.ts, joined with its
 * `vrf_nonces` row (`nonced`, `nonce`), whose nonce takes the place of any inline one.
 * @throws AkdError `STORAGE_CORRUPT` naming the table (`table` or `nonceTable`) and the key.
 */
export function decodeVrfProofRow(row: PgRow, table: string, nonceTable: string): VrfProofRecord {
  const r = new RowReader(table, () => keyText(row.key), row);
  const key = r.bytes('key');
  const value = r.bytes('value');
  let record: VrfProofRecord;
  try {
    record = vrfProofRecordOf(vrfProofKeyFromBytes(key), value);
  } catch (e) {
    return r.fail('value', e instanceof Error ? e.message : String(e));
  }
  if (row.nonced === true) {
    record.nonce = new RowReader(nonceTable, () => keyText(row.key), row).bytes(
      'nonce',
      NONCE_BYTES,
    );
  }
  return record;
}

/**
 * Adds a `vrf_proof_rows` row (label, seq, entries; the entries as @akd-ts/storage
 * vrf-proof-rows.ts lays them out) to `picker`, which keeps the entries a read wants.
 * @throws AkdError `STORAGE_CORRUPT` naming the table, the label (hex) and the seq.
 */
export function addVrfProofEntriesRow(picker: VrfProofPicker, row: PgRow, table: string): void {
  const r = new RowReader(table, () => `${keyText(row.label)} seq ${String(row.seq)}`, row);
  const label = r.bytes('label');
  const entries = r.bytes('entries');
  try {
    picker.addRow(label, entries);
  } catch (e) {
    r.fail('entries', e instanceof Error ? e.message : String(e));
  }
}

/** A username listed from `value_states`. @throws AkdError `STORAGE_CORRUPT` */
export function decodeUsernameRow(row: PgRow, table: string): Uint8Array {
  return new Uint8Array(new RowReader(table, () => keyText(row.username), row).bytes('username'));
}
