/**
 * The in-memory database (spec 14.5): a map of records by full key, and each user's value
 * states by epoch. For tests, benchmarks, auditors and short-lived directories; a `memory:`
 * store forgets everything when the process ends.
 */

import { AkdError, toHex, type NodeLabel } from '@akd-ts/core';
import { checkAuditBlob, storableEpochs } from './audit-blob-checks.js';
import type {
  AuditBlobInfo,
  AuditBlobRecord,
  Database,
  DbSetState,
  UserVersion,
  WriterLock,
} from './database.js';
import { notFound } from './errors.js';
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

/**
 * A Database held in this process's memory.
 *
 * @example
 * ```ts
 * const db = new MemoryDatabase();
 * await db.set({ kind: 'azks', latestEpoch: 0n, numNodes: 1n });
 * ```
 */
export class MemoryDatabase implements Database {
  private readonly records = new Map<string, DbRecord>();
  /** username hex -> epoch -> state */
  private readonly users = new Map<string, Map<bigint, ValueStateRecord>>();
  private readonly settings = new Map<string, string>();
  private readonly auditBlobs = new Map<bigint, AuditBlobRecord>();
  private locked = false;
  private closed = false;

  private check(): void {
    if (this.closed) throw new AkdError('STORAGE_CONNECTION', 'the in-memory database is closed');
  }

  private put(record: DbRecord): void {
    // records are immutable values (records.ts), so the store keeps the caller's objects
    if (record.kind === 'valueState') {
      const user = toHex(record.username);
      let states = this.users.get(user);
      if (states === undefined) this.users.set(user, (states = new Map()));
      states.set(record.epoch, record);
    } else {
      this.records.set(recordFullKey(record), record);
    }
  }

  async set(record: DbRecord): Promise<void> {
    this.check();
    this.put(record);
  }

  async batchSet(records: DbRecord[], _state: DbSetState = 'general'): Promise<void> {
    this.check();
    // synchronous, so no reader can observe part of the batch
    for (const r of records) this.put(r);
  }

  private lookup(key: StorageKey): DbRecord | undefined {
    if (key.kind === 'valueState') {
      return this.users.get(toHex(key.username))?.get(key.epoch);
    }
    return this.records.get(fullKey(key));
  }

  async get<K extends StorageKey>(key: K): Promise<RecordFor<K>> {
    this.check();
    const found = this.lookup(key);
    if (found === undefined) throw notFound(`record ${fullKey(key)}`);
    return found as RecordFor<K>;
  }

  async batchGet(keys: StorageKey[]): Promise<DbRecord[]> {
    this.check();
    const out: DbRecord[] = [];
    const seen = new Set<DbRecord>();
    for (let i = 0; i < keys.length; i++) {
      const found = this.lookup(keys[i]!);
      // the same key always finds the same record object, so records dedupe duplicate keys
      if (found !== undefined && !seen.has(found)) {
        seen.add(found);
        out.push(found);
      }
    }
    return out;
  }

  async batchGetNodes(labels: readonly NodeLabel[]): Promise<(TreeNodeRecord | undefined)[]> {
    this.check();
    const out = new Array<TreeNodeRecord | undefined>(labels.length);
    // a label's key is its record's full key, and no other kind of record shares it
    for (let i = 0; i < labels.length; i++) {
      out[i] = this.records.get(labels[i]!.key) as TreeNodeRecord | undefined;
    }
    return out;
  }

  async getUserData(username: Uint8Array): Promise<ValueStateRecord[]> {
    this.check();
    const states = this.users.get(toHex(username));
    if (states === undefined || states.size === 0) throw notFound(`user ${toHex(username)}`);
    return [...states.values()].sort((a, b) => (a.epoch < b.epoch ? -1 : 1));
  }

  async getUserState(username: Uint8Array, flag: ValueStateFlag): Promise<ValueStateRecord> {
    this.check();
    const found = selectValueState(this.users.get(toHex(username))?.values() ?? [], flag);
    if (found === undefined) throw notFound(`value state of user ${toHex(username)}`);
    return found;
  }

  async getUserStateVersions(
    usernames: Uint8Array[],
    flag: ValueStateFlag,
  ): Promise<UserVersion[]> {
    this.check();
    const out = new Map<string, UserVersion>();
    for (const username of usernames) {
      const user = toHex(username);
      const found = selectValueState(this.users.get(user)?.values() ?? [], flag);
      if (found !== undefined) {
        out.set(user, { username: found.username, version: found.version, value: found.value });
      }
    }
    return [...out.values()];
  }

  async getSetting(name: string): Promise<string | undefined> {
    this.check();
    return this.settings.get(name);
  }

  async setSetting(name: string, value: string): Promise<void> {
    this.check();
    this.settings.set(name, value);
  }

  async setAuditBlob(blob: AuditBlobRecord): Promise<void> {
    this.check();
    checkAuditBlob(blob);
    // a copy: the caller may reuse its buffers
    this.auditBlobs.set(blob.epoch, {
      epoch: blob.epoch,
      previousHash: blob.previousHash.slice(),
      currentHash: blob.currentHash.slice(),
      data: blob.data.slice(),
    });
  }

  async getAuditBlobInfos(epochs: bigint[]): Promise<AuditBlobInfo[]> {
    this.check();
    const out: AuditBlobInfo[] = [];
    for (const epoch of storableEpochs(epochs)) {
      const blob = this.auditBlobs.get(epoch);
      if (blob !== undefined) {
        const { previousHash, currentHash, data } = blob;
        out.push({ epoch, previousHash, currentHash, size: data.length });
      }
    }
    return out;
  }

  async getAuditBlob(epoch: bigint): Promise<AuditBlobRecord> {
    this.check();
    const blob = this.auditBlobs.get(epoch);
    if (blob === undefined) throw notFound(`audit blob of epoch ${epoch}`);
    return blob;
  }

  async acquireWriterLock(): Promise<WriterLock> {
    this.check();
    if (this.locked) {
      throw new AkdError('STORAGE_LOCKED', 'another writer holds this in-memory database');
    }
    this.locked = true;
    let released = false;
    return {
      release: async () => {
        if (!released) {
          released = true;
          this.locked = false;
        }
      },
    };
  }

  async close(): Promise<void> {
    this.closed = true;
  }

  /** Every setting, as `[name, value]` pairs (snapshots of the store). */
  allSettings(): [string, string][] {
    return [...this.settings.entries()];
  }

  /** Every stored audit blob (snapshots of the store). */
  allAuditBlobs(): AuditBlobRecord[] {
    return [...this.auditBlobs.values()];
  }

  /** Every stored record (tests and fixtures: spec 14.1 `batch_get_all_direct`). */
  allRecords(): DbRecord[] {
    const states = [...this.users.values()].flatMap((m) => [...m.values()]);
    return [...this.records.values(), ...states];
  }
}
