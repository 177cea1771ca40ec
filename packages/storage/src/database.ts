/**
 * The storage seam (spec 14.1): a small record-oriented interface every driver implements.
 * Caching, transactions and batching live in the StorageManager above it, so a driver only
 * stores and fetches records. The shared conformance suite (`@akd-ts/storage/conformance`)
 * pins down every method's semantics below.
 */

import type { NodeLabel } from '@akd-ts/core';
import type {
  DbRecord,
  RecordFor,
  StorageKey,
  TreeNodeRecord,
  ValueStateFlag,
  ValueStateRecord,
} from './records.js';
import type { VrfProofKey, VrfProofRecord } from './vrf-proofs.js';

/** Why a batch is written: informational for drivers (spec 14.1 `DbSetState`). */
export type DbSetState = 'transactionCommit' | 'general';

/** A user's latest version and value under some flag (spec 14.1 `get_user_state_versions`). */
export interface UserVersion {
  username: Uint8Array;
  version: bigint;
  value: Uint8Array;
}

/**
 * A user's state and the stored VRF proofs of its label that were asked for in view of it
 * (`Database.getUserStateAndVrfProofs`): keys with none are omitted, as `getVrfProofs` does.
 */
export interface UserStateAndVrfProofs {
  state: ValueStateRecord;
  proofs: VrfProofRecord[];
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

/**
 * Totals of a whole store that only a scan of its tables gives: how many tree nodes it holds
 * and the newest epoch of each kind of record. A driver that can scan reports them (as
 * `SqliteDatabase.recordTotals` does), and the directory's consistency check compares them
 * with the AZKS record, which must account for every one.
 */
export interface StoredRecordTotals {
  /** Tree-node records stored (one per node ever created: spec 7.4 `num_nodes`). */
  treeNodes: bigint;
  /** The newest `last_epoch` of any node's latest version; undefined when there is no node. */
  newestNodeEpoch: bigint | undefined;
  /** The newest epoch of any value state; undefined when there is none. */
  newestValueStateEpoch: bigint | undefined;
  /** The newest epoch of any stored audit blob; undefined when there is none. */
  newestAuditBlobEpoch: bigint | undefined;
}

/** Whether a writer lock is held, for locks that can be lost. */
export interface WriterLockStatus {
  /** True while this process holds the lock: writes are safe. */
  held: boolean;
  /**
   * Starts at 0 and grows each time the lock is taken again after a loss: another writer may
   * have written in between, so whatever the holder cached must be read again.
   */
  generation: number;
  /** Why the lock is not held (a lost connection, another holder), when it is not. */
  reason?: string;
  /** True once the lock will not be held again: it was released, or lost for good. */
  final: boolean;
  /**
   * Lost for good because the store is fenced: retired as the directory's writable copy (the
   * old primary of a fail-over), so no writer may publish there any more.
   */
  fenced?: boolean;
}

/** Proof that this process is the store's only writer, until released. */
export interface WriterLock {
  release(): Promise<void>;
  /**
   * Locks that live on a connection (PostgreSQL's advisory lock) can be lost with it; they
   * report their state here, and try to take the lock again. Locks that cannot be lost (a
   * lock file, a flag in memory) omit it: they are held until released.
   */
  status?(): WriterLockStatus;
  /** Calls `listener` on every change of `status()`; returns a function that stops it. */
  onStatus?(listener: (status: WriterLockStatus) => void): () => void;
}

/**
 * Tree-node records in the record codec's form, aligned with the labels asked for: label `i`'s
 * record begins at `starts[i]` of `buffers[buffer[i]]` (`buffer[i]` -1: none stored). The
 * buffers may be views of the store's own memory (a store that keeps records as bytes answers
 * without copying them): a reader must not change them, and copies what it keeps.
 */
export interface NodeRecordBytes {
  buffers: Uint8Array[];
  buffer: Int32Array;
  starts: Int32Array;
}

/**
 * How a store keeps tree nodes (`Database.nodeLayout`).
 *
 * - `records` (also when a driver says nothing): one record per label, holding the node's
 *   latest version and the one before it. A commit rewrites the record of every node it
 *   changes, wherever its label sorts, and every read answers by label.
 * - `versions`: every version of a node under its label and its write epoch (its
 *   `lastEpoch`), so that an epoch appends its own versions instead of rewriting records
 *   spread over the whole store. There is no index by label: a walk from the root reads each
 *   child by the write epoch its parent records (`TreeNode.leftEpoch`, spec 9.2) with
 *   `batchGetNodeVersions`. The rules of this layout:
 *   1. Writing a tree-node record stores its `latest` under (label, `latest.lastEpoch`),
 *      replacing a version stored under that key, unless that epoch is at most the store's
 *      epoch (below) before the write: a published version never changes, and what a commit
 *      writes for a node whose parent alone changed (it keeps its write epoch) is left out.
 *      `previous` is never written: it is a version stored already.
 *   2. A version's `parent` is the one it was written with: a later epoch that put a new node
 *      between them wrote no version (no proof reads a parent).
 *   3. The store's epoch is the newest write epoch of a root version (a publish rewrites the
 *      root), or none when no root is stored.
 *   4. Reads by label (`get` and `batchGet` of tree-node keys, `batchGetNodes`,
 *      `batchGetNodeBytes`) answer for the nodes of the tree at the store's epoch only, found
 *      by a walk from the root: `latest` is the version visible at that epoch, and `previous`
 *      the version visible at `latest.lastEpoch - 1`, where a walk from the root of that
 *      epoch reaches one (undefined otherwise). A label that is not in that tree has no
 *      record. They cost a walk: the directory reads versions on every path it walks often.
 */
export type NodeLayout = 'records' | 'versions';

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

  /**
   * Optional: `batchSet` of a batch too large to hold as objects all at once. Upserts the
   * records of every chunk `chunks` yields, taking one chunk at a time and keeping none once
   * written, all atomically as one batch: when it fails (the database's error, or an error
   * thrown while a chunk is made), none of them is visible. An `azks` record comes in the last
   * chunk. The writer's commit uses it for large epochs (StorageManager `commitChunkRecords`).
   */
  batchSetChunks?(chunks: Iterable<DbRecord[]>, state?: DbSetState): Promise<void>;

  /** One record; `STORAGE_NOT_FOUND` when there is none under `key`. */
  get<K extends StorageKey>(key: K): Promise<RecordFor<K>>;

  /**
   * Many records, any kinds: keys with no record are silently omitted and the order of the
   * result is unspecified. Duplicate keys yield one record.
   */
  batchGet(keys: StorageKey[]): Promise<DbRecord[]>;

  /**
   * Optional: the tree-node records of `labels`, aligned with them (undefined where none is
   * stored), in one read as `batchGet` would make it. A driver that answers this without
   * building a key object per label or matching records back by key spares a preload's walk
   * that work; without it, `readNodeRecords` calls `batchGet` and matches.
   */
  batchGetNodes?(labels: readonly NodeLabel[]): Promise<(TreeNodeRecord | undefined)[]>;

  /** How the store keeps tree nodes; `records` when absent. See {@link NodeLayout}. */
  readonly nodeLayout?: NodeLayout;

  /**
   * Optional: what a read costs beyond its work. `local` (an embedded store): it is answered
   * in this process, with no round trip to save by reading much at once, so an insertion's
   * preload reads the tree a part at a time rather than a whole level at once, which misses
   * the store's page cache less often (directory's `PreloadOptions.chunkNodes`).
   * `round-trip` (also when absent): each read waits on a server.
   */
  readonly readLatency?: 'local' | 'round-trip';

  /**
   * Optional: the versions of tree nodes `labels[i]` written in epoch `epochs[i]` (the
   * version whose `lastEpoch` is that epoch), in one read, aligned with them: each as a record
   * whose `latest` is that version and whose `previous` is undefined; undefined where the
   * store holds no such version. A store of the `versions` layout must have it; a store of
   * records may (answering from its latest and previous copies). Without it, reads by
   * version ask `readNodeRecords` by label, and the caller checks the version it got.
   * @throws RangeError where the two lists differ in length
   */
  batchGetNodeVersions?(
    labels: readonly NodeLabel[],
    epochs: readonly bigint[],
  ): Promise<(TreeNodeRecord | undefined)[]>;

  /**
   * Optional: `batchGetNodeVersions` answered in bytes, as `batchGetNodeBytes` answers:
   * `labels` in the record codec's form (34 bytes each), `epochs` aligned with them. Each
   * answered record is the codec's form of the record `batchGetNodeVersions` gives (no
   * previous copy).
   * @throws RangeError where `labels` is not 34 bytes a label or the lengths differ
   */
  batchGetNodeVersionBytes?(labels: Uint8Array, epochs: BigUint64Array): Promise<NodeRecordBytes>;

  /**
   * Optional, for the `versions` layout: deletes the versions of tree nodes `labels[i]`
   * written in epoch `epochs[i]`, all of them or (on failure) none, and returns how many were
   * stored (a version not stored, or given twice, counts once or not at all). Only versions
   * that no walk from a root still served reaches may be given: version-collection.ts finds
   * them (a version superseded by a newer one that the epochs served already see). Deleting a
   * root version also drops its epoch from the root epochs rule 3 reads; the store's epoch
   * never moves, since no version of it can be deleted.
   * @throws RangeError, deleting nothing, where the lists differ in length or a version's
   * epoch is not below the store's epoch (rule 3)
   */
  deleteNodeVersions?(labels: readonly NodeLabel[], epochs: readonly bigint[]): Promise<number>;

  /**
   * Optional: the tree-node records of `labels` and of every node below them that a walk
   * toward `targets` at `epoch` continues to (spec 13.2: below a node that is not a leaf in its
   * version visible at `epoch` and whose label prefixes one of the targets, full-length labels),
   * in one read. Any order; nodes not stored are absent. A driver whose reads are round trips
   * serves a lookup's paths with it at once instead of a read per tree level. The preload
   * still decides what it expands: a record too many or too few costs a read, never a
   * different walk.
   *
   * `epochs`, when given, is aligned with `labels`: the write epoch of the version of each
   * that the walk wants (its parent's record of it; `epoch` for the root). A store of the
   * `versions` layout then reads those versions and, below them, each child by the write
   * epoch its parent records, answering each version as `batchGetNodeVersions` does;
   * without `epochs` it finds `labels` as reads by label do. A store of records ignores it.
   */
  batchGetSubtrees?(
    labels: readonly NodeLabel[],
    targets: readonly NodeLabel[],
    epoch: bigint,
    epochs?: readonly bigint[],
  ): Promise<TreeNodeRecord[]>;

  /**
   * Optional: `batchGetNodes` answered in bytes, for a driver that holds or receives records
   * as bytes. `labels` is the labels in the record codec's form, 34 bytes each (`u16 len ||
   * 32 bytes`, big-endian); the answer says where each stored record is, in the codec's form
   * (record-codec.ts). A preload then copies nodes from the bytes into its arena without
   * building a record object per node.
   */
  batchGetNodeBytes?(labels: Uint8Array): Promise<NodeRecordBytes>;

  /** All value states of a user, by ascending epoch; `STORAGE_NOT_FOUND` when it has none. */
  getUserData(username: Uint8Array): Promise<ValueStateRecord[]>;

  /** The value state `flag` selects (spec 14.1); `STORAGE_NOT_FOUND` when none matches. */
  getUserState(username: Uint8Array, flag: ValueStateFlag): Promise<ValueStateRecord>;

  /**
   * For each user with a state matching `flag`, that state's version and value. Users without
   * one are absent from the result (not an error). Order unspecified.
   */
  getUserStateVersions(usernames: Uint8Array[], flag: ValueStateFlag): Promise<UserVersion[]>;

  /**
   * Optional: the state `flag` selects of each of `usernames` (duplicates answered once, users
   * with none omitted, any order), as `getUserState` reads one, in one batched read: a batch
   * lookup's states (StorageManager reads them one at a time without it).
   */
  getUserStates?(usernames: Uint8Array[], flag: ValueStateFlag): Promise<ValueStateRecord[]>;

  /**
   * Optional: up to `limit` distinct usernames that have value states, in ascending byte
   * order, all greater than `after` (from the first when undefined). A one-off job that visits
   * every label (`akd vrf backfill`) walks the store with it and resumes where it stopped.
   */
  listUsernames?(after: Uint8Array | undefined, limit: number): Promise<Uint8Array[]>;

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
   * Upserts stored VRF proofs (vrf-proofs.ts) atomically: when it fails, none is visible. A
   * record without a nonce never erases a stored one (a proof is a function of its key; only
   * the nonce can change, and only to a record that has one). The writer calls it before
   * committing the epoch whose proofs need them, so every published version has its proofs.
   * An empty batch is a no-op.
   */
  setVrfProofs(records: VrfProofRecord[]): Promise<void>;

  /**
   * The stored VRF proofs of `keys`, in one read: keys with none are omitted, the order is
   * unspecified and duplicate keys yield one record.
   */
  getVrfProofs(keys: VrfProofKey[]): Promise<VrfProofRecord[]>;

  /**
   * Optional: `getUserState(username, flag)` and then `getVrfProofs(keys(state))`, over one
   * snapshot and in one statement where the store can: what a lookup served without the VRF
   * key reads first (the state names the versions whose proofs it needs). `keys` gives keys
   * of the label `username` only. `STORAGE_NOT_FOUND` as `getUserState`; `StorageManager`
   * makes the two reads where a store lacks it.
   */
  getUserStateAndVrfProofs?(
    username: Uint8Array,
    flag: ValueStateFlag,
    keys: (state: ValueStateRecord) => VrfProofKey[],
  ): Promise<UserStateAndVrfProofs>;

  /**
   * Takes the store's exclusive writer lock, or fails at once with `STORAGE_LOCKED` when
   * another writer (in this or another process) holds it.
   */
  acquireWriterLock(): Promise<WriterLock>;

  /** Releases connections and files. The database is unusable afterwards. */
  close(): Promise<void>;
}
