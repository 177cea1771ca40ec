/**
 * Replicas of a memory store across the processes of `akd serve`. A memory store lives in
 * memory, so every child keeps a replica of it (a PackedMemoryDatabase: records as bytes) and
 * the writer's writes travel as changes: the writer's store records each write once it
 * succeeded, the primary numbers it and passes it on, and every proof server applies it to
 * its replica. A child that starts takes a snapshot of a running child's replica (the
 * primary keeps none). A replica shows an epoch entirely or not at all: a publish's commit
 * travels as changes of at most {@link REPLICA_CHUNK} records, its azks record in the last
 * (`applyChanges`).
 */

import { closeSync, openSync, writeSync } from 'node:fs';
import { readFile, rm } from 'node:fs/promises';
import {
  MemoryDatabase,
  PackedMemoryDatabase,
  type AuditBlobInfo,
  type AuditBlobRecord,
  type Database,
  type DbRecord,
  type DbSetState,
  type RecordFor,
  type StorageKey,
  type UserVersion,
  type ValueStateFlag,
  type ValueStateRecord,
  type VrfProofKey,
  type VrfProofRecord,
  type WriterLock,
} from '@akd-ts/storage';
import { RECORDS_CHANGE, encodeChanges, readChanges, type Change } from './codec.js';

/**
 * The change bytes of a snapshot of `db`, in parts to be joined in order: its records (a
 * packed store's as records changes of about `pieceBytes`, each its kind byte then its body,
 * copied as the bytes they are), then its settings and audit blobs.
 */
function* snapshotParts(
  db: MemoryDatabase | PackedMemoryDatabase,
  pieceBytes: number,
): Generator<Uint8Array, void, undefined> {
  if (db instanceof PackedMemoryDatabase) {
    for (const body of db.exportRecordPieces(pieceBytes)) {
      yield RECORDS_CHANGE;
      yield body;
    }
  } else yield encodeChanges([{ kind: 'records', records: db.allRecords() }]);
  for (const [name, value] of db.allSettings()) {
    yield encodeChanges([{ kind: 'setting', name, value }]);
  }
  for (const blob of db.allAuditBlobs()) yield encodeChanges([{ kind: 'auditBlob', blob }]);
  const proofs = db.allVrfProofs();
  for (let i = 0; i < proofs.length; i += REPLICA_CHUNK) {
    yield encodeChanges([{ kind: 'vrfProofs', proofs: proofs.slice(i, i + REPLICA_CHUNK) }]);
  }
}

/**
 * The whole store as change bytes: its records as one batch, then its settings and blobs. A
 * packed store's records are copied as the bytes they are (no record objects are built).
 *
 * @example const replica = await replicaOf(snapshotOf(db));
 */
export function snapshotOf(db: MemoryDatabase | PackedMemoryDatabase): Uint8Array {
  const parts = [...snapshotParts(db, Infinity)];
  const out = new Uint8Array(parts.reduce((n, p) => n + p.length, 0));
  let at = 0;
  for (const p of parts) {
    out.set(p, at);
    at += p.length;
  }
  return out;
}

/**
 * Records per change the writer sends: a few milliseconds of writes for a replica, which
 * applies one change per turn of its event loop, so that a process answering requests is
 * never held for a whole epoch's records at once.
 */
export const REPLICA_CHUNK = 2_000;

/**
 * Applies the changes in `bytes` (codec.ts) to `db` in order, records as the bytes they are.
 * The bytes are checked whole before anything is written. Readers take the epoch they serve
 * from the azks record, which comes in the last change of an epoch: until then they go on
 * serving the previous epoch, for which the tree nodes written so far still hold their
 * previous version and newer value states are skipped (a reader never sees part of an epoch).
 * @throws RangeError for bytes that are not changes (nothing written)
 */
export async function applyChanges(db: PackedMemoryDatabase, bytes: Uint8Array): Promise<void> {
  for (const c of readChanges(bytes)) {
    if (c.kind === 'records') await db.importRecords(c.body);
    else if (c.kind === 'setting') await db.setSetting(c.name, c.value);
    else if (c.kind === 'vrfProofs') await db.setVrfProofs(c.proofs);
    else await db.setAuditBlob(c.blob);
  }
}

/** `records` in batches of at most `size` (the azks records in the last batch). */
export function piecesOf(records: DbRecord[], size: number): DbRecord[][] {
  if (records.length <= size) return [records];
  const pieces: DbRecord[][] = [];
  const epochs: DbRecord[] = [];
  let piece: DbRecord[] = [];
  for (const r of records) {
    if (r.kind === 'azks') epochs.push(r);
    else {
      piece.push(r);
      if (piece.length === size) {
        pieces.push(piece);
        piece = [];
      }
    }
  }
  if (piece.length > 0) pieces.push(piece);
  if (epochs.length > 0) pieces.push(epochs);
  return pieces;
}

/** Bytes of a records piece of a snapshot file, about (the most a snapshot holds at once). */
const SNAPSHOT_PIECE_BYTES = 4 * 1024 * 1024;

/**
 * Writes a snapshot of `db` (the change bytes {@link snapshotOf} gives, a packed store's
 * records in several changes) to a new file at `path`, readable by this user only. Snapshots
 * go from process to process through a file: through the IPC channel, a 200 MB snapshot was
 * read in thousands of small pieces held at once, in the primary and in the process that
 * started, memory their allocator kept afterwards. Between records pieces it awaits
 * `between` when given (a proof server lets requests run); `db` must not be written until
 * it resolves.
 * @throws the file system's error (the file is then removed)
 */
export async function writeSnapshotFile(
  db: MemoryDatabase | PackedMemoryDatabase,
  path: string,
  between?: () => Promise<void>,
): Promise<void> {
  const fd = openSync(path, 'wx', 0o600);
  try {
    let previous: Uint8Array | undefined;
    for (const part of snapshotParts(db, SNAPSHOT_PIECE_BYTES)) {
      for (let at = 0; at < part.length;) at += writeSync(fd, part, at);
      // after each records piece (its kind byte came just before); without `between`,
      // nothing awaits: no other task can write `db` meanwhile
      if (between !== undefined && previous === RECORDS_CHANGE) await between();
      previous = part;
    }
  } catch (e) {
    closeSync(fd);
    await rm(path, { force: true });
    throw e;
  }
  closeSync(fd);
}

/**
 * A replica holding what the snapshot file at `path` holds ({@link writeSnapshotFile}); the
 * file is removed once read.
 * @throws the file system's error; RangeError for bytes that are not changes
 */
export async function readSnapshotFile(path: string): Promise<PackedMemoryDatabase> {
  const bytes = await readFile(path);
  await rm(path, { force: true });
  return replicaOf(bytes);
}

/** A memory store holding what `snapshot` holds. */
export async function replicaOf(snapshot: Uint8Array): Promise<PackedMemoryDatabase> {
  const db = new PackedMemoryDatabase();
  await applyChanges(db, snapshot);
  return db;
}

/**
 * A Database that reports each write, once it succeeded, as change bytes (the writer's store
 * in a replicated memory store). Reads and the lock go to the inner store.
 *
 * @example const db = new RecordingDatabase(replica, (bytes) => process.send?.({ type: 'changes', changes: bytes }));
 */
export class RecordingDatabase implements Database {
  /**
   * @param pieceRecords records per change at most (default {@link REPLICA_CHUNK}); a larger
   *   batch goes as several changes, its azks record in the last
   */
  constructor(
    private readonly inner: Database,
    private readonly onChange: (bytes: Uint8Array) => void,
    private readonly pieceRecords = REPLICA_CHUNK,
  ) {
    this.batchGetNodes = inner.batchGetNodes?.bind(inner);
    this.batchGetNodeBytes = inner.batchGetNodeBytes?.bind(inner);
    this.batchGetNodeVersions = inner.batchGetNodeVersions?.bind(inner);
    this.batchGetNodeVersionBytes = inner.batchGetNodeVersionBytes?.bind(inner);
    this.nodeLayout = inner.nodeLayout;
    this.readLatency = inner.readLatency;
    this.listUsernames = inner.listUsernames?.bind(inner);
    this.getUserStates = inner.getUserStates?.bind(inner);
  }

  /** The inner store's layout, read latency and reads of tree nodes, by label and by version. */
  readonly nodeLayout?: Database['nodeLayout'];
  readonly readLatency?: Database['readLatency'];
  readonly batchGetNodes?: Database['batchGetNodes'];
  readonly batchGetNodeBytes?: Database['batchGetNodeBytes'];
  readonly batchGetNodeVersions?: Database['batchGetNodeVersions'];
  readonly batchGetNodeVersionBytes?: Database['batchGetNodeVersionBytes'];
  /** The inner store's walk over its labels (marker sweeps, backfills), where it has one. */
  readonly listUsernames?: Database['listUsernames'];
  /** The inner store's batched reads of states (a batch lookup's), where it has them. */
  readonly getUserStates?: Database['getUserStates'];

  private async write(change: Change, run: () => Promise<void>): Promise<void> {
    await run();
    if (change.kind !== 'records') this.onChange(encodeChanges([change]));
    else {
      // A large batch goes as several changes, its azks record in the last: each process on
      // the way reads a message whole before it can use it, so one epoch's records as one
      // message (tens of MB) were held in many small reads at once, memory the allocator
      // then kept. Replicas apply each piece as it comes and serve the previous epoch
      // until the azks record arrives (applyChanges).
      for (const records of piecesOf(change.records, this.pieceRecords)) {
        this.onChange(encodeChanges([{ kind: 'records', records }]));
      }
    }
  }

  set(record: DbRecord): Promise<void> {
    return this.write({ kind: 'records', records: [record] }, () => this.inner.set(record));
  }
  batchSet(records: DbRecord[], state?: DbSetState): Promise<void> {
    if (records.length === 0) return this.inner.batchSet(records, state);
    return this.write({ kind: 'records', records }, () => this.inner.batchSet(records, state));
  }
  setSetting(name: string, value: string): Promise<void> {
    return this.write({ kind: 'setting', name, value }, () => this.inner.setSetting(name, value));
  }
  setAuditBlob(blob: AuditBlobRecord): Promise<void> {
    return this.write({ kind: 'auditBlob', blob }, () => this.inner.setAuditBlob(blob));
  }
  async setVrfProofs(proofs: VrfProofRecord[]): Promise<void> {
    await this.inner.setVrfProofs(proofs);
    for (let i = 0; i < proofs.length; i += this.pieceRecords) {
      const piece = proofs.slice(i, i + this.pieceRecords);
      this.onChange(encodeChanges([{ kind: 'vrfProofs', proofs: piece }]));
    }
  }
  getVrfProofs(keys: VrfProofKey[]): Promise<VrfProofRecord[]> {
    return this.inner.getVrfProofs(keys);
  }
  get<K extends StorageKey>(key: K): Promise<RecordFor<K>> {
    return this.inner.get(key);
  }
  batchGet(keys: StorageKey[]): Promise<DbRecord[]> {
    return this.inner.batchGet(keys);
  }
  getUserData(username: Uint8Array): Promise<ValueStateRecord[]> {
    return this.inner.getUserData(username);
  }
  getUserState(username: Uint8Array, flag: ValueStateFlag): Promise<ValueStateRecord> {
    return this.inner.getUserState(username, flag);
  }
  getUserStateVersions(usernames: Uint8Array[], flag: ValueStateFlag): Promise<UserVersion[]> {
    return this.inner.getUserStateVersions(usernames, flag);
  }
  getSetting(name: string): Promise<string | undefined> {
    return this.inner.getSetting(name);
  }
  getAuditBlobInfos(epochs: bigint[]): Promise<AuditBlobInfo[]> {
    return this.inner.getAuditBlobInfos(epochs);
  }
  getAuditBlob(epoch: bigint): Promise<AuditBlobRecord> {
    return this.inner.getAuditBlob(epoch);
  }
  acquireWriterLock(): Promise<WriterLock> {
    return this.inner.acquireWriterLock();
  }
  close(): Promise<void> {
    return this.inner.close();
  }
}
