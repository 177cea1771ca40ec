/**
 * The node arena: the tree nodes one insertion touches, as fixed-size slots in typed arrays
 * over one SharedArrayBuffer, with slot indices instead of references. Worker threads attach
 * the same memory and insert into disjoint subtrees; records are built from the slots only
 * when read or committed (batch.ts). A slot holds one node's working version (spec 7.2) plus
 * what the write rule of spec 9.2 needs: which stored copies of the node the transaction would
 * hold, and their epochs.
 *
 * Epochs are kept as doubles: exact for every epoch a directory can reach (below 2^53; the
 * insertion refuses anything later).
 */

/** Child or parent index meaning "none". */
export const NONE = -1;
/** Child index of a node the insertion never reads (its label stays in the source record). */
export const UNLOADED = -2;

/**
 * Which copy of a node a stored slot refers to (spec 9.2): none, the source record's latest
 * or previous version, or the node as this insertion last wrote it (its visible version with
 * a new parent: the only change a node is written with before its final write).
 */
export const Copy = { None: 0, Latest: 1, Previous: 2, Written: 3 } as const;
export type Copy = (typeof Copy)[keyof typeof Copy];

/** How many slots of each kind an arena holds, and the configuration's label value size. */
export interface ArenaShape {
  capacity: number;
  labelValueLength: number;
  /** Slots whose source record may be read at an earlier version (see `alt*`). */
  altCapacity: number;
}

/** Byte offsets of the fields in the buffer, each aligned to its element size. */
function layout(shape: ArenaShape) {
  const n = shape.capacity;
  const a = shape.altCapacity;
  let at = 0;
  const take = (bytes: number, align: number) => {
    at = Math.ceil(at / align) * align;
    const start = at;
    at += bytes;
    return start;
  };
  return {
    lastEpoch: take(8 * n, 8),
    minEpoch: take(8 * n, 8),
    storedLatestEpoch: take(8 * n, 8),
    storedPreviousEpoch: take(8 * n, 8),
    altEpoch: take(8 * a, 8),
    left: take(4 * n, 4),
    right: take(4 * n, 4),
    parent: take(4 * n, 4),
    alt: take(4 * n, 4),
    lens: take(2 * n, 2),
    types: take(n, 1),
    storedLatest: take(n, 1),
    storedPrevious: take(n, 1),
    written: take(n, 1),
    changed: take(n, 1),
    hasLabelValue: take(n, 1),
    altType: take(a, 1),
    labels: take(32 * n, 8),
    hashes: take(32 * n, 8),
    altHashes: take(32 * a, 8),
    labelValues: take(shape.labelValueLength * n, 8),
    bytes: Math.ceil(at / 8) * 8,
  };
}

/** The arena's typed arrays, for copying them all. */
const FIELDS = [
  'labels',
  'lens',
  'hashes',
  'lastEpoch',
  'minEpoch',
  'types',
  'left',
  'right',
  'parent',
  'labelValues',
  'hasLabelValue',
  'storedLatest',
  'storedLatestEpoch',
  'storedPrevious',
  'storedPreviousEpoch',
  'written',
  'changed',
  'alt',
  'altEpoch',
  'altType',
  'altHashes',
] as const;

/** The fields of 32 bytes a slot (or an alternative version), and those indexed by `alt`. */
const WIDE = new Set<string>(['labels', 'hashes', 'altHashes']);
const ALT_FIELDS = new Set<string>(['altEpoch', 'altType', 'altHashes']);

export class NodeArena {
  readonly buffer: SharedArrayBuffer;
  readonly shape: ArenaShape;
  /** Working version of each slot (spec 7.2); `types` 0 means no visible version. */
  readonly labels: Uint8Array;
  readonly lens: Uint16Array;
  readonly hashes: Uint8Array;
  readonly lastEpoch: Float64Array;
  readonly minEpoch: Float64Array;
  readonly types: Uint8Array;
  readonly left: Int32Array;
  readonly right: Int32Array;
  readonly parent: Int32Array;
  /** Label values (spec 3.1 `nodeLabelValue`), computed once per slot when first needed. */
  readonly labelValues: Uint8Array;
  readonly hasLabelValue: Uint8Array;
  /** What the transaction would store for the slot: its latest and previous copies. */
  readonly storedLatest: Uint8Array;
  readonly storedLatestEpoch: Float64Array;
  readonly storedPrevious: Uint8Array;
  readonly storedPreviousEpoch: Float64Array;
  /** 1 once the insertion has written the slot; `changed` once its fields beyond the parent did. */
  readonly written: Uint8Array;
  readonly changed: Uint8Array;
  /**
   * For a loaded node newer than its parent (a tree that breaks the epoch invariant), the
   * index of its source record's previous version (epoch, type, hash), which a read at an
   * epoch below the visible version returns (spec 9.2); -1 elsewhere.
   */
  readonly alt: Int32Array;
  readonly altEpoch: Float64Array;
  readonly altType: Uint8Array;
  readonly altHashes: Uint8Array;
  /** `labels` and `hashes` as 32-bit words, 8 a slot, for copying them a word at a time. */
  readonly labelWords: Int32Array;
  readonly hashWords: Int32Array;

  private constructor(buffer: SharedArrayBuffer, shape: ArenaShape) {
    const o = layout(shape);
    const n = shape.capacity;
    const a = shape.altCapacity;
    this.buffer = buffer;
    this.shape = shape;
    this.lastEpoch = new Float64Array(buffer, o.lastEpoch, n);
    this.minEpoch = new Float64Array(buffer, o.minEpoch, n);
    this.storedLatestEpoch = new Float64Array(buffer, o.storedLatestEpoch, n);
    this.storedPreviousEpoch = new Float64Array(buffer, o.storedPreviousEpoch, n);
    this.altEpoch = new Float64Array(buffer, o.altEpoch, a);
    this.left = new Int32Array(buffer, o.left, n);
    this.right = new Int32Array(buffer, o.right, n);
    this.parent = new Int32Array(buffer, o.parent, n);
    this.alt = new Int32Array(buffer, o.alt, n);
    this.lens = new Uint16Array(buffer, o.lens, n);
    this.types = new Uint8Array(buffer, o.types, n);
    this.storedLatest = new Uint8Array(buffer, o.storedLatest, n);
    this.storedPrevious = new Uint8Array(buffer, o.storedPrevious, n);
    this.written = new Uint8Array(buffer, o.written, n);
    this.changed = new Uint8Array(buffer, o.changed, n);
    this.hasLabelValue = new Uint8Array(buffer, o.hasLabelValue, n);
    this.altType = new Uint8Array(buffer, o.altType, a);
    this.labels = new Uint8Array(buffer, o.labels, 32 * n);
    this.hashes = new Uint8Array(buffer, o.hashes, 32 * n);
    this.altHashes = new Uint8Array(buffer, o.altHashes, 32 * a);
    this.labelValues = new Uint8Array(buffer, o.labelValues, shape.labelValueLength * n);
    this.labelWords = new Int32Array(buffer, o.labels, 8 * n);
    this.hashWords = new Int32Array(buffer, o.hashes, 8 * n);
  }

  /** A new arena: every slot empty, with no children, parent or alternative version. */
  static create(shape: ArenaShape): NodeArena {
    const arena = new NodeArena(new SharedArrayBuffer(layout(shape).bytes), shape);
    arena.left.fill(NONE);
    arena.right.fill(NONE);
    arena.parent.fill(NONE);
    arena.alt.fill(NONE);
    return arena;
  }

  /**
   * A new arena of `shape` holding this one's first `slots` slots and `alts` alternative
   * versions (as many as fit). Only those are copied: the pages of the rest of a new arena's
   * buffer stay untouched, and so cost no memory until slots are taken there.
   */
  resized(
    shape: ArenaShape,
    slots = this.shape.capacity,
    alts = this.shape.altCapacity,
  ): NodeArena {
    const next = NodeArena.create(shape);
    const n = Math.min(slots, this.shape.capacity, shape.capacity);
    const m = Math.min(alts, this.shape.altCapacity, shape.altCapacity);
    for (const field of FIELDS) {
      const per = field === 'labelValues' ? shape.labelValueLength : WIDE.has(field) ? 32 : 1;
      next[field].set(this[field].subarray(0, per * (ALT_FIELDS.has(field) ? m : n)));
    }
    return next;
  }

  /** The arena in `buffer` (created by `create`, possibly in another thread). */
  static attach(buffer: SharedArrayBuffer, shape: ArenaShape): NodeArena {
    return new NodeArena(buffer, shape);
  }
}
