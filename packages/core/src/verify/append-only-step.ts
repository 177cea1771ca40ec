/**
 * One epoch step of an append-only proof (spec 11.5) over flat arrays: the unchanged subtree
 * roots, then the inserted leaves with their raw values. The labels are checked and sorted
 * once; the root before the step is rebuilt from the unchanged nodes alone, and the root after
 * it, for any end epoch, from all of them with each inserted leaf bound to that epoch. An
 * auditor unsure of a blob's epoch (blob.ts) rebuilds only the second root again, and an
 * exporter deriving both roots (the directory's stepRoots) sorts once.
 */

import { bytesEqual, toHex } from '../bytes.js';
import type { Configuration } from '../config/configuration.js';
import { treeHasherOf } from '../config/tree-hasher.js';
import { AkdError } from '../errors.js';
import { LEAF_LEN } from '../node-label.js';
import type { Digest, SingleAppendOnlyProof } from '../types.js';
import {
  TreeRebuilder,
  checkedOrder,
  elementArrays,
  labelAt,
  type ElementArrays,
} from './element-arrays.js';

/** A step as flat arrays: elements [0, unchanged) are unchanged nodes, the rest inserted leaves. */
export interface PackedStep {
  set: ElementArrays;
  unchanged: number;
}

/** `proof` as flat arrays (its values must be 32 bytes, as decoded proofs' are). */
export function packStep(proof: SingleAppendOnlyProof): PackedStep {
  const u = proof.unchangedNodes.length;
  const set = elementArrays(u + proof.inserted.length);
  const put = (e: { label: { val: Uint8Array; len: number }; value: Uint8Array }, i: number) => {
    if (e.value.length !== 32) throw new RangeError(`element ${i}: value must be 32 bytes`);
    set.labels.set(e.label.val, 32 * i);
    set.lens[i] = e.label.len;
    set.values.set(e.value, 32 * i);
  };
  proof.unchangedNodes.forEach((e, i) => put(e, i));
  proof.inserted.forEach((e, i) => put(e, u + i));
  return { set, unchanged: u };
}

const rebuilders = new WeakMap<Configuration, TreeRebuilder>();

function rebuilderOf(config: Configuration): TreeRebuilder {
  let r = rebuilders.get(config);
  if (r === undefined) rebuilders.set(config, (r = new TreeRebuilder(treeHasherOf(config))));
  return r;
}

/** The published root of the tree over `order`'s elements of `set` (spec 7.3 when empty). */
export function rootOfOrder(config: Configuration, set: ElementArrays, order: Int32Array): Digest {
  const value = rebuilderOf(config).rootValue(set, order);
  return config.computeRootHashFromVal(value ?? config.emptyRootValue);
}

const MAX_SAFE = BigInt(Number.MAX_SAFE_INTEGER);

/** A step's checked, sorted labels and the roots rebuilt from them. */
export class StepRebuild {
  readonly #config: Configuration;
  readonly #step: PackedStep;
  #order: Int32Array | undefined;
  #start: Digest | undefined;

  constructor(config: Configuration, step: PackedStep) {
    this.#config = config;
    this.#step = step;
  }

  get inserted(): number {
    return this.#step.set.count - this.#step.unchanged;
  }

  get unchanged(): number {
    return this.#step.unchanged;
  }

  /**
   * The elements in bit-string order, after checking that every inserted element is a leaf and
   * that no label has junk bits, is the root's, or nests in another.
   * @throws AkdError `AUDIT_MALFORMED_PROOF`
   */
  order(): Int32Array {
    if (this.#order === undefined) {
      const { set, unchanged } = this.#step;
      for (let i = unchanged; i < set.count; i++) {
        if (set.lens[i] !== LEAF_LEN) {
          throw malformed(`inserted element ${labelAt(set, i)} is not a leaf`);
        }
      }
      this.#order = checkedOrder(set);
    }
    return this.#order;
  }

  /** The root before the step: the unchanged nodes alone. */
  startRoot(): Digest {
    if (this.#start === undefined) {
      const u = this.#step.unchanged;
      const order = this.order();
      const kept = new Int32Array(u);
      let k = 0;
      for (let i = 0; i < order.length; i++) if (order[i]! < u) kept[k++] = order[i]!;
      this.#start = rootOfOrder(this.#config, this.#step.set, kept);
    }
    return this.#start;
  }

  /** The root after the step, its leaves inserted at `endEpoch` (`H(value || be64(end))`). */
  endRoot(endEpoch: bigint): Digest {
    const order = this.order();
    const { set, unchanged } = this.#step;
    const config = this.#config;
    const values = set.values.slice();
    if (endEpoch >= 0n && endEpoch <= MAX_SAFE) {
      const hasher = treeHasherOf(config);
      const epoch = Number(endEpoch);
      for (let i = unchanged; i < set.count; i++) {
        hasher.leafValue(set.values, 32 * i, epoch, values, 32 * i);
      }
    } else {
      for (let i = unchanged; i < set.count; i++) {
        values.set(
          config.hashLeafWithCommitment(set.values.subarray(32 * i, 32 * i + 32), endEpoch),
          32 * i,
        );
      }
    }
    return rootOfOrder(config, { ...set, values }, order);
  }
}

function malformed(message: string): AkdError {
  return new AkdError('AUDIT_MALFORMED_PROOF', message);
}

/**
 * Verifies one epoch step: it turns the tree with root `startHash` into the tree with root
 * `endHash`, inserting leaves at `endEpoch` (spec 11.5 `verify_consecutive_append_only`).
 * @throws AkdError `AUDIT_MALFORMED_PROOF`, `AUDIT_START_HASH_MISMATCH` or
 * `AUDIT_END_HASH_MISMATCH`.
 */
export function verifyStep(
  rebuild: StepRebuild,
  startHash: Digest,
  endHash: Digest,
  endEpoch: bigint,
): void {
  const before = rebuild.startRoot();
  if (!bytesEqual(before, startHash)) {
    throw new AkdError(
      'AUDIT_START_HASH_MISMATCH',
      `unchanged nodes rebuild ${toHex(before)}, not the epoch ${endEpoch - 1n} root ${toHex(startHash)}`,
    );
  }
  const after = rebuild.endRoot(endEpoch);
  if (!bytesEqual(after, endHash)) {
    throw new AkdError(
      'AUDIT_END_HASH_MISMATCH',
      `unchanged nodes and inserted leaves rebuild ${toHex(after)}, not the epoch ${endEpoch} root ${toHex(endHash)}`,
    );
  }
}

/**
 * The roots before and after one step, derived from its proof (spec 11.5 run backwards): what
 * an exporter names a blob with. The labels are checked and sorted once for both.
 *
 * @throws AkdError `AUDIT_MALFORMED_PROOF` for labels that are not a valid step's.
 * @example appendOnlyStepRoots(config, proof.proofs[0], 2n) // { startHash: root at 1, endHash: root at 2 }
 */
export function appendOnlyStepRoots(
  config: Configuration,
  proof: SingleAppendOnlyProof,
  endEpoch: bigint,
): { startHash: Digest; endHash: Digest } {
  const rebuild = new StepRebuild(config, packStep(proof));
  return { startHash: rebuild.startRoot(), endHash: rebuild.endRoot(endEpoch) };
}
