/**
 * ExperimentalConfiguration<L> (spec 3.3): BLAKE3 over `domainLabel || x`, raw 36-byte label
 * values, a single flat parent hash and an identity root hash. Upstream's tests use the
 * domain label "ExampleLabel"; a deployment should choose its own.
 */

import { concatBytes, utf8 } from '../bytes.js';
import { NodeLabel } from '../node-label.js';
import { BaseConfiguration } from './configuration.js';
import { blake3 } from './hash.js';

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

  constructor(domainLabel: string | Uint8Array = EXAMPLE_DOMAIN_LABEL) {
    super();
    this.domainLabel = typeof domainLabel === 'string' ? utf8(domainLabel) : domainLabel.slice();
  }

  hash(data: Uint8Array): Uint8Array {
    // spec 3.3: plain BLAKE3 over the concatenation, no key and no derive_key mode
    return blake3(concatBytes(this.domainLabel, data));
  }

  nodeLabelValue(label: NodeLabel): Uint8Array {
    return label.memo(this, labelBytes);
  }

  getCommitmentNonce(commitmentKey: Uint8Array, label: NodeLabel): Uint8Array {
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
    return this.hash(concatBytes(leftValue, leftLabelValue, rightValue, rightLabelValue));
  }

  computeRootHashFromVal(rootValue: Uint8Array): Uint8Array {
    return rootValue;
  }
}
