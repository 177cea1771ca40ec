/**
 * The StorageManager's record cache (spec 14.3): entries expire after a lifetime, a periodic
 * clean drops expired entries and, past a memory bound, the oldest ones. The single AZKS
 * record has its own slot that never expires. Cleaning can be suspended (during a publish or
 * an audit) so that preloaded nodes stay until the operation ends.
 */

import { recordSize, type AzksRecord, type DbRecord } from './records.js';

export interface CacheOptions {
  /** How long an entry stays valid, ms (default 30,000; values <= 1 mean the default). */
  itemLifetimeMs?: number;
  /** Bound on the approximate size of cached records, bytes (default: unbounded). */
  memoryLimitBytes?: number;
  /** Least time between two cleans, ms (default 15,000; values <= 1 mean the default). */
  cleanFrequencyMs?: number;
  /** Clock, for tests (default `Date.now`). */
  now?: () => number;
}

interface Entry {
  expiration: number;
  record: DbRecord;
  size: number;
}

const DEFAULT_LIFETIME_MS = 30_000;
const DEFAULT_CLEAN_MS = 15_000;
/** Per-entry overhead of spec 14.3's accounting. */
const ENTRY_OVERHEAD = 16;

export class TimedCache {
  private readonly lifetime: number;
  private readonly cleanFrequency: number;
  private readonly memoryLimit: number | undefined;
  private readonly now: () => number;
  /** Insertion order equals expiration order: every put re-inserts with now + lifetime. */
  private readonly entries = new Map<string, Entry>();
  private azks: AzksRecord | undefined;
  private retained = 0;
  private lastClean: number;
  private suspended = 0;

  constructor(options: CacheOptions = {}) {
    const orDefault = (v: number | undefined, d: number) => (v === undefined || v <= 1 ? d : v);
    this.lifetime = orDefault(options.itemLifetimeMs, DEFAULT_LIFETIME_MS);
    this.cleanFrequency = orDefault(options.cleanFrequencyMs, DEFAULT_CLEAN_MS);
    this.memoryLimit = options.memoryLimitBytes;
    this.now = options.now ?? Date.now;
    this.lastClean = this.now();
  }

  /** Number of cached entries besides the AZKS record. */
  get size(): number {
    return this.entries.size;
  }

  /** Approximate bytes held (spec 14.3 accounting). */
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

  private clean(): void {
    const now = this.now();
    if (this.suspended > 0 || this.lastClean + this.cleanFrequency >= now) return;
    for (const [key, entry] of this.entries) {
      if (entry.expiration >= now) break; // the rest expire later
      this.drop(key, entry);
    }
    if (this.memoryLimit !== undefined && this.retained > this.memoryLimit) {
      const fraction = 0.05 + 1 - this.memoryLimit / this.retained;
      let remove = Math.ceil(this.entries.size * fraction);
      for (const [key, entry] of this.entries) {
        if (remove-- <= 0) break;
        this.drop(key, entry);
      }
    }
    this.lastClean = now;
  }

  private drop(key: string, entry: Entry): void {
    this.entries.delete(key);
    this.retained -= entry.size;
  }

  /** The cached record under `key`; expired entries count only while cleaning is suspended. */
  get(key: string): DbRecord | undefined {
    this.clean();
    if (key === '0101') return this.azks;
    const entry = this.entries.get(key);
    if (entry === undefined) return undefined;
    if (this.suspended === 0 && entry.expiration <= this.now()) return undefined;
    return entry.record;
  }

  /** Caches `record` under `key`. */
  put(key: string, record: DbRecord): void {
    this.clean();
    this.insert(key, record);
  }

  /** Caches many records. */
  putMany(items: Iterable<[string, DbRecord]>): void {
    this.clean();
    for (const [key, record] of items) this.insert(key, record);
  }

  private insert(key: string, record: DbRecord): void {
    if (record.kind === 'azks') {
      this.azks = record;
      return;
    }
    const old = this.entries.get(key);
    if (old !== undefined) this.drop(key, old);
    const size = key.length + recordSize(record) + ENTRY_OVERHEAD;
    this.entries.set(key, { expiration: this.now() + this.lifetime, record, size });
    this.retained += size;
  }

  /** Empties the cache, AZKS slot included. */
  flush(): void {
    this.entries.clear();
    this.azks = undefined;
    this.retained = 0;
  }
}
