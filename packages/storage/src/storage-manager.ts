/**
 * The StorageManager (spec 14.2): a Database with a record cache and single-writer
 * transactions on top. Reads on the manager see committed data only (cache, then database);
 * a publish works inside a `Transaction`, which sees its own writes first. A commit writes
 * the whole log to the database in one atomic batch (the AZKS record last) and only then
 * updates the cache, so a failed commit leaves nothing of the new epoch visible anywhere.
 *
 * Records handed out are shared with the cache: treat them as read-only.
 */

import { isAkdError, toHex, type NodeLabel } from '@akd-ts/core';
import type { Database, NodeRecordBytes, UserStateAndVrfProofs, UserVersion } from './database.js';
import { transactionError } from './errors.js';
import { readWalkNodeBytes, readWalkNodes, readsNodeBytes } from './node-reads.js';
import { LABEL_BYTES } from './record-codec.js';
import {
  fullKey,
  recordFullKey,
  type DbRecord,
  type RecordFor,
  type StorageKey,
  type TreeNodeRecord,
  type ValueStateFlag,
  type ValueStateRecord,
} from './records.js';
import { TimedCache, type CacheOptions } from './timed-cache.js';
import { Transaction, type CommitLog } from './transaction.js';
import { stateThenVrfProofs, type VrfProofKey } from './vrf-proofs.js';

export interface StorageManagerOptions {
  /** Cache settings, or `false` for no cache (every read goes to the database). */
  cache?: CacheOptions | false;
  /**
   * A commit of more records than this is large: written in chunks where the database can
   * (`Database.batchSetChunks`), and its records are not cached (default
   * {@link DEFAULT_LARGE_COMMIT}): the writer's memory then grows with a chunk, not with the
   * epoch. Smaller commits are written whole and cached, as other writes are.
   */
  largeCommitRecords?: number;
  /** Records per chunk of a large commit (default {@link DEFAULT_COMMIT_CHUNK}). */
  commitChunkRecords?: number;
}

/**
 * Records of a commit beyond which it is large. An epoch of 100,000 updates into 500,000
 * labels commits about 930,000 records, which as objects held 1 GB of heap and, encoded for
 * the driver all at once, 2 GB more.
 */
export const DEFAULT_LARGE_COMMIT = 20_000;

/**
 * Records per chunk of a large commit: few enough that a chunk's record objects are garbage
 * before the collector's cheap pass over new objects would move them to the old generation.
 * Chunks of 20,000 were moved there, and the old generation of that epoch's writer grew by
 * 500 MB between collections (peak 1.76 GB against 1.23 GB with chunks of 500, and a faster
 * commit: bench/RESULTS.md, "Writer memory").
 */
export const DEFAULT_COMMIT_CHUNK = 500;

/** Counters for metrics and tests. */
export interface StorageMetrics {
  /** Single-record database reads. */
  dbGets: number;
  /** Batched database reads, and the keys they asked for. */
  dbBatchGets: number;
  dbBatchKeys: number;
  /** Reads answered by the cache. */
  cacheHits: number;
  /** Database writes (set / batchSet calls) and records written. */
  dbWrites: number;
  dbRecordsWritten: number;
}

/** A read view of records: the manager (committed data) or a transaction (its own writes first). */
export interface RecordReader {
  get<K extends StorageKey>(key: K): Promise<RecordFor<K>>;
  batchGet(keys: StorageKey[]): Promise<DbRecord[]>;
  getFromCacheOnly(key: StorageKey): DbRecord | undefined;
  /** `getFromCacheOnly` for a tree node, without building its key (the tree's hot path). */
  peekNode(label: NodeLabel): TreeNodeRecord | undefined;
  /** `peekNode` of each of `labels`, aligned with them. */
  peekNodes(labels: readonly NodeLabel[]): (TreeNodeRecord | undefined)[];
  /**
   * The committed records of tree nodes `labels` in one batched database read, aligned with
   * them (undefined where none is stored): a preload's read of the labels `peekNodes` found
   * nothing for (it does not look at the log or the cache again, and caches nothing: the
   * preload chooses what to keep with `cacheNodes`). `epochs`, aligned with `labels`, names
   * the versions the walk wants, which a store of versions reads by them (it has no index by
   * label); a store of records answers by label (`readWalkNodes`), and the caller checks
   * each record for the version it wanted.
   */
  readNodes(
    labels: readonly NodeLabel[],
    epochs?: readonly bigint[],
  ): Promise<(TreeNodeRecord | undefined)[]>;
  /** Caches committed tree-node records that `readNodes` returned. */
  cacheNodes(records: readonly TreeNodeRecord[]): void;
  /** Whether `readSubtrees` answers: the database reads subtrees (`Database.batchGetSubtrees`). */
  readsSubtrees(): boolean;
  /**
   * The committed records of `labels` and of the nodes below them a walk toward `targets` at
   * `epoch` continues to, in one read (`Database.batchGetSubtrees`, given the write epochs of
   * the versions of `labels` the walk wants), cached as `batchGet` caches.
   * @throws AkdError `STORAGE_TRANSACTION` where `readsSubtrees()` is false
   */
  readSubtrees(
    labels: readonly NodeLabel[],
    targets: readonly NodeLabel[],
    epoch: bigint,
    epochs?: readonly bigint[],
  ): Promise<TreeNodeRecord[]>;
  hasCache(): boolean;
  /**
   * Whether `readNodeBytes` answers: the database answers a walk's tree-node reads in bytes
   * (by version where it keeps versions).
   */
  readsNodeBytes(): boolean;
  /**
   * The committed records of tree nodes in bytes, in one batched read: `labels` in the record
   * codec's form, 34 bytes each, and the write epochs of the versions wanted, aligned, which
   * a store of versions needs (`readWalkNodeBytes`). Like `readNodes`, it does not look at
   * the log or the cache.
   * @throws AkdError `STORAGE_TRANSACTION` where `readsNodeBytes()` is false
   */
  readNodeBytes(labels: Uint8Array, epochs?: BigUint64Array): Promise<NodeRecordBytes>;
  /**
   * False when `peekNodes` would find nothing: no tree node is logged or cached (the walk
   * over bytes then builds no label object to ask).
   */
  mayHoldNodes(): boolean;
}

/**
 * @example
 * ```ts
 * const storage = new StorageManager(new MemoryDatabase());
 * const tx = storage.beginTransaction();
 * tx.set({ kind: 'azks', latestEpoch: 1n, numNodes: 1n });
 * await tx.commit();
 * ```
 */
export class StorageManager implements RecordReader {
  readonly db: Database;
  private readonly cache: TimedCache | undefined;
  private readonly largeCommit: number;
  private readonly commitChunk: number;
  /**
   * Bumped as a write starts and again as it ends (odd while one is in progress). A record
   * read from the database while a write was in progress, or that a write ended during, may
   * be older than what it wrote, so it is not cached (a commit no longer re-caches what it
   * wrote, which used to overwrite such reads).
   */
  #writeSeq = 0;
  /** Records `readNodes` read across a write: `cacheNodes` leaves them out. */
  readonly #uncacheable = new WeakSet<TreeNodeRecord>();
  private active: Transaction | undefined;
  readonly metrics: StorageMetrics = {
    dbGets: 0,
    dbBatchGets: 0,
    dbBatchKeys: 0,
    cacheHits: 0,
    dbWrites: 0,
    dbRecordsWritten: 0,
  };

  #lastAnswerAt: number | undefined;

  /**
   * When the database last answered a read (`performance.now()`), a record or "not found",
   * or undefined before its first answer: evidence that it is reachable, which readiness
   * probes use instead of adding a read of their own to a busy store.
   */
  get lastAnswerAt(): number | undefined {
    return this.#lastAnswerAt;
  }

  /** `read`, noting when the database answered it. */
  async #answered<T>(read: Promise<T>): Promise<T> {
    try {
      const value = await read;
      this.#lastAnswerAt = performance.now();
      return value;
    } catch (e) {
      if (isAkdError(e, 'STORAGE_NOT_FOUND')) this.#lastAnswerAt = performance.now();
      throw e;
    }
  }

  constructor(db: Database, options: StorageManagerOptions = {}) {
    this.db = db;
    this.cache = options.cache === false ? undefined : new TimedCache(options.cache ?? {});
    this.largeCommit = Math.max(1, Math.floor(options.largeCommitRecords ?? DEFAULT_LARGE_COMMIT));
    this.commitChunk = Math.max(1, Math.floor(options.commitChunkRecords ?? DEFAULT_COMMIT_CHUNK));
  }

  hasCache(): boolean {
    return this.cache !== undefined;
  }

  /** Number of cached records (0 without a cache). */
  get cacheSize(): number {
    return this.cache?.size ?? 0;
  }

  /** One committed record: cache, then database (and the result is cached). */
  async get<K extends StorageKey>(key: K): Promise<RecordFor<K>> {
    const k = fullKey(key);
    const cached = this.cache?.get(k);
    if (cached !== undefined) {
      this.metrics.cacheHits++;
      return cached as RecordFor<K>;
    }
    this.metrics.dbGets++;
    const seq = this.#writeSeq;
    const record = await this.#answered(this.db.get(key));
    if (this.#mayCache(seq)) this.cache?.put(k, record);
    return record;
  }

  /** Whether a record read since `seq` may be cached: no write overlapped the read. */
  #mayCache(seq: number): boolean {
    return seq === this.#writeSeq && seq % 2 === 0;
  }

  /** Many committed records; those not cached come from one database batch read. */
  async batchGet(keys: StorageKey[]): Promise<DbRecord[]> {
    const ks = keys.map(fullKey);
    const cached = this.cache?.getMany(ks);
    const out: DbRecord[] = [];
    const missing: StorageKey[] = [];
    const seen = keys.length > 1 ? new Set<string>() : undefined;
    for (let i = 0; i < keys.length; i++) {
      if (seen !== undefined) {
        if (seen.has(ks[i]!)) continue;
        seen.add(ks[i]!);
      }
      const hit = cached?.[i];
      if (hit !== undefined) out.push(hit);
      else missing.push(keys[i]!);
    }
    this.metrics.cacheHits += out.length;
    if (missing.length > 0) {
      this.metrics.dbBatchGets++;
      this.metrics.dbBatchKeys += missing.length;
      const seq = this.#writeSeq;
      const found = await this.#answered(this.db.batchGet(missing));
      if (this.#mayCache(seq)) this.cache?.putRecords(found);
      for (const r of found) out.push(r);
    }
    return out;
  }

  async readNodes(
    labels: readonly NodeLabel[],
    epochs?: readonly bigint[],
  ): Promise<(TreeNodeRecord | undefined)[]> {
    this.metrics.dbBatchGets++;
    this.metrics.dbBatchKeys += labels.length;
    const seq = this.#writeSeq;
    const found = await this.#answered(readWalkNodes(this.db, labels, epochs));
    if (!this.#mayCache(seq)) for (const r of found) if (r !== undefined) this.#uncacheable.add(r);
    return found;
  }

  cacheNodes(records: readonly TreeNodeRecord[]): void {
    const cache = this.cache;
    if (cache === undefined) return;
    cache.putRecords(records.filter((r) => !this.#uncacheable.has(r)));
  }

  readsNodeBytes(): boolean {
    return readsNodeBytes(this.db);
  }

  readsSubtrees(): boolean {
    return this.db.batchGetSubtrees !== undefined;
  }

  async readSubtrees(
    labels: readonly NodeLabel[],
    targets: readonly NodeLabel[],
    epoch: bigint,
    epochs?: readonly bigint[],
  ): Promise<TreeNodeRecord[]> {
    if (this.db.batchGetSubtrees === undefined) {
      throw transactionError('this database does not read subtrees');
    }
    this.metrics.dbBatchGets++;
    this.metrics.dbBatchKeys += labels.length;
    const seq = this.#writeSeq;
    const found = await this.#answered(this.db.batchGetSubtrees(labels, targets, epoch, epochs));
    if (this.#mayCache(seq)) this.cache?.putRecords(found);
    return found;
  }

  mayHoldNodes(): boolean {
    return (this.cache?.nodeCount ?? 0) > 0;
  }

  async readNodeBytes(labels: Uint8Array, epochs?: BigUint64Array): Promise<NodeRecordBytes> {
    if (!readsNodeBytes(this.db)) {
      throw transactionError('this database does not answer tree-node reads in bytes');
    }
    this.metrics.dbBatchGets++;
    this.metrics.dbBatchKeys += labels.length / LABEL_BYTES;
    return this.#answered(readWalkNodeBytes(this.db, labels, epochs));
  }

  /** One record straight from the database, bypassing (and not filling) the cache. */
  async getDirect<K extends StorageKey>(key: K): Promise<RecordFor<K>> {
    this.metrics.dbGets++;
    return this.#answered(this.db.get(key));
  }

  /** The cached record, never touching the database. */
  peekNode(label: NodeLabel): TreeNodeRecord | undefined {
    return this.cache?.get(label.key) as TreeNodeRecord | undefined;
  }

  peekNodes(labels: readonly NodeLabel[]): (TreeNodeRecord | undefined)[] {
    return this.cache !== undefined
      ? this.cache.getNodes(labels)
      : new Array<TreeNodeRecord | undefined>(labels.length).fill(undefined);
  }

  getFromCacheOnly(key: StorageKey): DbRecord | undefined {
    return this.cache?.get(fullKey(key));
  }

  /** Writes one record to the database, then the cache. Not allowed during a transaction. */
  async set(record: DbRecord): Promise<void> {
    await this.batchSet([record]);
  }

  /** Writes records to the database atomically, then caches them. */
  async batchSet(records: DbRecord[]): Promise<void> {
    if (this.active !== undefined) {
      throw transactionError('write through the active transaction, not the storage manager');
    }
    await this.write(records, 'general');
  }

  private async write(records: DbRecord[], state: 'general' | 'transactionCommit'): Promise<void> {
    if (records.length === 0) return;
    this.metrics.dbWrites++;
    this.metrics.dbRecordsWritten += records.length;
    await this.#writing(() => this.db.batchSet(records, state));
    this.cache?.putRecords(records);
  }

  /**
   * Starts the single write transaction.
   * @throws AkdError `STORAGE_TRANSACTION` when one is already active.
   */
  beginTransaction(): Transaction {
    if (this.active !== undefined) throw transactionError('a transaction is already active');
    this.cache?.suspendCleaning();
    const tx = new Transaction(this, (t, records) => this.finish(t, records));
    this.active = tx;
    return tx;
  }

  /** Whether a transaction is active. */
  isTransactionActive(): boolean {
    return this.active !== undefined;
  }

  /** Ends `tx`: writes its records when given (commit), otherwise just discards it. */
  private async finish(tx: Transaction, log: CommitLog | undefined): Promise<number> {
    if (this.active !== tx) throw transactionError('the transaction is no longer active');
    this.active = undefined;
    this.cache?.resumeCleaning();
    if (log === undefined || log.size === 0) return 0;
    // readers that see the new AZKS record must see every node of its epoch (spec 14.2)
    if (!log.endsWithAzks) {
      throw transactionError('the last record of a transaction must be the AZKS record');
    }
    if (this.db.batchSetChunks === undefined || log.size <= this.largeCommit) {
      await this.write(log.all(), 'transactionCommit');
      return log.size;
    }
    await this.writeChunks(log);
    return log.size;
  }

  /**
   * Writes a commit's records in chunks, as one atomic batch of the database's: at most a
   * chunk of record objects exists at a time. Their cached versions are dropped chunk by
   * chunk, before the chunk is written (a reader meanwhile reads the committed version from
   * the database, as it would on a miss); the records themselves are not cached, which would
   * keep them all, except the AZKS record.
   */
  private async writeChunks(log: CommitLog): Promise<void> {
    const cache = this.cache;
    let azks: DbRecord | undefined;
    const chunks = function* (all: Iterable<DbRecord[]>) {
      for (const chunk of all) {
        for (const r of chunk) {
          if (r.kind === 'azks') azks = r;
          else if (cache !== undefined && cache.size > 0) cache.forget(recordFullKey(r));
        }
        yield chunk;
      }
    };
    this.metrics.dbWrites++;
    this.metrics.dbRecordsWritten += log.size;
    const db = this.db;
    await this.#writing(() =>
      db.batchSetChunks!(chunks(log.chunks(this.commitChunk)), 'transactionCommit'),
    );
    if (azks !== undefined) cache?.putRecords([azks]);
  }

  /** Runs a write, with `#writeSeq` odd while it is in progress. */
  async #writing(write: () => Promise<void>): Promise<void> {
    this.#writeSeq++;
    try {
      await write();
    } finally {
      this.#writeSeq++;
    }
  }

  /** Suspends cache expiry (an audit keeps its preloaded nodes); pair with `enableCacheCleaning`. */
  disableCacheCleaning(): void {
    this.cache?.suspendCleaning();
  }

  enableCacheCleaning(): void {
    this.cache?.resumeCleaning();
  }

  /** Drops every cached record, including the AZKS record. */
  flushCache(): void {
    this.cache?.flush();
  }

  /** Drops the cached records of `keys`, so that the next read asks the database. */
  forgetCached(keys: readonly StorageKey[]): void {
    const cache = this.cache;
    if (cache !== undefined) for (const key of keys) cache.forget(fullKey(key));
  }

  /** The user's state selected by `flag` from committed data (spec 14.2). */
  async getUserState(username: Uint8Array, flag: ValueStateFlag): Promise<ValueStateRecord> {
    return this.#answered(this.db.getUserState(username, flag));
  }

  /**
   * The state `flag` selects of `username` and the stored VRF proofs among `keys(state)`
   * (keys of that label), from committed data: in one read where the database has one
   * (`Database.getUserStateAndVrfProofs`), else the state and then the proofs.
   */
  async getUserStateAndVrfProofs(
    username: Uint8Array,
    flag: ValueStateFlag,
    keys: (state: ValueStateRecord) => VrfProofKey[],
  ): Promise<UserStateAndVrfProofs> {
    const db = this.db;
    if (db.getUserStateAndVrfProofs !== undefined) {
      return this.#answered(db.getUserStateAndVrfProofs(username, flag, keys));
    }
    const reads = {
      getUserState: (u: Uint8Array, f: ValueStateFlag) => this.getUserState(u, f),
      getVrfProofs: (wanted: VrfProofKey[]) => this.#answered(db.getVrfProofs(wanted)),
    };
    return stateThenVrfProofs(reads, username, flag, keys);
  }

  /**
   * The state `flag` selects of each of `usernames`, committed data only (duplicates answered
   * once, users with none omitted): in one batched read where the database has one
   * (`Database.getUserStates`), else one user at a time.
   */
  async getUserStates(usernames: Uint8Array[], flag: ValueStateFlag): Promise<ValueStateRecord[]> {
    const db = this.db;
    if (db.getUserStates !== undefined) {
      return this.#answered(db.getUserStates(usernames, flag));
    }
    const out = new Map<string, ValueStateRecord>();
    for (const username of usernames) {
      const key = toHex(username);
      if (out.has(key)) continue;
      try {
        out.set(key, await this.getUserState(username, flag));
      } catch (e) {
        if (!isAkdError(e, 'STORAGE_NOT_FOUND')) throw e;
      }
    }
    return [...out.values()];
  }

  /** All committed states of a user, by ascending epoch. */
  async getUserData(username: Uint8Array): Promise<ValueStateRecord[]> {
    return this.#answered(this.db.getUserData(username));
  }

  /** Latest version and value per user under `flag`, committed data only. */
  async getUserStateVersions(
    usernames: Uint8Array[],
    flag: ValueStateFlag,
  ): Promise<UserVersion[]> {
    return this.#answered(this.db.getUserStateVersions(usernames, flag));
  }

  /**
   * Erases the values of a user's states published at or before `epoch` (spec 14.6): the
   * tree is untouched, so proofs stay valid, and history verification then needs
   * `allowMissingValues`.
   * @returns the number of states erased.
   */
  async tombstoneValueStates(username: Uint8Array, epoch: bigint): Promise<number> {
    let states: ValueStateRecord[];
    try {
      states = await this.db.getUserData(username);
    } catch (e) {
      if (isAkdError(e, 'STORAGE_NOT_FOUND')) return 0;
      throw e;
    }
    const erased = states
      .filter((s) => s.epoch <= epoch && s.value.length > 0)
      .map((s) => ({ ...s, value: new Uint8Array(0) }));
    await this.batchSet(erased);
    return erased.length;
  }
}
