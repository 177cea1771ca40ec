/**
 * An in-memory database that keeps each record as its bytes (record-codec.ts) in large slabs,
 * and builds record objects only when they are read. A directory's records as objects cost
 * several times their bytes (a tree node's record is a dozen objects: its versions, their
 * labels, each label's array and key string), which is what a long-lived store held by several
 * processes cannot afford: `akd serve` keeps a memory store's replica in every process. Reads
 * cost a decode each (a StorageManager's cache in front keeps the hot records as objects);
 * MemoryDatabase, which keeps the objects themselves, stays the store of tests, benchmarks
 * and short-lived directories.
 *
 * Layout: records are appended to slabs of 64 MiB (a record larger than that gets a slab of its
 * own), each as `u32 length || record bytes`. A record's location is `slab * 2^26 + offset`.
 * Tree nodes are found in a hash table of locations by label (compared with the label in the
 * record's bytes), value states in another by username (one location, or a list for users
 * with several versions). Writing a record again appends it and leaves its
 * old bytes dead; a slab whose live bytes fall under half of what it holds has its live
 * records moved to the slab being filled and is dropped, so dead bytes stay below about the
 * live ones.
 */

import { AkdError, bytesEqual, type NodeLabel } from '@akd-ts/core';
import type { Database, DbSetState, NodeRecordBytes } from './database.js';
import { notFound } from './errors.js';
import { InProcessStore } from './in-process-store.js';
import { codecLabelCount } from './node-reads.js';
import {
  ByteReader,
  ByteWriter,
  LABEL_BYTES,
  RECORD_KIND,
  readRecord,
  skipRecord,
  writeRecord,
} from './record-codec.js';
import {
  fullKey,
  type AzksRecord,
  type DbRecord,
  type RecordFor,
  type StorageKey,
  type TreeNodeRecord,
  type ValueStateRecord,
} from './records.js';

/**
 * The default slab size, 64 MiB: above the largest threshold (32 MiB) past which glibc's
 * malloc maps each block on its own, so that slabs never sit in the allocator's heap, where a
 * long-lived block would keep the memory freed below it (a publish's garbage) from being given
 * back. Pages of a slab not written yet take no memory.
 */
const SLAB_BYTES = 64 * 1024 * 1024;
/**
 * Slab bytes a write compacts, at least and per byte it appended: each slab compacted is at
 * most half live, so scanning four bytes per byte written frees space faster than writes use
 * it up, and a write of a few hundred KB pays a few milliseconds.
 */
const MIN_COMPACT_BYTES = 1024 * 1024;
const COMPACT_FACTOR = 4;
/**
 * Locations are `slab * SLOT + offset`; offsets stay below it (slabs are at most that large,
 * and a larger record has one of its own, starting at 0).
 */
const SLOT = SLAB_BYTES;

export interface PackedMemoryOptions {
  /** Bytes of a slab (default 64 MiB, at most that; tests use small ones). */
  slabBytes?: number;
}

/**
 * A Database held in this process's memory as bytes.
 *
 * @example
 * ```ts
 * const db = new PackedMemoryDatabase();
 * await db.set({ kind: 'azks', latestEpoch: 0n, numNodes: 1n });
 * ```
 */
export class PackedMemoryDatabase extends InProcessStore implements Database {
  private readonly slabs: (Uint8Array | undefined)[] = [];
  private readonly views: (DataView | undefined)[] = [];
  /** Bytes written to each slab, and bytes of it that records still point at. */
  private readonly used: number[] = [];
  private readonly live: number[] = [];
  private readonly free: number[] = [];
  /** Slabs to compact once the current write is done. */
  private readonly sparse = new Set<number>();
  /** The slab being compacted, its buffer, and how far: its records before `at` are moved. */
  private compacting: { slab: number; at: number; buf: Uint8Array } | undefined;
  /** Bytes appended to slabs so far (writes compact in proportion), and gone through by compaction. */
  private appended = 0;
  private compacted = 0;
  /** The slab being filled, or -1. */
  private current = -1;
  /**
   * Tree nodes: a hash table of their locations (plus one; 0 is an empty slot), by label,
   * probed linearly and at most half full. The label is read back from the record's bytes: a
   * node costs 12 bytes here, against about 150 for a map entry and its key string.
   * `hashes` holds each slot's label hash: a probe reads a record's label only when the hash
   * matches, and growing the table never reads a record. Rehashing by reading every label back
   * from the slabs took 175 ms at 2M slots (a proof server's replica passes that growing from
   * 224,000 to 324,000 labels), a stall of every request in the process.
   */
  private table = new Float64Array(1 << 12);
  private hashes = new Int32Array(1 << 12);
  private nodeCount = 0;
  /**
   * Value states: a hash table by username (compared with the username in the record's
   * bytes, of the entry's first location) like the nodes' table. An entry is the location
   * plus one of a user's one value state, or minus one minus the index in `userLists` of
   * the locations of a user's several (one per epoch).
   */
  private userTable = new Float64Array(1 << 12);
  private userHashes = new Int32Array(1 << 12);
  private userCount = 0;
  /** The hash the last `slotOf` or `userSlot` computed (set there, read right after). */
  private probed = 0;
  private readonly userLists: number[][] = [];
  private azks: AzksRecord | undefined;
  private readonly scratch = new ByteWriter(4096);
  private readonly slabBytes: number;

  /** @throws RangeError for a slab size that is not an integer from 64 bytes to 64 MiB */
  constructor(options: PackedMemoryOptions = {}) {
    super();
    const bytes = options.slabBytes ?? SLAB_BYTES;
    if (!Number.isInteger(bytes) || bytes < 64 || bytes > SLAB_BYTES) {
      throw new RangeError(`a slab is 64 bytes to 64 MiB, not ${bytes}`);
    }
    this.slabBytes = bytes;
  }

  // ---- slabs ----

  /** Appends `record` (a record's bytes) and returns its location. */
  private append(record: Uint8Array): number {
    const size = 4 + record.length;
    let slab = this.current;
    if (size > this.slabBytes) slab = this.newSlab(size);
    else if (slab < 0 || this.used[slab]! + size > this.slabBytes) {
      const full = slab;
      slab = this.current = this.newSlab(this.slabBytes);
      // the slab just filled is now like any other
      if (full >= 0 && this.live[full]! * 2 < this.used[full]!) this.sparse.add(full);
    }
    const at = this.used[slab]!;
    this.views[slab]!.setUint32(at, record.length);
    this.slabs[slab]!.set(record, at + 4);
    this.used[slab] = at + size;
    this.live[slab]! += size;
    this.appended += size;
    return slab * SLOT + at;
  }

  private newSlab(bytes: number): number {
    const slab = this.free.pop() ?? this.slabs.length;
    const buf = new Uint8Array(bytes);
    this.slabs[slab] = buf;
    this.views[slab] = new DataView(buf.buffer);
    this.used[slab] = 0;
    this.live[slab] = 0;
    return slab;
  }

  /** The record at `location` is no longer pointed at. */
  private release(location: number): void {
    const slab = Math.floor(location / SLOT);
    const at = location - slab * SLOT;
    this.live[slab]! -= 4 + this.views[slab]!.getUint32(at);
    if (slab === this.current) return;
    if (this.live[slab] === 0) this.dropSlab(slab);
    else if (this.live[slab]! * 2 < this.used[slab]!) this.sparse.add(slab);
  }

  private dropSlab(slab: number): void {
    this.slabs[slab] = undefined;
    this.views[slab] = undefined;
    this.used[slab] = 0;
    this.live[slab] = 0;
    this.sparse.delete(slab);
    this.free.push(slab);
  }

  /**
   * Moves live records of sparse slabs to the current one, about `budget` bytes of slab at
   * most, and drops a slab once all of it is done; the next call goes on where this one
   * stopped. Each write pays for part of a compaction in proportion to what it wrote
   * ({@link compactAfter}) instead of a whole 64 MiB slab at once: a proof server applying an
   * epoch piece by piece spent tens of milliseconds between two requests on one.
   */
  private compact(budget: number): void {
    while (budget > 0) {
      let c = this.compacting;
      if (c === undefined) {
        const next = this.sparse.values().next();
        if (next.done === true) return;
        const slab = next.value;
        this.sparse.delete(slab);
        if (slab === this.current || this.slabs[slab] === undefined) continue;
        c = this.compacting = { slab, at: 0, buf: this.slabs[slab]! };
      }
      const { slab, buf } = c;
      // every record of it was rewritten meanwhile: dropped already (maybe even reused)
      if (this.slabs[slab] !== buf) {
        this.compacting = undefined;
        continue;
      }
      const view = this.views[slab]!;
      const end = this.used[slab]!;
      while (c.at < end && budget > 0) {
        const at = c.at;
        const length = view.getUint32(at);
        const location = slab * SLOT + at;
        const record = buf.subarray(at + 4, at + 4 + length);
        if (record[0] === RECORD_KIND.treeNode) {
          const slot = this.slotOf(buf, at + 7, view.getUint16(at + 5));
          if (this.table[slot] === location + 1) this.table[slot] = this.append(record) + 1;
        } else {
          this.moveState(record, location);
        }
        c.at = at + 4 + length;
        budget -= 4 + length;
        this.compacted += 4 + length;
      }
      if (c.at >= end) {
        this.compacting = undefined;
        this.dropSlab(slab);
      }
    }
  }

  /** Compacts in proportion to the bytes appended since `before` (a count of `appended`). */
  private compactAfter(before: number): void {
    this.compact(Math.max(MIN_COMPACT_BYTES, COMPACT_FACTOR * (this.appended - before)));
  }

  private moveState(record: Uint8Array, location: number): void {
    const slot = this.userSlot(usernameOf(record));
    const entry = this.userTable[slot]!;
    if (entry === location + 1) this.userTable[slot] = this.append(record) + 1;
    else if (entry < 0) {
      const list = this.userLists[-entry - 1]!;
      const i = list.indexOf(location);
      if (i >= 0) list[i] = this.append(record);
    }
  }

  /** The slot of `username` in the users' table: its entry, or the empty slot where it goes. */
  private userSlot(username: Uint8Array): number {
    const table = this.userTable;
    const hashes = this.userHashes;
    const mask = table.length - 1;
    const h = bytesHash(username);
    this.probed = h;
    let slot = h & mask;
    for (;;) {
      const entry = table[slot]!;
      if (entry === 0) return slot;
      if (hashes[slot] === h) {
        const location = entry > 0 ? entry - 1 : this.userLists[-entry - 1]![0]!;
        if (bytesEqual(usernameOf(this.bytesAt(location)), username)) return slot;
      }
      slot = (slot + 1) & mask;
    }
  }

  private growUsers(): void {
    [this.userTable, this.userHashes] = regrown(this.userTable, this.userHashes);
  }

  /** The locations of `username`'s value states (none: empty). */
  private userLocations(username: Uint8Array): readonly number[] {
    const entry = this.userTable[this.userSlot(username)]!;
    return entry === 0 ? [] : entry > 0 ? [entry - 1] : this.userLists[-entry - 1]!;
  }

  /** The locations of every value state. */
  private *stateLocations(): Generator<number> {
    for (const entry of this.userTable) {
      if (entry > 0) yield entry - 1;
      else if (entry < 0) yield* this.userLists[-entry - 1]!;
    }
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
    const slab = Math.floor(location / SLOT);
    const view = this.views[slab]!;
    // u32 length, kind, u16 len, 32 bytes
    const i = location - slab * SLOT + 5;
    if (view.getUint16(i) !== len) return false;
    for (let k = 0; k < 32; k += 4) {
      const j = at + k;
      const word = (val[j]! << 24) | (val[j + 1]! << 16) | (val[j + 2]! << 8) | val[j + 3]!;
      if (view.getInt32(i + 2 + k) !== word) return false;
    }
    return true;
  }

  private grow(): void {
    [this.table, this.hashes] = regrown(this.table, this.hashes);
  }

  /** The location of the tree node labelled `label`, or undefined. */
  private nodeLocation(label: NodeLabel): number | undefined {
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
  private nodeLocationsAt(labels: Uint8Array): Float64Array {
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

  /** The label length of the tree-node record at `location`. */
  private labelLengthAt(location: number): number {
    const slab = Math.floor(location / SLOT);
    const buf = this.slabs[slab]!;
    // u32 length, kind, u16 len
    const i = location - slab * SLOT + 5;
    return (buf[i]! << 8) | buf[i + 1]!;
  }

  /** The locations of every tree node. */
  private *nodeLocations(): Generator<number> {
    for (const entry of this.table) if (entry !== 0) yield entry - 1;
  }

  /** The bytes of the record at `location` (a view of its slab). */
  private bytesAt(location: number): Uint8Array {
    const slab = Math.floor(location / SLOT);
    const at = location - slab * SLOT;
    const length = this.views[slab]!.getUint32(at);
    return this.slabs[slab]!.subarray(at + 4, at + 4 + length);
  }

  /** The record at `location`, in arrays of its own (slabs are dropped once compacted). */
  private recordAt(location: number): DbRecord {
    return readRecord(new ByteReader(this.bytesAt(location).slice()));
  }

  private epochAt(location: number): bigint {
    const slab = Math.floor(location / SLOT);
    const at = location - slab * SLOT;
    const view = this.views[slab]!;
    // u32 length, kind, u32 username length, username, u64 epoch
    return view.getBigUint64(at + 9 + view.getUint32(at + 5));
  }

  // ---- writes ----

  private put(record: DbRecord): void {
    if (record.kind === 'azks') {
      // one small record, kept as the object it is
      this.azks = record;
      return;
    }
    this.scratch.reset();
    writeRecord(this.scratch, record);
    this.putBytes(this.scratch.written(), record.kind === 'valueState' ? record : undefined);
  }

  /** Stores a tree node's or value state's bytes (`state`: the value state, when known). */
  private putBytes(bytes: Uint8Array, state?: ValueStateRecord): void {
    if (bytes[0] === RECORD_KIND.treeNode) {
      const len = (bytes[1]! << 8) | bytes[2]!;
      const location = this.append(bytes);
      const slot = this.slotOf(bytes, 3, len);
      const old = this.table[slot]!;
      this.table[slot] = location + 1;
      this.hashes[slot] = this.probed;
      if (old !== 0) this.release(old - 1);
      else if (++this.nodeCount * 2 > this.table.length) this.grow();
      return;
    }
    const location = this.append(bytes);
    const epoch = state?.epoch ?? this.epochAt(location);
    const slot = this.userSlot(state?.username ?? usernameOf(bytes));
    const entry = this.userTable[slot]!;
    if (entry === 0) {
      this.userTable[slot] = location + 1;
      this.userHashes[slot] = this.probed;
      if (++this.userCount * 2 > this.userTable.length) this.growUsers();
    } else if (entry > 0) {
      const old = entry - 1;
      if (this.epochAt(old) === epoch) {
        this.userTable[slot] = location + 1;
        this.release(old);
      } else {
        this.userLists.push([old, location]);
        this.userTable[slot] = -this.userLists.length;
      }
    } else {
      const list = this.userLists[-entry - 1]!;
      const i = list.findIndex((l) => this.epochAt(l) === epoch);
      if (i < 0) list.push(location);
      else {
        const old = list[i]!;
        list[i] = location;
        this.release(old);
      }
    }
  }

  async set(record: DbRecord): Promise<void> {
    this.check();
    const before = this.appended;
    this.put(record);
    this.compactAfter(before);
  }

  async batchSet(records: DbRecord[], _state: DbSetState = 'general'): Promise<void> {
    this.check();
    // synchronous, so no reader can observe part of the batch
    const before = this.appended;
    for (const r of records) this.put(r);
    this.compactAfter(before);
  }

  /**
   * Writes a batch of records given as bytes: `u32 count` then the records (record-codec.ts;
   * the body of a records change in the server's replication codec), without building them
   * as objects. Checked whole before anything is written.
   * @throws AkdError `STORAGE_CORRUPT` for bytes that are not such a batch (nothing written)
   */
  async importRecords(body: Uint8Array): Promise<void> {
    this.check();
    const starts: number[] = [];
    const r = new ByteReader(body);
    try {
      const count = r.u32();
      for (let i = 0; i < count; i++) {
        starts.push(r.at);
        skipRecord(r);
      }
      starts.push(r.at);
    } catch (e) {
      throw new AkdError('STORAGE_CORRUPT', `records that cannot be read: ${(e as Error).message}`);
    }
    if (r.left !== 0) {
      throw new AkdError('STORAGE_CORRUPT', `${r.left} bytes after the records`);
    }
    const before = this.appended;
    for (let i = 0; i + 1 < starts.length; i++) {
      const bytes = body.subarray(starts[i]!, starts[i + 1]!);
      if (bytes[0] === RECORD_KIND.azks)
        this.azks = readRecord(new ByteReader(bytes)) as AzksRecord;
      else this.putBytes(bytes);
    }
    this.compactAfter(before);
  }

  /** Every record as bytes: `u32 count` then the records (what `importRecords` reads). */
  exportRecords(): Uint8Array {
    return this.exportRecordPieces(Infinity).next().value!;
  }

  /**
   * Every record as bytes in pieces of at most about `maxBytes` (one record may exceed it),
   * each `u32 count` then records, the azks record in the last: importing them in order
   * gives what `exportRecords` gives. The store must not be written while they are taken (its
   * records move when slabs are compacted); a snapshot written piece by piece keeps one piece
   * in memory at a time instead of the whole store.
   */
  *exportRecordPieces(maxBytes: number): Generator<Uint8Array, void, undefined> {
    const locations = [...this.nodeLocations(), ...this.stateLocations()];
    let azks: Uint8Array | undefined;
    if (this.azks !== undefined) {
      const w = new ByteWriter(32);
      writeRecord(w, this.azks);
      azks = w.done();
    }
    let from = 0;
    do {
      let to = from;
      let size = 4;
      while (
        to < locations.length &&
        (to === from || size + this.bytesAt(locations[to]!).length <= maxBytes)
      ) {
        size += this.bytesAt(locations[to]!).length;
        to++;
      }
      const last = to === locations.length;
      if (last && azks !== undefined) size += azks.length;
      const out = new Uint8Array(size);
      new DataView(out.buffer).setUint32(0, to - from + (last && azks !== undefined ? 1 : 0));
      let at = 4;
      for (let i = from; i < to; i++) {
        const bytes = this.bytesAt(locations[i]!);
        out.set(bytes, at);
        at += bytes.length;
      }
      if (last && azks !== undefined) out.set(azks, at);
      yield out;
      from = to;
    } while (from < locations.length);
  }

  // ---- reads ----

  private stateLocation(username: Uint8Array, epoch: bigint): number | undefined {
    return this.userLocations(username).find((l) => this.epochAt(l) === epoch);
  }

  protected statesOf(username: Uint8Array): ValueStateRecord[] {
    return this.userLocations(username).map((l) => this.recordAt(l) as ValueStateRecord);
  }

  async get<K extends StorageKey>(key: K): Promise<RecordFor<K>> {
    this.check();
    let found: DbRecord | undefined;
    if (key.kind === 'azks') found = this.azks;
    else {
      const location =
        key.kind === 'treeNode'
          ? this.nodeLocation(key.label)
          : this.stateLocation(key.username, key.epoch);
      found = location === undefined ? undefined : this.recordAt(location);
    }
    if (found === undefined) throw notFound(`record ${fullKey(key)}`);
    return found as RecordFor<K>;
  }

  async batchGet(keys: StorageKey[]): Promise<DbRecord[]> {
    this.check();
    const out: DbRecord[] = [];
    // duplicate keys find the same location (or the one azks record): one record each
    const seen = new Set<number>();
    let azks = false;
    for (const key of keys) {
      if (key.kind === 'azks') {
        if (!azks && this.azks !== undefined) out.push(this.azks);
        azks = true;
        continue;
      }
      const location =
        key.kind === 'treeNode'
          ? this.nodeLocation(key.label)
          : this.stateLocation(key.username, key.epoch);
      if (location !== undefined && !seen.has(location)) {
        seen.add(location);
        out.push(this.recordAt(location));
      }
    }
    return out;
  }

  async batchGetNodes(labels: readonly NodeLabel[]): Promise<(TreeNodeRecord | undefined)[]> {
    this.check();
    const asked = new ByteWriter(LABEL_BYTES * labels.length + 1);
    for (const label of labels) asked.label(label);
    const locations = this.nodeLocationsAt(asked.written());
    return Array.from(locations, (location) =>
      location < 0 ? undefined : (this.recordAt(location) as TreeNodeRecord),
    );
  }

  async batchGetNodeBytes(labels: Uint8Array): Promise<NodeRecordBytes> {
    this.check();
    const count = codecLabelCount(labels);
    // views of the slabs, not copies: a record's bytes never change while its slab exists
    // (records are only ever appended), and a slab dropped by compaction lives on for as long
    // as an answer holds it
    const buffers: Uint8Array[] = [];
    const bufferOf = new Map<number, number>();
    const buffer = new Int32Array(count);
    const starts = new Int32Array(count);
    const locations = this.nodeLocationsAt(labels);
    for (let i = 0; i < count; i++) {
      const location = locations[i]!;
      if (location < 0) {
        buffer[i] = starts[i] = -1;
        continue;
      }
      const slab = Math.floor(location / SLOT);
      let b = bufferOf.get(slab);
      if (b === undefined) {
        b = buffers.push(this.slabs[slab]!) - 1;
        bufferOf.set(slab, b);
      }
      buffer[i] = b;
      // past the record's u32 length
      starts[i] = location - slab * SLOT + 4;
    }
    return { buffers, buffer, starts };
  }

  /** Every stored record, as objects (tests). */
  allRecords(): DbRecord[] {
    const out: DbRecord[] = [];
    if (this.azks !== undefined) out.push(this.azks);
    for (const l of this.nodeLocations()) out.push(this.recordAt(l));
    for (const l of this.stateLocations()) out.push(this.recordAt(l));
    return out;
  }

  /** Bytes held in slabs, and how many of them records point at (tests, metrics). */
  slabUsage(): {
    slabs: number;
    bytes: number;
    liveBytes: number;
    toCompact: number;
    compacted: number;
  } {
    let slabs = 0;
    let bytes = 0;
    let liveBytes = 0;
    for (let i = 0; i < this.slabs.length; i++) {
      if (this.slabs[i] === undefined) continue;
      slabs++;
      bytes += this.slabs[i]!.length;
      liveBytes += this.live[i]!;
    }
    // slab bytes that compaction has yet to go through
    let toCompact = 0;
    for (const slab of this.sparse) toCompact += this.used[slab]!;
    const c = this.compacting;
    if (c !== undefined && this.slabs[c.slab] === c.buf) toCompact += this.used[c.slab]! - c.at;
    return { slabs, bytes, liveBytes, toCompact, compacted: this.compacted };
  }
}

/**
 * A table twice the size of `table` with its entries, each placed by its hash in `hashes`
 * (linear probing; no two entries are equal, so nothing is compared).
 */
function regrown(
  table: Float64Array<ArrayBuffer>,
  hashes: Int32Array<ArrayBuffer>,
): [Float64Array<ArrayBuffer>, Int32Array<ArrayBuffer>] {
  const bigger = new Float64Array(table.length * 2);
  const biggerHashes = new Int32Array(table.length * 2);
  const mask = bigger.length - 1;
  for (let i = 0; i < table.length; i++) {
    const entry = table[i]!;
    if (entry === 0) continue;
    const h = hashes[i]!;
    let slot = h & mask;
    while (bigger[slot] !== 0) slot = (slot + 1) & mask;
    bigger[slot] = entry;
    biggerHashes[slot] = h;
  }
  return [bigger, biggerHashes];
}

/** A hash of the label `val[at..at + 32]` of length `len` (all its bytes: murmur3's mixing). */
function labelHash(val: Uint8Array, at: number, len: number): number {
  let h = Math.imul(len + 1, 0x9e3779b1);
  for (let i = at; i < at + 32; i += 4) {
    const word = (val[i]! << 24) | (val[i + 1]! << 16) | (val[i + 2]! << 8) | val[i + 3]!;
    h = Math.imul(h ^ Math.imul(word, 0xcc9e2d51), 0x1b873593);
    h = (h << 13) | (h >>> 19);
  }
  h ^= h >>> 16;
  h = Math.imul(h, 0x85ebca6b);
  h ^= h >>> 13;
  h = Math.imul(h, 0xc2b2ae35);
  // a signed 32-bit value, as the tables' Int32Array hashes hold it
  return h ^ (h >>> 16);
}

/** A hash of `bytes` (murmur3's mixing). */
function bytesHash(bytes: Uint8Array): number {
  let h = Math.imul(bytes.length + 1, 0x9e3779b1);
  for (let i = 0; i < bytes.length; i++) {
    h = Math.imul(h ^ bytes[i]!, 0x01000193);
  }
  h ^= h >>> 16;
  h = Math.imul(h, 0x85ebca6b);
  h ^= h >>> 13;
  h = Math.imul(h, 0xc2b2ae35);
  // a signed 32-bit value, as the tables' Int32Array hashes hold it
  return h ^ (h >>> 16);
}

/** A value-state record's username, from its bytes (a view). */
function usernameOf(record: Uint8Array): Uint8Array {
  const view = new DataView(record.buffer, record.byteOffset, record.byteLength);
  return record.subarray(5, 5 + view.getUint32(1));
}
