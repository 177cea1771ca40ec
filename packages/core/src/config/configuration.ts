/**
 * The configuration seam (spec 3): every hash-based byte layout of the protocol. WhatsAppV1 and
 * Experimental implement it; everything else (tree, proofs, verifiers) is written against this
 * interface only.
 */

import { i2osp, writeBe64, writeBe64Number } from '../bytes.js';
import type { NodeLabel } from '../node-label.js';

/** Whether a VRF input names a current version (Fresh) or a superseded one (Stale), spec 3.1. */
export const VersionFreshness = { Stale: 0, Fresh: 1 } as const;
export type VersionFreshness = (typeof VersionFreshness)[keyof typeof VersionFreshness];

/** The two configuration names upstream uses in its vectors and fixtures. */
export type ConfigurationName = 'whatsapp_v1' | 'experimental';

/**
 * Every operation of spec 3.1. Constant members are shared arrays: never mutate them.
 */
export interface Configuration {
  readonly name: ConfigurationName;
  /** `H(x)`: 32 bytes. */
  hash(data: Uint8Array): Uint8Array;
  /** Stored hash of the root of an empty tree. */
  readonly emptyRootValue: Uint8Array;
  /** Value used for a missing child. */
  readonly emptyNodeHash: Uint8Array;
  /** Label used for a missing child. */
  readonly emptyLabel: NodeLabel;
  /** Value stored in a stale leaf. */
  readonly staleAzksValue: Uint8Array;
  /** `H(commitment || be64(epoch))`: a leaf value bound to its insertion epoch. */
  hashLeafWithCommitment(commitment: Uint8Array, epoch: bigint): Uint8Array;
  /** Client side: `hashLeafWithCommitment(commit(value, nonce), epoch)`. */
  hashLeafWithValue(value: Uint8Array, epoch: bigint, nonce: Uint8Array): Uint8Array;
  /** Server side: the commitment nonce of a fresh leaf. */
  getCommitmentNonce(
    commitmentKey: Uint8Array,
    label: NodeLabel,
    version: bigint,
    value: Uint8Array,
  ): Uint8Array;
  /** The value stored in a fresh leaf. */
  computeFreshAzksValue(
    commitmentKey: Uint8Array,
    label: NodeLabel,
    version: bigint,
    value: Uint8Array,
  ): Uint8Array;
  /** The VRF input `alpha` for (label, freshness, version). */
  getHashFromLabelInput(
    label: Uint8Array,
    freshness: VersionFreshness,
    version: bigint,
  ): Uint8Array;
  /** How a label is mixed into a parent hash: `compute_node_label_value(to_bytes(label))`. */
  nodeLabelValue(label: NodeLabel): Uint8Array;
  /** Interior and root node hash from the children's values and label values. */
  computeParentHashFromChildren(
    leftValue: Uint8Array,
    leftLabelValue: Uint8Array,
    rightValue: Uint8Array,
    rightLabelValue: Uint8Array,
  ): Uint8Array;
  /** The published root hash from the root node's stored value. */
  computeRootHashFromVal(rootValue: Uint8Array): Uint8Array;
  /** `ck = H(vrf_secret)`, spec 3.4. Secret: never log it. */
  commitmentKey(vrfSecretKey: Uint8Array): Uint8Array;
}

/**
 * The formulas shared by both configurations (spec 3.1); subclasses supply `H` and the
 * configuration-specific items of spec 3.2 / 3.3.
 */
export abstract class BaseConfiguration implements Configuration {
  abstract readonly name: ConfigurationName;
  abstract readonly emptyRootValue: Uint8Array;
  abstract readonly emptyNodeHash: Uint8Array;
  abstract readonly emptyLabel: NodeLabel;
  abstract readonly staleAzksValue: Uint8Array;
  abstract hash(data: Uint8Array): Uint8Array;
  abstract getCommitmentNonce(
    commitmentKey: Uint8Array,
    label: NodeLabel,
    version: bigint,
    value: Uint8Array,
  ): Uint8Array;
  abstract nodeLabelValue(label: NodeLabel): Uint8Array;
  abstract computeParentHashFromChildren(
    leftValue: Uint8Array,
    leftLabelValue: Uint8Array,
    rightValue: Uint8Array,
    rightLabelValue: Uint8Array,
  ): Uint8Array;
  abstract computeRootHashFromVal(rootValue: Uint8Array): Uint8Array;

  /** `commit_from_nonce(value, nonce) = H(i2osp(value) || i2osp(nonce))`, spec 3.1. */
  protected commitFromNonce(value: Uint8Array, nonce: Uint8Array): Uint8Array {
    const buf = new Uint8Array(16 + value.length + nonce.length);
    writeBe64Number(buf, 0, value.length);
    buf.set(value, 8);
    writeBe64Number(buf, 8 + value.length, nonce.length);
    buf.set(nonce, 16 + value.length);
    return this.hash(buf);
  }

  hashLeafWithCommitment(commitment: Uint8Array, epoch: bigint): Uint8Array {
    // spec 3.1: a 40-byte input, commitment then be64(epoch)
    const buf = new Uint8Array(commitment.length + 8);
    buf.set(commitment, 0);
    writeBe64(buf, commitment.length, epoch);
    return this.hash(buf);
  }

  hashLeafWithValue(value: Uint8Array, epoch: bigint, nonce: Uint8Array): Uint8Array {
    return this.hashLeafWithCommitment(this.commitFromNonce(value, nonce), epoch);
  }

  computeFreshAzksValue(
    commitmentKey: Uint8Array,
    label: NodeLabel,
    version: bigint,
    value: Uint8Array,
  ): Uint8Array {
    return this.commitFromNonce(
      value,
      this.getCommitmentNonce(commitmentKey, label, version, value),
    );
  }

  getHashFromLabelInput(
    label: Uint8Array,
    freshness: VersionFreshness,
    version: bigint,
  ): Uint8Array {
    // spec 3.1: H(i2osp(label) || [freshness] || be64(version))
    const prefixed = i2osp(label);
    const buf = new Uint8Array(prefixed.length + 9);
    buf.set(prefixed, 0);
    buf[prefixed.length] = freshness;
    writeBe64(buf, prefixed.length + 1, version);
    return this.hash(buf);
  }

  commitmentKey(vrfSecretKey: Uint8Array): Uint8Array {
    return this.hash(vrfSecretKey);
  }
}
