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
  type UserVersion,
  type ValueStateRecord,
} from '@akd-ts/storage';
import type { PgRow } from './client.js';

/** The largest epoch, version or count a bigint column stores (see `Database`). */
export const MAX_STORED = (1n << 63n) - 1n;
const HASH_BYTES = 32;
const LABEL_KEY_BYTES = 36;
const NODE_TYPES: ReadonlySet<number> = new Set(Object.values(NodeType));

export function hex(bytes: Uint8Array): string {
  return Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength).toString('hex');
}

/** A fresh Uint8Array holding `bytes` (pg hands out Buffers over a shared slab). */
function own(bytes: Uint8Array): Uint8Array {
  return new Uint8Array(bytes);
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

/** A bytea element of an array literal (`\\x` escaped for the array syntax) or NULL. */
function byteaElement(hexText: string | undefined): string {
  return hexText === undefined ? 'NULL' : '\\\\x' + hexText;
}

function literal(elements: string[]): string {
  return '{' + elements.join(',') + '}';
}

function checkNode(node: TreeNode, field: string): void {
  checkStored(node.lastEpoch, `${field}.lastEpoch`);
  checkStored(node.minDescendantEpoch, `${field}.minDescendantEpoch`);
  if (!NODE_TYPES.has(node.nodeType)) {
    throw new RangeError(`${field}.nodeType ${String(node.nodeType)} is not 1, 2 or 3`);
  }
  if (!(node.hash instanceof Uint8Array) || node.hash.length !== HASH_BYTES) {
    throw new RangeError(`${field}.hash must be ${HASH_BYTES} bytes`);
  }
}

/** The 15 column arrays of the nodes upsert, in the column order of `NODE_COLUMNS`. */
export function nodeColumns(records: TreeNodeRecord[]): string[] {
  const cols: string[][] = Array.from({ length: 15 }, () => new Array<string>(records.length));
  records.forEach((r, i) => {
    const key = labelKeyHex(r.label);
    checkNode(r.latest, `treeNode ${key} latest`);
    const n = r.latest;
    const p = r.previous;
    if (p !== undefined) checkNode(p, `treeNode ${key} previous`);
    const values: string[] = [
      byteaElement(key),
      n.lastEpoch.toString(),
      n.minDescendantEpoch.toString(),
      byteaElement(labelKeyHex(n.parent)),
      String(n.nodeType),
      byteaElement(n.leftChild && labelKeyHex(n.leftChild)),
      byteaElement(n.rightChild && labelKeyHex(n.rightChild)),
      byteaElement(hex(n.hash)),
      p ? p.lastEpoch.toString() : 'NULL',
      p ? p.minDescendantEpoch.toString() : 'NULL',
      byteaElement(p && labelKeyHex(p.parent)),
      p ? String(p.nodeType) : 'NULL',
      byteaElement(p?.leftChild && labelKeyHex(p.leftChild)),
      byteaElement(p?.rightChild && labelKeyHex(p.rightChild)),
      byteaElement(p && hex(p.hash)),
    ];
    for (let c = 0; c < 15; c++) cols[c]![i] = values[c]!;
  });
  return cols.map(literal);
}

/** The 6 column arrays of the value_states upsert. */
export function valueStateColumns(records: ValueStateRecord[]): string[] {
  const cols: string[][] = Array.from({ length: 6 }, () => new Array<string>(records.length));
  records.forEach((r, i) => {
    const field = `valueState ${hex(r.username)}`;
    checkStored(r.epoch, `${field} epoch`);
    checkStored(r.version, `${field} version`);
    if (!(r.value instanceof Uint8Array)) throw new TypeError(`${field} value must be bytes`);
    cols[0]![i] = byteaElement(hex(r.username));
    cols[1]![i] = r.epoch.toString();
    cols[2]![i] = r.version.toString();
    cols[3]![i] = String(r.label.len);
    cols[4]![i] = byteaElement(hex(r.label.val));
    cols[5]![i] = byteaElement(hex(r.value));
  });
  return cols.map(literal);
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
    private readonly key: string,
    private readonly row: PgRow,
  ) {}

  fail(column: string, problem: string): never {
    throw new AkdError(
      'STORAGE_CORRUPT',
      `corrupt row in ${this.table}, key ${this.key}: ${column} ${problem}`,
      { field: `${this.table}.${column}` },
    );
  }

  isNull(column: string): boolean {
    return this.row[column] === null || this.row[column] === undefined;
  }

  int8(column: string): bigint {
    const v = this.row[column];
    let n: bigint | undefined;
    if (typeof v === 'string' && /^-?\d{1,20}$/.test(v)) n = BigInt(v);
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
    return own(v);
  }

  /** A label stored as its 36-byte key. */
  label(column: string): NodeLabel {
    const key = this.bytes(column, LABEL_KEY_BYTES);
    const len = new DataView(key.buffer).getUint32(0, false);
    if (len > 256) this.fail(column, `has label length ${len} > 256`);
    return new NodeLabel(key.subarray(4), len);
  }

  optLabel(column: string): NodeLabel | undefined {
    return this.isNull(column) ? undefined : this.label(column);
  }

  nodeType(column: string): NodeType {
    return this.int(column, (n) => NODE_TYPES.has(n)) as NodeType;
  }
}

/** The hex of a key column, for error messages (whatever the column holds). */
function keyText(v: unknown): string {
  return v instanceof Uint8Array ? hex(v) : String(v);
}

const PREVIOUS_REQUIRED = [
  'p_last_epoch',
  'p_min_descendant_epoch',
  'p_parent',
  'p_node_type',
  'p_hash',
];

function readNode(r: RowReader, label: NodeLabel, prefix: string): TreeNode {
  return {
    label,
    lastEpoch: r.int8(`${prefix}last_epoch`),
    minDescendantEpoch: r.int8(`${prefix}min_descendant_epoch`),
    parent: r.label(`${prefix}parent`),
    nodeType: r.nodeType(`${prefix}node_type`),
    leftChild: r.optLabel(`${prefix}left_child`),
    rightChild: r.optLabel(`${prefix}right_child`),
    hash: r.bytes(`${prefix}hash`, HASH_BYTES),
  };
}

/** A `nodes` row as a record (spec 14.8: a previous copy exists iff its columns are set). */
export function decodeNodeRow(row: PgRow, table: string): TreeNodeRecord {
  const r = new RowReader(table, keyText(row.label), row);
  const label = r.label('label');
  const latest = readNode(r, label, '');
  const set = PREVIOUS_REQUIRED.filter((c) => !r.isNull(c)).length;
  let previous: TreeNode | undefined;
  if (set === PREVIOUS_REQUIRED.length) {
    previous = readNode(r, label, 'p_');
  } else if (set > 0 || !r.isNull('p_left_child') || !r.isNull('p_right_child')) {
    r.fail('p_*', 'describe a partial previous node (some columns NULL)');
  }
  return { kind: 'treeNode', label, latest, previous };
}

/** A `value_states` row as a record. */
export function decodeValueStateRow(row: PgRow, table: string): ValueStateRecord {
  const r = new RowReader(table, `${keyText(row.username)} epoch ${String(row.epoch)}`, row);
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

/** A `getUserStateVersions` row: the user, and the chosen state's version and value. */
export function decodeUserVersionRow(row: PgRow, table: string): UserVersion {
  const r = new RowReader(table, `${keyText(row.username)} epoch ${String(row.epoch)}`, row);
  return { username: r.bytes('username'), version: r.int8('version'), value: r.bytes('value') };
}

/** The `azks` row as a record. */
export function decodeAzksRow(row: PgRow, table: string): AzksRecord {
  const r = new RowReader(table, keyText(row.id), row);
  return { kind: 'azks', latestEpoch: r.int8('latest_epoch'), numNodes: r.int8('num_nodes') };
}

/** A `settings` row's value. */
export function decodeSettingRow(row: PgRow, table: string): string {
  const value = row.value;
  if (typeof value === 'string') return value;
  const r = new RowReader(table, JSON.stringify(row.name), row);
  return r.fail('value', value === null ? 'is NULL' : 'is not text');
}
