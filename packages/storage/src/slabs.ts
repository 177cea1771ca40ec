/**
 * The packed store's memory (packed-memory-database.ts): records' bytes appended to large
 * slabs, each as `u32 length || record bytes`, found by location (`slab * 2^26 + offset`).
 * A record written again is appended anew and its old bytes are released; a slab whose live
 * bytes fall under half of what it holds is compacted: its live records are moved to the
 * slab being filled (its owner says which are live and where they now are, through
 * `relocate`), a part per write in proportion to what the write appended, and the slab is
 * dropped once gone through. Dead bytes so stay below about the live ones.
 */

/**
 * The largest and default slab size, 64 MiB: above the largest threshold (32 MiB) past
 * which glibc's malloc maps each block on its own, so that slabs never sit in the
 * allocator's heap, where a long-lived block would keep the memory freed below it (a
 * publish's garbage) from being given back. Pages of a slab not written yet take no memory.
 */
export const SLAB_BYTES = 64 * 1024 * 1024;
/**
 * Locations are `slab * SLOT + offset`; offsets stay below it (slabs are at most that large,
 * and a larger record has one of its own, starting at 0).
 */
export const SLOT = SLAB_BYTES;
/**
 * Slab bytes a write compacts, at least and per byte it appended: each slab compacted is at
 * most half live, so scanning four bytes per byte written frees space faster than writes use
 * it up, and a write of a few hundred KB pays a few milliseconds.
 */
const MIN_COMPACT_BYTES = 1024 * 1024;
const COMPACT_FACTOR = 4;

/**
 * Called by compaction for each record of a slab being compacted: when the owner still
 * points at `location`, it appends `record` again (`Slabs.append`) and points at the new
 * location; otherwise it does nothing (the record is dead).
 */
export type Relocate = (record: Uint8Array, location: number) => void;

/** Bytes held in slabs, and how many of them records point at. */
export interface SlabUsage {
  slabs: number;
  bytes: number;
  liveBytes: number;
  /** Slab bytes that compaction has yet to go through. */
  toCompact: number;
  /** Slab bytes compaction has gone through so far. */
  compacted: number;
}

/**
 * @example
 * ```ts
 * const slabs = new Slabs(1 << 20, (record, location) => { ... });
 * const at = slabs.append(bytes);
 * slabs.bytesAt(at); // bytes
 * ```
 */
export class Slabs {
  private readonly slabs: (Uint8Array | undefined)[] = [];
  private readonly views: (DataView | undefined)[] = [];
  /** Bytes written to each slab, and bytes of it that records still point at. */
  private readonly used: number[] = [];
  private readonly live: number[] = [];
  private readonly free: number[] = [];
  /** Slabs to compact once the current write is done. */
  private readonly sparse = new Set<number>();
  /** The slab being compacted, its buffer, and how far: its records before `at` are moved. */
  private compacting: { slab: number; at: number; buf: Uint8Array } | undefined;
  /** Bytes appended so far (writes compact in proportion), and gone through by compaction. */
  private appendedBytes = 0;
  private compactedBytes = 0;
  /** The slab being filled, or -1. */
  private current = -1;

  /**
   * @param slabBytes bytes of a slab (a record larger than that gets a slab of its own)
   * @param relocate moves a live record of a slab being compacted (see {@link Relocate})
   * @throws RangeError for a slab size that is not an integer from 64 bytes to 64 MiB
   */
  constructor(
    private readonly slabBytes: number,
    private readonly relocate: Relocate,
  ) {
    if (!Number.isInteger(slabBytes) || slabBytes < 64 || slabBytes > SLAB_BYTES) {
      throw new RangeError(`a slab is 64 bytes to 64 MiB, not ${slabBytes}`);
    }
  }

  /** Bytes appended so far: what a write passes to {@link compactAfter}. */
  get appended(): number {
    return this.appendedBytes;
  }

  /** Appends `record` (a record's bytes) and returns its location. */
  append(record: Uint8Array): number {
    const size = 4 + record.length;
    let slab = this.current;
    if (size > this.slabBytes) slab = this.newSlab(size);
    else if (slab < 0 || this.used[slab]! + size > this.slabBytes) {
      const full = slab;
      slab = this.current = this.newSlab(this.slabBytes);
      // the slab just filled is now like any other
      if (full >= 0 && this.live[full]! * 2 < this.used[full]!) this.sparse.add(full);
    }
    const at = this.used[slab]!;
    this.views[slab]!.setUint32(at, record.length);
    this.slabs[slab]!.set(record, at + 4);
    this.used[slab] = at + size;
    this.live[slab]! += size;
    this.appendedBytes += size;
    return slab * SLOT + at;
  }

  private newSlab(bytes: number): number {
    const slab = this.free.pop() ?? this.slabs.length;
    const buf = new Uint8Array(bytes);
    this.slabs[slab] = buf;
    this.views[slab] = new DataView(buf.buffer);
    this.used[slab] = 0;
    this.live[slab] = 0;
    return slab;
  }

  /** The record at `location` is no longer pointed at. */
  release(location: number): void {
    const slab = Math.floor(location / SLOT);
    const at = location - slab * SLOT;
    this.live[slab]! -= 4 + this.views[slab]!.getUint32(at);
    if (slab === this.current) return;
    if (this.live[slab] === 0) this.dropSlab(slab);
    else if (this.live[slab]! * 2 < this.used[slab]!) this.sparse.add(slab);
  }

  private dropSlab(slab: number): void {
    this.slabs[slab] = undefined;
    this.views[slab] = undefined;
    this.used[slab] = 0;
    this.live[slab] = 0;
    this.sparse.delete(slab);
    this.free.push(slab);
  }

  /**
   * Moves live records of sparse slabs to the current one, about `budget` bytes of slab at
   * most, and drops a slab once all of it is done; the next call goes on where this one
   * stopped. Each write pays for part of a compaction in proportion to what it wrote
   * ({@link compactAfter}) instead of a whole 64 MiB slab at once: a proof server applying an
   * epoch piece by piece spent tens of milliseconds between two requests on one.
   */
  compact(budget: number): void {
    while (budget > 0) {
      let c = this.compacting;
      if (c === undefined) {
        const next = this.sparse.values().next();
        if (next.done === true) return;
        const slab = next.value;
        this.sparse.delete(slab);
        if (slab === this.current || this.slabs[slab] === undefined) continue;
        c = this.compacting = { slab, at: 0, buf: this.slabs[slab]! };
      }
      const { slab, buf } = c;
      // every record of it was rewritten meanwhile: dropped already (maybe even reused)
      if (this.slabs[slab] !== buf) {
        this.compacting = undefined;
        continue;
      }
      const view = this.views[slab]!;
      const end = this.used[slab]!;
      while (c.at < end && budget > 0) {
        const at = c.at;
        const length = view.getUint32(at);
        this.relocate(buf.subarray(at + 4, at + 4 + length), slab * SLOT + at);
        c.at = at + 4 + length;
        budget -= 4 + length;
        this.compactedBytes += 4 + length;
      }
      if (c.at >= end) {
        this.compacting = undefined;
        this.dropSlab(slab);
      }
    }
  }

  /** Compacts in proportion to the bytes appended since `before` (a value of `appended`). */
  compactAfter(before: number): void {
    this.compact(Math.max(MIN_COMPACT_BYTES, COMPACT_FACTOR * (this.appendedBytes - before)));
  }

  /** The slab buffer holding `location` (views of it stay valid after it is dropped). */
  bufferOf(location: number): Uint8Array {
    return this.slabs[Math.floor(location / SLOT)]!;
  }

  /** A DataView of the slab holding `location`. */
  viewOf(location: number): DataView {
    return this.views[Math.floor(location / SLOT)]!;
  }

  /** The bytes of the record at `location` (a view of its slab). */
  bytesAt(location: number): Uint8Array {
    const slab = Math.floor(location / SLOT);
    const at = location - slab * SLOT;
    const length = this.views[slab]!.getUint32(at);
    return this.slabs[slab]!.subarray(at + 4, at + 4 + length);
  }

  /** Bytes held in slabs, and how many of them records point at (tests, metrics). */
  usage(): SlabUsage {
    let slabs = 0;
    let bytes = 0;
    let liveBytes = 0;
    for (let i = 0; i < this.slabs.length; i++) {
      if (this.slabs[i] === undefined) continue;
      slabs++;
      bytes += this.slabs[i]!.length;
      liveBytes += this.live[i]!;
    }
    let toCompact = 0;
    for (const slab of this.sparse) toCompact += this.used[slab]!;
    const c = this.compacting;
    if (c !== undefined && this.slabs[c.slab] === c.buf) toCompact += this.used[c.slab]! - c.at;
    return { slabs, bytes, liveBytes, toCompact, compacted: this.compactedBytes };
  }
}

/** The offset of `location` within its slab. */
export function offsetOf(location: number): number {
  return location - Math.floor(location / SLOT) * SLOT;
}
