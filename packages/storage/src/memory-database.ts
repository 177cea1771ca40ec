/**
 * The in-memory database (spec 14.5): a map of records by full key, and each user's value
 * states by epoch. For tests, benchmarks, auditors and short-lived directories; a `memory:`
 * store forgets everything when the process ends.
 */

import { toHex, type NodeLabel } from '@akd-ts/core';
import type { Database, DbSetState } from './database.js';
import { notFound } from './errors.js';
import { InProcessStore } from './in-process-store.js';
import {
  fullKey,
  recordFullKey,
  type DbRecord,
  type RecordFor,
  type StorageKey,
  type TreeNodeRecord,
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
export class MemoryDatabase extends InProcessStore implements Database {
  private readonly records = new Map<string, DbRecord>();
  /** username hex -> epoch -> state */
  private readonly users = new Map<string, Map<bigint, ValueStateRecord>>();
  /** The keys of `users`, sorted, as `listUsernames` last made them. */
  private sortedUsers: string[] = [];
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

  protected statesOf(username: Uint8Array): Iterable<ValueStateRecord> {
    return this.users.get(toHex(username))?.values() ?? [];
  }

  async listUsernames(after: Uint8Array | undefined, limit: number): Promise<Uint8Array[]> {
    this.check();
    // lowercase hex sorts as the bytes do; labels are never removed, so the sorted list is
    // made again only when there are more (a walk reads many pages of one list)
    if (this.sortedUsers.length !== this.users.size)
      this.sortedUsers = [...this.users.keys()].sort();
    const hex = this.sortedUsers;
    const from = after === undefined ? undefined : toHex(after);
    let lo = 0;
    let hi = from === undefined ? 0 : hex.length;
    while (lo < hi) {
      const mid = (lo + hi) >>> 1;
      if (hex[mid]! <= from!) lo = mid + 1;
      else hi = mid;
    }
    return hex.slice(lo, lo + limit).map((u) => this.users.get(u)!.values().next().value!.username);
  }

  /** Every stored record (tests and fixtures: spec 14.1 `batch_get_all_direct`). */
  allRecords(): DbRecord[] {
    const states = [...this.users.values()].flatMap((m) => [...m.values()]);
    return [...this.records.values(), ...states];
  }
}
