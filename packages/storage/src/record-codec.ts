/**
 * Records as bytes: the form in which `akd serve` sends a memory store's changes between its
 * processes (the server's replication codec) and in which a PackedMemoryDatabase keeps them.
 * Layout, all integers big-endian: a record is a kind byte (0 azks, 1 tree node, 2 value
 * state) and its fields; a label is `u16 len || 32 bytes`; bytes are `u32 length || data`;
 * epochs, versions and counts are u64. A tree node is `label, lastEpoch, minDescendantEpoch,
 * parent, u8 nodeType, u8 children (1 left, 2 right), the children present, 32-byte hash`,
 * where a child is its label and its write epoch (`TreeNode.leftEpoch`; all ones for none),
 * and a tree-node record is `label, latest node, u8 has-previous, previous node`.
 */

import { NodeLabel } from '@akd-ts/core';
import type { DbRecord, NodeType, TreeNode } from './records.js';

export const RECORD_KIND = { azks: 0, treeNode: 1, valueState: 2 } as const;
/** Bytes of a label: `u16 len || 32 bytes`. */
export const LABEL_BYTES = 34;
/** Bytes of a node's child: its label and `u64` write epoch. */
export const CHILD_BYTES = LABEL_BYTES + 8;
/** A child's write epoch when none of its versions is visible (`TreeNode.leftEpoch`). */
export const NO_CHILD_EPOCH = 0xffff_ffff_ffff_ffffn;

/** A growing byte buffer. */
export class ByteWriter {
  private buf: Uint8Array;
  private view: DataView;
  at = 0;

  constructor(initialBytes = 1 << 16) {
    this.buf = new Uint8Array(initialBytes);
    this.view = new DataView(this.buf.buffer);
  }

  private room(n: number): void {
    if (this.at + n <= this.buf.length) return;
    let size = Math.max(this.buf.length * 2, 64);
    while (size < this.at + n) size *= 2;
    const next = new Uint8Array(size);
    next.set(this.buf.subarray(0, this.at));
    this.buf = next;
    this.view = new DataView(next.buffer);
  }
  u8(v: number): void {
    this.room(1);
    this.buf[this.at++] = v;
  }
  u16(v: number): void {
    this.room(2);
    this.view.setUint16(this.at, v);
    this.at += 2;
  }
  u32(v: number): void {
    this.room(4);
    this.view.setUint32(this.at, v);
    this.at += 4;
  }
  u64(v: bigint): void {
    this.room(8);
    this.view.setBigUint64(this.at, v);
    this.at += 8;
  }
  raw(bytes: Uint8Array): void {
    this.room(bytes.length);
    this.buf.set(bytes, this.at);
    this.at += bytes.length;
  }
  bytes(bytes: Uint8Array): void {
    this.u32(bytes.length);
    this.raw(bytes);
  }
  text(s: string): void {
    this.bytes(new TextEncoder().encode(s));
  }
  label(l: NodeLabel): void {
    this.u16(l.len);
    this.raw(l.val);
  }
  /** The bytes written so far, as a view (valid until the next write). */
  written(): Uint8Array {
    return this.buf.subarray(0, this.at);
  }
  /** A copy of the bytes written. */
  done(): Uint8Array {
    return this.buf.slice(0, this.at);
  }
  /** Forgets what was written, keeping the buffer. */
  reset(): void {
    this.at = 0;
  }
}

/** Reads what a ByteWriter wrote. Every read throws RangeError past the end. */
export class ByteReader {
  private readonly view: DataView;
  at = 0;
  constructor(
    private readonly buf: Uint8Array,
    at = 0,
  ) {
    this.view = new DataView(buf.buffer, buf.byteOffset, buf.byteLength);
    this.at = at;
  }
  get left(): number {
    return this.buf.length - this.at;
  }
  need(n: number): void {
    if (this.at + n > this.buf.length) throw new RangeError('truncated record bytes');
  }
  u8(): number {
    this.need(1);
    return this.buf[this.at++]!;
  }
  u16(): number {
    this.need(2);
    const v = this.view.getUint16(this.at);
    this.at += 2;
    return v;
  }
  u32(): number {
    this.need(4);
    const v = this.view.getUint32(this.at);
    this.at += 4;
    return v;
  }
  u64(): bigint {
    this.need(8);
    const v = this.view.getBigUint64(this.at);
    this.at += 8;
    return v;
  }
  skip(n: number): void {
    this.need(n);
    this.at += n;
  }
  /** Moves past what `measure` finds at the reader's position (its length in bytes). */
  skipMeasured(measure: (bytes: Uint8Array, at: number) => number): void {
    this.skip(measure(this.buf, this.at));
  }
  raw(n: number): Uint8Array {
    this.need(n);
    const v = this.buf.subarray(this.at, this.at + n);
    this.at += n;
    return v;
  }
  bytes(): Uint8Array {
    return this.raw(this.u32());
  }
  text(): string {
    return new TextDecoder().decode(this.bytes());
  }
  label(): NodeLabel {
    const len = this.u16();
    return new NodeLabel(this.raw(32), len);
  }
}

function writeNode(w: ByteWriter, n: TreeNode): void {
  w.label(n.label);
  w.u64(n.lastEpoch);
  w.u64(n.minDescendantEpoch);
  w.label(n.parent);
  w.u8(n.nodeType);
  w.u8((n.leftChild ? 1 : 0) | (n.rightChild ? 2 : 0));
  if (n.leftChild) {
    w.label(n.leftChild);
    w.u64(n.leftEpoch ?? NO_CHILD_EPOCH);
  }
  if (n.rightChild) {
    w.label(n.rightChild);
    w.u64(n.rightEpoch ?? NO_CHILD_EPOCH);
  }
  w.raw(n.hash);
}

/** A child's write epoch as read: the codec's "none" is undefined. */
function childEpoch(r: ByteReader): bigint | undefined {
  const epoch = r.u64();
  return epoch === NO_CHILD_EPOCH ? undefined : epoch;
}

/** Appends `r`'s bytes. */
export function writeRecord(w: ByteWriter, r: DbRecord): void {
  w.u8(RECORD_KIND[r.kind]);
  switch (r.kind) {
    case 'azks':
      w.u64(r.latestEpoch);
      w.u64(r.numNodes);
      break;
    case 'treeNode':
      w.label(r.label);
      writeNode(w, r.latest);
      w.u8(r.previous ? 1 : 0);
      if (r.previous) writeNode(w, r.previous);
      break;
    case 'valueState':
      w.bytes(r.username);
      w.u64(r.epoch);
      w.u64(r.version);
      w.label(r.label);
      w.bytes(r.value);
      break;
  }
}

/** The tree node at the reader's position (labels and hash are views of its bytes). */
export function readNode(r: ByteReader): TreeNode {
  const label = r.label();
  const lastEpoch = r.u64();
  const minDescendantEpoch = r.u64();
  const parent = r.label();
  const nodeType = r.u8() as NodeType;
  const children = r.u8();
  const leftChild = children & 1 ? r.label() : undefined;
  const leftEpoch = children & 1 ? childEpoch(r) : undefined;
  const rightChild = children & 2 ? r.label() : undefined;
  const rightEpoch = children & 2 ? childEpoch(r) : undefined;
  return {
    label,
    lastEpoch,
    minDescendantEpoch,
    parent,
    nodeType,
    leftChild,
    rightChild,
    leftEpoch,
    rightEpoch,
    hash: r.raw(32),
  };
}

/**
 * The record at the reader's position. Its labels, hashes and byte fields are views of the
 * reader's bytes (no copy).
 * @throws RangeError for bytes that are not a record
 */
export function readRecord(r: ByteReader): DbRecord {
  const kind = r.u8();
  switch (kind) {
    case RECORD_KIND.azks:
      return { kind: 'azks', latestEpoch: r.u64(), numNodes: r.u64() };
    case RECORD_KIND.treeNode: {
      const label = r.label();
      const latest = readNode(r);
      const previous = r.u8() === 1 ? readNode(r) : undefined;
      return { kind: 'treeNode', label, latest, previous };
    }
    case RECORD_KIND.valueState:
      return {
        kind: 'valueState',
        username: r.bytes(),
        epoch: r.u64(),
        version: r.u64(),
        label: r.label(),
        value: r.bytes(),
      };
    default:
      throw new RangeError(`unknown record kind ${kind} in record bytes`);
  }
}

const NODE_TYPES = new Set<number>([1, 2, 3]);

function skipLabel(r: ByteReader): void {
  if (r.u16() > 256) throw new RangeError('a label longer than 256 bits in record bytes');
  r.skip(32);
}

/**
 * The length of the tree-node record whose bytes past its kind byte begin at `at` (its label,
 * latest node, previous flag and previous node), after the checks `skipRecord` makes.
 * @throws RangeError for bytes that are not a tree-node record's
 */
export function treeNodeBodyLength(bytes: Uint8Array, at: number): number {
  if (at + LABEL_BYTES > bytes.length) throw new RangeError('truncated record bytes');
  if (!labelFits(bytes, at)) throw new RangeError('a label longer than 256 bits in record bytes');
  let end = at + LABEL_BYTES;
  end += nodeBytesLength(bytes, end);
  if (end >= bytes.length) throw new RangeError('truncated record bytes');
  const previous = bytes[end++]!;
  if (previous > 1) throw new RangeError('an unknown previous flag in record bytes');
  if (previous === 1) end += nodeBytesLength(bytes, end);
  return end - at;
}

/**
 * Moves the reader past one record, checking everything `readRecord` would need to read it
 * back (kinds, flags, label lengths, that the bytes are there), and returns its kind.
 * @throws RangeError for bytes that are not a record
 */
export function skipRecord(r: ByteReader): number {
  const kind = r.u8();
  switch (kind) {
    case RECORD_KIND.azks:
      r.skip(16);
      break;
    case RECORD_KIND.treeNode:
      r.skipMeasured(treeNodeBodyLength);
      break;
    case RECORD_KIND.valueState:
      r.skip(r.u32());
      r.skip(16);
      skipLabel(r);
      r.skip(r.u32());
      break;
    default:
      throw new RangeError(`unknown record kind ${kind} in record bytes`);
  }
  return kind;
}

/**
 * Offsets within a tree node's bytes (`writeNode`'s layout), for readers that take fields
 * straight from the bytes: label at 0 (34 bytes), lastEpoch, minDescendantEpoch, parent (34),
 * node type, children flag, the children present (CHILD_BYTES each: the label, then the write
 * epoch at `childEpoch`), then the 32-byte hash.
 */
export const NODE_FIELD = {
  lastEpoch: 34,
  minEpoch: 42,
  parent: 50,
  type: 84,
  children: 85,
  child: 86,
  childEpoch: LABEL_BYTES,
} as const;
/** Offset of the latest node in a tree-node record's bytes: after the kind byte and label. */
export const RECORD_LATEST = 35;

/** Whether the label at `at` of `bytes` (`u16 len || 32 bytes`) is at most 256 bits. */
function labelFits(bytes: Uint8Array, at: number): boolean {
  return ((bytes[at]! << 8) | bytes[at + 1]!) <= 256;
}

/** Where the 32-byte hash of the tree node whose bytes begin at `at` is: after its children. */
export function nodeHashAt(bytes: Uint8Array, at: number): number {
  const children = bytes[at + NODE_FIELD.children]!;
  return at + NODE_FIELD.child + CHILD_BYTES * ((children & 1) + (children >> 1));
}

/**
 * The length of the tree node whose bytes begin at `at`, after checking what reading it back
 * needs: that all of it is there, its type and children flag are known, and its labels are at
 * most 256 bits.
 * @throws RangeError for bytes that are not a tree node
 */
export function nodeBytesLength(bytes: Uint8Array, at: number): number {
  if (at + NODE_FIELD.child > bytes.length) throw new RangeError('truncated record bytes');
  const children = bytes[at + NODE_FIELD.children]!;
  if (children > 3) throw new RangeError('an unknown children flag in record bytes');
  if (!NODE_TYPES.has(bytes[at + NODE_FIELD.type]!)) {
    throw new RangeError('an unknown node type in record bytes');
  }
  const hash = nodeHashAt(bytes, at);
  if (hash + 32 > bytes.length) throw new RangeError('truncated record bytes');
  for (let label = at + NODE_FIELD.child; label < hash; label += CHILD_BYTES) {
    if (!labelFits(bytes, label)) {
      throw new RangeError('a label longer than 256 bits in record bytes');
    }
  }
  if (!labelFits(bytes, at) || !labelFits(bytes, at + NODE_FIELD.parent)) {
    throw new RangeError('a label longer than 256 bits in record bytes');
  }
  return hash + 32 - at;
}

/** The u64 at `at` of `bytes` as a double: exact below 2^53, 2^53 or more from there up. */
export function u64Number(bytes: Uint8Array, at: number): number {
  const hi =
    ((bytes[at]! << 24) | (bytes[at + 1]! << 16) | (bytes[at + 2]! << 8) | bytes[at + 3]!) >>> 0;
  const lo =
    ((bytes[at + 4]! << 24) | (bytes[at + 5]! << 16) | (bytes[at + 6]! << 8) | bytes[at + 7]!) >>>
    0;
  // hi * 2^32 is exact; the sum rounds once, as converting the u64 would
  return hi * 4294967296 + lo;
}
