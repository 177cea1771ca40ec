/**
 * WhatsAppV1Configuration (spec 3.2): plain BLAKE3 without domain separation, label values
 * hashed, and a two-level parent hash. The configuration WhatsApp runs in production.
 */

import { concatBytes, writeBe64, writeBe64Number } from '../bytes.js';
import { NodeLabel } from '../node-label.js';
import { BaseConfiguration } from './configuration.js';
import { blake3, blake3Into } from './hash.js';
import { copyBytes, type TreeHasher } from './tree-hasher.js';

const H = blake3;
const ROOT_LABEL_VALUE = H(NodeLabel.root().toBytes());
const EMPTY_LABEL = new NodeLabel(new Uint8Array(32).fill(0x01), 0);
const H_ZERO = H(Uint8Array.of(0));
const labelHash = (label: NodeLabel) => H(label.toBytes());

// Scratch space for the hot tree hashes: every use below is synchronous, so sharing is safe.
const PAIR = new Uint8Array(64);
const LEFT = PAIR.subarray(0, 32);
const RIGHT = PAIR.subarray(32, 64);
const INPUT = new Uint8Array(64);
const LEAF = new Uint8Array(40);
const LEAF_VIEW = new DataView(LEAF.buffer);

/**
 * The WhatsApp v1 configuration.
 *
 * @example
 * ```ts
 * const config = new WhatsAppV1Configuration();
 * toHex(config.computeRootHashFromVal(config.emptyRootValue)); // 'f48ded41...'
 * ```
 */
export class WhatsAppV1Configuration extends BaseConfiguration {
  readonly name = 'whatsapp_v1' as const;
  readonly emptyLabel = EMPTY_LABEL;
  readonly emptyRootValue = H_ZERO;
  readonly staleAzksValue = H_ZERO;
  readonly emptyNodeHash = H(concatBytes(H_ZERO, H(EMPTY_LABEL.toBytes())));

  hash(data: Uint8Array): Uint8Array {
    return H(data);
  }

  nodeLabelValue(label: NodeLabel): Uint8Array {
    return label.memo(this, labelHash);
  }

  getCommitmentNonce(
    commitmentKey: Uint8Array,
    label: NodeLabel,
    version: bigint,
    value: Uint8Array,
  ): Uint8Array {
    // spec 3.2: H(ck || to_bytes(label) || be64(version) || i2osp(value))
    const ck = commitmentKey.length;
    const buf = new Uint8Array(ck + 36 + 8 + 8 + value.length);
    buf.set(commitmentKey, 0);
    buf.set(label.toBytes(), ck);
    writeBe64(buf, ck + 36, version);
    writeBe64Number(buf, ck + 44, value.length);
    buf.set(value, ck + 52);
    return H(buf);
  }

  computeParentHashFromChildren(
    leftValue: Uint8Array,
    leftLabelValue: Uint8Array,
    rightValue: Uint8Array,
    rightLabelValue: Uint8Array,
  ): Uint8Array {
    // spec 3.2: H(H(lv || ll) || H(rv || rl))
    if (
      leftValue.length !== 32 ||
      leftLabelValue.length !== 32 ||
      rightValue.length !== 32 ||
      rightLabelValue.length !== 32
    ) {
      return H(
        concatBytes(
          H(concatBytes(leftValue, leftLabelValue)),
          H(concatBytes(rightValue, rightLabelValue)),
        ),
      );
    }
    INPUT.set(leftValue, 0);
    INPUT.set(leftLabelValue, 32);
    blake3Into(INPUT, LEFT);
    INPUT.set(rightValue, 0);
    INPUT.set(rightLabelValue, 32);
    blake3Into(INPUT, RIGHT);
    return H(PAIR);
  }

  override hashLeafWithCommitment(commitment: Uint8Array, epoch: bigint): Uint8Array {
    if (commitment.length !== 32) return super.hashLeafWithCommitment(commitment, epoch);
    // spec 3.1: H(commitment || be64(epoch)), through scratch space
    LEAF.set(commitment, 0);
    LEAF_VIEW.setBigUint64(32, epoch, false);
    return H(LEAF);
  }

  computeRootHashFromVal(rootValue: Uint8Array): Uint8Array {
    // spec 3.2: H(v || H(to_bytes(ROOT)))
    return H(concatBytes(rootValue, ROOT_LABEL_VALUE));
  }

  /** Offset-based tree hashing with the same bytes (tree-hasher.ts). */
  treeHasher(): TreeHasher {
    return new WhatsAppV1TreeHasher(this.emptyNodeHash);
  }
}

/** The hashes above, each through its own scratch input (one instance per thread). */
class WhatsAppV1TreeHasher implements TreeHasher {
  readonly labelValueLength = 32;
  readonly emptyLabelValue = labelHash(EMPTY_LABEL);
  readonly #label = new Uint8Array(36);
  readonly #leaf = new Uint8Array(40);
  readonly #input = new Uint8Array(64);
  readonly #pair = new Uint8Array(64);
  readonly #pairLeft = this.#pair.subarray(0, 32);
  readonly #pairRight = this.#pair.subarray(32, 64);
  readonly #out = new Uint8Array(32);

  constructor(readonly emptyNodeHash: Uint8Array) {}

  labelValue(src: Uint8Array, srcOff: number, len: number, out: Uint8Array, outOff: number) {
    // spec 3.2: H(to_bytes(label)) = H(be32(len) || val)
    const input = this.#label;
    input[2] = len >> 8;
    input[3] = len & 0xff;
    copyBytes(src, srcOff, input, 4, 32);
    blake3Into(input, this.#out);
    out.set(this.#out, outOff);
  }

  leafValue(src: Uint8Array, srcOff: number, epoch: number, out: Uint8Array, outOff: number) {
    // spec 3.1: H(commitment || be64(epoch))
    copyBytes(src, srcOff, this.#leaf, 0, 32);
    writeBe64Number(this.#leaf, 32, epoch);
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
    // spec 3.2: H(H(lv || ll) || H(rv || rl))
    const input = this.#input;
    copyBytes(lv, lvOff, input, 0, 32);
    copyBytes(ll, llOff, input, 32, 32);
    blake3Into(input, this.#pairLeft);
    copyBytes(rv, rvOff, input, 0, 32);
    copyBytes(rl, rlOff, input, 32, 32);
    blake3Into(input, this.#pairRight);
    blake3Into(this.#pair, this.#out);
    out.set(this.#out, outOff);
  }
}
