/**
 * Serving stored audit blobs (spec 16): the S3-style listing, single blobs and the steps of a
 * range, all answered from what the writer stored as it published, never by building a proof.
 * Blobs are stored by their step's end epoch; the naming (`end`, WhatsApp's, or `start`) only
 * changes the epoch in a blob's key. Only epochs up to the latest one this reader knows are
 * served (a blob beyond it belongs to a publish that has not committed). Epochs published
 * before the store kept blobs are missing until the writer fills them in: listings skip them
 * and ranges report them.
 */

import {
  AkdError,
  bytesEqual,
  epochsInKeyOrder,
  formatAuditBlobName,
  toHex,
  type AuditBlobNaming,
  type EpochHash,
} from '@akd-ts/core';
import type { AuditBlobInfo, AuditBlobRecord, Database } from '@akd-ts/storage';
import type { AuditBlobCache } from './cache.js';

/** What stored blobs are read from: a directory's store and its latest epoch. */
export interface StoredAuditBlobsSource {
  readonly storage: { readonly db: Database };
  getEpochHash(): Promise<EpochHash>;
}

/** A listed blob. */
export interface StoredListingEntry {
  key: string;
  size: number;
}

/** A page of {@link StoredAuditBlobs.list}. */
export interface StoredListingPage {
  contents: StoredListingEntry[];
  isTruncated: boolean;
  /** Where the next page starts after (the last key scanned), when truncated. */
  nextStartAfter?: string;
}

/** The stored steps of a range. */
export interface StoredRange {
  latest: EpochHash;
  /** The stored steps, ascending by end epoch. */
  steps: AuditBlobInfo[];
  /** End epochs of the range with no stored blob yet. */
  missing: bigint[];
}

/** Epochs whose blob sizes {@link StoredAuditBlobs.warm} asks for at once. */
const WARM_BATCH = 100n;

function corrupt(message: string): AkdError {
  return new AkdError('DIRECTORY_TREE', message);
}

/**
 * Stored audit blobs of a directory, as listings, blobs and ranges.
 *
 * @example
 * ```ts
 * const blobs = new StoredAuditBlobs(reader);
 * const page = await blobs.list({ prefix: '42/', maxKeys: 1000 }); // the blob of epoch 42
 * for await (const step of blobs.data((await blobs.range(0n, 10n)).steps)) send(step.data);
 * ```
 * With a `cache`, blobs come from memory once read, and the bytes handed out are shared:
 * callers must not modify them (an in-process store hands out the blobs it holds as well).
 */
export class StoredAuditBlobs {
  readonly naming: AuditBlobNaming;
  private readonly scanLimit: number;
  private readonly cache: AuditBlobCache | undefined;

  constructor(
    private readonly source: StoredAuditBlobsSource,
    options: { naming?: AuditBlobNaming; scanLimit?: number; cache?: AuditBlobCache } = {},
  ) {
    this.cache = options.cache;
    this.naming = options.naming ?? 'end';
    if (this.naming !== 'end' && this.naming !== 'start') {
      throw new RangeError(`naming must be start or end, got ${String(this.naming)}`);
    }
    this.scanLimit = options.scanLimit ?? 10_000;
  }

  private get db(): Database {
    return this.source.storage.db;
  }

  /** The stored blob of the step ending at `end`, through the cache when there is one. */
  private read(end: bigint, evict = true): Promise<AuditBlobRecord> {
    if (this.cache === undefined) return this.db.getAuditBlob(end);
    return this.cache.get(end, () => this.db.getAuditBlob(end), evict);
  }

  /** The end epoch of the step a blob named `epoch` proves. */
  private stepEnd(nameEpoch: bigint): bigint {
    return this.naming === 'end' ? nameEpoch : nameEpoch + 1n;
  }

  private keyOf(info: { epoch: bigint; previousHash: Uint8Array; currentHash: Uint8Array }) {
    const epoch = this.naming === 'end' ? info.epoch : info.epoch - 1n;
    return formatAuditBlobName({
      epoch,
      previousHash: info.previousHash,
      currentHash: info.currentHash,
    });
  }

  /** The latest step must end at the directory's root: a cheap check of the store. */
  private checkLatest(info: AuditBlobInfo | AuditBlobRecord, latest: EpochHash): void {
    if (info.epoch === latest.epoch && !bytesEqual(info.currentHash, latest.hash)) {
      throw corrupt(
        `the stored audit blob of epoch ${info.epoch} ends at root ${toHex(info.currentHash)}, not at the directory's root ${toHex(latest.hash)}`,
      );
    }
  }

  /**
   * The blob named with `nameEpoch` (its key and bytes), or undefined when none is stored
   * for an epoch this reader knows.
   * @throws AkdError `DIRECTORY_TREE` when the latest step does not end at the current root.
   */
  async blobAt(nameEpoch: bigint): Promise<{ key: string; record: AuditBlobRecord } | undefined> {
    const latest = await this.source.getEpochHash();
    const end = this.stepEnd(nameEpoch);
    if (end < 1n || end > latest.epoch) return undefined;
    let record: AuditBlobRecord;
    try {
      record = await this.read(end);
    } catch (e) {
      if (e instanceof AkdError && e.code === 'STORAGE_NOT_FOUND') return undefined;
      throw e;
    }
    this.checkLatest(record, latest);
    return { key: this.keyOf(record), record };
  }

  /**
   * A page of the listing in S3 key order: stored blobs whose keys start with `prefix` and
   * sort after `startAfter`, at most `maxKeys`. Missing steps are skipped; after scanning
   * `scanLimit` missing ones in a row the page ends early (truncated, with where to go on).
   */
  async list(query: {
    prefix?: string;
    startAfter?: string;
    maxKeys: number;
  }): Promise<StoredListingPage> {
    const latest = await this.source.getEpochHash();
    const first = this.naming === 'end' ? 1n : 0n;
    const last = this.naming === 'end' ? latest.epoch : latest.epoch - 1n;
    const contents: StoredListingEntry[] = [];
    const prefix = query.prefix ?? '';
    const after = query.startAfter ?? '';
    const candidates = epochsInKeyOrder(first, last, { prefix, startAfter: after });
    const batchSize = Math.max(1, Math.min(query.maxKeys + 1, 1000));
    let skipped = 0;
    for (;;) {
      const batch: { epoch: bigint; exact: boolean }[] = [];
      while (batch.length < batchSize) {
        const next = candidates.next();
        if (next.done === true) break;
        batch.push(next.value);
      }
      if (batch.length === 0) return { contents, isTruncated: false };
      const stored = new Map(
        (await this.db.getAuditBlobInfos(batch.map((c) => this.stepEnd(c.epoch)))).map((i) => [
          i.epoch,
          i,
        ]),
      );
      for (const { epoch, exact } of batch) {
        const info = stored.get(this.stepEnd(epoch));
        if (info === undefined) {
          // not stored yet (an inexact candidate, the start-after or prefix epoch, cannot
          // match without a key); past it, keys of this epoch sort below `${epoch}/~`
          if (!exact) continue;
          if (++skipped >= this.scanLimit) {
            return { contents, isTruncated: true, nextStartAfter: `${epoch}/~` };
          }
          continue;
        }
        skipped = 0;
        const key = this.keyOf(info);
        if (!exact && !(key.startsWith(prefix) && key > after)) continue;
        if (contents.length === query.maxKeys) {
          const previous = contents[contents.length - 1]?.key ?? after;
          return { contents, isTruncated: true, nextStartAfter: previous };
        }
        this.checkLatest(info, latest);
        contents.push({ key, size: info.size });
      }
    }
  }

  /**
   * The stored steps from epoch `from` to `to` (the steps ending at `from + 1` ... `to`),
   * checked to chain (each ends at the root the next starts from).
   * @throws AkdError `DIRECTORY_INVALID_EPOCH` unless `from < to <= latest`; `DIRECTORY_TREE`
   * when stored steps do not chain.
   */
  async range(from: bigint, to: bigint): Promise<StoredRange> {
    const latest = await this.source.getEpochHash();
    if (from < 0n || from >= to || to > latest.epoch) {
      throw new AkdError(
        'DIRECTORY_INVALID_EPOCH',
        `an audit needs from < to <= ${latest.epoch} (the latest epoch), got ${from} and ${to}`,
      );
    }
    const ends: bigint[] = [];
    for (let e = from + 1n; e <= to; e++) ends.push(e);
    const steps = await this.db.getAuditBlobInfos(ends);
    const have = new Set(steps.map((s) => s.epoch));
    for (let i = 1; i < steps.length; i++) {
      const [a, b] = [steps[i - 1]!, steps[i]!];
      if (b.epoch === a.epoch + 1n && !bytesEqual(a.currentHash, b.previousHash)) {
        throw corrupt(
          `the stored audit blobs of epochs ${a.epoch} and ${b.epoch} disagree on the root at epoch ${a.epoch}`,
        );
      }
    }
    const lastStep = steps[steps.length - 1];
    if (lastStep !== undefined) this.checkLatest(lastStep, latest);
    return { latest, steps, missing: ends.filter((e) => !have.has(e)) };
  }

  /**
   * Reads the newest stored blobs into the cache while they fit in its free room, newest
   * first and one at a time, so that a flood of audits finds them in memory rather than every
   * request reading the store at once. Evicts nothing; stops when `signal` aborts.
   * @param after only the steps ending after this epoch (those warmed before are left)
   * @returns how many blobs it read (0 without a cache), and the latest epoch it looked from
   */
  async warm(signal?: AbortSignal, after = 0n): Promise<{ read: number; latest: bigint }> {
    const latest = (await this.source.getEpochHash()).epoch;
    const cache = this.cache;
    let read = 0;
    if (cache === undefined) return { read, latest };
    const room = () => cache.maxBytes - cache.stats().bytes;
    let end = latest;
    while (end > after && end >= 1n && room() > 0) {
      const lowest = after + 1n > 1n ? after + 1n : 1n;
      const from = end - WARM_BATCH + 1n > lowest ? end - WARM_BATCH + 1n : lowest;
      const ends: bigint[] = [];
      for (let e = end; e >= from; e--) ends.push(e);
      const infos = (await this.db.getAuditBlobInfos(ends)).reverse();
      for (const info of infos) {
        if (signal?.aborted === true || info.size > room()) return { read, latest };
        if (cache.holds(info.epoch)) continue;
        await this.read(info.epoch, false);
        read++;
      }
      end = from - 1n;
    }
    return { read, latest };
  }

  /**
   * The bytes of `steps`, read one at a time (a step can be megabytes). Steps whose bytes
   * together exceed the cache fill its free room but evict nothing (see cache.ts).
   */
  async *data(steps: AuditBlobInfo[]): AsyncGenerator<AuditBlobRecord> {
    const total = steps.reduce((n, s) => n + s.size, 0);
    const evict = this.cache !== undefined && total <= this.cache.maxBytes;
    for (const step of steps) yield await this.read(step.epoch, evict);
  }
}
