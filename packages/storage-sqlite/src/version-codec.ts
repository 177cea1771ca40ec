/**
 * Node versions <-> the rows of `node_versions` (the `versions` layout, database.ts
 * `NodeLayout`): a row is keyed by the version's write epoch (its `lastEpoch`) and its label,
 * and holds the rest of the version in one blob. An epoch's rows are appended after every
 * older epoch's, so a commit dirties new pages instead of pages all over the store, and rows
 * are small: most of a node's fields are small numbers and short labels.
 *
 * A label (the `label` column, and every label inside `data`) is `u16 head || value bytes`,
 * big-endian: the head's low 9 bits are the length (0-256) and its bit 15 says that all 32
 * bytes of the value follow; otherwise the ceil(len / 8) bytes the length covers follow, and
 * the rest are zeros. All 32 bytes are written exactly when a byte past the covered ones is
 * not zero (two labels that differ only past their length are different labels, spec 4.1), so
 * every label has one form and the form is a key. The root is `00 00`; a leaf 34 bytes.
 *
 * `data` (at most 163 bytes, VERSION_DATA_MAX):
 *
 *     u8      node type (1 leaf, 2 root, 3 interior)
 *     u8      children: bit 0 a left child, bit 1 a right child, bit 2 the left child's write
 *             epoch, bit 3 the right child's (an epoch only beside its child)
 *     varint  min descendant epoch
 *     label   parent
 *     label   left child, then varint its write epoch (each where the bits say so)
 *     label   right child, then varint its write epoch (each where the bits say so)
 *     32      hash
 *
 * A varint is unsigned LEB128 (7 bits a byte, least significant first, high bit set on all
 * but the last), at most 9 bytes, as the store keeps integers up to 2^63 - 1 only.
 *
 * Decoding checks every byte and turns anything else into `STORAGE_CORRUPT` naming the table
 * and the row's key; encoding refuses what the table cannot hold with the caller's RangeError.
 */

import { NodeLabel, toHex } from '@akd-ts/core';
import { NO_CHILD_EPOCH, NodeType, type TreeNode } from '@akd-ts/storage';
import { storedInteger } from './codec.js';
import { corruptRow } from './errors.js';

/** The table of node versions. */
export const VERSIONS_TABLE = 'node_versions';
/** A head's bit that says all 32 bytes of the value follow. */
const FULL = 0x8000;
/** The longest valid `data`: two bytes, a 9-byte varint, three full labels, two epochs, hash. */
export const VERSION_DATA_MAX = 2 + 9 + 3 * 34 + 2 * 9 + 32;
/** Bytes of a version in the record codec's form (a record with no previous copy), childless. */
export const RECORD_BYTES_BASE = 1 + 34 + (34 + 8 + 8 + 34 + 1 + 1 + 32) + 1;
/** Bytes a child adds to it: its label and write epoch. */
export const RECORD_BYTES_CHILD = 34 + 8;

// ---- labels -----------------------------------------------------------------------------

/** How many value bytes a label of `len` bits covers. */
const covered = (len: number) => (len + 7) >> 3;

/** Whether the value bytes of `val` from `from` to 32 are all zero. */
function zerosFrom(val: Uint8Array, at: number, from: number): boolean {
  for (let i = from; i < 32; i++) if (val[at + i] !== 0) return false;
  return true;
}

/** The compact form of `label` (the module doc). */
export function compactLabel(label: NodeLabel): Uint8Array {
  return compactOf(label.val, 0, label.len);
}

/** The compact form of the label of `len` bits whose 32 value bytes begin at `at` of `val`. */
export function compactOf(val: Uint8Array, at: number, len: number): Uint8Array {
  const n = covered(len);
  const full = !zerosFrom(val, at, n);
  const out = new Uint8Array(2 + (full ? 32 : n));
  out[0] = (len >> 8) | (full ? FULL >> 8 : 0);
  out[1] = len & 0xff;
  out.set(val.subarray(at, at + out.length - 2), 2);
  return out;
}

/**
 * The compact form of each label of `labels` in the record codec's form (34 bytes each:
 * `u16 len || 32 bytes`), written into one buffer: one allocation for all of them. Undefined
 * at a label longer than 256 bits (no row has it).
 */
export function compactCodecLabels(labels: Uint8Array, count: number): (Buffer | undefined)[] {
  const out: (Buffer | undefined)[] = new Array<Buffer | undefined>(count);
  const all = Buffer.allocUnsafe(34 * count);
  let o = 0;
  for (let i = 0; i < count; i++) {
    const at = 34 * i;
    const len = (labels[at]! << 8) | labels[at + 1]!;
    if (len > 256) {
      out[i] = undefined;
      continue;
    }
    const n = covered(len);
    const full = !zerosFrom(labels, at + 2, n);
    const size = 2 + (full ? 32 : n);
    all[o] = (len >> 8) | (full ? FULL >> 8 : 0);
    all[o + 1] = len & 0xff;
    for (let j = 0; j < size - 2; j++) all[o + 2 + j] = labels[at + 2 + j]!;
    out[i] = all.subarray(o, o + size);
    o += size;
  }
  return out;
}

/**
 * Names a row in errors, its key's text built only when an error needs it: the label as an
 * object, or in the codec's form at `codecAt` of `label` (34 bytes).
 */
export interface VersionKey {
  epoch: bigint;
  label: Uint8Array | NodeLabel;
  codecAt: number;
}

function keyText(key: VersionKey): string {
  const l = key.label;
  const at = key.codecAt;
  const compact =
    l instanceof NodeLabel
      ? compactLabel(l)
      : compactOf(l, at + 2, ((l[at]! << 8) | l[at + 1]!) & 0x1ff);
  return `epoch=${key.epoch} label=${toHex(compact)}`;
}

function corrupt(key: VersionKey, problem: string): Error {
  return corruptRow(VERSIONS_TABLE, keyText(key), problem);
}

/**
 * Reads the compact label at `at` of `bytes` (ending by `end`): its length, whether all 32
 * value bytes follow, and where it ends.
 */
function labelAt(
  bytes: Uint8Array,
  at: number,
  end: number,
  key: VersionKey,
  what: string,
): { len: number; n: number; next: number } {
  if (at + 2 > end) throw corrupt(key, `data ends inside the ${what} label`);
  const head = (bytes[at]! << 8) | bytes[at + 1]!;
  const len = head & ~FULL;
  if (len > 256) throw corrupt(key, `the ${what} label has length ${len} > 256`);
  const cover = covered(len);
  const full = (head & FULL) !== 0;
  const n = full ? 32 : cover;
  if (at + 2 + n > end) throw corrupt(key, `data ends inside the ${what} label`);
  // the one form of each label: all 32 bytes only where bytes past the covered ones are set
  if (full && zerosFrom(bytes, at + 2, cover)) {
    throw corrupt(key, `the ${what} label is written whole but is zero past its length`);
  }
  return { len, n, next: at + 2 + n };
}

// ---- varints ----------------------------------------------------------------------------

/** Appends `v` (0 ..= 2^63 - 1) as a varint at `at` of `out`; returns the end. */
function putVarint(out: Uint8Array, at: number, v: bigint): number {
  if (v < 0x1_0000_0000n) {
    // the common case in numbers: epochs are small
    let n = Number(v);
    while (n >= 0x80) {
      out[at++] = (n & 0x7f) | 0x80;
      n = Math.floor(n / 128);
    }
    out[at++] = n;
    return at;
  }
  let n = v;
  while (n >= 0x80n) {
    out[at++] = Number(n & 0x7fn) | 0x80;
    n >>= 7n;
  }
  out[at++] = Number(n);
  return at;
}

/** Where a varint read ended, and its value: `small` when below 2^49, else `big`. */
interface Varint {
  next: number;
  small: number;
  big: bigint | undefined;
}

const varint: Varint = { next: 0, small: 0, big: undefined };

/**
 * Reads the varint at `at` into `varint` (a shared result: no object per read). Nine bytes
 * hold 63 bits: every varint that ends by then is at most 2^63 - 1.
 * @throws AkdError `STORAGE_CORRUPT` past `end` or beyond 9 bytes
 */
function readVarint(bytes: Uint8Array, at: number, end: number, key: VersionKey, what: string) {
  let small = 0;
  let scale = 1;
  for (let i = 0; i < 9; i++) {
    if (at + i >= end) throw corrupt(key, `data ends inside the ${what}`);
    const b = bytes[at + i]!;
    if (i < 7) {
      small += (b & 0x7f) * scale;
      scale *= 128;
      if (b < 0x80) {
        varint.next = at + i + 1;
        varint.small = small;
        varint.big = undefined;
        return;
      }
      continue;
    }
    if (b < 0x80) {
      // 8 or 9 bytes: up to 2^63 - 1, in bigints
      let v = 0n;
      for (let j = i; j >= 0; j--) v = (v << 7n) | BigInt(bytes[at + j]! & 0x7f);
      varint.next = at + i + 1;
      varint.small = Number(v);
      varint.big = v;
      return;
    }
  }
  throw corrupt(key, `the ${what} is longer than 9 bytes`);
}

// ---- encoding ---------------------------------------------------------------------------

/** Room to encode one version's data in. */
const scratch = new Uint8Array(VERSION_DATA_MAX);

/** Appends `label` compact at `at` of `out`; returns the end. */
function putLabel(out: Uint8Array, at: number, label: NodeLabel): number {
  const n = covered(label.len);
  const full = !zerosFrom(label.val, 0, n);
  out[at] = (label.len >> 8) | (full ? FULL >> 8 : 0);
  out[at + 1] = label.len & 0xff;
  const size = full ? 32 : n;
  out.set(label.val.subarray(0, size), at + 2);
  return at + 2 + size;
}

/**
 * `n`'s `data` (the module doc), after checking what the table holds: integers up to 2^63 - 1,
 * a known node type, a 32-byte hash, a child's write epoch only beside the child.
 * @throws RangeError or TypeError naming `field`'s member
 */
export function encodeVersionData(n: TreeNode, field: string): Uint8Array {
  storedInteger(n.lastEpoch, `${field}.lastEpoch`);
  const type = n.nodeType;
  if (type !== NodeType.Leaf && type !== NodeType.Root && type !== NodeType.Interior) {
    throw new RangeError(`${field}.nodeType = ${String(type)} is not a node type`);
  }
  if (!(n.hash instanceof Uint8Array) || n.hash.length !== 32) {
    throw new RangeError(`${field}.hash must be 32 bytes`);
  }
  const left = n.leftChild;
  const right = n.rightChild;
  const leftEpoch = childEpoch(n.leftEpoch, left, `${field}.leftEpoch`);
  const rightEpoch = childEpoch(n.rightEpoch, right, `${field}.rightEpoch`);
  const out = scratch;
  out[0] = type;
  out[1] =
    (left === undefined ? 0 : 1) |
    (right === undefined ? 0 : 2) |
    (leftEpoch === undefined ? 0 : 4) |
    (rightEpoch === undefined ? 0 : 8);
  let at = putVarint(out, 2, storedInteger(n.minDescendantEpoch, `${field}.minDescendantEpoch`));
  at = putLabel(out, at, n.parent);
  if (left !== undefined) {
    at = putLabel(out, at, left);
    if (leftEpoch !== undefined) at = putVarint(out, at, leftEpoch);
  }
  if (right !== undefined) {
    at = putLabel(out, at, right);
    if (rightEpoch !== undefined) at = putVarint(out, at, rightEpoch);
  }
  out.set(n.hash, at);
  return out.slice(0, at + 32);
}

/** A child's write epoch as stored: refused without its child (it could not be read back). */
function childEpoch(
  epoch: bigint | undefined,
  child: NodeLabel | undefined,
  field: string,
): bigint | undefined {
  if (epoch === undefined) return undefined;
  if (child === undefined) throw new RangeError(`${field} is set but the node has no such child`);
  return storedInteger(epoch, field);
}

// ---- decoding ---------------------------------------------------------------------------

/** Where the fields of one version's data are (`parseData`), for either decoder. */
interface Parsed {
  type: number;
  children: number;
  /** minDescendantEpoch: the varint's value, as `varint` holds it. */
  minSmall: number;
  minBig: bigint | undefined;
  parent: number;
  parentLen: number;
  parentN: number;
  left: number;
  leftLen: number;
  leftN: number;
  leftSmall: number;
  leftBig: bigint | undefined;
  right: number;
  rightLen: number;
  rightN: number;
  rightSmall: number;
  rightBig: bigint | undefined;
  hash: number;
}

const parsed: Parsed = {
  type: 0,
  children: 0,
  minSmall: 0,
  minBig: undefined,
  parent: 0,
  parentLen: 0,
  parentN: 0,
  left: -1,
  leftLen: 0,
  leftN: 0,
  leftSmall: 0,
  leftBig: undefined,
  right: -1,
  rightLen: 0,
  rightN: 0,
  rightSmall: 0,
  rightBig: undefined,
  hash: 0,
};

/**
 * Checks the data at `at` .. `end` of `bytes` and notes where its fields are in `parsed` (a
 * shared result: no object per version).
 * @throws AkdError `STORAGE_CORRUPT` naming `key`
 */
function parseData(bytes: Uint8Array, at: number, end: number, key: VersionKey): Parsed {
  const p = parsed;
  if (at + 2 > end) throw corrupt(key, 'data ends before the node type');
  const type = bytes[at]!;
  if (type !== 1 && type !== 2 && type !== 3) {
    throw corrupt(key, `node type ${type} is not 1, 2 or 3`);
  }
  const children = bytes[at + 1]!;
  // an epoch bit only beside its child's bit
  if (children > 15 || (children & 4 && !(children & 1)) || (children & 8 && !(children & 2))) {
    throw corrupt(key, `children flags ${children} are not a valid set`);
  }
  p.type = type;
  p.children = children;
  readVarint(bytes, at + 2, end, key, 'min descendant epoch');
  p.minSmall = varint.small;
  p.minBig = varint.big;
  let o = varint.next;
  let l = labelAt(bytes, o, end, key, 'parent');
  p.parent = o;
  p.parentLen = l.len;
  p.parentN = l.n;
  o = l.next;
  p.left = -1;
  p.right = -1;
  p.leftBig = p.rightBig = undefined;
  p.leftSmall = p.rightSmall = -1;
  if (children & 1) {
    l = labelAt(bytes, o, end, key, 'left child');
    p.left = o;
    p.leftLen = l.len;
    p.leftN = l.n;
    o = l.next;
    if (children & 4) {
      readVarint(bytes, o, end, key, 'left write epoch');
      p.leftSmall = varint.small;
      p.leftBig = varint.big;
      o = varint.next;
    }
  }
  if (children & 2) {
    l = labelAt(bytes, o, end, key, 'right child');
    p.right = o;
    p.rightLen = l.len;
    p.rightN = l.n;
    o = l.next;
    if (children & 8) {
      readVarint(bytes, o, end, key, 'right write epoch');
      p.rightSmall = varint.small;
      p.rightBig = varint.big;
      o = varint.next;
    }
  }
  if (o + 32 !== end) {
    throw corrupt(key, o + 32 > end ? 'data ends inside the hash' : 'data has bytes past the hash');
  }
  p.hash = o;
  return p;
}

const asBig = (small: number, big: bigint | undefined) => big ?? BigInt(small);

/**
 * The version of `label` written in `epoch` whose data is `at` .. `end` of `bytes`: its labels
 * and hash are views of one fresh buffer (they live and die with the node).
 * @throws AkdError `STORAGE_CORRUPT` naming the row
 */
export function decodeVersion(
  bytes: Uint8Array,
  at: number,
  end: number,
  label: NodeLabel,
  epoch: bigint,
): TreeNode {
  const p = parseData(bytes, at, end, { epoch, label, codecAt: 0 });
  const own = new Uint8Array(32 * (2 + (p.left >= 0 ? 1 : 0) + (p.right >= 0 ? 1 : 0)));
  let o = 0;
  const take = (from: number, len: number, n: number) => {
    const val = own.subarray(o, o + 32);
    val.set(bytes.subarray(from + 2, from + 2 + n));
    o += 32;
    return new NodeLabel(val, len);
  };
  const hash = own.subarray(o, o + 32);
  hash.set(bytes.subarray(p.hash, p.hash + 32));
  o += 32;
  const leftChild = p.left >= 0 ? take(p.left, p.leftLen, p.leftN) : undefined;
  const rightChild = p.right >= 0 ? take(p.right, p.rightLen, p.rightN) : undefined;
  return {
    label,
    lastEpoch: epoch,
    minDescendantEpoch: asBig(p.minSmall, p.minBig),
    parent: take(p.parent, p.parentLen, p.parentN),
    nodeType: p.type as NodeType,
    leftChild,
    rightChild,
    leftEpoch: p.children & 4 ? asBig(p.leftSmall, p.leftBig) : undefined,
    rightEpoch: p.children & 8 ? asBig(p.rightSmall, p.rightBig) : undefined,
    hash,
  };
}

/** Writes `v` (below 2^53, or `big`) as a big-endian u64 at `at` of `out`. */
function putU64(out: Uint8Array, at: number, small: number, big: bigint | undefined): void {
  let hi: number;
  let lo: number;
  if (big !== undefined) {
    hi = Number(big >> 32n);
    lo = Number(big & 0xffff_ffffn);
  } else {
    hi = Math.floor(small / 4294967296);
    lo = small >>> 0;
  }
  out[at] = hi >>> 24;
  out[at + 1] = (hi >>> 16) & 0xff;
  out[at + 2] = (hi >>> 8) & 0xff;
  out[at + 3] = hi & 0xff;
  out[at + 4] = lo >>> 24;
  out[at + 5] = (lo >>> 16) & 0xff;
  out[at + 6] = (lo >>> 8) & 0xff;
  out[at + 7] = lo & 0xff;
}

/** Writes the compact label at `from` of `bytes` in the codec's form at `at` of `out` (zeroed). */
function putCodecLabel(out: Uint8Array, at: number, bytes: Uint8Array, from: number, n: number) {
  out[at] = bytes[from]! & 0x01;
  out[at + 1] = bytes[from + 1]!;
  for (let i = 0; i < n; i++) out[at + 2 + i] = bytes[from + 2 + i]!;
}

/** The key `writeVersionRecord` names in errors (one object, set for each version). */
const codecKey: VersionKey = { epoch: 0n, label: new Uint8Array(0), codecAt: 0 };

/** The bytes `writeVersionRecord` writes for data whose children byte is `children`. */
export function versionRecordLength(children: number): number {
  return RECORD_BYTES_BASE + RECORD_BYTES_CHILD * ((children & 1) + ((children >> 1) & 1));
}

/**
 * Writes the version whose data is `at` .. `end` of `bytes` as a tree-node record in the
 * record codec's form (storage's record-codec.ts; no previous copy) at `to` of `out`, which
 * must be zeroed and have room for `versionRecordLength`: its label, the 34 bytes at
 * `labelAt` of `labels` (the codec's form), and its write epoch, `epoch`. Returns the end.
 * @throws AkdError `STORAGE_CORRUPT` naming the row
 */
export function writeVersionRecord(
  out: Uint8Array,
  to: number,
  bytes: Uint8Array,
  at: number,
  end: number,
  labels: Uint8Array,
  labelAt: number,
  epoch: bigint,
): number {
  codecKey.epoch = epoch;
  codecKey.label = labels;
  codecKey.codecAt = labelAt;
  const p = parseData(bytes, at, end, codecKey);
  let o = to;
  out[o++] = 1; // RECORD_KIND.treeNode
  for (let i = 0; i < 34; i++) out[o + i] = labels[labelAt + i]!;
  o += 34;
  // the node: its label again, then its fields
  out.copyWithin(o, o - 34, o);
  o += 34;
  if (epoch < 0x20_0000_0000_0000n) putU64(out, o, Number(epoch), undefined);
  else putU64(out, o, 0, epoch);
  o += 8;
  putU64(out, o, p.minSmall, p.minBig);
  o += 8;
  putCodecLabel(out, o, bytes, p.parent, p.parentN);
  o += 34;
  out[o++] = p.type;
  out[o++] = p.children & 3;
  if (p.left >= 0) {
    putCodecLabel(out, o, bytes, p.left, p.leftN);
    o += 34;
    writeChildEpoch(out, o, p.children & 4, p.leftSmall, p.leftBig);
    o += 8;
  }
  if (p.right >= 0) {
    putCodecLabel(out, o, bytes, p.right, p.rightN);
    o += 34;
    writeChildEpoch(out, o, p.children & 8, p.rightSmall, p.rightBig);
    o += 8;
  }
  for (let i = 0; i < 32; i++) out[o + i] = bytes[p.hash + i]!;
  o += 32;
  out[o++] = 0; // no previous copy
  return o;
}

/** A child's write epoch in the codec: all ones for none. */
function writeChildEpoch(
  out: Uint8Array,
  at: number,
  present: number,
  small: number,
  big: bigint | undefined,
): void {
  if (present) putU64(out, at, small, big);
  else putU64(out, at, 0, NO_CHILD_EPOCH);
}

// ---- from the record codec's form -------------------------------------------------------

/** The big-endian u32 at `at` of `bytes`. */
const u32At = (bytes: Uint8Array, at: number) =>
  ((bytes[at]! << 24) | (bytes[at + 1]! << 16) | (bytes[at + 2]! << 8) | bytes[at + 3]!) >>> 0;

/** Appends the u64 `hi * 2^32 + lo` as a varint at `at` of `out`; returns the end. */
function putVarintU64(out: Uint8Array, at: number, hi: number, lo: number): number {
  while (hi !== 0 || lo > 0x7f) {
    out[at++] = (lo & 0x7f) | 0x80;
    lo = ((lo >>> 7) | (hi << 25)) >>> 0;
    hi >>>= 7;
  }
  out[at++] = lo;
  return at;
}

/**
 * Appends the label in the codec's form (`u16 len || 32 bytes`, len at most 256) at `from` of
 * `bytes` compact at `at` of `out`; returns the end.
 */
export function putCompactFromCodec(
  out: Uint8Array,
  at: number,
  bytes: Uint8Array,
  from: number,
): number {
  const len = (bytes[from]! << 8) | bytes[from + 1]!;
  const n = covered(len);
  const full = !zerosFrom(bytes, from + 2, n);
  out[at] = (len >> 8) | (full ? FULL >> 8 : 0);
  out[at + 1] = len & 0xff;
  const size = full ? 32 : n;
  for (let i = 0; i < size; i++) out[at + 2 + i] = bytes[from + 2 + i]!;
  return at + 2 + size;
}

/** Whether the codec's child epoch at `at` of `bytes` is NO_CHILD_EPOCH (all ones). */
function noChildEpoch(bytes: Uint8Array, at: number): boolean {
  for (let i = 0; i < 8; i++) if (bytes[at + i] !== 0xff) return false;
  return true;
}

/**
 * Writes the tree node in the codec's form at `at` of `bytes` (record-codec.ts `writeNode`,
 * checked by `nodeBytesLength`: labels of at most 256 bits, a known type and children flag) as
 * a version's `data` at `o` of `out`, which needs VERSION_DATA_MAX bytes of room; returns the
 * end. Its epochs must be at most 2^63 - 1, as they are in a row the table held.
 */
export function dataFromCodecNode(
  bytes: Uint8Array,
  at: number,
  out: Uint8Array,
  o: number,
): number {
  const children = bytes[at + 85]!;
  let c = at + 86;
  const left = children & 1 ? c : -1;
  if (left >= 0) c += RECORD_BYTES_CHILD;
  const right = children & 2 ? c : -1;
  if (right >= 0) c += RECORD_BYTES_CHILD;
  const leftEpoch = left >= 0 && !noChildEpoch(bytes, left + 34);
  const rightEpoch = right >= 0 && !noChildEpoch(bytes, right + 34);
  out[o++] = bytes[at + 84]!;
  out[o++] = children | (leftEpoch ? 4 : 0) | (rightEpoch ? 8 : 0);
  o = putVarintU64(out, o, u32At(bytes, at + 42), u32At(bytes, at + 46));
  o = putCompactFromCodec(out, o, bytes, at + 50);
  if (left >= 0) {
    o = putCompactFromCodec(out, o, bytes, left);
    if (leftEpoch) o = putVarintU64(out, o, u32At(bytes, left + 34), u32At(bytes, left + 38));
  }
  if (right >= 0) {
    o = putCompactFromCodec(out, o, bytes, right);
    if (rightEpoch) o = putVarintU64(out, o, u32At(bytes, right + 34), u32At(bytes, right + 38));
  }
  for (let i = 0; i < 32; i++) out[o + i] = bytes[c + i]!;
  return o + 32;
}
