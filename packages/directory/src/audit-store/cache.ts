/**
 * Stored audit blobs kept in memory for the processes that serve them. A blob never changes
 * once its epoch is published (spec 16), so a copy read once answers every later request for
 * it, with no invalidation. What it saves: a store outside the process (SQLite, PostgreSQL)
 * hands each read a new buffer of megabytes, and a server streaming range audits at hundreds
 * of MB/s then spends its time reading them and in the garbage collections those buffers
 * bring (eight audit clients over SQLite: two to three full collections a second in each proof
 * server). A store in the process answers with the blob it holds, so caching it costs no copy.
 *
 * Bounded by bytes. Blobs asked for by a request whose whole range fits evict the least
 * recently used ones; a range larger than the cache only fills free room and never evicts:
 * repeated scans of a range larger than the cache would otherwise evict each blob just before
 * the next scan asks for it, and none would ever be found. Concurrent reads of one blob share
 * a single read of the store.
 */

import type { AuditBlobRecord } from '@akd-ts/storage';

/** What a cache has done since it was made. */
export interface AuditBlobCacheStats {
  /** Blobs answered from memory, including reads that joined one in flight. */
  hits: number;
  /** Blobs read from the store. */
  misses: number;
  /** Blobs held now, and their bytes. */
  blobs: number;
  bytes: number;
}

export class AuditBlobCache {
  readonly #entries = new Map<bigint, AuditBlobRecord>(); // least recently used first
  readonly #reading = new Map<bigint, Promise<AuditBlobRecord>>();
  #bytes = 0;
  #hits = 0;
  #misses = 0;

  /**
   * @param maxBytes bytes of blob data held at most (a blob larger than this is never kept)
   * @throws RangeError unless `maxBytes` is a whole number of bytes, at least 1
   * @example
   * ```ts
   * const cache = new AuditBlobCache(64 * 1024 * 1024);
   * const blobs = new StoredAuditBlobs(directory, { cache });
   * ```
   */
  constructor(readonly maxBytes: number) {
    if (!Number.isSafeInteger(maxBytes) || maxBytes < 1) {
      throw new RangeError(`maxBytes must be a positive whole number, got ${maxBytes}`);
    }
  }

  /**
   * The blob of `epoch`: from memory, from a read already in flight, or from `read`, kept
   * afterwards if it fits. A failed read is not kept (the next request reads again).
   * @param evict whether keeping it may evict others (false for a range larger than the cache)
   */
  async get(
    epoch: bigint,
    read: () => Promise<AuditBlobRecord>,
    evict = true,
  ): Promise<AuditBlobRecord> {
    const held = this.#entries.get(epoch);
    if (held !== undefined) {
      this.#hits++;
      this.#entries.delete(epoch);
      this.#entries.set(epoch, held);
      return held;
    }
    const inFlight = this.#reading.get(epoch);
    if (inFlight !== undefined) {
      this.#hits++;
      return inFlight;
    }
    this.#misses++;
    const reading = read().then((blob) => {
      this.#keep(blob, evict);
      return blob;
    });
    this.#reading.set(epoch, reading);
    try {
      return await reading;
    } finally {
      this.#reading.delete(epoch);
    }
  }

  #keep(blob: AuditBlobRecord, evict: boolean): void {
    const size = blob.data.length;
    if (size > this.maxBytes || this.#entries.has(blob.epoch)) return;
    if (!evict && this.#bytes + size > this.maxBytes) return;
    for (const [epoch, old] of this.#entries) {
      if (this.#bytes + size <= this.maxBytes) break;
      this.#entries.delete(epoch);
      this.#bytes -= old.data.length;
    }
    this.#entries.set(blob.epoch, blob);
    this.#bytes += size;
  }

  /** Whether the blob of `epoch` is held (without making it recently used). */
  holds(epoch: bigint): boolean {
    return this.#entries.has(epoch);
  }

  /** Counts since the cache was made, and what it holds. */
  stats(): AuditBlobCacheStats {
    return {
      hits: this.#hits,
      misses: this.#misses,
      blobs: this.#entries.size,
      bytes: this.#bytes,
    };
  }
}
