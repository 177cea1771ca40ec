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
 * This file is the Database adapter: which record kind goes where, reads, and the records as
 * bytes (import, export). The parts it stands on, each in a file of its own:
 * - slabs.ts: the records' bytes in 64 MiB slabs, found by location, with compaction;
 * - node-table.ts: tree nodes' locations by label; user-table.ts: value states' by username
 *   (table-hash.ts: their hashes and growth).
 * The azks record, one small record, is kept as the object it is. A new kind of record gets
 * a case in `putBytes`, `get` and `relocate`, and an index of its own beside these.
 */

import { AkdError, fromHex, toHex, type NodeLabel } from '@akd-ts/core';
import type { Database, DbSetState, NodeRecordBytes } from './database.js';
import { notFound } from './errors.js';
import { InProcessStore } from './in-process-store.js';
import { codecLabelBytes, codecLabelCount } from './node-reads.js';
import { NodeTable } from './node-table.js';
import {
  ByteReader,
  ByteWriter,
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
import { SLAB_BYTES, SLOT, Slabs, offsetOf, type SlabUsage } from './slabs.js';
import { UserTable, usernameOf } from './user-table.js';

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
  private readonly slabs: Slabs;
  private readonly nodes: NodeTable;
  private readonly users: UserTable;
  private azks: AzksRecord | undefined;
  private readonly scratch = new ByteWriter(4096);

  /** @throws RangeError for a slab size that is not an integer from 64 bytes to 64 MiB */
  constructor(options: PackedMemoryOptions = {}) {
    super();
    this.slabs = new Slabs(options.slabBytes ?? SLAB_BYTES, (record, location) =>
      this.relocate(record, location),
    );
    this.nodes = new NodeTable(this.slabs);
    this.users = new UserTable(this.slabs);
  }

  /** Compaction's move of a record of a slab it goes through, to the index of its kind. */
  private relocate(record: Uint8Array, location: number): void {
    if (record[0] === RECORD_KIND.treeNode) this.nodes.move(record, location);
    else this.users.move(record, location);
  }

  /** The record at `location`, in arrays of its own (slabs are dropped once compacted). */
  private recordAt(location: number): DbRecord {
    return readRecord(new ByteReader(this.slabs.bytesAt(location).slice()));
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

  /**
   * Stores a tree node's or value state's bytes (`state`: the value state, when known): appends
   * them, points the index of their kind at them, and releases the bytes they replace.
   */
  private putBytes(bytes: Uint8Array, state?: ValueStateRecord): void {
    const location = this.slabs.append(bytes);
    let old: number;
    if (bytes[0] === RECORD_KIND.treeNode) old = this.nodes.put(bytes, location);
    else {
      const epoch = state?.epoch ?? this.users.epochAt(location);
      old = this.users.put(location, state?.username ?? usernameOf(bytes), epoch);
    }
    if (old >= 0) this.slabs.release(old);
  }

  async set(record: DbRecord): Promise<void> {
    this.check();
    const before = this.slabs.appended;
    this.put(record);
    this.slabs.compactAfter(before);
  }

  async batchSet(records: DbRecord[], _state: DbSetState = 'general'): Promise<void> {
    this.check();
    // synchronous, so no reader can observe part of the batch
    const before = this.slabs.appended;
    for (const r of records) this.put(r);
    this.slabs.compactAfter(before);
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
    const before = this.slabs.appended;
    for (let i = 0; i + 1 < starts.length; i++) {
      const bytes = body.subarray(starts[i]!, starts[i + 1]!);
      if (bytes[0] === RECORD_KIND.azks)
        this.azks = readRecord(new ByteReader(bytes)) as AzksRecord;
      else this.putBytes(bytes);
    }
    this.slabs.compactAfter(before);
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
    const locations = [...this.nodes.locations(), ...this.users.locations()];
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
        (to === from || size + this.slabs.bytesAt(locations[to]!).length <= maxBytes)
      ) {
        size += this.slabs.bytesAt(locations[to]!).length;
        to++;
      }
      const last = to === locations.length;
      if (last && azks !== undefined) size += azks.length;
      const out = new Uint8Array(size);
      new DataView(out.buffer).setUint32(0, to - from + (last && azks !== undefined ? 1 : 0));
      let at = 4;
      for (let i = from; i < to; i++) {
        const bytes = this.slabs.bytesAt(locations[i]!);
        out.set(bytes, at);
        at += bytes.length;
      }
      if (last && azks !== undefined) out.set(azks, at);
      yield out;
      from = to;
    } while (from < locations.length);
  }

  // ---- reads ----

  /** The users in byte order (lowercase hex sorts as bytes do), kept while no user is added. */
  private sortedUsers: { size: number; hex: string[] } | undefined;

  async listUsernames(after: Uint8Array | undefined, limit: number): Promise<Uint8Array[]> {
    this.check();
    if (this.sortedUsers?.size !== this.users.size) {
      const hex: string[] = [];
      for (const l of this.users.firstLocations()) {
        hex.push(toHex(usernameOf(this.slabs.bytesAt(l))));
      }
      this.sortedUsers = { size: this.users.size, hex: hex.sort() };
    }
    const { hex } = this.sortedUsers;
    // the first user after `after`, by binary search
    const from = after === undefined ? '' : toHex(after);
    let lo = 0;
    let hi = hex.length;
    while (lo < hi) {
      const mid = (lo + hi) >>> 1;
      if (after !== undefined && hex[mid]! <= from) lo = mid + 1;
      else hi = mid;
    }
    return hex.slice(lo, lo + limit).map((h) => fromHex(h));
  }

  protected statesOf(username: Uint8Array): ValueStateRecord[] {
    return this.users.locationsOf(username).map((l) => this.recordAt(l) as ValueStateRecord);
  }

  /** The location of the tree node's or value state's record `key` names, or undefined. */
  private locationOf(key: Exclude<StorageKey, { kind: 'azks' }>): number | undefined {
    return key.kind === 'treeNode'
      ? this.nodes.find(key.label)
      : this.users.find(key.username, key.epoch);
  }

  async get<K extends StorageKey>(key: K): Promise<RecordFor<K>> {
    this.check();
    let found: DbRecord | undefined;
    if (key.kind === 'azks') found = this.azks;
    else {
      const location = this.locationOf(key);
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
      const location = this.locationOf(key);
      if (location !== undefined && !seen.has(location)) {
        seen.add(location);
        out.push(this.recordAt(location));
      }
    }
    return out;
  }

  async batchGetNodes(labels: readonly NodeLabel[]): Promise<(TreeNodeRecord | undefined)[]> {
    this.check();
    const locations = this.nodes.findAll(codecLabelBytes(labels));
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
    const locations = this.nodes.findAll(labels);
    for (let i = 0; i < count; i++) {
      const location = locations[i]!;
      if (location < 0) {
        buffer[i] = starts[i] = -1;
        continue;
      }
      const slab = Math.floor(location / SLOT);
      let b = bufferOf.get(slab);
      if (b === undefined) {
        b = buffers.push(this.slabs.bufferOf(location)) - 1;
        bufferOf.set(slab, b);
      }
      buffer[i] = b;
      // past the record's u32 length
      starts[i] = offsetOf(location) + 4;
    }
    return { buffers, buffer, starts };
  }

  /** Every stored record, as objects (tests). */
  allRecords(): DbRecord[] {
    const out: DbRecord[] = [];
    if (this.azks !== undefined) out.push(this.azks);
    for (const l of this.nodes.locations()) out.push(this.recordAt(l));
    for (const l of this.users.locations()) out.push(this.recordAt(l));
    return out;
  }

  /** Bytes held in slabs, and how many of them records point at (tests, metrics). */
  slabUsage(): SlabUsage {
    return this.slabs.usage();
  }
}
