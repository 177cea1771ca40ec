/**
 * Records <-> table rows (schema.sql). Encoding checks what SQLite cannot hold (integers above
 * 2^63 - 1) and throws the caller's RangeError before anything is written; decoding checks
 * every column of every row it is given and turns anything that is not a valid record (a wrong
 * blob length, a label longer than 256 bits, an unknown node type, a NULL, a negative or
 * non-integer number, a child's write epoch without the child) into `STORAGE_CORRUPT` naming
 * the table and the row's key, so that a damaged or foreign file never crashes the reader and
 * never yields a wrong record.
 *
 * Rows are arrays in the column order of the `*_COLUMNS` lists (statements run in raw mode).
 */

import { NodeLabel, toHex } from '@akd-ts/core';
import {
  NONCE_BYTES,
  NodeType,
  type AzksRecord,
  type TreeNode,
  type TreeNodeRecord,
  type ValueStateRecord,
  type VrfProofRecord,
  type VrfProofPicker,
  vrfProofKeyFromBytes,
  vrfProofRecordOf,
} from '@akd-ts/storage';
import { corruptRow } from './errors.js';

/** The largest integer a signed 64-bit INTEGER column holds (see `Database`). */
export const MAX_STORED_INTEGER = (1n << 63n) - 1n;

/**
 * The columns of one node version, in the order the row codec reads them: the previous copy's
 * are the same with a `p_` prefix. A child's write epoch follows the children (schema.sql
 * puts those columns last, where version 6 added them).
 */
const NODE_VERSION_COLUMNS = [
  'last_epoch',
  'min_descendant_epoch',
  'parent',
  'node_type',
  'left_child',
  'right_child',
  'left_epoch',
  'right_epoch',
  'hash',
] as const;
/** Columns of one node version in a row (NODE_VERSION_COLUMNS). */
const NODE_VERSION_WIDTH = NODE_VERSION_COLUMNS.length;
/** Where the latest and the previous version's columns begin in a `nodes` row. */
const LATEST_AT = 1;
const PREVIOUS_AT = LATEST_AT + NODE_VERSION_WIDTH;

/** A `nodes` row as statements name its columns: the label, the latest version, the previous. */
export const NODE_COLUMNS: readonly string[] = [
  'label',
  ...NODE_VERSION_COLUMNS,
  ...NODE_VERSION_COLUMNS.map((c) => `p_${c}`),
];
export const VALUE_STATE_COLUMNS = ['username', 'epoch', 'version', 'node_label', 'value'] as const;
export const AZKS_COLUMNS = ['id', 'latest_epoch', 'num_nodes'] as const;

/** A row as better-sqlite3 returns it in raw mode. */
export type Row = readonly unknown[];

// ---- encoding ---------------------------------------------------------------------------

/** Checks a u64 field fits the store. @throws TypeError / RangeError naming `field`. */
export function storedInteger(value: bigint, field: string): bigint {
  if (typeof value !== 'bigint') throw new TypeError(`${field} must be a bigint`);
  if (value < 0n || value > MAX_STORED_INTEGER) {
    throw new RangeError(`${field} = ${value} is outside 0 ..= 2^63 - 1, the range SQLite stores`);
  }
  return value;
}

function hashBytes(hash: Uint8Array, field: string): Uint8Array {
  if (!(hash instanceof Uint8Array) || hash.length !== 32) {
    throw new RangeError(`${field} must be 32 bytes`);
  }
  return hash;
}

function nodeTypeCode(type: NodeType, field: string): number {
  if (type !== NodeType.Leaf && type !== NodeType.Root && type !== NodeType.Interior) {
    throw new RangeError(`${field} = ${String(type)} is not a node type`);
  }
  return type;
}

/** `be32(len) || val`, the 36-byte label layout of spec 3.1, as stored in every label column. */
export function labelBytes(label: NodeLabel): Uint8Array {
  return label.toBytes();
}

/**
 * A child's write epoch column: NULL when undefined. An epoch without its child would be a
 * row the decoder rejects, so it is refused before anything is written.
 */
function childEpoch(
  epoch: bigint | undefined,
  child: NodeLabel | undefined,
  field: string,
): bigint | null {
  if (epoch === undefined) return null;
  if (child === undefined) throw new RangeError(`${field} is set but the node has no such child`);
  return storedInteger(epoch, field);
}

/** Writes the columns of one node version (NODE_VERSION_COLUMNS, or NULLs) into `out` from `at`. */
function setNode(out: unknown[], at: number, n: TreeNode | undefined, field: string): void {
  if (n === undefined) {
    for (let i = 0; i < NODE_VERSION_WIDTH; i++) out[at + i] = null;
    return;
  }
  out[at] = storedInteger(n.lastEpoch, `${field}.lastEpoch`);
  out[at + 1] = storedInteger(n.minDescendantEpoch, `${field}.minDescendantEpoch`);
  out[at + 2] = labelBytes(n.parent);
  out[at + 3] = nodeTypeCode(n.nodeType, `${field}.nodeType`);
  out[at + 4] = n.leftChild === undefined ? null : labelBytes(n.leftChild);
  out[at + 5] = n.rightChild === undefined ? null : labelBytes(n.rightChild);
  out[at + 6] = childEpoch(n.leftEpoch, n.leftChild, `${field}.leftEpoch`);
  out[at + 7] = childEpoch(n.rightEpoch, n.rightChild, `${field}.rightEpoch`);
  out[at + 8] = hashBytes(n.hash, `${field}.hash`);
}

/**
 * Writes a node record's row (NODE_COLUMNS) into `out` from index `at`: the parameters of a
 * multi-row upsert, filled in place.
 */
export function setNodeRow(out: unknown[], at: number, r: TreeNodeRecord): void {
  out[at] = labelBytes(r.label);
  setNode(out, at + LATEST_AT, r.latest, 'treeNode.latest');
  setNode(out, at + PREVIOUS_AT, r.previous, 'treeNode.previous');
}

/** Writes a value state's row (VALUE_STATE_COLUMNS) into `out` from index `at`. */
export function setValueStateRow(out: unknown[], at: number, r: ValueStateRecord): void {
  if (!(r.username instanceof Uint8Array) || !(r.value instanceof Uint8Array)) {
    throw new TypeError('valueState.username and valueState.value must be Uint8Arrays');
  }
  out[at] = r.username;
  out[at + 1] = storedInteger(r.epoch, 'valueState.epoch');
  out[at + 2] = storedInteger(r.version, 'valueState.version');
  out[at + 3] = labelBytes(r.label);
  out[at + 4] = r.value;
}

/** The AZKS row's parameters (AZKS_COLUMNS). */
export function azksRow(r: AzksRecord): unknown[] {
  return [
    1,
    storedInteger(r.latestEpoch, 'azks.latestEpoch'),
    storedInteger(r.numNodes, 'azks.numNodes'),
  ];
}

// ---- decoding ---------------------------------------------------------------------------

/**
 * Names a row in errors: the table, and its key, written out only when an error needs it (a
 * lookup decodes tens of rows, and each key's hex was built for nothing).
 */
class At {
  constructor(
    readonly table: string,
    private readonly name: () => string,
  ) {}

  get key(): string {
    return this.name();
  }
}

/** A key column for error messages: hex for blobs, decimal for integers. */
function keyPart(v: unknown): string {
  if (v instanceof Uint8Array) return toHex(v);
  return typeof v === 'bigint' ? String(v) : describe(v);
}

function describe(v: unknown): string {
  if (v === null) return 'NULL';
  if (v instanceof Uint8Array) return `a ${v.length}-byte blob`;
  return typeof v === 'bigint' ? `the integer ${v}` : `a ${typeof v}`;
}

function readInteger(v: unknown, at: At, column: string): bigint {
  if (typeof v === 'bigint' && v >= 0n) return v;
  throw corruptRow(
    at.table,
    at.key,
    `${column} is ${describe(v)}, not an integer in 0 ..= 2^63 - 1`,
  );
}

/**
 * One allocation for all the blobs of a row. The driver returns each blob column in a buffer
 * of its own, and every buffer costs a native allocation and bookkeeping several times its
 * 32 or 36 bytes; a cached node record (up to nine such columns) then held about 2 KB of
 * memory for 400 bytes of fields. The row's blobs are copied into one buffer instead, and
 * the record's fields are views of it (they live and die together with the record).
 */
class RowBytes {
  #bytes: Uint8Array;
  #at = 0;

  constructor(row: Row, columns: readonly number[]) {
    let size = 0;
    for (const i of columns) {
      const v = row[i];
      if (v instanceof Uint8Array) size += v.length;
    }
    this.#bytes = new Uint8Array(size);
  }

  /** A copy of `v` in the row's buffer. */
  take(v: Uint8Array): Uint8Array {
    const out = this.#bytes.subarray(this.#at, this.#at + v.length);
    out.set(v);
    this.#at += v.length;
    return out;
  }
}

function readBlob(
  v: unknown,
  at: At,
  column: string,
  length?: number,
  into?: RowBytes,
): Uint8Array {
  if (v instanceof Uint8Array && (length === undefined || v.length === length)) {
    if (into !== undefined) return into.take(v);
    // a plain Uint8Array view: records hold Uint8Arrays, not Node Buffers
    return new Uint8Array(v.buffer, v.byteOffset, v.length);
  }
  const want = length === undefined ? 'a blob' : `a ${length}-byte blob`;
  throw corruptRow(at.table, at.key, `${column} is ${describe(v)}, not ${want}`);
}

function readLabel(v: unknown, at: At, column: string, into?: RowBytes): NodeLabel {
  const b = readBlob(v, at, column, 36, into);
  const len = ((b[0]! << 24) | (b[1]! << 16) | (b[2]! << 8) | b[3]!) >>> 0;
  if (len > 256) throw corruptRow(at.table, at.key, `${column} has label length ${len} > 256`);
  return new NodeLabel(b.subarray(4), len);
}

function readOptionalLabel(
  v: unknown,
  at: At,
  column: string,
  into: RowBytes,
): NodeLabel | undefined {
  return v === null ? undefined : readLabel(v, at, column, into);
}

function readNodeType(v: unknown, at: At, column: string): NodeType {
  if (v === 1n || v === 2n || v === 3n) return Number(v) as NodeType;
  throw corruptRow(at.table, at.key, `${column} is ${describe(v)}, not a node type (1, 2 or 3)`);
}

/**
 * The write epoch column of the child on `side` (`left`, `p_right`, ...): undefined for NULL,
 * and only beside its child (the codec writes an epoch after its child's label, so one
 * without the child would be lost).
 */
function readChildEpoch(
  v: unknown,
  child: NodeLabel | undefined,
  at: At,
  side: string,
): bigint | undefined {
  if (v === null) return undefined;
  if (child === undefined) {
    throw corruptRow(at.table, at.key, `${side}_epoch is set but ${side}_child is NULL`);
  }
  return readInteger(v, at, `${side}_epoch`);
}

/** Decodes one node version (NODE_VERSION_COLUMNS) from column `i` (`prefix` '' or 'p_'). */
function readNode(
  row: Row,
  i: number,
  label: NodeLabel,
  at: At,
  prefix: string,
  into: RowBytes,
): TreeNode {
  const leftChild = readOptionalLabel(row[i + 4], at, `${prefix}left_child`, into);
  const rightChild = readOptionalLabel(row[i + 5], at, `${prefix}right_child`, into);
  return {
    label,
    lastEpoch: readInteger(row[i], at, `${prefix}last_epoch`),
    minDescendantEpoch: readInteger(row[i + 1], at, `${prefix}min_descendant_epoch`),
    parent: readLabel(row[i + 2], at, `${prefix}parent`, into),
    nodeType: readNodeType(row[i + 3], at, `${prefix}node_type`),
    leftChild,
    rightChild,
    leftEpoch: readChildEpoch(row[i + 6], leftChild, at, `${prefix}left`),
    rightEpoch: readChildEpoch(row[i + 7], rightChild, at, `${prefix}right`),
    hash: readBlob(row[i + 8], at, `${prefix}hash`, 32, into),
  };
}

/** Columns of a node version that hold blobs: labels and the hash. */
const NODE_BLOBS = new Set(['label', 'parent', 'left_child', 'right_child', 'hash']);
/** The blob columns of a `nodes` row (NODE_COLUMNS). */
const NODE_BLOB_COLUMNS = NODE_COLUMNS.flatMap((c, i) =>
  NODE_BLOBS.has(c.replace(/^p_/, '')) ? [i] : [],
);
/** The blob columns of a `value_states` row (VALUE_STATE_COLUMNS). */
const VALUE_STATE_BLOB_COLUMNS = [0, 3, 4] as const;

/**
 * Decodes a `nodes` row (NODE_COLUMNS).
 * @throws AkdError `STORAGE_CORRUPT` naming the table and the label.
 */
export function decodeNodeRow(row: Row): TreeNodeRecord {
  const at = new At('nodes', () => `label=${keyPart(row[0])}`);
  const into = new RowBytes(row, NODE_BLOB_COLUMNS);
  const label = readLabel(row[0], at, 'label', into);
  const latest = readNode(row, LATEST_AT, label, at, '', into);
  // the previous copy is all there or all NULL (spec 14.8), never half a node
  const previousColumns = row.slice(PREVIOUS_AT, PREVIOUS_AT + NODE_VERSION_WIDTH);
  let previous: TreeNode | undefined;
  if (previousColumns.every((v) => v === null)) {
    previous = undefined;
  } else if (row[PREVIOUS_AT] === null) {
    throw corruptRow(at.table, at.key, 'p_last_epoch is NULL but other p_ columns are set');
  } else {
    previous = readNode(row, PREVIOUS_AT, label, at, 'p_', into);
  }
  return { kind: 'treeNode', label, latest, previous };
}

/**
 * Decodes a `value_states` row (VALUE_STATE_COLUMNS).
 * @throws AkdError `STORAGE_CORRUPT` naming the table, the username (hex) and the epoch.
 */
export function decodeValueStateRow(row: Row): ValueStateRecord {
  const [username, epoch, version, nodeLabel, value] = row;
  const at = new At('value_states', () => `username=${keyPart(username)} epoch=${keyPart(epoch)}`);
  const into = new RowBytes(row, VALUE_STATE_BLOB_COLUMNS);
  return {
    kind: 'valueState',
    username: readBlob(username, at, 'username', undefined, into),
    epoch: readInteger(epoch, at, 'epoch'),
    version: readInteger(version, at, 'version'),
    label: readLabel(nodeLabel, at, 'node_label', into),
    value: readBlob(value, at, 'value', undefined, into),
  };
}

/**
 * Decodes the `azks` row (AZKS_COLUMNS).
 * @throws AkdError `STORAGE_CORRUPT` naming the table and the id.
 */
export function decodeAzksRow(row: Row): AzksRecord {
  const at = new At('azks', () => `id=${keyPart(row[0])}`);
  return {
    kind: 'azks',
    latestEpoch: readInteger(row[1], at, 'latest_epoch'),
    numNodes: readInteger(row[2], at, 'num_nodes'),
  };
}

/**
 * Decodes an `audit_blobs` row: (epoch, previous_hash, current_hash, size or data).
 * @throws AkdError `STORAGE_CORRUPT` naming the table and the epoch.
 */
export function decodeAuditBlobRow(row: Row): {
  epoch: bigint;
  previousHash: Uint8Array;
  currentHash: Uint8Array;
  last: bigint | Uint8Array;
} {
  const at = new At('audit_blobs', () => `epoch=${keyPart(row[0])}`);
  return {
    epoch: readInteger(row[0], at, 'epoch'),
    previousHash: readBlob(row[1], at, 'previous_hash', 32),
    currentHash: readBlob(row[2], at, 'current_hash', 32),
    last:
      typeof row[3] === 'bigint' ? readInteger(row[3], at, 'size') : readBlob(row[3], at, 'data'),
  };
}

/**
 * Decodes a `vrf_proofs` row joined with its `vrf_nonces` one: (key, value, nonce or NULL),
 * see @akd-ts/storage vrf-proofs.ts. The nonce of vrf_nonces wins over one stored in the
 * value (schema before version 8), which is newer whenever both exist.
 * @throws AkdError `STORAGE_CORRUPT` naming the table (vrf_proofs or vrf_nonces) and the key.
 */
export function decodeVrfProofRow(row: Row): VrfProofRecord {
  const name = () => `key=${keyPart(row[0])}`;
  const at = new At('vrf_proofs', name);
  const key = readBlob(row[0], at, 'key');
  const value = readBlob(row[1], at, 'value');
  let record: VrfProofRecord;
  try {
    record = vrfProofRecordOf(vrfProofKeyFromBytes(key), value);
  } catch (e) {
    throw corruptRow(at.table, at.key, e instanceof Error ? e.message : String(e));
  }
  if (row[2] !== null) {
    record.nonce = readBlob(row[2], new At('vrf_nonces', name), 'nonce', NONCE_BYTES);
  }
  return record;
}

/**
 * Adds a `vrf_proof_rows` row (label, seq, entries) to `picker`, which keeps the entries a read
 * wants (@akd-ts/storage vrf-proof-rows.ts).
 * @throws AkdError `STORAGE_CORRUPT` naming the table, the label and the seq.
 */
export function addVrfProofRowsRow(picker: VrfProofPicker, row: Row): void {
  const at = new At('vrf_proof_rows', () => `label=${keyPart(row[0])} seq=${keyPart(row[1])}`);
  const label = readBlob(row[0], at, 'label');
  const entries = readBlob(row[2], at, 'entries');
  try {
    picker.addRow(label, entries);
  } catch (e) {
    throw corruptRow(at.table, at.key, e instanceof Error ? e.message : String(e));
  }
}
