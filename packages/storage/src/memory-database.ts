/**
 * The in-memory database (spec 14.5): a map of records by full key, and each user's value
 * states by epoch. For tests, benchmarks, auditors and short-lived directories; a `memory:`
 * store forgets everything when the process ends.
 */

import { toHex, type NodeLabel } from '@akd-ts/core';
import type { Database, DbSetState, NodeLayout } from './database.js';
import { notFound } from './errors.js';
import { InProcessStore } from './in-process-store.js';
import { copyOfEpoch } from './node-reads.js';
import { checkAligned, checkDeletable, recordByWalk, versionsToWrite } from './node-versions.js';
import {
  fullKey,
  recordFullKey,
  type DbRecord,
  type RecordFor,
  type StorageKey,
  type TreeNode,
  type TreeNodeRecord,
  type ValueStateRecord,
} from './records.js';

export interface MemoryDatabaseOptions {
  /**
   * How tree nodes are kept (default `records`). `versions` keeps every version by its write
   * epoch, as a store of that layout does on disk (database.ts `NodeLayout`): what the
   * directory does on such a store can be tried in memory.
   */
  nodeLayout?: NodeLayout;
}

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
  readonly nodeLayout: NodeLayout;
  private readonly records = new Map<string, DbRecord>();
  /** The versions layout's node versions, by `versionKey`. */
  private readonly versions = new Map<string, TreeNode>();
  /** The versions layout's labels, by key, in the order first written. */
  private readonly versionLabels = new Map<string, NodeLabel>();
  /** The versions layout's epoch: the newest root version's (database.ts, rule 3). */
  private storeEpoch: bigint | undefined;

  constructor(options: MemoryDatabaseOptions = {}) {
    super();
    this.nodeLayout = options.nodeLayout ?? 'records';
  }

  private findVersion = (label: NodeLabel, epoch: bigint): TreeNode | undefined =>
    this.versions.get(versionKey(label, epoch));

  /** username hex -> epoch -> state */
  private readonly users = new Map<string, Map<bigint, ValueStateRecord>>();
  /** The keys of `users`, sorted, as `listUsernames` last made them. */
  private sortedUsers: string[] = [];
  private put(record: DbRecord): void {
    // records are immutable values (records.ts), so the store keeps the caller's objects
    if (record.kind === 'treeNode' && this.nodeLayout === 'versions') {
      throw new Error('versions are written by putVersions');
    }
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
    await this.batchSet([record]);
  }

  async batchSet(records: DbRecord[], _state: DbSetState = 'general'): Promise<void> {
    this.check();
    // synchronous, so no reader can observe part of the batch
    if (this.nodeLayout === 'versions') {
      const nodes = records.filter((r): r is TreeNodeRecord => r.kind === 'treeNode');
      this.putVersions(versionsToWrite(nodes, this.storeEpoch));
      for (const r of records) if (r.kind !== 'treeNode') this.put(r);
      return;
    }
    for (const r of records) this.put(r);
  }

  /** Stores versions (rule 1 chose them) and moves the store's epoch to a newer root's. */
  private putVersions(nodes: TreeNode[]): void {
    for (const node of nodes) {
      this.versions.set(versionKey(node.label, node.lastEpoch), node);
      if (!this.versionLabels.has(node.label.key)) {
        this.versionLabels.set(node.label.key, node.label);
      }
      if (node.label.len === 0 && (this.storeEpoch ?? -1n) < node.lastEpoch) {
        this.storeEpoch = node.lastEpoch;
      }
    }
  }

  async batchGetNodeVersions(
    labels: readonly NodeLabel[],
    epochs: readonly bigint[],
  ): Promise<(TreeNodeRecord | undefined)[]> {
    this.check();
    checkAligned(labels.length, epochs.length);
    return labels.map((label, i) => {
      if (this.nodeLayout === 'records') {
        const r = this.records.get(label.key) as TreeNodeRecord | undefined;
        return r === undefined ? undefined : copyOfEpoch(r, epochs[i]!);
      }
      const latest = this.findVersion(label, epochs[i]!);
      return latest === undefined
        ? undefined
        : { kind: 'treeNode', label, latest, previous: undefined };
    });
  }

  async deleteNodeVersions(
    labels: readonly NodeLabel[],
    epochs: readonly bigint[],
  ): Promise<number> {
    this.check();
    checkDeletable(this.nodeLayout, this.storeEpoch, labels.length, epochs);
    let deleted = 0;
    labels.forEach((label, i) => {
      if (this.versions.delete(versionKey(label, epochs[i]!))) deleted++;
    });
    return deleted;
  }

  /** A tree node's record by label, as the store's layout answers it. */
  private nodeRecord(label: NodeLabel): TreeNodeRecord | undefined {
    if (this.nodeLayout === 'versions') {
      return recordByWalk(label, this.storeEpoch, this.findVersion);
    }
    return this.records.get(label.key) as TreeNodeRecord | undefined;
  }

  private lookup(key: StorageKey): DbRecord | undefined {
    if (key.kind === 'valueState') {
      return this.users.get(toHex(key.username))?.get(key.epoch);
    }
    if (key.kind === 'treeNode') return this.nodeRecord(key.label);
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
    const seen = new Set<string>();
    for (let i = 0; i < keys.length; i++) {
      const k = fullKey(keys[i]!);
      if (seen.has(k)) continue;
      seen.add(k);
      const found = this.lookup(keys[i]!);
      if (found !== undefined) out.push(found);
    }
    return out;
  }

  async batchGetNodes(labels: readonly NodeLabel[]): Promise<(TreeNodeRecord | undefined)[]> {
    this.check();
    const out = new Array<TreeNodeRecord | undefined>(labels.length);
    for (let i = 0; i < labels.length; i++) out[i] = this.nodeRecord(labels[i]!);
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
    const nodes = [...this.versionLabels.values()].flatMap((label) => this.nodeRecord(label) ?? []);
    return [...this.records.values(), ...nodes, ...states];
  }
}

/** A version's key in the versions layout: its label's key and its write epoch. */
function versionKey(label: NodeLabel, epoch: bigint): string {
  return `${label.key}@${epoch}`;
}
