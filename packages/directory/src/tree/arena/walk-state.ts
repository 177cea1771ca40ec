/**
 * The state of an insertion's preload walk (load.ts) and the helpers both of its ways of
 * reading share: from record objects, and from record bytes (load-bytes.ts).
 */

import { AkdError, type NodeLabel } from '@akd-ts/core';
import type { RecordReader, TreeNode, TreeNodeRecord } from '@akd-ts/storage';
import type { PreloadStats } from '../preload.js';
import type { ReadPacing } from '../read-pacing.js';
import type { NodeArena } from './arena.js';
import type { PackedElements } from './elements.js';

/** The walk's growing state; slot numbers are assigned in the order nodes are found. */
export interface Walk {
  reader: RecordReader;
  epoch: bigint;
  /** The epoch as a double (exact: insertions refuse epochs from 2^53). */
  epochNumber: number;
  el: PackedElements;
  maxBatchSize: number;
  stats: PreloadStats | undefined;
  /** The configuration whose label values a label may already hold. */
  owner: object;
  arena: NodeArena;
  /** Slots taken, and alternative versions given (see NodeArena.alt). */
  count: number;
  alts: number;
  /**
   * Per slot, the label asked for and the record found and its version visible at the
   * insertion's epoch. A walk over bytes fills none of them: they are built from the bytes
   * when asked for (load-bytes.ts).
   */
  labels: (NodeLabel | undefined)[];
  records: (TreeNodeRecord | undefined)[];
  visible: (TreeNode | undefined)[];
  /** Observes the reads; with `splitAlways` unset, splitting waits for its verdict. */
  pacing: ReadPacing;
  splitAlways: boolean;
  /** Cut a serial walk's larger levels into halves walked one after the other (preload.ts). */
  chunkNodes: number | undefined;
  /**
   * Per slot, as long as the arena: the element range its subtree may hold, and its parent's
   * epoch (exact as a double: every epoch stored in the arena is checked below 2^53).
   */
  lo: Int32Array;
  hi: Int32Array;
  parentEpoch: Float64Array;
  /**
   * Per slot, the write epoch of the version its parent records for it (the root's: the
   * insertion's epoch before it; -1: none recorded), by which a store of versions reads it.
   * Kept past the walk: written slots may be read again (load-bytes.ts `readAgain`).
   */
  recorded: Float64Array;
  /** 1 where the slot's record object came from storage (not the log or the cache). */
  fromStorage: Uint8Array;
  /**
   * A walk over record bytes: the buffers its reads answered with, and per slot the buffer
   * of its record (its index plus one; 0: no record) and the offset there where it begins.
   */
  bytes: boolean;
  /**
   * The store keeps node versions (PreloadOptions.storeKeepsVersions): the commit builds a
   * rewritten node from the arena alone, so only the record bytes `needsBytes` names are kept.
   */
  versions: boolean;
  /** PreloadOptions.collectGarbage. */
  collectGarbage: (() => unknown) | undefined;
  answers: Uint8Array[];
  answerViews: DataView[];
  answerOf: Int32Array;
  answerAt: Int32Array;
}

/** `from` copied into an array of `length` (a slot field grown with the arena). */
function grown<T extends Uint8Array | Int32Array | Float64Array>(from: T, length: number): T {
  const to = new (from.constructor as new (n: number) => T)(length);
  to.set(from);
  return to;
}

/** Makes room for `slots` more slots (and alternatives), doubling the arena when full. */
export function reserve(w: Walk, slots: number, alts: number): void {
  const shape = w.arena.shape;
  if (w.count + slots <= shape.capacity && w.alts + alts <= shape.altCapacity) return;
  w.arena = w.arena.resized(
    {
      ...shape,
      capacity: Math.max(2 * shape.capacity, w.count + slots),
      altCapacity: Math.max(2 * shape.altCapacity, w.alts + alts),
    },
    w.count,
    w.alts,
  );
  const capacity = w.arena.shape.capacity;
  if (capacity > w.lo.length) {
    w.lo = grown(w.lo, capacity);
    w.hi = grown(w.hi, capacity);
    w.parentEpoch = grown(w.parentEpoch, capacity);
    w.recorded = grown(w.recorded, capacity);
    w.fromStorage = grown(w.fromStorage, capacity);
    w.answerOf = grown(w.answerOf, capacity);
    w.answerAt = grown(w.answerAt, capacity);
  }
}

/**
 * Ends the walk: makes room for `reserved` more slots (the insertion's) where the walk took
 * more than it was sized for, and lets go of the per-slot state only the walk reads. Room the
 * walk left over is kept: only its slots' links were written (`NodeArena.create`), 16 bytes a
 * slot, whereas a smaller copy would hold the walk's arena and the copy at once until the
 * walk's is collected (for an epoch of 100,000 updates into 500,000 labels, 116 and 142 MB).
 */
export function endWalk(w: Walk, reserved: number): void {
  const shape = w.arena.shape;
  const capacity = w.count + reserved;
  if (shape.capacity < capacity) {
    w.arena = w.arena.resized({ ...shape, capacity }, w.count, w.alts);
  }
  const empty = new Int32Array(0);
  w.lo = empty;
  w.hi = empty;
  w.parentEpoch = new Float64Array(0);
  w.fromStorage = new Uint8Array(0);
  w.recorded = w.recorded.slice(0, w.count);
  w.answerOf = w.answerOf.slice(0, w.count);
  w.answerAt = w.answerAt.slice(0, w.count);
}

/** Copies the 32 bytes at `from` of `src` to `at` of `dst` (a loop: cheaper than `set` here). */
export function copy32(dst: Uint8Array, at: number, src: Uint8Array, from: number): void {
  for (let k = 0; k < 32; k++) dst[at + k] = src[from + k]!;
}

/** Whether this platform stores words little-endian (as an Int32Array's bytes show). */
export const LITTLE_ENDIAN = new Uint8Array(new Uint32Array([1]).buffer)[0] === 1;

/**
 * Copies the 32 bytes at `from` of the buffer `src` views to word `at` of `dst` (8 words), a
 * word at a time: a quarter of the loads and stores of a byte loop, and the source need not
 * be aligned.
 */
export function copyWords(dst: Int32Array, at: number, src: DataView, from: number): void {
  for (let k = 0; k < 8; k++) dst[at + k] = src.getInt32(from + 4 * k, LITTLE_ENDIAN);
}

/**
 * Takes the next slot for a node whose element range is [lo, hi), whose parent's epoch is
 * `parentEpoch` and records `recorded` as the write epoch of its version (-1: none).
 */
export function takeSlot(
  w: Walk,
  lo: number,
  hi: number,
  parentEpoch: number,
  recorded: number,
): number {
  reserve(w, 1, 0);
  const slot = w.count++;
  w.lo[slot] = lo;
  w.hi[slot] = hi;
  w.parentEpoch[slot] = parentEpoch;
  w.recorded[slot] = recorded;
  return slot;
}

/** A recorded write epoch as `Walk.recorded` keeps it: -1 for none, or one past 2^53. */
export function recordedNumber(epoch: bigint | number | undefined): number {
  const n = epoch === undefined ? -1 : Number(epoch);
  return n >= 0 && n <= Number.MAX_SAFE_INTEGER ? n : -1;
}

/**
 * The write epochs of the versions of `slots` their parents record, for a read by version;
 * undefined where one has none (a store of records is read by label in any case).
 */
export function recordedEpochs(w: Walk, slots: readonly number[]): bigint[] | undefined {
  const out: bigint[] = new Array<bigint>(slots.length);
  for (let i = 0; i < slots.length; i++) {
    const e = w.recorded[slots[i]!]!;
    if (e < 0) return undefined;
    out[i] = BigInt(e);
  }
  return out;
}

/** A node's record is not what the tree needs. */
export function corrupt(label: NodeLabel, what: string): AkdError {
  return new AkdError('STORAGE_CORRUPT', `tree node ${label} ${what}`);
}
