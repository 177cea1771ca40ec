/**
 * The StorageManager's record cache (spec 14.3): entries expire after a lifetime, a periodic
 * clean drops expired entries and, past a memory bound, the oldest ones. The single AZKS
 * record has its own slot that never expires. Cleaning can be suspended (during a publish or
 * an audit) so that preloaded nodes stay until the operation ends.
 *
 * The memory bound is also kept between cleans: an insert that takes the cache past it drops
 * the oldest entries at once (unless cleaning is suspended), so a server answering hundreds
 * of lookups a second never holds a clean period's worth of records beyond its bound.
 */

import type { NodeLabel } from '@akd-ts/core';
import { ByteReader, ByteWriter, readNode, writeRecord } from './record-codec.js';
import {
  recordFullKey,
  recordSize,
  type AzksRecord,
  type DbRecord,
  type TreeNode,
  type TreeNodeRecord,
} from './records.js';

export interface CacheOptions {
  /** How long an entry stays valid, ms (default 30,000; values <= 1 mean the default). */
  itemLifetimeMs?: number;
  /**
   * Bound on the approximate size of cached records, bytes (spec 14.3's accounting, which
   * counts the records' fields, not the JavaScript objects around them; default: unbounded).
   */
  memoryLimitBytes?: number;
  /** Least time between two cleans, ms (default 15,000; values <= 1 mean the default). */
  cleanFrequencyMs?: number;
  /** Clock, for tests (default `Date.now`). */
  now?: () => number;
  /**
   * Keep tree-node records as their bytes in the record codec's form (record-codec.ts) and
   * decode one on every read, rather than as objects (default false). A node record held as
   * objects is some twenty of them, about 1.8 KB of memory; as bytes, with its key and entry,
   * about 500 bytes, so the same memory holds about 3.4 times the records. The memory bound
   * then counts the bytes, close to what the cache holds. Each read costs a decode and each
   * insertion an encoding, so the nodes nearest the root (labels under 12 bits), which every
   * walk reads, stay objects. Worth it where the bound, not the processor, limits what stays
   * cached: a proof server over a large directory in a SQL store.
   */
  compactNodes?: boolean;
}

/**
 * A cached record: as objects, or (a compact tree node) as its codec bytes at `at` in `slab`
 * (no buffer object of its own: one weighs about a third of a node's bytes).
 */
interface Entry {
  expiration: number;
  record: DbRecord | undefined;
  slab: Uint8Array | undefined;
  at: number;
  size: number;
}

/**
 * The tree-node record whose codec bytes begin at `at` in `bytes` (written by `writeRecord`).
 * Its previous version is decoded only when read: a walk at the latest epoch never reads it,
 * and it is half of what a decode would build.
 */
function decodeNodeRecord(bytes: Uint8Array, at: number): TreeNodeRecord {
  const r = new ByteReader(bytes, at + 1); // past the kind byte
  const label = r.label();
  const latest = readNode(r);
  if (r.u8() !== 1) return { kind: 'treeNode', label, latest, previous: undefined };
  const from = r.at;
  let previous: TreeNode | undefined;
  return {
    kind: 'treeNode',
    label,
    latest,
    get previous(): TreeNode {
      return (previous ??= readNode(new ByteReader(bytes, from)));
    },
  };
}

const DEFAULT_LIFETIME_MS = 30_000;
const DEFAULT_CLEAN_MS = 15_000;
/** Per-entry overhead of spec 14.3's accounting. */
const ENTRY_OVERHEAD = 16;
/**
 * A compact cache keeps nodes whose labels are shorter than this as objects all the same: the
 * few thousand nearest the root (at most 2^12 - 1 labels), which every lookup reads, so that
 * their reads decode nothing.
 */
const HOT_BITS = 12;
/** The size of the slabs compact entries are written into. */
const SLAB_BYTES = 256 * 1024;

export class TimedCache {
  private readonly lifetime: number;
  private readonly cleanFrequency: number;
  private readonly memoryLimit: number | undefined;
  private readonly now: () => number;
  /** Insertion order equals expiration order: every put re-inserts with now + lifetime. */
  private readonly entries = new Map<string, Entry>();
  private azks: AzksRecord | undefined;
  private retained = 0;
  /** Entries holding tree nodes: a preload asks the cache for nodes only when there are any. */
  private nodeEntries = 0;
  private lastClean: number;
  private suspended = 0;
  /** Encodes compact entries (`CacheOptions.compactNodes`); undefined when objects are kept. */
  private readonly writer: ByteWriter | undefined;
  /**
   * Where compact entries' bytes go: slabs filled in turn, so that an entry costs no buffer
   * of its own. Entries leave roughly in the order they came, so old slabs empty and are
   * collected as a whole.
   */
  private slab = new Uint8Array(0);
  private slabUsed = 0;

  constructor(options: CacheOptions = {}) {
    const orDefault = (v: number | undefined, d: number) => (v === undefined || v <= 1 ? d : v);
    this.lifetime = orDefault(options.itemLifetimeMs, DEFAULT_LIFETIME_MS);
    this.cleanFrequency = orDefault(options.cleanFrequencyMs, DEFAULT_CLEAN_MS);
    this.memoryLimit = options.memoryLimitBytes;
    this.now = options.now ?? Date.now;
    this.lastClean = this.now();
    this.writer = options.compactNodes === true ? new ByteWriter(1024) : undefined;
  }

  /** Number of cached entries besides the AZKS record. */
  get size(): number {
    return this.entries.size;
  }

  /** Number of cached tree-node records. */
  get nodeCount(): number {
    return this.nodeEntries;
  }

  /** Approximate bytes held (spec 14.3 accounting), counted only under a memory bound. */
  get retainedBytes(): number {
    return this.retained;
  }

  /** Suspends cleaning until a matching `resumeCleaning` (nestable). */
  suspendCleaning(): void {
    this.suspended++;
  }

  resumeCleaning(): void {
    if (this.suspended > 0) this.suspended--;
  }

  get cleaningSuspended(): boolean {
    return this.suspended > 0;
  }

  /** Drops what cleaning allows (at most once per clean period) and returns the time now. */
  private clean(): number {
    const now = this.now();
    if (this.suspended > 0 || this.lastClean + this.cleanFrequency >= now) return now;
    for (const [key, entry] of this.entries) {
      if (entry.expiration >= now) break; // the rest expire later
      this.drop(key, entry);
    }
    this.shrink();
    this.lastClean = now;
    return now;
  }

  /** Past the memory bound, drops the oldest entries: the excess and 5% of the entries more. */
  private shrink(): void {
    if (this.memoryLimit === undefined || this.retained <= this.memoryLimit) return;
    const fraction = 0.05 + 1 - this.memoryLimit / this.retained;
    let remove = Math.ceil(this.entries.size * fraction);
    for (const [key, entry] of this.entries) {
      if (remove-- <= 0) break;
      this.drop(key, entry);
    }
  }

  private drop(key: string, entry: Entry): void {
    this.entries.delete(key);
    this.retained -= entry.size;
    if (entry.slab !== undefined || entry.record!.kind === 'treeNode') this.nodeEntries--;
  }

  private lookup(key: string, now: number): DbRecord | undefined {
    if (key === '0101') return this.azks;
    const entry = this.entries.get(key);
    if (entry === undefined) return undefined;
    if (this.suspended === 0 && entry.expiration <= now) return undefined;
    // a compact entry's bytes were written by insert: they decode
    return entry.record ?? decodeNodeRecord(entry.slab!, entry.at);
  }

  /** The cached record under `key`; expired entries count only while cleaning is suspended. */
  get(key: string): DbRecord | undefined {
    return this.lookup(key, this.clean());
  }

  /** The cached records under `keys`, in order (undefined where none is cached). */
  getMany(keys: string[]): (DbRecord | undefined)[] {
    const now = this.clean();
    return keys.map((key) => this.lookup(key, now));
  }

  /** The cached records of tree nodes `labels`, in order (undefined where none is cached). */
  getNodes(labels: readonly NodeLabel[]): (TreeNodeRecord | undefined)[] {
    const now = this.clean();
    const out = new Array<TreeNodeRecord | undefined>(labels.length);
    for (let i = 0; i < labels.length; i++) {
      out[i] = this.lookup(labels[i]!.key, now) as TreeNodeRecord | undefined;
    }
    return out;
  }

  /** Caches `record` under `key`. */
  put(key: string, record: DbRecord): void {
    this.insert(key, record, this.clean());
  }

  /** Caches many records under their own keys. */
  putRecords(records: readonly DbRecord[]): void {
    const now = this.clean();
    for (let i = 0; i < records.length; i++) {
      const record = records[i]!;
      this.insert(recordFullKey(record), record, now);
    }
  }

  private insert(key: string, record: DbRecord, now: number): void {
    if (record.kind === 'azks') {
      this.azks = record;
      return;
    }
    const old = this.entries.get(key);
    if (old !== undefined) this.drop(key, old);
    const expiration = now + this.lifetime;
    const compact =
      this.writer !== undefined && record.kind === 'treeNode' && record.label.len >= HOT_BITS;
    const length = compact ? this.compact(record) : 0;
    // sizes matter only under a memory bound, so they are counted only then
    const size =
      this.memoryLimit === undefined
        ? 0
        : key.length + (compact ? length : recordSize(record)) + ENTRY_OVERHEAD;
    const entry: Entry = compact
      ? { expiration, record: undefined, slab: this.slab, at: this.slabUsed - length, size }
      : { expiration, record, slab: undefined, at: 0, size };
    this.entries.set(key, entry);
    this.retained += entry.size;
    if (record.kind === 'treeNode') this.nodeEntries++;
    if (this.suspended === 0) this.shrink();
  }

  /**
   * Writes `record`'s codec bytes at the end of the current slab (a new one when it is full)
   * and returns their length.
   */
  private compact(record: TreeNodeRecord): number {
    const w = this.writer!;
    w.reset();
    writeRecord(w, record);
    const bytes = w.written();
    if (this.slabUsed + bytes.length > this.slab.length) {
      this.slab = new Uint8Array(Math.max(SLAB_BYTES, bytes.length));
      this.slabUsed = 0;
    }
    this.slab.set(bytes, this.slabUsed);
    this.slabUsed += bytes.length;
    return bytes.length;
  }

  /** Drops the entry under `key`, if there is one, the AZKS record's slot included. */
  forget(key: string): void {
    if (key === '0101') {
      this.azks = undefined;
      return;
    }
    const old = this.entries.get(key);
    if (old !== undefined) this.drop(key, old);
  }

  /** Empties the cache, AZKS slot included. */
  flush(): void {
    this.entries.clear();
    this.azks = undefined;
    this.retained = 0;
    this.nodeEntries = 0;
    this.slab = new Uint8Array(0);
    this.slabUsed = 0;
  }
}
