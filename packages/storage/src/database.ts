/**
 * The storage seam (spec 14.1): a small record-oriented interface every driver implements.
 * Caching, transactions and batching live in the StorageManager above it, so a driver only
 * stores and fetches records. The shared conformance suite (`@akd-ts/storage/conformance`)
 * pins down every method's semantics below.
 */

import type {
  DbRecord,
  RecordFor,
  StorageKey,
  ValueStateFlag,
  ValueStateRecord,
} from './records.js';

/** Why a batch is written: informational for drivers (spec 14.1 `DbSetState`). */
export type DbSetState = 'transactionCommit' | 'general';

/** A user's latest version and value under some flag (spec 14.1 `get_user_state_versions`). */
export interface UserVersion {
  username: Uint8Array;
  version: bigint;
  value: Uint8Array;
}

/**
 * The audit blob of one epoch step as a store keeps it (spec 16): the protobuf bytes of the
 * `SingleAppendOnlyProof` of the step `epoch - 1 -> epoch`, with the two root hashes that
 * name it. The writer stores it as it publishes the epoch, so serving an audit never rebuilds
 * a proof; a step's blob never changes once its epoch is published.
 */
export interface AuditBlobRecord {
  /** The step's end epoch (at least 1). */
  epoch: bigint;
  /** The root hash at `epoch - 1` (32 bytes). */
  previousHash: Uint8Array;
  /** The root hash at `epoch` (32 bytes). */
  currentHash: Uint8Array;
  /** The protobuf `SingleAppendOnlyProof`. */
  data: Uint8Array;
}

/** A stored audit blob without its bytes: what a listing needs. */
export interface AuditBlobInfo {
  epoch: bigint;
  previousHash: Uint8Array;
  currentHash: Uint8Array;
  /** The length of its `data`. */
  size: number;
}

/** Proof that this process is the store's only writer, until released. */
export interface WriterLock {
  release(): Promise<void>;
}

/**
 * A storage backend. Every method is async; failures are AkdErrors with a `STORAGE_*` code.
 * Epochs, versions and node counts are unsigned, and drivers must store every value up to
 * 2^63 - 1 (SQL drivers use signed 64-bit columns; an epoch a second would take 292 billion
 * years to get there).
 */
export interface Database {
  /** Upserts one record. */
  set(record: DbRecord): Promise<void>;

  /**
   * Upserts many records atomically: when it fails, none of them is visible. Readers never see
   * part of a batch; an `azks` record in the batch becomes visible together with the rest.
   * An empty batch is a no-op.
   */
  batchSet(records: DbRecord[], state?: DbSetState): Promise<void>;

  /** One record; `STORAGE_NOT_FOUND` when there is none under `key`. */
  get<K extends StorageKey>(key: K): Promise<RecordFor<K>>;

  /**
   * Many records, any kinds: keys with no record are silently omitted and the order of the
   * result is unspecified. Duplicate keys yield one record.
   */
  batchGet(keys: StorageKey[]): Promise<DbRecord[]>;

  /** All value states of a user, by ascending epoch; `STORAGE_NOT_FOUND` when it has none. */
  getUserData(username: Uint8Array): Promise<ValueStateRecord[]>;

  /** The value state `flag` selects (spec 14.1); `STORAGE_NOT_FOUND` when none matches. */
  getUserState(username: Uint8Array, flag: ValueStateFlag): Promise<ValueStateRecord>;

  /**
   * For each user with a state matching `flag`, that state's version and value. Users without
   * one are absent from the result (not an error). Order unspecified.
   */
  getUserStateVersions(usernames: Uint8Array[], flag: ValueStateFlag): Promise<UserVersion[]>;

  /** A named setting of the store (such as the directory's configuration), or undefined. */
  getSetting(name: string): Promise<string | undefined>;

  /** Stores a named setting, replacing any earlier value. */
  setSetting(name: string, value: string): Promise<void>;

  /**
   * Stores the audit blob of the step ending at `blob.epoch`, replacing any earlier blob of
   * that epoch (a publish that failed after writing its blob, then retried, overwrites it).
   * The writer calls it before committing the epoch, so every published epoch has its blob;
   * readers must therefore ignore blobs of epochs beyond the latest they know.
   */
  setAuditBlob(blob: AuditBlobRecord): Promise<void>;

  /**
   * The name and size of the stored blobs of `epochs`, ascending by epoch, without their
   * data. Epochs with no blob are omitted (not an error); duplicates are returned once.
   */
  getAuditBlobInfos(epochs: bigint[]): Promise<AuditBlobInfo[]>;

  /** The stored blob of `epoch`; `STORAGE_NOT_FOUND` when there is none. */
  getAuditBlob(epoch: bigint): Promise<AuditBlobRecord>;

  /**
   * Takes the store's exclusive writer lock, or fails at once with `STORAGE_LOCKED` when
   * another writer (in this or another process) holds it.
   */
  acquireWriterLock(): Promise<WriterLock>;

  /** Releases connections and files. The database is unusable afterwards. */
  close(): Promise<void>;
}
