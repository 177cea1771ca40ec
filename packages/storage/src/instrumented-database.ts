/**
 * A Database wrapper that models a remote store and observes how it is used: every read can
 * cost a fixed delay per round trip, a batched read is served in round trips of at most
 * `maxKeysPerRead` keys, and the wrapper records how many reads are in flight at once. Tests
 * use it to check that lookups never read concurrently while parallel preloads do; benchmarks
 * use it to measure preloading against a latency floor (upstream's `slow_internal_db` idea).
 */

import type { NodeLabel } from '@akd-ts/core';
import type {
  AuditBlobInfo,
  AuditBlobRecord,
  Database,
  DbSetState,
  NodeLayout,
  NodeRecordBytes,
  UserStateAndVrfProofs,
  UserVersion,
  WriterLock,
} from './database.js';
import type {
  DbRecord,
  RecordFor,
  StorageKey,
  TreeNodeRecord,
  ValueStateFlag,
  ValueStateRecord,
} from './records.js';
import { readNodeRecords } from './node-reads.js';
import type { VrfProofKey, VrfProofRecord } from './vrf-proofs.js';
import { LABEL_BYTES } from './record-codec.js';

export interface InstrumentOptions {
  /** Delay of one read round trip, ms (default 0: no delay, but reads still yield once). */
  readDelayMs?: number;
  /** Keys one round trip returns at most; a larger batch takes several (default unlimited). */
  maxKeysPerRead?: number;
  /** The clock `storeMs` is read from, ms (default `performance.now`; tests inject one). */
  now?: () => number;
}

/** What the wrapper saw. */
export interface ReadStats {
  /** Read calls (any method), batched reads, and keys asked for by batched reads. */
  reads: number;
  batchReads: number;
  batchKeys: number;
  /** Round trips paid (a batch larger than `maxKeysPerRead` pays several). */
  roundTrips: number;
  /** Reads in flight now, and the most ever in flight at once. */
  inFlight: number;
  maxInFlight: number;
  /**
   * Time the wrapped store spent working on this thread on the reads, ms: from each read's
   * call until it first waits (all of an in-memory store's read). A remote store spends this
   * on its own machine; a benchmark that wraps an in-memory store charges it to the caller.
   */
  storeMs: number;
}

const sleep = (ms: number) =>
  new Promise<void>((resolve) => (ms > 0 ? setTimeout(resolve, ms) : setImmediate(resolve)));

/**
 * @example
 * ```ts
 * const remote = new InstrumentedDatabase(new MemoryDatabase(), { readDelayMs: 2, maxKeysPerRead: 1000 });
 * // ... run a publish ...
 * remote.stats.maxInFlight; // reads that overlapped
 * ```
 */
export class InstrumentedDatabase implements Database {
  readonly stats: ReadStats = {
    reads: 0,
    batchReads: 0,
    batchKeys: 0,
    roundTrips: 0,
    inFlight: 0,
    maxInFlight: 0,
    storeMs: 0,
  };
  private readonly delay: number;
  private readonly cap: number;
  private readonly now: () => number;

  constructor(
    readonly inner: Database,
    options: InstrumentOptions = {},
  ) {
    this.delay = options.readDelayMs ?? 0;
    this.cap = options.maxKeysPerRead ?? Number.POSITIVE_INFINITY;
    this.now = options.now ?? (() => performance.now());
    // answered in bytes only where the wrapped store answers so
    const bytesOf = inner.batchGetNodeBytes?.bind(inner);
    if (bytesOf !== undefined) {
      this.batchGetNodeBytes = (labels) =>
        this.batchRead(labels.length / LABEL_BYTES, () => bytesOf(labels));
    }
    const versionsOf = inner.batchGetNodeVersions?.bind(inner);
    if (versionsOf !== undefined) {
      this.batchGetNodeVersions = (labels, epochs) =>
        this.batchRead(labels.length, () => versionsOf(labels, epochs));
    }
    const versionBytesOf = inner.batchGetNodeVersionBytes?.bind(inner);
    if (versionBytesOf !== undefined) {
      this.batchGetNodeVersionBytes = (labels, epochs) =>
        this.batchRead(epochs.length, () => versionBytesOf(labels, epochs));
    }
    const statesOf = inner.getUserStates?.bind(inner);
    if (statesOf !== undefined) {
      this.getUserStates = (usernames, flag) => this.read(1, () => statesOf(usernames, flag));
    }
    const stateAndProofsOf = inner.getUserStateAndVrfProofs?.bind(inner);
    if (stateAndProofsOf !== undefined) {
      this.getUserStateAndVrfProofs = (username, flag, keys) =>
        this.read(1, () => stateAndProofsOf(username, flag, keys));
    }
    // and writes in chunks, or deletes versions, only where it does so
    this.batchSetChunks = inner.batchSetChunks?.bind(inner);
    this.deleteNodeVersions = inner.deleteNodeVersions?.bind(inner);
    this.nodeLayout = inner.nodeLayout;
    // a delay makes every read a round trip, whatever the store behind it
    this.readLatency = this.delay > 0 ? 'round-trip' : inner.readLatency;
  }

  readonly nodeLayout?: NodeLayout;
  readonly readLatency?: Database['readLatency'];
  readonly batchGetNodeBytes?: (labels: Uint8Array) => Promise<NodeRecordBytes>;
  readonly batchGetNodeVersions?: (
    labels: readonly NodeLabel[],
    epochs: readonly bigint[],
  ) => Promise<(TreeNodeRecord | undefined)[]>;
  readonly batchGetNodeVersionBytes?: (
    labels: Uint8Array,
    epochs: BigUint64Array,
  ) => Promise<NodeRecordBytes>;
  readonly getUserStates?: (
    usernames: Uint8Array[],
    flag: ValueStateFlag,
  ) => Promise<ValueStateRecord[]>;
  readonly getUserStateAndVrfProofs?: (
    username: Uint8Array,
    flag: ValueStateFlag,
    keys: (state: ValueStateRecord) => VrfProofKey[],
  ) => Promise<UserStateAndVrfProofs>;
  readonly batchSetChunks?: (chunks: Iterable<DbRecord[]>, state?: DbSetState) => Promise<void>;
  readonly deleteNodeVersions?: (
    labels: readonly NodeLabel[],
    epochs: readonly bigint[],
  ) => Promise<number>;

  /** Zeroes the counters (not the reads in flight). */
  resetStats(): void {
    Object.assign(this.stats, { reads: 0, batchReads: 0, batchKeys: 0, roundTrips: 0, storeMs: 0 });
    this.stats.maxInFlight = this.stats.inFlight;
  }

  private async read<T>(roundTrips: number, op: () => Promise<T>): Promise<T> {
    const s = this.stats;
    s.reads++;
    s.inFlight++;
    s.maxInFlight = Math.max(s.maxInFlight, s.inFlight);
    try {
      for (let i = 0; i < roundTrips; i++) {
        s.roundTrips++;
        await sleep(this.delay);
      }
      const start = this.now();
      const answer = op();
      s.storeMs += this.now() - start;
      return await answer;
    } finally {
      s.inFlight--;
    }
  }

  get<K extends StorageKey>(key: K): Promise<RecordFor<K>> {
    return this.read(1, () => this.inner.get(key));
  }

  /** A batched read of `keys` keys: counted, in round trips of at most `maxKeysPerRead`. */
  private batchRead<T>(keys: number, op: () => Promise<T>): Promise<T> {
    this.stats.batchReads++;
    this.stats.batchKeys += keys;
    return this.read(Math.max(1, Math.ceil(keys / this.cap)), op);
  }

  batchGet(keys: StorageKey[]): Promise<DbRecord[]> {
    return this.batchRead(keys.length, () => this.inner.batchGet(keys));
  }

  batchGetNodes(labels: readonly NodeLabel[]): Promise<(TreeNodeRecord | undefined)[]> {
    return this.batchRead(labels.length, () => readNodeRecords(this.inner, labels));
  }

  getUserData(username: Uint8Array): Promise<ValueStateRecord[]> {
    return this.read(1, () => this.inner.getUserData(username));
  }

  getUserState(username: Uint8Array, flag: ValueStateFlag): Promise<ValueStateRecord> {
    return this.read(1, () => this.inner.getUserState(username, flag));
  }

  getUserStateVersions(usernames: Uint8Array[], flag: ValueStateFlag): Promise<UserVersion[]> {
    return this.read(1, () => this.inner.getUserStateVersions(usernames, flag));
  }

  getSetting(name: string): Promise<string | undefined> {
    return this.read(1, () => this.inner.getSetting(name));
  }

  set(record: DbRecord): Promise<void> {
    return this.inner.set(record);
  }

  batchSet(records: DbRecord[], state?: DbSetState): Promise<void> {
    return this.inner.batchSet(records, state);
  }

  setSetting(name: string, value: string): Promise<void> {
    return this.inner.setSetting(name, value);
  }

  setVrfProofs(records: VrfProofRecord[]): Promise<void> {
    return this.inner.setVrfProofs(records);
  }

  getVrfProofs(keys: VrfProofKey[]): Promise<VrfProofRecord[]> {
    return this.read(1, () => this.inner.getVrfProofs(keys));
  }

  setAuditBlob(blob: AuditBlobRecord): Promise<void> {
    return this.inner.setAuditBlob(blob);
  }

  getAuditBlobInfos(epochs: bigint[]): Promise<AuditBlobInfo[]> {
    return this.read(1, () => this.inner.getAuditBlobInfos(epochs));
  }

  getAuditBlob(epoch: bigint): Promise<AuditBlobRecord> {
    return this.read(1, () => this.inner.getAuditBlob(epoch));
  }

  acquireWriterLock(): Promise<WriterLock> {
    return this.inner.acquireWriterLock();
  }

  close(): Promise<void> {
    return this.inner.close();
  }
}
