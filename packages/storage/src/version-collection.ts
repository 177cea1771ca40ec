/**
 * Collection of the node versions no served walk reaches, in a store of the `versions` layout
 * (database.ts `NodeLayout`). Such a store keeps every version a publish writes, so every
 * epoch leaves behind the versions it replaced: the interior nodes above its new leaves (an
 * update adds leaves, spec 12.2, and rewrites the path to each).
 * Readers walk the trees of the latest epochs only, so a version replaced at epoch E (its
 * label got a new version at E) is never read again once every epoch still served is E or
 * later. This deletes those versions, epoch by epoch.
 *
 * What epoch E replaced is found without an index by label: walk the tree of E down the
 * children E wrote (a child version of epoch E, spec 9.2), beside the tree of E - 1, where
 * each such child's version visible at E - 1 is the child of the same label of the nearest
 * old node above it. An old node's label persists in every later tree, so nothing else of
 * E - 1 can be below a new child, and a child whose subtree holds no old node is not walked.
 *
 * An epoch's versions are deleted deepest first, a chunk per `deleteNodeVersions` call, so
 * that a run that stops part way leaves a prefix of the walk whole: the next run walks down
 * as far as the old versions still stored, and no version is left unreachable by it. The
 * store setting `COLLECTED_THROUGH_SETTING` records the last epoch done.
 */

import { NodeLabel } from '@akd-ts/core';
import type { Database } from './database.js';
import { readEpochSetting } from './epoch-setting.js';
import type { TreeNode } from './records.js';

/** The store setting holding the last epoch whose replaced versions are collected (decimal). */
export const COLLECTED_THROUGH_SETTING = 'node_versions_collected_through';

/** Keys per read and per deletion, by default. */
const CHUNK = 10_000;

export interface CollectionProgress {
  /** The epoch just collected, and the last one this run collects. */
  epoch: bigint;
  through: bigint;
  /** Versions this epoch deleted. */
  deleted: number;
}

export interface CollectOptions {
  /**
   * The oldest epoch any reader may still serve: what epochs up to it replaced is collected.
   * It must be below the store's epoch.
   */
  through: bigint;
  onProgress?: (progress: CollectionProgress) => void;
  /** Asked before each deletion: false stops the run there (a writer that lost its lock). */
  mayWrite?: () => boolean;
  /** Versions per read and per deletion (default 10,000). */
  chunk?: number;
}

export interface Collected {
  /** The epochs collected by this run, first and last (none when `epochs` is 0). */
  from: bigint;
  through: bigint;
  epochs: number;
  /** Versions deleted, those of an epoch the run stopped in included. */
  deleted: number;
  /** Whether `mayWrite` stopped the run before `through`. */
  stopped: boolean;
}

/**
 * Collects what the epochs after the last collected one, up to `options.through`, replaced.
 * @throws RangeError for a store that does not keep versions or cannot delete them, or a
 * `through` not below the store's epoch (the driver's check); a storage error as it comes
 */
export async function collectNodeVersions(
  db: Database,
  options: CollectOptions,
): Promise<Collected> {
  if (
    db.nodeLayout !== 'versions' ||
    db.batchGetNodeVersions === undefined ||
    db.deleteNodeVersions === undefined
  ) {
    throw new RangeError('only a store of the versions layout has node versions to collect');
  }
  const { through } = options;
  const mayWrite = options.mayWrite ?? (() => true);
  const chunk = options.chunk ?? CHUNK;
  const from = (await collectedThrough(db)) + 1n;
  const done: Collected = { from, through, epochs: 0, deleted: 0, stopped: false };
  for (let epoch = from; epoch <= through; epoch++) {
    const levels = await replacedAt(db, epoch, chunk);
    let deleted = 0;
    for (let depth = levels.length - 1; depth >= 0; depth--) {
      const level = levels[depth]!;
      for (let start = 0; start < level.count; start += chunk) {
        if (!mayWrite()) return { ...done, stopped: true };
        const end = Math.min(level.count, start + chunk);
        const n = await db.deleteNodeVersions(level.labels(start, end), level.epochs(start, end));
        deleted += n;
        done.deleted += n;
      }
    }
    if (!mayWrite()) return { ...done, stopped: true };
    await db.setSetting(COLLECTED_THROUGH_SETTING, epoch.toString());
    done.epochs++;
    options.onProgress?.({ epoch, through, deleted });
  }
  return done;
}

/**
 * The last epoch collected, or 0 (epoch 0 replaces nothing).
 * @throws AkdError `STORAGE_CORRUPT` for a setting that is not a decimal epoch
 */
export async function collectedThrough(db: Database): Promise<bigint> {
  return (await readEpochSetting(db, COLLECTED_THROUGH_SETTING)) ?? 0n;
}

/**
 * Keys of versions, packed: a label's 32 bytes and its length, and the version's epoch. A
 * large epoch replaces millions of versions, which as objects would take hundreds of MB.
 */
class KeyList {
  count = 0;
  #bytes = new Uint8Array(32 * 64);
  #lens = new Uint16Array(64);
  #epochs = new BigUint64Array(64);

  push(label: NodeLabel, epoch: bigint): void {
    if (this.count === this.#lens.length) {
      const grow = <T extends Uint8Array | Uint16Array | BigUint64Array>(a: T, n: number): T => {
        const b = new (a.constructor as new (n: number) => T)(n);
        b.set(a as never);
        return b;
      };
      this.#bytes = grow(this.#bytes, this.#bytes.length * 2);
      this.#lens = grow(this.#lens, this.#lens.length * 2);
      this.#epochs = grow(this.#epochs, this.#epochs.length * 2);
    }
    this.#bytes.set(label.val, 32 * this.count);
    this.#lens[this.count] = label.len;
    this.#epochs[this.count++] = epoch;
  }

  labels(start: number, end: number): NodeLabel[] {
    const out: NodeLabel[] = [];
    for (let i = start; i < end; i++) {
      out.push(new NodeLabel(this.#bytes.slice(32 * i, 32 * i + 32), this.#lens[i]!));
    }
    return out;
  }

  epochs(start: number, end: number): bigint[] {
    return Array.from(this.#epochs.subarray(start, end));
  }
}

/** A node of epoch E's walk: its version of E, and the nearest version of E - 1 above it. */
interface Step {
  node: TreeNode;
  old: TreeNode;
}

/** The child of `old` whose label is `label`, as (label, write epoch), or undefined. */
function oldChild(old: TreeNode, label: NodeLabel): bigint | undefined {
  if (old.leftChild?.equals(label)) return old.leftEpoch;
  if (old.rightChild?.equals(label)) return old.rightEpoch;
  return undefined;
}

/** Whether a child of `old` lies below `label` (or is it): old versions there to find. */
function holdsOldBelow(old: TreeNode, label: NodeLabel): boolean {
  return (
    (old.leftChild !== undefined && label.isPrefixOf(old.leftChild)) ||
    (old.rightChild !== undefined && label.isPrefixOf(old.rightChild))
  );
}

/** The children `node` wrote in its own epoch: those whose versions it replaced. */
function childrenOfEpoch(node: TreeNode): NodeLabel[] {
  const out: NodeLabel[] = [];
  if (node.leftChild !== undefined && node.leftEpoch === node.lastEpoch) out.push(node.leftChild);
  if (node.rightChild !== undefined && node.rightEpoch === node.lastEpoch) {
    out.push(node.rightChild);
  }
  return out;
}

/** Versions `labels[i]` of `epochs[i]`, `chunk` keys a read. */
async function readVersions(
  db: Database,
  labels: NodeLabel[],
  epochs: bigint[],
  chunk: number,
): Promise<(TreeNode | undefined)[]> {
  const out: (TreeNode | undefined)[] = [];
  for (let start = 0; start < labels.length; start += chunk) {
    const part = await db.batchGetNodeVersions!(
      labels.slice(start, start + chunk),
      epochs.slice(start, start + chunk),
    );
    for (const r of part) out.push(r?.latest);
  }
  return out;
}

/**
 * The versions epoch `epoch` replaced, by depth in its tree (the old root first). Empty where
 * the root of `epoch - 1` is gone: a run collected this epoch already.
 */
async function replacedAt(db: Database, epoch: bigint, chunk: number): Promise<KeyList[]> {
  const root = NodeLabel.root();
  const [node, old] = await readVersions(db, [root, root], [epoch, epoch - 1n], chunk);
  if (node === undefined || old === undefined) return [];
  const first = new KeyList();
  first.push(root, old.lastEpoch);
  const levels = [first];
  let steps: Step[] = [{ node, old }];
  while (steps.length > 0) {
    // this level's children of the epoch, with the old version each replaced where it had one
    const labels: NodeLabel[] = [];
    const epochs: bigint[] = [];
    const plan: { parent: Step; label: NodeLabel; oldAt: number }[] = [];
    for (const parent of steps) {
      for (const label of childrenOfEpoch(parent.node)) {
        const was = oldChild(parent.old, label);
        if (was === undefined && !holdsOldBelow(parent.old, label)) continue;
        labels.push(label);
        epochs.push(epoch);
        let oldAt = -1;
        if (was !== undefined) {
          oldAt = labels.length;
          labels.push(label);
          epochs.push(was);
        }
        plan.push({ parent, label, oldAt });
      }
    }
    const read = await readVersions(db, labels, epochs, chunk);
    const level = new KeyList();
    const next: Step[] = [];
    let at = 0;
    for (const { parent, label, oldAt } of plan) {
      const node = read[at]!;
      at += oldAt < 0 ? 1 : 2;
      if (node === undefined) continue; // a version this walk needs is gone: nothing below
      if (oldAt < 0) {
        // a node new in this epoch: the old versions below it hang from the old node above
        next.push({ node, old: parent.old });
        continue;
      }
      const old = read[oldAt];
      // gone: a run that stopped deleted it, and everything below it, already
      if (old === undefined) continue;
      level.push(label, old.lastEpoch);
      next.push({ node, old });
    }
    if (level.count > 0) levels.push(level);
    steps = next;
  }
  return levels;
}
