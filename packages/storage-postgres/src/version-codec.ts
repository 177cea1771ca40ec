/**
 * Node versions as the `versions` layout stores them (`node_versions`, schema.sql): a compact
 * label as the key beside the write epoch, and one blob of the rest of the version. An epoch
 * appends its versions as new rows, so what a row costs is what every epoch pays in pages
 * and WAL: today's 36-byte labels and 8-byte epochs would be most of it, where the labels of a
 * tree's upper levels are a few bytes and its epochs a byte or two.
 *
 * Byte layout (all integers big-endian):
 *
 * - label: `u8 hi || u8 lo || bytes`, its length `(hi & 1) << 8 | lo` (0 .. 256). The bytes
 *   are the first `ceil(len / 8)` bytes of its 32, the rest being zero; a label whose bytes
 *   beyond its length are not all zero (no tree's label: an empty label of a configuration)
 *   keeps all 32 and says so with bit 0x80 of `hi`. Every label thus has one form, and a key
 *   compares equal exactly when the labels do (spec 4.1, all 32 bytes).
 * - epoch: `u8 n || n bytes`, the value's big-endian bytes without leading zero bytes (n = 0
 *   for 0, at most 8); a child's write epoch none of whose versions is visible is the codec's
 *   all ones (n = 8, eight 0xff), which no stored epoch (below 2^63) can be.
 * - data: `u8 head` (node type << 2 | 1 with a left child | 2 with a right child), then each
 *   child present, left first, as its label and write epoch, then the least descendant
 *   epoch, the parent's label (the parent the version was written with), and last the 32-byte
 *   hash. The version's own epoch is the row's key; its label the other half of it.
 *
 * The server reads the same bytes (version-sql.ts): children come first so that a walk finds
 * them at the fewest offsets, and the hash last so that it ends the blob.
 */

import { AkdError, NodeLabel } from '@akd-ts/core';
import { NO_CHILD_EPOCH, NodeType, type TreeNode, type TreeNodeRecord } from '@akd-ts/storage';
import { ArrayLiteral } from './array-literal.js';
import type { PgRow } from './client.js';
import { MAX_STORED, hex } from './codec.js';

const HASH_BYTES = 32;
/** Bit of a label's first byte: all 32 bytes kept. */
const ALL_BYTES = 0x80;

/** How many of a label's bytes its form keeps, and whether that is all 32 for their content. */
function keptBytes(label: NodeLabel): { n: number; all: boolean } {
  const k = (label.len + 7) >> 3;
  for (let i = k; i < 32; i++) if (label.val[i] !== 0) return { n: 32, all: true };
  return { n: k, all: false };
}

/** A growing buffer for one row's bytes. */
class Bytes {
  buf = new Uint8Array(128);
  at = 0;
  room(n: number): void {
    if (this.at + n <= this.buf.length) return;
    const next = new Uint8Array(Math.max(this.buf.length * 2, this.at + n));
    next.set(this.buf.subarray(0, this.at));
    this.buf = next;
  }
  u8(v: number): void {
    this.room(1);
    this.buf[this.at++] = v;
  }
  label(l: NodeLabel): void {
    const { n, all } = keptBytes(l);
    this.room(2 + n);
    this.buf[this.at++] = (l.len >> 8) | (all ? ALL_BYTES : 0);
    this.buf[this.at++] = l.len & 0xff;
    this.buf.set(l.val.subarray(0, n), this.at);
    this.at += n;
  }
  epoch(v: bigint): void {
    let n = 0;
    for (let rest = v; rest > 0n; rest >>= 8n) n++;
    this.room(1 + n);
    this.buf[this.at++] = n;
    for (let i = n - 1; i >= 0; i--) this.buf[this.at++] = Number((v >> BigInt(8 * i)) & 0xffn);
  }
  raw(bytes: Uint8Array): void {
    this.room(bytes.length);
    this.buf.set(bytes, this.at);
    this.at += bytes.length;
  }
  done(): Uint8Array {
    return this.buf.slice(0, this.at);
  }
}

/** A label's form as a key of `node_versions` (the module's label layout). */
export function versionKey(label: NodeLabel): Uint8Array {
  const w = new Bytes();
  w.label(label);
  return w.done();
}

/** A version's data blob (records checked already: epochs in range, 32-byte hash). */
export function versionData(node: TreeNode): Uint8Array {
  const w = new Bytes();
  w.u8((node.nodeType << 2) | (node.leftChild ? 1 : 0) | (node.rightChild ? 2 : 0));
  if (node.leftChild) {
    w.label(node.leftChild);
    w.epoch(node.leftEpoch ?? NO_CHILD_EPOCH);
  }
  if (node.rightChild) {
    w.label(node.rightChild);
    w.epoch(node.rightEpoch ?? NO_CHILD_EPOCH);
  }
  w.epoch(node.minDescendantEpoch);
  w.label(node.parent);
  w.raw(node.hash);
  return w.done();
}

/** Why a blob does not decode: thrown by the reader below, named by the caller. */
class Malformed extends Error {}

/** Reads the module's fields; every problem is a Malformed naming it. */
class Reader {
  at = 0;
  constructor(private readonly bytes: Uint8Array) {}
  need(n: number, what: string): void {
    if (this.at + n > this.bytes.length) throw new Malformed(`ends inside ${what}`);
  }
  u8(what: string): number {
    this.need(1, what);
    return this.bytes[this.at++]!;
  }
  label(what: string): NodeLabel {
    this.need(2, what);
    const hi = this.bytes[this.at]!;
    const len = ((hi & 1) << 8) | this.bytes[this.at + 1]!;
    if ((hi & ~(ALL_BYTES | 1)) !== 0 || len > 256) {
      throw new Malformed(
        `${what} has a bad length (${hex(this.bytes.subarray(this.at, this.at + 2))})`,
      );
    }
    const n = (hi & ALL_BYTES) !== 0 ? 32 : (len + 7) >> 3;
    this.at += 2;
    this.need(n, what);
    const val = new Uint8Array(32);
    val.set(this.bytes.subarray(this.at, this.at + n));
    this.at += n;
    return new NodeLabel(val, len);
  }
  /** An epoch; all ones is undefined where `none` allows it. */
  epoch(what: string, none: boolean): bigint | undefined {
    const n = this.u8(what);
    if (n > 8) throw new Malformed(`${what} has ${n} bytes`);
    this.need(n, what);
    let v = 0n;
    for (let i = 0; i < n; i++) v = (v << 8n) | BigInt(this.bytes[this.at++]!);
    if (none && v === NO_CHILD_EPOCH) return undefined;
    if (v > MAX_STORED) throw new Malformed(`${what} ${v} is out of range`);
    return v;
  }
  get left(): number {
    return this.bytes.length - this.at;
  }
  rest(): Uint8Array {
    return this.bytes.subarray(this.at);
  }
}

const NODE_TYPES: ReadonlySet<number> = new Set(Object.values(NodeType));

/** The label of a key. @throws Malformed */
function decodeKey(key: Uint8Array): NodeLabel {
  const k = new Reader(key);
  const label = k.label('the label');
  if (k.left !== 0) throw new Malformed('has bytes beyond its length');
  return label;
}

/**
 * The version of `label` stored under `epoch` with `data`, as a TreeNode.
 * @throws Malformed naming the field that does not decode
 */
function decodeVersion(label: NodeLabel, epoch: bigint, data: Uint8Array): TreeNode {
  const r = new Reader(data);
  const head = r.u8('the head');
  const nodeType = head >> 2;
  if (!NODE_TYPES.has(nodeType)) throw new Malformed(`the node type ${nodeType} is not 1, 2 or 3`);
  let leftChild: NodeLabel | undefined;
  let leftEpoch: bigint | undefined;
  let rightChild: NodeLabel | undefined;
  let rightEpoch: bigint | undefined;
  if ((head & 1) !== 0) {
    leftChild = r.label('the left child');
    leftEpoch = r.epoch("the left child's epoch", true);
  }
  if ((head & 2) !== 0) {
    rightChild = r.label('the right child');
    rightEpoch = r.epoch("the right child's epoch", true);
  }
  const minDescendantEpoch = r.epoch('the least descendant epoch', false)!;
  const parent = r.label('the parent');
  if (r.left !== HASH_BYTES) {
    throw new Malformed(`holds ${r.left} bytes after the parent, not the ${HASH_BYTES} of a hash`);
  }
  return {
    label,
    lastEpoch: epoch,
    minDescendantEpoch,
    parent,
    nodeType: nodeType as NodeType,
    leftChild,
    rightChild,
    leftEpoch,
    rightEpoch,
    hash: r.rest(),
  };
}

/** A view of pg's Buffer as a plain Uint8Array. */
function view(bytes: Uint8Array): Uint8Array {
  return new Uint8Array(bytes.buffer, bytes.byteOffset, bytes.byteLength);
}

/**
 * A `node_versions` row (`epoch`, `label`, `data`) as a node version.
 * @throws AkdError `STORAGE_CORRUPT` naming the table, the key and the column
 */
export function decodeVersionRow(row: PgRow, table: string): TreeNode {
  const { epoch, label, data } = row;
  const keyText = () =>
    `epoch ${String(epoch)} label ${label instanceof Uint8Array ? hex(label) : String(label)}`;
  const fail = (column: string, problem: string): never => {
    throw new AkdError(
      'STORAGE_CORRUPT',
      `corrupt row in ${table}, key ${keyText()}: ${column} ${problem}`,
      { field: `${table}.${column}` },
    );
  };
  let e: bigint | undefined;
  if (typeof epoch === 'string' && /^\d{1,19}$/.test(epoch)) e = BigInt(epoch);
  if (e === undefined || e > MAX_STORED) return fail('epoch', 'is not an epoch');
  if (!(label instanceof Uint8Array)) return fail('label', 'is not bytea');
  if (!(data instanceof Uint8Array)) return fail('data', 'is not bytea');
  let column = 'label';
  try {
    const l = decodeKey(view(label));
    column = 'data';
    return decodeVersion(l, e, view(data));
  } catch (err) {
    if (!(err instanceof Malformed)) throw err;
    return fail(column, err.message);
  }
}

/** A node version as a row: its write epoch, key and data. */
export interface VersionRow {
  epoch: bigint;
  key: Uint8Array;
  data: Uint8Array;
}

/**
 * The rows of tree-node records (checked already) in the versions layout: each latest
 * version under its write epoch (rule 1: previous copies are stored already), in key order,
 * so that an epoch's rows fill its pages one after another.
 */
export function versionRows(records: TreeNodeRecord[]): VersionRow[] {
  return sortRows(
    records.map((r) => ({
      epoch: r.latest.lastEpoch,
      key: versionKey(r.label),
      data: versionData(r.latest),
    })),
  );
}

/** Rows in key order: by epoch, then label. */
export function sortRows(rows: VersionRow[]): VersionRow[] {
  return rows.sort((a, b) =>
    a.epoch === b.epoch ? Buffer.compare(a.key, b.key) : a.epoch < b.epoch ? -1 : 1,
  );
}

/** The arrays of a versions insert. */
export function versionValues(rows: VersionRow[]): string[] {
  const epochs = new ArrayLiteral(rows.length * 4);
  const keys = new ArrayLiteral(rows.length * 24);
  const data = new ArrayLiteral(rows.length * 160);
  for (const r of rows) {
    epochs.int(r.epoch);
    keys.bytes(r.key);
    data.bytes(r.data);
  }
  return [epochs.toString(), keys.toString(), data.toString()];
}

/** Whether a versions key is the root's: length 0, no bytes. */
export function isRootKey(key: Uint8Array): boolean {
  return key.length === 2 && key[0] === 0 && key[1] === 0;
}
