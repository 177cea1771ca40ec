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
import {
  NO_CHILD_EPOCH,
  NodeType,
  type NodeRecordBytes,
  type TreeNode,
  type TreeNodeRecord,
} from '@akd-ts/storage';
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
  /** A label's place: the offset of its length bytes and how many bytes it keeps. */
  labelBytes(what: string): [number, number] {
    this.need(2, what);
    const hi = this.bytes[this.at]!;
    const len = ((hi & 1) << 8) | this.bytes[this.at + 1]!;
    if ((hi & ~(ALL_BYTES | 1)) !== 0 || len > 256) {
      throw new Malformed(`${what} has a bad length`);
    }
    const n = (hi & ALL_BYTES) !== 0 ? 32 : (len + 7) >> 3;
    const at = this.at;
    this.at += 2;
    this.need(n, what);
    this.at += n;
    return [at, n];
  }
  /** An epoch's place (offset and length of its bytes), checked as `epoch` checks it. */
  epochBytes(what: string, none: boolean): [number, number] {
    const n = this.u8(what);
    if (n > 8) throw new Malformed(`${what} has ${n} bytes`);
    this.need(n, what);
    const at = this.at;
    if (n === 8 && this.bytes[at]! >= 0x80) {
      const ones = this.bytes.subarray(at, at + 8).every((b) => b === 0xff);
      if (!(none && ones)) throw new Malformed(`${what} is out of range`);
    }
    this.at += n;
    return [at, n];
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
 * The version stored under `epoch` and `key` with `data`: the checks of a row, whatever way
 * it came (a row, or joined with others).
 * @throws AkdError `STORAGE_CORRUPT` naming the table, the key and the field
 */
function decodeStored(
  epoch: bigint | undefined,
  key: unknown,
  data: unknown,
  table: string,
  shownEpoch: unknown,
): TreeNode {
  const fail = (column: string, problem: string): never => {
    const shownKey = key instanceof Uint8Array ? hex(key) : String(key);
    throw new AkdError(
      'STORAGE_CORRUPT',
      `corrupt row in ${table}, key epoch ${String(shownEpoch)} label ${shownKey}: ${column} ${problem}`,
      { field: `${table}.${column}` },
    );
  };
  if (epoch === undefined || epoch > MAX_STORED) return fail('epoch', 'is not an epoch');
  if (!(key instanceof Uint8Array)) return fail('label', 'is not bytea');
  if (!(data instanceof Uint8Array)) return fail('data', 'is not bytea');
  let column = 'label';
  try {
    const l = decodeKey(view(key));
    column = 'data';
    return decodeVersion(l, epoch, view(data));
  } catch (err) {
    if (!(err instanceof Malformed)) throw err;
    return fail(column, err.message);
  }
}

/**
 * A `node_versions` row (`epoch`, `label`, `data`) as a node version.
 * @throws AkdError `STORAGE_CORRUPT` naming the table, the key and the column
 */
export function decodeVersionRow(row: PgRow, table: string): TreeNode {
  const { epoch, label, data } = row;
  const e = typeof epoch === 'string' && /^\d{1,19}$/.test(epoch) ? BigInt(epoch) : undefined;
  return decodeStored(e, label, data, table, epoch);
}

/**
 * The versions joined in one value by version-sql.ts `versionSubtreesSql`, each with its key,
 * in the value's order; none for NULL (no version found).
 * @throws AkdError `STORAGE_CORRUPT` for a value that does not frame, or a version that does
 * not decode (as `decodeVersionRow` names it)
 */
export function decodeJoinedVersions(
  joined: unknown,
  table: string,
): { key: Uint8Array; node: TreeNode }[] {
  if (joined === null || joined === undefined) return [];
  const bad = (what: string) =>
    new AkdError('STORAGE_CORRUPT', `reading ${table} joined: ${what}`, { field: table });
  if (!(joined instanceof Uint8Array)) throw bad('the joined versions are not bytea');
  const bytes = view(joined);
  const at = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  const out: { key: Uint8Array; node: TreeNode }[] = [];
  let i = 0;
  // one length's end past the value, for the frame's checks
  const end = (from: number) => (from + 4 > bytes.length ? -1 : from + 4 + at.getUint32(from));
  while (i < bytes.length) {
    const keyEnd = i + 8 > bytes.length ? -1 : end(i + 8);
    const dataEnd = keyEnd < 0 || keyEnd > bytes.length ? -1 : end(keyEnd);
    if (dataEnd < 0 || dataEnd > bytes.length) throw bad(`the version at byte ${i} does not frame`);
    const epoch = at.getBigUint64(i);
    const key = bytes.subarray(i + 12, keyEnd);
    out.push({
      key,
      node: decodeStored(epoch, key, bytes.subarray(keyEnd + 4, dataEnd), table, epoch),
    });
    i = dataEnd;
  }
  return out;
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

/**
 * Appends to `out` the codec's tree-node record (`u8 1, label, node, u8 0`: record-codec.ts)
 * of the version of `label` (the codec's 34 bytes) written in `epoch` (its 8 bytes, big-endian)
 * whose blob is `data`, straight from the bytes: no node object is made. Every field is
 * checked as `decodeVersionRow` checks it.
 * @throws AkdError `STORAGE_CORRUPT` naming `table` and the version where the blob does not
 * decode
 */
export function appendVersionRecord(
  out: CodecOut,
  label: Uint8Array,
  epoch: Uint8Array,
  data: Uint8Array,
  table: string,
): void {
  const start = out.at;
  try {
    // the largest record: both children
    out.need(1 + 34 + 34 + 8 + 8 + 34 + 2 + 2 * (34 + 8) + HASH_BYTES + 1);
    out.byte(1);
    out.raw(label);
    out.raw(label);
    out.raw(epoch);
    const r = new Reader(data);
    const head = r.u8('the head');
    if (!NODE_TYPES.has(head >> 2))
      throw new Malformed(`the node type ${head >> 2} is not 1, 2 or 3`);
    // the children come first in the blob and last in the codec's node
    const children: [number, number, number, number][] = [];
    for (const [bit, what] of [
      [1, 'the left child'],
      [2, 'the right child'],
    ] as const) {
      if ((head & bit) === 0) continue;
      const l = r.labelBytes(what);
      const e = r.epochBytes(`${what}'s epoch`, true);
      children.push([l[0], l[1], e[0], e[1]]);
    }
    const [mAt, mLen] = r.epochBytes('the least descendant epoch', false);
    out.epoch(data, mAt, mLen);
    const [pAt, pLen] = r.labelBytes('the parent');
    out.label(data, pAt, pLen);
    if (r.left !== HASH_BYTES) {
      throw new Malformed(
        `holds ${r.left} bytes after the parent, not the ${HASH_BYTES} of a hash`,
      );
    }
    out.byte(head >> 2);
    out.byte(head & 3);
    for (const [at, n, eAt, eLen] of children) {
      out.label(data, at, n);
      out.epoch(data, eAt, eLen);
    }
    out.raw(r.rest());
    out.byte(0);
  } catch (err) {
    out.at = start;
    if (!(err instanceof Malformed)) throw err;
    const len = (label[0]! << 8) | label[1]!;
    throw new AkdError(
      'STORAGE_CORRUPT',
      `corrupt row in ${table}, key epoch ${Buffer.from(epoch).readBigUInt64BE()} label ` +
        `${hex(versionKey(new NodeLabel(label.slice(2), len)))}: data ${err.message}`,
      { field: `${table}.data` },
    );
  }
}

/** A growing buffer of codec records (`appendVersionRecord`). */
export class CodecOut {
  buf = new Uint8Array(1 << 16);
  at = 0;
  need(n: number): void {
    if (this.at + n <= this.buf.length) return;
    const next = new Uint8Array(Math.max(this.buf.length * 2, this.at + n));
    next.set(this.buf.subarray(0, this.at));
    this.buf = next;
  }
  byte(v: number): void {
    this.buf[this.at++] = v;
  }
  raw(bytes: Uint8Array): void {
    this.buf.set(bytes, this.at);
    this.at += bytes.length;
  }
  /** A blob's label of `n` kept bytes at `at` (its two length bytes first) as `u16 || 32`. */
  label(data: Uint8Array, at: number, n: number): void {
    this.buf[this.at] = data[at]! & 1;
    this.buf[this.at + 1] = data[at + 1]!;
    this.buf.set(data.subarray(at + 2, at + 2 + n), this.at + 2);
    this.buf.fill(0, this.at + 2 + n, this.at + 34);
    this.at += 34;
  }
  /** A blob's epoch of `n` bytes at `at` as the codec's u64. */
  epoch(data: Uint8Array, at: number, n: number): void {
    this.buf.fill(0, this.at, this.at + 8 - n);
    this.buf.set(data.subarray(at, at + n), this.at + 8 - n);
    this.at += 8;
  }
  done(): Uint8Array {
    return this.buf.subarray(0, this.at);
  }
}

/**
 * The answer of `batchGetNodeVersionBytes` for the `count` codec labels of `labels` from the
 * joined rows of its statements (`size` labels each; version-sql.ts `versionBytesSql`): one
 * buffer of codec records per statement.
 * @throws AkdError `STORAGE_CORRUPT` for a blob that does not decode, or joined rows that do
 * not frame
 */
export function versionBytesAnswer(
  labels: Uint8Array,
  count: number,
  size: number,
  statements: readonly unknown[],
  table: string,
): NodeRecordBytes {
  const buffers: Uint8Array[] = [];
  const buffer = new Int32Array(count).fill(-1);
  const starts = new Int32Array(count).fill(-1);
  const bad = (what: string) =>
    new AkdError('STORAGE_CORRUPT', `reading ${table} in bytes: ${what}`, { field: table });
  statements.forEach((joined, q) => {
    if (joined === null || joined === undefined) return;
    if (!(joined instanceof Uint8Array)) throw bad('the joined rows are not bytea');
    const view = new DataView(joined.buffer, joined.byteOffset, joined.byteLength);
    const out = new CodecOut();
    const end = Math.min(count, (q + 1) * size);
    for (let at = 0; at < joined.length;) {
      if (at + 16 > joined.length) throw bad('the joined rows end inside a row');
      const position = q * size + view.getUint32(at) - 1;
      const length = view.getUint32(at + 12);
      if (position < q * size || position >= end || at + 16 + length > joined.length) {
        throw bad(`a row at ${at} does not frame`);
      }
      const label = labels.subarray(34 * position, 34 * position + 34);
      starts[position] = out.at;
      buffer[position] = buffers.length;
      appendVersionRecord(
        out,
        label,
        joined.subarray(at + 4, at + 12),
        joined.subarray(at + 16, at + 16 + length),
        table,
      );
      at += 16 + length;
    }
    buffers.push(out.done());
  });
  return { buffers, buffer, starts };
}
