/**
 * Tree hashing between flat byte arrays (spec 3.1-3.3, 7.3), for code that keeps labels and
 * hashes in large shared buffers (the directory's node arena) rather than one small array per
 * value: every operation reads its operands at offsets and writes its 32-byte result at an
 * offset, allocating nothing of its own. The bytes are those of the configuration's own
 * methods; a test checks both agree on random inputs.
 */

import { NodeLabel } from '../node-label.js';
import type { Configuration } from './configuration.js';

/** Offset-based tree hashing of one configuration. */
export interface TreeHasher {
  /** Bytes of a label value: 32 under WhatsAppV1, 36 under Experimental. */
  readonly labelValueLength: number;
  /** The value of a missing child (`emptyNodeHash`) and the label value of the empty label. */
  readonly emptyNodeHash: Uint8Array;
  readonly emptyLabelValue: Uint8Array;
  /**
   * `nodeLabelValue` of the label `(src[srcOff..srcOff+32), len)` into `out` at `outOff`.
   */
  labelValue(src: Uint8Array, srcOff: number, len: number, out: Uint8Array, outOff: number): void;
  /**
   * `hashLeafWithCommitment(src[srcOff..srcOff+32), epoch)` into `out` at `outOff`; `epoch`
   * is a safe integer.
   */
  leafValue(src: Uint8Array, srcOff: number, epoch: number, out: Uint8Array, outOff: number): void;
  /**
   * `computeParentHashFromChildren` of a left value and label value and a right value and
   * label value (each at its offset) into `out` at `outOff`.
   */
  parentHash(
    lv: Uint8Array,
    lvOff: number,
    ll: Uint8Array,
    llOff: number,
    rv: Uint8Array,
    rvOff: number,
    rl: Uint8Array,
    rlOff: number,
    out: Uint8Array,
    outOff: number,
  ): void;
}

/** Copies `n` bytes; small fixed copies are cheaper as a loop than as a view plus `set`. */
export function copyBytes(
  src: Uint8Array,
  srcOff: number,
  dst: Uint8Array,
  dstOff: number,
  n: number,
): void {
  for (let i = 0; i < n; i++) dst[dstOff + i] = src[srcOff + i]!;
}

/** A configuration that offers a tree hasher of its own (both built-in ones do). */
interface WithTreeHasher {
  treeHasher(): TreeHasher;
}

function hasTreeHasher(config: Configuration): config is Configuration & WithTreeHasher {
  return typeof (config as Partial<WithTreeHasher>).treeHasher === 'function';
}

/**
 * The tree hasher of `config`: its own when it has one, otherwise one built on its public
 * methods (correct for any configuration, with the allocations those methods make).
 *
 * @example treeHasherOf(new WhatsAppV1Configuration()).labelValueLength // 32
 */
export function treeHasherOf(config: Configuration): TreeHasher {
  return hasTreeHasher(config) ? config.treeHasher() : new GenericTreeHasher(config);
}

/** A tree hasher over any configuration's public methods. */
class GenericTreeHasher implements TreeHasher {
  readonly labelValueLength: number;
  readonly emptyNodeHash: Uint8Array;
  readonly emptyLabelValue: Uint8Array;

  constructor(private readonly config: Configuration) {
    this.emptyNodeHash = config.emptyNodeHash;
    this.emptyLabelValue = config.nodeLabelValue(config.emptyLabel);
    this.labelValueLength = this.emptyLabelValue.length;
  }

  labelValue(src: Uint8Array, srcOff: number, len: number, out: Uint8Array, outOff: number) {
    const label = new NodeLabel(src.slice(srcOff, srcOff + 32), len);
    out.set(this.config.nodeLabelValue(label), outOff);
  }

  leafValue(src: Uint8Array, srcOff: number, epoch: number, out: Uint8Array, outOff: number) {
    const v = this.config.hashLeafWithCommitment(src.subarray(srcOff, srcOff + 32), BigInt(epoch));
    out.set(v, outOff);
  }

  parentHash(
    lv: Uint8Array,
    lvOff: number,
    ll: Uint8Array,
    llOff: number,
    rv: Uint8Array,
    rvOff: number,
    rl: Uint8Array,
    rlOff: number,
    out: Uint8Array,
    outOff: number,
  ) {
    const n = this.labelValueLength;
    const h = this.config.computeParentHashFromChildren(
      lv.subarray(lvOff, lvOff + 32),
      ll.subarray(llOff, llOff + n),
      rv.subarray(rvOff, rvOff + 32),
      rl.subarray(rlOff, rlOff + n),
    );
    out.set(h, outOff);
  }
}
