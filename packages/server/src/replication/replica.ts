/**
 * Replicas of a memory store across the processes of `akd serve`. A memory store lives in
 * memory, so every child keeps a replica of it (a PackedMemoryDatabase: records as bytes) and
 * the writer's writes travel as changes: the writer's store records each write once it
 * succeeded, the primary numbers it and passes it on, and every proof server applies it to
 * its replica. A child that starts takes a snapshot of a running child's replica (the
 * primary keeps none). A replica shows an epoch entirely or not at all: a batch of records
 * (a publish's commit) is written at once, or in steps with its azks record last
 * (`applyChanges`).
 */

import {
  ByteReader,
  ByteWriter,
  MemoryDatabase,
  PackedMemoryDatabase,
  RECORD_KIND,
  skipRecord,
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
  type WriterLock,
} from '@akd-ts/storage';
import { encodeChanges, readChanges, recordsChange, type Change } from './codec.js';

/**
 * The whole store as change bytes: its records as one batch, then its settings and blobs. A
 * packed store's records are copied as the bytes they are (no record objects are built).
 *
 * @example const replica = await replicaOf(snapshotOf(db));
 */
export function snapshotOf(db: MemoryDatabase | PackedMemoryDatabase): Uint8Array {
  const records =
    db instanceof PackedMemoryDatabase
      ? recordsChange(db.exportRecords())
      : encodeChanges([{ kind: 'records', records: db.allRecords() }]);
  const rest = encodeChanges([
    ...db.allSettings().map(([name, value]) => ({ kind: 'setting' as const, name, value })),
    ...db.allAuditBlobs().map((blob) => ({ kind: 'auditBlob' as const, blob })),
  ]);
  const out = new Uint8Array(records.length + rest.length);
  out.set(records);
  out.set(rest, records.length);
  return out;
}

export interface ApplyOptions {
  /**
   * Records written per step of a large batch (default: the whole batch in one write).
   * Between steps the process's event loop runs (`pause`), so that a process answering
   * requests is never held for a whole epoch's records at once.
   */
  chunkSize?: number;
  /** Waits between two steps (default: the next turn of the event loop). */
  pause?: () => Promise<void>;
}

/**
 * The step size for processes that answer requests or supervise those that do: a few
 * milliseconds of writes per step.
 */
export const REPLICA_CHUNK = 2_000;

const nextTurn = () => new Promise<void>((resolve) => setImmediate(resolve));

/**
 * Applies the changes in `bytes` (codec.ts) to `db` in order, records as the bytes they are.
 * A batch of records larger than `chunkSize` is written in steps, its azks record last:
 * readers take the epoch they serve from the azks record, so until the last step they go on
 * serving the previous epoch, for which the tree nodes written so far still hold their
 * previous version and newer value states are skipped (a reader never sees part of an epoch,
 * as with a batch written at once). The bytes are checked whole before anything is written.
 * @throws RangeError for bytes that are not changes (nothing written)
 */
export async function applyChanges(
  db: PackedMemoryDatabase,
  bytes: Uint8Array,
  options: ApplyOptions = {},
): Promise<void> {
  for (const c of readChanges(bytes)) {
    if (c.kind === 'records') await applyRecords(db, c.body, options);
    else if (c.kind === 'setting') await db.setSetting(c.name, c.value);
    else await db.setAuditBlob(c.blob);
  }
}

async function applyRecords(
  db: PackedMemoryDatabase,
  body: Uint8Array,
  { chunkSize = Infinity, pause = nextTurn }: ApplyOptions,
): Promise<void> {
  const steps = stepsOf(body, chunkSize);
  for (let i = 0; i < steps.length; i++) {
    if (i > 0) await pause();
    await db.importRecords(steps[i]!);
  }
}

/**
 * `body` (`u32 count` then records) as batches of at most `chunkSize` records, the azks
 * records in the last one; `[body]` when it is no larger than that.
 */
export function stepsOf(body: Uint8Array, chunkSize: number): Uint8Array[] {
  const r = new ByteReader(body);
  const count = r.u32();
  if (count <= chunkSize) return [body];
  const steps: Uint8Array[] = [];
  const epochs: Uint8Array[] = [];
  let step: Uint8Array[] = [];
  const flush = (records: Uint8Array[]) => {
    if (records.length === 0) return;
    const w = new ByteWriter(4 + records.reduce((n, b) => n + b.length, 0));
    w.u32(records.length);
    for (const b of records) w.raw(b);
    steps.push(w.done());
  };
  for (let i = 0; i < count; i++) {
    const start = r.at;
    const kind = skipRecord(r);
    const bytes = body.subarray(start, r.at);
    if (kind === RECORD_KIND.azks) epochs.push(bytes);
    else {
      step.push(bytes);
      if (step.length === chunkSize) {
        flush(step);
        step = [];
      }
    }
  }
  flush(step);
  flush(epochs);
  return steps;
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
  constructor(
    private readonly inner: Database,
    private readonly onChange: (bytes: Uint8Array) => void,
  ) {}

  private async write(change: Change, run: () => Promise<void>): Promise<void> {
    await run();
    this.onChange(encodeChanges([change]));
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
