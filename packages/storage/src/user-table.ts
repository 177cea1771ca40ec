/**
 * The packed store's index of value states (packed-memory-database.ts): a hash table by
 * username, like the nodes' (node-table.ts), compared with the username in the record's
 * bytes of the entry's first location. An entry is the location plus one of a user's one
 * value state, or minus one minus the index in `lists` of the locations of a user's several
 * (one per epoch).
 *
 * Byte layouts read here: a slab entry is `u32 length || record`, and a value-state record
 * starts `kind || u32 username length || username || u64 epoch` (record-codec.ts, the bytes
 * of the records spec section 9.1 lists).
 */

import { bytesEqual } from '@akd-ts/core';
import { offsetOf, type Slabs } from './slabs.js';
import { bytesHash, regrown } from './table-hash.js';

export class UserTable {
  private table = new Float64Array(1 << 12);
  private hashes = new Int32Array(1 << 12);
  private count = 0;
  /** The hash the last `slotOf` computed (set there, read right after). */
  private probed = 0;
  private readonly lists: number[][] = [];

  constructor(private readonly slabs: Slabs) {}

  /** Users held. */
  get size(): number {
    return this.count;
  }

  /**
   * Adds the value state of `username` for `epoch` just appended at `location`; returns the
   * location of the one it replaced (same user and epoch), or -1 (the caller releases it).
   */
  put(location: number, username: Uint8Array, epoch: bigint): number {
    const slot = this.slotOf(username);
    const entry = this.table[slot]!;
    if (entry === 0) {
      this.table[slot] = location + 1;
      this.hashes[slot] = this.probed;
      if (++this.count * 2 > this.table.length) this.grow();
      return -1;
    }
    if (entry > 0) {
      const old = entry - 1;
      if (this.epochAt(old) === epoch) {
        this.table[slot] = location + 1;
        return old;
      }
      this.lists.push([old, location]);
      this.table[slot] = -this.lists.length;
      return -1;
    }
    const list = this.lists[-entry - 1]!;
    const i = list.findIndex((l) => this.epochAt(l) === epoch);
    if (i < 0) {
      list.push(location);
      return -1;
    }
    const old = list[i]!;
    list[i] = location;
    return old;
  }

  /** Compaction's move of `record`, found at `location`: appended again if it is still held. */
  move(record: Uint8Array, location: number): void {
    const slot = this.slotOf(usernameOf(record));
    const entry = this.table[slot]!;
    if (entry === location + 1) this.table[slot] = this.slabs.append(record) + 1;
    else if (entry < 0) {
      const list = this.lists[-entry - 1]!;
      const i = list.indexOf(location);
      if (i >= 0) list[i] = this.slabs.append(record);
    }
  }

  /** The locations of `username`'s value states (none: empty). */
  locationsOf(username: Uint8Array): readonly number[] {
    const entry = this.table[this.slotOf(username)]!;
    return entry === 0 ? [] : entry > 0 ? [entry - 1] : this.lists[-entry - 1]!;
  }

  /** The location of `username`'s value state for `epoch`, or undefined. */
  find(username: Uint8Array, epoch: bigint): number | undefined {
    return this.locationsOf(username).find((l) => this.epochAt(l) === epoch);
  }

  /** The locations of every value state. */
  *locations(): Generator<number> {
    for (const entry of this.table) {
      if (entry > 0) yield entry - 1;
      else if (entry < 0) yield* this.lists[-entry - 1]!;
    }
  }

  /** The location of one value state of each user (the first a user's entry holds). */
  *firstLocations(): Generator<number> {
    for (const entry of this.table) {
      if (entry > 0) yield entry - 1;
      else if (entry < 0) yield this.lists[-entry - 1]![0]!;
    }
  }

  /** The epoch of the value-state record at `location`. */
  epochAt(location: number): bigint {
    const view = this.slabs.viewOf(location);
    const at = offsetOf(location);
    // u32 length, kind, u32 username length, username, u64 epoch
    return view.getBigUint64(at + 9 + view.getUint32(at + 5));
  }

  /** The slot of `username`: its entry, or the empty slot where it goes. */
  private slotOf(username: Uint8Array): number {
    const table = this.table;
    const hashes = this.hashes;
    const mask = table.length - 1;
    const h = bytesHash(username);
    this.probed = h;
    let slot = h & mask;
    for (;;) {
      const entry = table[slot]!;
      if (entry === 0) return slot;
      if (hashes[slot] === h) {
        const location = entry > 0 ? entry - 1 : this.lists[-entry - 1]![0]!;
        if (bytesEqual(usernameOf(this.slabs.bytesAt(location)), username)) return slot;
      }
      slot = (slot + 1) & mask;
    }
  }

  private grow(): void {
    [this.table, this.hashes] = regrown(this.table, this.hashes);
  }
}

/** A value-state record's username, from its bytes (a view). */
export function usernameOf(record: Uint8Array): Uint8Array {
  const view = new DataView(record.buffer, record.byteOffset, record.byteLength);
  return record.subarray(5, 5 + view.getUint32(1));
}
