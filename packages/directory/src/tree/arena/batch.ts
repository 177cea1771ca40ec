/**
 * The records an arena insertion wrote, as one batch in the transaction log (storage's
 * `NodeRecordBatch`): a record object is built only when the transaction reads it or commits,
 * from the slot and the source record it was loaded from (spec 9.1, 9.2). Unchanged parts are
 * the source's own objects; labels, hashes and epochs of new values are fresh copies, so no
 * record keeps the arena's shared memory alive.
 */

import { alloc32, NodeLabel } from '@akd-ts/core';
import type { NodeRecordBatch, TreeNode, TreeNodeRecord } from '@akd-ts/storage';
import { Copy, NONE, UNLOADED, type NodeArena } from './arena.js';
import type { LoadedTree } from './load.js';

/** A word hash of a label (its 32 bytes and length) for the batch's lookup table. */
function labelHash(bytes: Uint8Array, off: number, len: number): number {
  let h = Math.imul(len + 1, 0x9e3779b1);
  for (let i = 0; i < 32; i += 4) {
    const w =
      (bytes[off + i]! << 24) |
      (bytes[off + i + 1]! << 16) |
      (bytes[off + i + 2]! << 8) |
      bytes[off + i + 3]!;
    h = Math.imul(h ^ w, 0x85ebca6b);
    h ^= h >>> 13;
  }
  return h >>> 0;
}

/** A fresh 32-byte array (a view of a shared slab) holding `src[at..at+32)`. */
function copy32(src: Uint8Array, at: number): Uint8Array {
  const out = alloc32();
  for (let i = 0; i < 32; i++) out[i] = src[at + i]!;
  return out;
}

export class ArenaNodeBatch implements NodeRecordBatch {
  readonly #arena: NodeArena;
  readonly #loaded: LoadedTree;
  /** Record objects built so far, by slot. */
  readonly #built: (TreeNodeRecord | undefined)[] = [];
  /** Labels of created slots, built once each. */
  readonly #newLabels: (NodeLabel | undefined)[] = [];
  readonly #epochs = new Map<number, bigint>();
  /** Open-addressing table of written slots by label, built on the first lookup. */
  #table: Int32Array | undefined;
  #size = 0;

  constructor(arena: NodeArena, loaded: LoadedTree) {
    this.#arena = arena;
    this.#loaded = loaded;
    const written = arena.written;
    for (let s = 0; s < written.length; s++) if (written[s] === 1) this.#size++;
  }

  get size(): number {
    return this.#size;
  }

  get(label: NodeLabel): TreeNodeRecord | undefined {
    const slot = this.#find(label);
    return slot < 0 ? undefined : this.#build(slot);
  }

  delete(label: NodeLabel): boolean {
    const slot = this.#find(label);
    if (slot < 0) return false;
    this.#arena.written[slot] = 0;
    this.#built[slot] = undefined;
    this.#size--;
    return true;
  }

  records(): TreeNodeRecord[] {
    const out: TreeNodeRecord[] = [];
    const written = this.#arena.written;
    for (let s = 0; s < written.length; s++) if (written[s] === 1) out.push(this.#build(s));
    return out;
  }

  /**
   * Every record, each built as it is iterated and kept neither here nor in the loaded tree
   * (records built earlier by `get` are yielded as they are).
   */
  *stream(): Iterable<TreeNodeRecord> {
    const written = this.#arena.written;
    for (let s = 0; s < written.length; s++) if (written[s] === 1) yield this.#build(s, false);
  }

  #find(label: NodeLabel): number {
    const a = this.#arena;
    const table = (this.#table ??= this.#index());
    const mask = table.length - 1;
    for (let i = labelHash(label.val, 0, label.len) & mask; ; i = (i + 1) & mask) {
      const slot = table[i]!;
      if (slot === NONE) return NONE;
      if (a.written[slot] !== 1 || a.lens[slot] !== label.len) continue;
      let k = 0;
      while (k < 32 && a.labels[32 * slot + k] === label.val[k]) k++;
      if (k === 32) return slot;
    }
  }

  #index(): Int32Array {
    const a = this.#arena;
    let size = 16;
    while (size < 2 * this.#size) size *= 2;
    const table = new Int32Array(size).fill(NONE);
    const mask = size - 1;
    for (let s = 0; s < a.written.length; s++) {
      if (a.written[s] !== 1) continue;
      let i = labelHash(a.labels, 32 * s, a.lens[s]!) & mask;
      while (table[i] !== NONE) i = (i + 1) & mask;
      table[i] = s;
    }
    return table;
  }

  #epoch(e: number): bigint {
    let big = this.#epochs.get(e);
    if (big === undefined) this.#epochs.set(e, (big = BigInt(e)));
    return big;
  }

  /*
   * `keep` (default true): whether what is built is kept for the next call; a commit in
   * chunks keeps nothing (`stream`).
   */

  /** The label object of a slot: the one asked for, for loaded slots; a copy for created ones. */
  #label(slot: number, keep: boolean): NodeLabel {
    const loaded = this.#loaded;
    if (slot < loaded.count) return loaded.label(slot, keep);
    let label = this.#newLabels[slot];
    if (label === undefined) {
      label = new NodeLabel(copy32(this.#arena.labels, 32 * slot), this.#arena.lens[slot]!);
      if (keep) this.#newLabels[slot] = label;
    }
    return label;
  }

  #child(
    slot: number,
    child: number,
    side: 'leftChild' | 'rightChild',
    keep: boolean,
  ): NodeLabel | undefined {
    if (child === NONE) return undefined;
    if (child === UNLOADED) return this.#loaded.visible(slot, keep)![side];
    return this.#label(child, keep);
  }

  /**
   * The write epoch of the child of `slot` that the slot's new version was hashed with: its
   * version visible at the slot's epoch, as the rehash read it (insert.ts `versionAt`). A
   * child the insertion never loaded is unchanged, so the source version's epoch stands.
   */
  #childEpoch(
    slot: number,
    child: number,
    side: 'leftEpoch' | 'rightEpoch',
    keep: boolean,
  ): bigint | undefined {
    const a = this.#arena;
    if (child === NONE) return undefined;
    if (child === UNLOADED) return this.#loaded.visible(slot, keep)![side];
    if (a.types[child] === 0) return undefined;
    const t = a.lastEpoch[slot]!;
    if (a.lastEpoch[child]! <= t) return this.#epoch(a.lastEpoch[child]!);
    // a child newer than its parent (a tree that breaks the epoch invariant): its earlier copy
    const alt = a.alt[child]!;
    return alt >= 0 && a.altType[alt] !== 0 && a.altEpoch[alt]! <= t
      ? this.#epoch(a.altEpoch[alt]!)
      : undefined;
  }

  #parent(slot: number, keep: boolean): NodeLabel {
    const p = this.#arena.parent[slot]!;
    return p === NONE ? this.#loaded.visible(slot, keep)!.parent : this.#label(p, keep);
  }

  /** The slot's visible source version with the parent it has now (a split's rewrite). */
  #reparented(slot: number, keep: boolean): TreeNode {
    return { ...this.#loaded.visible(slot, keep)!, parent: this.#parent(slot, keep) };
  }

  #build(slot: number, keep = true): TreeNodeRecord {
    const built = this.#built[slot];
    if (built !== undefined) return built;
    const a = this.#arena;
    const loaded = this.#loaded;
    let latest: TreeNode;
    if (a.changed[slot] === 1) {
      const hash = copy32(a.hashes, 32 * slot);
      latest = {
        label: this.#label(slot, keep),
        lastEpoch: this.#epoch(a.lastEpoch[slot]!),
        minDescendantEpoch: this.#epoch(a.minEpoch[slot]!),
        parent: this.#parent(slot, keep),
        nodeType: a.types[slot] as TreeNode['nodeType'],
        leftChild: this.#child(slot, a.left[slot]!, 'leftChild', keep),
        rightChild: this.#child(slot, a.right[slot]!, 'rightChild', keep),
        leftEpoch: this.#childEpoch(slot, a.left[slot]!, 'leftEpoch', keep),
        rightEpoch: this.#childEpoch(slot, a.right[slot]!, 'rightEpoch', keep),
        hash,
      };
    } else if (slot < loaded.count) latest = this.#reparented(slot, keep);
    else throw new Error('a created node was written unchanged');
    let previous: TreeNode | undefined;
    // a store of versions writes the latest version alone, and reads others by version
    if (!loaded.keepsVersions)
      switch (a.storedPrevious[slot]) {
        case Copy.Latest:
          previous = loaded.record(slot, keep)!.latest;
          break;
        case Copy.Previous:
          previous = loaded.record(slot, keep)!.previous;
          break;
        case Copy.Written:
          previous = this.#reparented(slot, keep);
          break;
      }
    const record: TreeNodeRecord = { kind: 'treeNode', label: latest.label, latest, previous };
    if (keep) this.#built[slot] = record;
    return record;
  }
}
