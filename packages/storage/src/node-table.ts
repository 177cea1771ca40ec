/**
 * The packed store's index of tree nodes (packed-memory-database.ts): a hash table of their
 * records' locations in the slabs (plus one; 0 is an empty slot), by label, probed linearly
 * and at most half full. The label is read back from the record's bytes: a node costs 12
 * bytes here, against about 150 for a map entry and its key string. `hashes` holds each
 * slot's label hash: a probe reads a record's label only when the hash matches, and growing
 * the table never reads a record. Rehashing by reading every label back from the slabs took
 * 175 ms at 2M slots (a proof server's replica passes that growing from 224,000 to 324,000
 * labels), a stall of every request in the process.
 *
 * Byte layouts read here: a slab entry is `u32 length || record` and a tree-node record
 * starts `kind || u16 label length || 32 label bytes` (record-codec.ts, the bytes of the
 * records spec section 9.1 lists).
 */

import type { NodeLabel } from '@akd-ts/core';
import { LABEL_BYTES } from './record-codec.js';
import { offsetOf, type Slabs } from './slabs.js';
import { labelHash, regrown } from './table-hash.js';

export class NodeTable {
  private table = new Float64Array(1 << 12);
  private hashes = new Int32Array(1 << 12);
  private count = 0;
  /** The hash the last `slotOf` computed (set there, read right after). */
  private probed = 0;

  constructor(private readonly slabs: Slabs) {}

  /** Nodes held. */
  get size(): number {
    return this.count;
  }

  /**
   * Points the record's label at `location`, where `bytes` (a tree-node record) were just
   * appended; returns the location it replaced, or -1 (the caller releases it).
   */
  put(bytes: Uint8Array, location: number): number {
    const slot = this.slotOf(bytes, 3, (bytes[1]! << 8) | bytes[2]!);
    const old = this.table[slot]!;
    this.table[slot] = location + 1;
    this.hashes[slot] = this.probed;
    if (old !== 0) return old - 1;
    if (++this.count * 2 > this.table.length) this.grow();
    return -1;
  }

  /** Compaction's move of `record`, found at `location`: appended again if it is the node's. */
  move(record: Uint8Array, location: number): void {
    const slot = this.slotOf(record, 3, (record[1]! << 8) | record[2]!);
    if (this.table[slot] === location + 1) this.table[slot] = this.slabs.append(record) + 1;
  }

  /** The location of the tree node labelled `label`, or undefined. */
  find(label: NodeLabel): number | undefined {
    const entry = this.table[this.slotOf(label.val, 0, label.len)]!;
    return entry === 0 ? undefined : entry - 1;
  }

  /**
   * The locations of the tree nodes labelled by `labels`, 34 bytes each in the record codec's
   * form (-1: none). The batch is looked up in passes (every label's hash, then its home
   * slot, then the head of the record found there, then the checks), not one label after
   * another: the loads of a pass do not depend on one another, so the processor keeps many of
   * the batch's cache misses (the table's slots at random, then the records' labels across
   * the slabs) in flight at once where a probe per label waits for each of its own in turn.
   * A walk of 301,799 nodes spent 155 ms in this store one label at a time, 120 ms in passes.
   */
  findAll(labels: Uint8Array): Float64Array {
    const count = labels.length / LABEL_BYTES;
    const table = this.table;
    const hashes = this.hashes;
    const mask = table.length - 1;
    const h = new Int32Array(count);
    for (let i = 0; i < count; i++) {
      const o = LABEL_BYTES * i;
      h[i] = labelHash(labels, o + 2, (labels[o]! << 8) | labels[o + 1]!);
    }
    // the entry of each label's home slot where the hash there is its own (most labels are
    // found at home in a table at most half full); 0 otherwise
    const home = new Float64Array(count);
    for (let i = 0; i < count; i++) {
      const slot = h[i]! & mask;
      home[i] = hashes[slot] === h[i] ? table[slot]! : 0;
    }
    // the label length of the record each home entry points at, which brings its head in
    const heads = new Int32Array(count);
    for (let i = 0; i < count; i++) {
      const entry = home[i]!;
      if (entry !== 0) heads[i] = this.labelLengthAt(entry - 1);
    }
    const out = new Float64Array(count);
    for (let i = 0; i < count; i++) {
      const o = LABEL_BYTES * i;
      const len = (labels[o]! << 8) | labels[o + 1]!;
      const entry = home[i]!;
      if (entry !== 0 && heads[i] === len && this.holdsLabel(entry - 1, labels, o + 2, len)) {
        out[i] = entry - 1;
        continue;
      }
      const found = table[this.slotFrom(h[i]!, labels, o + 2, len)]!;
      out[i] = found - 1;
    }
    return out;
  }

  /** The locations of every tree node. */
  *locations(): Generator<number> {
    for (const entry of this.table) if (entry !== 0) yield entry - 1;
  }

  /**
   * The slot of the label whose 32 bytes are `val[at..at + 32]` and length `len`: the slot
   * holding its location, or the empty slot where it goes.
   */
  private slotOf(val: Uint8Array, at: number, len: number): number {
    const h = labelHash(val, at, len);
    this.probed = h;
    return this.slotFrom(h, val, at, len);
  }

  /** `slotOf`, for a label whose hash `h` is known. */
  private slotFrom(h: number, val: Uint8Array, at: number, len: number): number {
    const table = this.table;
    const hashes = this.hashes;
    const mask = table.length - 1;
    let slot = h & mask;
    for (;;) {
      const entry = table[slot]!;
      if (entry === 0 || (hashes[slot] === h && this.holdsLabel(entry - 1, val, at, len))) {
        return slot;
      }
      slot = (slot + 1) & mask;
    }
  }

  /**
   * Whether the tree-node record at `location` has the label `val[at..at + 32]`, `len`: its
   * bytes compared a 32-bit word at a time (a quarter of a byte loop's loads from the slab).
   */
  private holdsLabel(location: number, val: Uint8Array, at: number, len: number): boolean {
    const view = this.slabs.viewOf(location);
    // u32 length, kind, u16 len, 32 bytes
    const i = offsetOf(location) + 5;
    if (view.getUint16(i) !== len) return false;
    for (let k = 0; k < 32; k += 4) {
      const j = at + k;
      const word = (val[j]! << 24) | (val[j + 1]! << 16) | (val[j + 2]! << 8) | val[j + 3]!;
      if (view.getInt32(i + 2 + k) !== word) return false;
    }
    return true;
  }

  /** The label length of the tree-node record at `location`. */
  private labelLengthAt(location: number): number {
    const buf = this.slabs.bufferOf(location);
    // u32 length, kind, u16 len
    const i = offsetOf(location) + 5;
    return (buf[i]! << 8) | buf[i + 1]!;
  }

  private grow(): void {
    [this.table, this.hashes] = regrown(this.table, this.hashes);
  }
}
