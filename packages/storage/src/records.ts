/**
 * Storage records (spec 9.1): the AZKS record, tree nodes with their previous copy, and value
 * states, plus their keys. These are what every driver stores and what the StorageManager
 * caches; the tree and the directory build on them.
 *
 * Records are immutable values: stores, caches and transactions share them freely, so code
 * that needs a changed record builds a new one (`{ ...record, ... }`) and never assigns to a
 * record it did not just create.
 */

import { NodeLabel, toHex } from '@akd-ts/core';
import type { UserVersion } from './database.js';

/** Node types with the numeric codes SQL storage uses (spec 7.2). */
export const NodeType = { Leaf: 1, Root: 2, Interior: 3 } as const;
export type NodeType = (typeof NodeType)[keyof typeof NodeType];

/** One version of a tree node (spec 7.2). */
export interface TreeNode {
  label: NodeLabel;
  /** Last epoch in which this node or anything below it changed; a leaf's insertion epoch. */
  lastEpoch: bigint;
  /** Least `lastEpoch` over the node's leaf descendants (audit proofs prune with it). */
  minDescendantEpoch: bigint;
  /** The parent's label; the root points to itself. */
  parent: NodeLabel;
  nodeType: NodeType;
  leftChild: NodeLabel | undefined;
  rightChild: NodeLabel | undefined;
  /**
   * The `lastEpoch` of the left child's version that this version was hashed with: the
   * child's version visible at this node's `lastEpoch` (spec 9.2). A node's `lastEpoch` is the
   * epoch that wrote it, so a walk from the root at any epoch can name every node it reads by
   * label and write epoch, and a store can keep an epoch's node versions together instead of
   * by label. Undefined without a left child, or when none of its versions is visible then
   * (a tree that breaks the epoch invariant hashes such a child as empty).
   */
  leftEpoch: bigint | undefined;
  /** The right child's write epoch, as `leftEpoch`. */
  rightEpoch: bigint | undefined;
  /** The node's stored value (spec 7.3): a leaf's raw value, an interior node's hash. */
  hash: Uint8Array;
}

/** The AZKS record (spec 7.4): latest published epoch and the number of nodes ever created. */
export interface AzksRecord {
  kind: 'azks';
  latestEpoch: bigint;
  numNodes: bigint;
}

/** A tree node's latest version and at most one earlier version (spec 9.2). */
export interface TreeNodeRecord {
  kind: 'treeNode';
  label: NodeLabel;
  latest: TreeNode;
  previous: TreeNode | undefined;
}

/** One version of one user's value (spec 9.1). */
export interface ValueStateRecord {
  kind: 'valueState';
  /** The AkdLabel (user id). */
  username: Uint8Array;
  /** Epoch in which this version was published. */
  epoch: bigint;
  version: bigint;
  /** The node label of this version's fresh leaf. */
  label: NodeLabel;
  /** The plaintext value; empty once tombstoned. */
  value: Uint8Array;
}

export type DbRecord = AzksRecord | TreeNodeRecord | ValueStateRecord;
export type RecordKind = DbRecord['kind'];

/** Keys of the three record kinds (spec 9.1 `StorageKey`). */
export type AzksKey = { kind: 'azks' };
export type TreeNodeKey = { kind: 'treeNode'; label: NodeLabel };
export type ValueStateKey = { kind: 'valueState'; username: Uint8Array; epoch: bigint };
export type StorageKey = AzksKey | TreeNodeKey | ValueStateKey;

/** The record type a key addresses. */
export type RecordFor<K extends StorageKey> = K extends AzksKey
  ? AzksRecord
  : K extends TreeNodeKey
    ? TreeNodeRecord
    : ValueStateRecord;

export const AZKS_KEY: AzksKey = { kind: 'azks' };

/** The key of a tree node. */
export function nodeKey(label: NodeLabel): TreeNodeKey {
  return { kind: 'treeNode', label };
}

/** The key under which `record` is stored. */
export function keyOf(record: DbRecord): StorageKey {
  switch (record.kind) {
    case 'azks':
      return AZKS_KEY;
    case 'treeNode':
      return { kind: 'treeNode', label: record.label };
    case 'valueState':
      return { kind: 'valueState', username: record.username, epoch: record.epoch };
  }
}

/**
 * A string identity of a key for maps (cache, transaction log, the in-memory database),
 * after spec 9.1's "full binary key": Azks `0101`; a tree node its label's compact key (which
 * starts with a code below '0', so it never equals the others); a ValueState
 * `04 || be64(epoch) || username` in hex.
 */
export function fullKey(key: StorageKey): string {
  switch (key.kind) {
    case 'azks':
      return '0101';
    case 'treeNode':
      return key.label.key;
    case 'valueState':
      // joined, not concatenated: one flat string (see toHex), not a chain of pieces
      return ['04', key.epoch.toString(16).padStart(16, '0'), toHex(key.username)].join('');
  }
}

/** `fullKey(keyOf(record))`. */
export function recordFullKey(record: DbRecord): string {
  // the same keys as fullKey(keyOf(record)), without building the key object on a hot path
  return record.kind === 'treeNode' ? record.label.key : fullKey(keyOf(record));
}

/** Approximate in-memory size of a record (spec 14.3), for the cache's memory bound. */
export function recordSize(record: DbRecord): number {
  const nodeSize = (n: TreeNode) =>
    36 + 16 + 36 + 1 + (n.leftChild ? 52 : 8) + (n.rightChild ? 52 : 8) + 32;
  switch (record.kind) {
    case 'azks':
      return 16;
    case 'treeNode':
      return 36 + nodeSize(record.latest) + (record.previous ? nodeSize(record.previous) + 8 : 8);
    case 'valueState':
      return record.value.length + 8 + 36 + 8 + record.username.length;
  }
}

/** How `getUserState` picks one of a user's value states (spec 14.1). */
export type ValueStateFlag =
  | { kind: 'specificVersion'; version: bigint }
  | { kind: 'specificEpoch'; epoch: bigint }
  | { kind: 'leqEpoch'; epoch: bigint }
  | { kind: 'maxEpoch' }
  | { kind: 'minEpoch' };

/**
 * Picks the state `flag` selects from a user's states (any order), or undefined. The one
 * definition every in-process implementation shares (spec 14.5).
 */
export function selectValueState(
  states: Iterable<ValueStateRecord>,
  flag: ValueStateFlag,
): ValueStateRecord | undefined {
  let best: ValueStateRecord | undefined;
  for (const s of states) {
    switch (flag.kind) {
      case 'specificVersion':
        if (s.version === flag.version && (best === undefined || s.epoch < best.epoch)) best = s;
        break;
      case 'specificEpoch':
        if (s.epoch === flag.epoch) best = s;
        break;
      case 'leqEpoch':
        if (s.epoch <= flag.epoch && (best === undefined || s.epoch > best.epoch)) best = s;
        break;
      case 'maxEpoch':
        if (best === undefined || s.epoch > best.epoch) best = s;
        break;
      case 'minEpoch':
        if (best === undefined || s.epoch < best.epoch) best = s;
        break;
    }
  }
  return best;
}

/**
 * The tree node version visible at `targetEpoch` (spec 9.2 `determine_node_to_get`), or
 * undefined when the record keeps none. Unlike upstream, a previous copy that is itself newer
 * than the target is not returned: a reader two or more epochs behind the writer gets "not
 * found" (and can refresh) instead of a node of the wrong epoch and an invalid proof.
 */
export function nodeAtEpoch(record: TreeNodeRecord, targetEpoch: bigint): TreeNode | undefined {
  if (record.latest.lastEpoch <= targetEpoch) return record.latest;
  const previous = record.previous;
  return previous !== undefined && previous.lastEpoch <= targetEpoch ? previous : undefined;
}

/** `Database.getUserStateVersions`' answer from the states `getUserStates` read. */
export function userVersionsOf(states: readonly ValueStateRecord[]): UserVersion[] {
  return states.map(({ username, version, value }) => ({ username, version, value }));
}
