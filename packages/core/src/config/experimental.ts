/**
 * ExperimentalConfiguration<L> (spec 3.3): BLAKE3 over `domainLabel || x`, raw 36-byte label
 * values, a single flat parent hash and an identity root hash. Upstream's tests use the
 * domain label "ExampleLabel"; a deployment should choose its own.
 */

import { concatBytes, utf8, writeBe64Number } from '../bytes.js';
import { NodeLabel } from '../node-label.js';
import { BaseConfiguration } from './configuration.js';
import { blake3, blake3Into } from './hash.js';
import { copyBytes, type TreeHasher } from './tree-hasher.js';

const EMPTY_LABEL_VAL = new Uint8Array(32);
EMPTY_LABEL_VAL[0] = 0x01;
const EMPTY_LABEL = new NodeLabel(EMPTY_LABEL_VAL, 0);
const ZERO32 = new Uint8Array(32);
const labelBytes = (label: NodeLabel) => label.toBytes();

/** The domain label of upstream's tests and fixtures. */
export const EXAMPLE_DOMAIN_LABEL = 'ExampleLabel';

/**
 * The experimental configuration with a domain label (default `ExampleLabel`).
 *
 * @example
 * ```ts
 * const config = new ExperimentalConfiguration('MyService v1');
 * ```
 */
export class ExperimentalConfiguration extends BaseConfiguration {
  readonly name = 'experimental' as const;
  readonly emptyLabel = EMPTY_LABEL;
  readonly emptyRootValue = ZERO32;
  readonly emptyNodeHash = ZERO32;
  readonly staleAzksValue = ZERO32;
  /** The domain label bytes prefixed to every hash input. */
  readonly domainLabel: Uint8Array;
  /** Scratch inputs (domain label, then the operands), each used synchronously. */
  readonly #parent: Uint8Array;
  readonly #leaf: Uint8Array;
  readonly #leafView: DataView;

  constructor(domainLabel: string | Uint8Array = EXAMPLE_DOMAIN_LABEL) {
    super();
    this.domainLabel = typeof domainLabel === 'string' ? utf8(domainLabel) : domainLabel.slice();
    this.#parent = new Uint8Array(this.domainLabel.length + 136);
    this.#parent.set(this.domainLabel, 0);
    this.#leaf = new Uint8Array(this.domainLabel.length + 40);
    this.#leaf.set(this.domainLabel, 0);
    this.#leafView = new DataView(this.#leaf.buffer);
  }

  override hashLeafWithCommitment(commitment: Uint8Array, epoch: bigint): Uint8Array {
    if (commitment.length !== 32) return super.hashLeafWithCommitment(commitment, epoch);
    // spec 3.1: H(commitment || be64(epoch))
    const d = this.domainLabel.length;
    this.#leaf.set(commitment, d);
    this.#leafView.setBigUint64(d + 32, epoch, false);
    return blake3(this.#leaf);
  }

  hash(data: Uint8Array): Uint8Array {
    // spec 3.3: plain BLAKE3 over the concatenation, no key and no derive_key mode
    return blake3(concatBytes(this.domainLabel, data));
  }

  nodeLabelValue(label: NodeLabel): Uint8Array {
    return label.memo(this, labelBytes);
  }

  getCommitmentNonce(
    commitmentKey: Uint8Array,
    label: NodeLabel,
    _version?: bigint,
    _value?: Uint8Array,
  ): Uint8Array {
    // spec 3.3: H(ck || to_bytes(label)); version and value are ignored
    return this.hash(concatBytes(commitmentKey, label.toBytes()));
  }

  computeParentHashFromChildren(
    leftValue: Uint8Array,
    leftLabelValue: Uint8Array,
    rightValue: Uint8Array,
    rightLabelValue: Uint8Array,
  ): Uint8Array {
    // spec 3.3: H(lv || ll || rv || rl), a 136-byte input
    if (
      leftValue.length !== 32 ||
      leftLabelValue.length !== 36 ||
      rightValue.length !== 32 ||
      rightLabelValue.length !== 36
    ) {
      return this.hash(concatBytes(leftValue, leftLabelValue, rightValue, rightLabelValue));
    }
    const buf = this.#parent;
    const d = this.domainLabel.length;
    buf.set(leftValue, d);
    buf.set(leftLabelValue, d + 32);
    buf.set(rightValue, d + 68);
    buf.set(rightLabelValue, d + 100);
    return blake3(buf);
  }

  computeRootHashFromVal(rootValue: Uint8Array): Uint8Array {
    return rootValue;
  }

  /** Offset-based tree hashing with the same bytes (tree-hasher.ts). */
  treeHasher(): TreeHasher {
    return new ExperimentalTreeHasher(this.domainLabel);
  }
}

/** The hashes above, each through its own scratch input (one instance per thread). */
class ExperimentalTreeHasher implements TreeHasher {
  readonly labelValueLength = 36;
  readonly emptyNodeHash = ZERO32;
  readonly emptyLabelValue = EMPTY_LABEL.toBytes();
  readonly #d: number;
  readonly #leaf: Uint8Array;
  readonly #parent: Uint8Array;
  readonly #out = new Uint8Array(32);

  constructor(domainLabel: Uint8Array) {
    this.#d = domainLabel.length;
    this.#leaf = new Uint8Array(this.#d + 40);
    this.#leaf.set(domainLabel, 0);
    this.#parent = new Uint8Array(this.#d + 136);
    this.#parent.set(domainLabel, 0);
  }

  labelValue(src: Uint8Array, srcOff: number, len: number, out: Uint8Array, outOff: number) {
    // spec 3.3: the raw to_bytes(label) = be32(len) || val
    out[outOff] = 0;
    out[outOff + 1] = 0;
    out[outOff + 2] = len >> 8;
    out[outOff + 3] = len & 0xff;
    copyBytes(src, srcOff, out, outOff + 4, 32);
  }

  leafValue(src: Uint8Array, srcOff: number, epoch: number, out: Uint8Array, outOff: number) {
    // spec 3.1 and 3.3: H(domain || commitment || be64(epoch))
    copyBytes(src, srcOff, this.#leaf, this.#d, 32);
    writeBe64Number(this.#leaf, this.#d + 32, epoch);
    blake3Into(this.#leaf, this.#out);
    out.set(this.#out, outOff);
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
    // spec 3.3: H(domain || lv || ll || rv || rl)
    const buf = this.#parent;
    const d = this.#d;
    copyBytes(lv, lvOff, buf, d, 32);
    copyBytes(ll, llOff, buf, d + 32, 36);
    copyBytes(rv, rvOff, buf, d + 68, 32);
    copyBytes(rl, rlOff, buf, d + 100, 36);
    blake3Into(buf, this.#out);
    out.set(this.#out, outOff);
  }
}
