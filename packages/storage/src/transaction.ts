/**
 * A write transaction (spec 14.2): a log of records keyed by full key (the last write wins)
 * that its owner reads through before committed data, so a publish sees its own writes while
 * every other reader keeps seeing the last committed epoch. `commit` hands the log to the
 * StorageManager, which writes it atomically.
 */

import { appendAll, isAkdError, toHex, type NodeLabel } from '@akd-ts/core';
import type { NodeRecordBytes, UserVersion } from './database.js';
import { notFound, transactionError } from './errors.js';
import {
  fullKey,
  recordFullKey,
  selectValueState,
  type DbRecord,
  type RecordFor,
  type StorageKey,
  type TreeNodeRecord,
  type ValueStateFlag,
  type ValueStateRecord,
} from './records.js';
import type { RecordReader, StorageManager } from './storage-manager.js';

type Finish = (tx: Transaction, log: CommitLog | undefined) => Promise<number>;

/**
 * What a commit writes: the transaction's records, the AZKS record last (spec 14.2: readers
 * that see the new AZKS record must see every node of its epoch). A driver that writes in
 * chunks takes them one at a time, so that a large epoch's records never all exist as objects
 * at once.
 */
export interface CommitLog {
  /** Number of records. */
  readonly size: number;
  /** Whether the log ends with an AZKS record, as a commit's must. */
  readonly endsWithAzks: boolean;
  /** Every record, the AZKS record last. */
  all(): DbRecord[];
  /**
   * The records in chunks of at most `size`, the AZKS record in the last: built chunk by chunk
   * where the batches allow it, and not kept once yielded.
   */
  chunks(size: number): Iterable<DbRecord[]>;
}

/**
 * Tree-node records logged in one piece, as a tree insertion produces them: held in whatever
 * compact form the producer keeps and turned into record objects only when read or committed.
 * A batch answers for its labels until a later write of the same label replaces one.
 */
export interface NodeRecordBatch {
  /** Number of records the batch holds. */
  readonly size: number;
  /** The record of `label`, or undefined when the batch has none (same object every call). */
  get(label: NodeLabel): TreeNodeRecord | undefined;
  /** Drops the record of `label` (a later write replaced it); false when there was none. */
  delete(label: NodeLabel): boolean;
  /** Every record of the batch. */
  records(): TreeNodeRecord[];
  /**
   * Optional: every record of the batch, each built as it is iterated and not kept by the
   * batch afterwards (what it had built already, it yields as is). A commit in chunks then
   * holds one chunk of record objects at a time. The batch is not read again once streamed.
   */
  stream?(): Iterable<TreeNodeRecord>;
}

export class Transaction implements RecordReader {
  private readonly log = new Map<string, DbRecord>();
  /** Tree-node batches logged after the map's records, newest last (see `logNodeBatch`). */
  private batches: NodeRecordBatch[] = [];
  /** The value states logged, in order (a publish logs many and rarely reads them back). */
  private readonly loggedStates: ValueStateRecord[] = [];
  /** username hex -> epoch -> state, built from `loggedStates` on the first read of states. */
  private statesIndex: Map<string, Map<bigint, ValueStateRecord>> | undefined;
  private done = false;
  /** Tree-node records ever logged through `set` (at least those the log holds). */
  private loggedNodes = 0;

  constructor(
    private readonly storage: StorageManager,
    private readonly finish: Finish,
  ) {}

  private open(): void {
    if (this.done) throw transactionError('the transaction has ended');
  }

  hasCache(): boolean {
    return this.storage.hasCache();
  }

  /** Whether the transaction has been committed or rolled back. */
  get ended(): boolean {
    return this.done;
  }

  /** Number of records logged so far. */
  get size(): number {
    let n = this.log.size;
    for (const b of this.batches) n += b.size;
    return n;
  }

  /** Logs a record (replacing an earlier write of the same key). */
  set(record: DbRecord): void {
    this.open();
    if (record.kind === 'treeNode') {
      this.loggedNodes++;
      for (const b of this.batches) b.delete(record.label);
    }
    this.log.set(recordFullKey(record), record);
    if (record.kind === 'valueState') {
      this.loggedStates.push(record);
      if (this.statesIndex !== undefined) indexState(this.statesIndex, record);
    }
  }

  /** The logged states of one user, by epoch (the last write of an epoch wins). */
  private statesOf(username: Uint8Array): Iterable<ValueStateRecord> {
    if (this.statesIndex === undefined) {
      this.statesIndex = new Map();
      for (const state of this.loggedStates) indexState(this.statesIndex, state);
    }
    return this.statesIndex.get(toHex(username))?.values() ?? [];
  }

  batchSet(records: DbRecord[]): void {
    for (const r of records) this.set(r);
  }

  /**
   * Logs a batch of tree-node records (replacing earlier writes of the same labels). The
   * batch must not change afterwards except through `delete`, which the transaction calls.
   */
  logNodeBatch(batch: NodeRecordBatch): void {
    this.open();
    for (const [key, record] of this.log) {
      if (record.kind === 'treeNode' && batch.get(record.label) !== undefined) this.log.delete(key);
    }
    for (const b of this.batches) for (const r of batch.records()) b.delete(r.label);
    this.batches.push(batch);
  }

  /** The logged record under `key`: the map, then the batches. */
  private logged(key: StorageKey): DbRecord | undefined {
    const record = this.log.get(fullKey(key));
    if (record !== undefined || key.kind !== 'treeNode') return record;
    return this.fromBatches(key.label);
  }

  private fromBatches(label: NodeLabel): TreeNodeRecord | undefined {
    for (const b of this.batches) {
      const record = b.get(label);
      if (record !== undefined) return record;
    }
    return undefined;
  }

  async get<K extends StorageKey>(key: K): Promise<RecordFor<K>> {
    this.open();
    const logged = this.logged(key);
    return logged !== undefined ? (logged as RecordFor<K>) : this.storage.get(key);
  }

  async batchGet(keys: StorageKey[]): Promise<DbRecord[]> {
    this.open();
    const out: DbRecord[] = [];
    const rest: StorageKey[] = [];
    for (const key of keys) {
      const logged = this.logged(key);
      if (logged !== undefined) out.push(logged);
      else rest.push(key);
    }
    if (rest.length > 0) appendAll(out, await this.storage.batchGet(rest));
    return out;
  }

  peekNode(label: NodeLabel): TreeNodeRecord | undefined {
    return (
      (this.log.get(label.key) as TreeNodeRecord | undefined) ??
      (this.batches.length > 0 ? this.fromBatches(label) : undefined) ??
      this.storage.peekNode(label)
    );
  }

  peekNodes(labels: readonly NodeLabel[]): (TreeNodeRecord | undefined)[] {
    const out = this.storage.peekNodes(labels);
    // with no tree node logged, the log has nothing to add
    if (this.loggedNodes === 0 && this.batches.length === 0) return out;
    for (let i = 0; i < labels.length; i++) {
      const label = labels[i]!;
      const logged =
        (this.log.get(label.key) as TreeNodeRecord | undefined) ?? this.fromBatches(label);
      if (logged !== undefined) out[i] = logged;
    }
    return out;
  }

  async readNodes(
    labels: readonly NodeLabel[],
    epochs?: readonly bigint[],
  ): Promise<(TreeNodeRecord | undefined)[]> {
    this.open();
    return this.storage.readNodes(labels, epochs);
  }

  cacheNodes(records: readonly TreeNodeRecord[]): void {
    this.storage.cacheNodes(records);
  }

  readsNodeBytes(): boolean {
    return this.storage.readsNodeBytes();
  }

  /** False: a transaction's preloads read level by level, its own writes first. */
  readsSubtrees(): boolean {
    return false;
  }

  async readSubtrees(): Promise<TreeNodeRecord[]> {
    throw transactionError('a transaction does not read subtrees');
  }

  async readNodeBytes(labels: Uint8Array, epochs?: BigUint64Array): Promise<NodeRecordBytes> {
    this.open();
    return this.storage.readNodeBytes(labels, epochs);
  }

  mayHoldNodes(): boolean {
    return this.loggedNodes > 0 || this.batches.length > 0 || this.storage.mayHoldNodes();
  }

  getFromCacheOnly(key: StorageKey): DbRecord | undefined {
    return this.logged(key) ?? this.storage.getFromCacheOnly(key);
  }

  /** The state `flag` selects, with this transaction's states merged in (spec 14.2). */
  async getUserState(username: Uint8Array, flag: ValueStateFlag): Promise<ValueStateRecord> {
    this.open();
    let db: ValueStateRecord | undefined;
    try {
      db = await this.storage.getUserState(username, flag);
    } catch (e) {
      if (!isAkdError(e, 'STORAGE_NOT_FOUND')) throw e;
    }
    const tx = selectValueState(this.statesOf(username), flag);
    const chosen = pickMerged(db, tx, flag);
    if (chosen === undefined) throw notFound(`value state of user ${toHex(username)}`);
    return chosen;
  }

  /** All states of a user, committed and logged (logged ones override by epoch), by epoch. */
  async getUserData(username: Uint8Array): Promise<ValueStateRecord[]> {
    this.open();
    const byEpoch = new Map<bigint, ValueStateRecord>();
    try {
      for (const s of await this.storage.getUserData(username)) byEpoch.set(s.epoch, s);
    } catch (e) {
      if (!isAkdError(e, 'STORAGE_NOT_FOUND')) throw e;
    }
    for (const s of this.statesOf(username)) byEpoch.set(s.epoch, s);
    return [...byEpoch.values()].sort((a, b) => (a.epoch < b.epoch ? -1 : 1));
  }

  /**
   * Latest version and value per user under `flag`, merged with the log. Unlike upstream's
   * merge (spec 14.2), the version comes from the record's version, not its epoch.
   */
  async getUserStateVersions(
    usernames: Uint8Array[],
    flag: ValueStateFlag,
  ): Promise<UserVersion[]> {
    this.open();
    const merged = new Map<string, ValueStateRecord | UserVersion>();
    for (const v of await this.storage.getUserStateVersions(usernames, flag)) {
      merged.set(toHex(v.username), v);
    }
    for (const username of usernames) {
      const tx = selectValueState(this.statesOf(username), flag);
      if (tx === undefined) continue;
      const user = toHex(username);
      const db = merged.get(user);
      // a committed entry carries no epoch: the log, being newer, wins for every flag but
      // minEpoch, where the committed state (older) wins
      if (db === undefined || flag.kind !== 'minEpoch') merged.set(user, tx);
    }
    return [...merged.values()].map((v) => ({
      username: v.username,
      version: v.version,
      value: v.value,
    }));
  }

  /** The logged records (for inspection and tests). */
  records(): DbRecord[] {
    const out = [...this.log.values()];
    for (const b of this.batches) for (const r of b.records()) out.push(r);
    return out;
  }

  /**
   * Writes the log atomically (the AZKS record last) and ends the transaction.
   * @returns the number of records written.
   * @throws AkdError `STORAGE_TRANSACTION` when the log does not end with an AZKS record, or
   * the database's error; either way nothing of the log is visible.
   */
  async commit(): Promise<number> {
    this.open();
    this.done = true;
    return this.finish(this, this.commitLog());
  }

  /** The log as a commit writes it: records of the map, then of the batches, the AZKS last. */
  private commitLog(): CommitLog {
    const mapped = [...this.log.values()];
    const azks = mapped.filter((r) => r.kind === 'azks');
    const others = mapped.filter((r) => r.kind !== 'azks');
    const batches = this.batches;
    const size = this.size;
    return {
      size,
      endsWithAzks: azks.length > 0,
      all: () => {
        const out: DbRecord[] = others.slice();
        for (const b of batches) for (const r of b.records()) out.push(r);
        out.push(...azks);
        return out;
      },
      chunks: function* (chunk: number) {
        const max = Math.max(1, Math.floor(chunk));
        let pending: DbRecord[] = [];
        const take = function* (records: Iterable<DbRecord>) {
          for (const r of records) {
            pending.push(r);
            if (pending.length >= max) {
              yield pending;
              pending = [];
            }
          }
        };
        yield* take(others);
        for (const b of batches) yield* take(b.stream?.() ?? b.records());
        yield* take(azks);
        if (pending.length > 0) yield pending;
      },
    };
  }

  /** Discards the log and ends the transaction. */
  async rollback(): Promise<void> {
    this.open();
    this.done = true;
    this.log.clear();
    this.batches = [];
    this.loggedStates.length = 0;
    this.statesIndex = undefined;
    await this.finish(this, undefined);
  }
}

function indexState(index: Map<string, Map<bigint, ValueStateRecord>>, state: ValueStateRecord) {
  const user = toHex(state.username);
  let byEpoch = index.get(user);
  if (byEpoch === undefined) index.set(user, (byEpoch = new Map()));
  byEpoch.set(state.epoch, state);
}

/** Spec 14.2's rule for choosing between a committed and a logged state. */
function pickMerged(
  db: ValueStateRecord | undefined,
  tx: ValueStateRecord | undefined,
  flag: ValueStateFlag,
): ValueStateRecord | undefined {
  if (db === undefined || tx === undefined) return tx ?? db;
  switch (flag.kind) {
    case 'specificVersion':
    case 'specificEpoch':
      return tx;
    case 'leqEpoch':
    case 'maxEpoch':
      return tx.epoch >= db.epoch ? tx : db;
    case 'minEpoch':
      return tx.epoch <= db.epoch ? tx : db;
  }
}
