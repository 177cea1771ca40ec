/**
 * From VRF output to tree position (spec 5.4, 5.8): a label's NodeLabel is the first 32 bytes
 * of the VRF output over `alpha = getHashFromLabelInput(label, freshness, version)`. The server
 * computes labels with `evaluate` and proofs with `prove`; a client checks a proof against the
 * label claimed in a membership proof with `verifyVrfLabel`.
 */

import { alloc32 } from '../slab.js';
import type { Configuration, VersionFreshness } from '../config/configuration.js';
import { AkdError } from '../errors.js';
import { LEAF_LEN, NodeLabel } from '../node-label.js';
import { VRF_OUTPUT_LENGTH, toPublicKey, vrfEvaluate, vrfProve, vrfVerify } from './ecvrf.js';
import type { VrfPublicKey, VrfSecretKey } from './keys.js';

/**
 * `NodeLabel(output[0..32], 256)` (spec 5.4): only the first half of the 64-byte output is used.
 *
 * @example
 * nodeLabelFromVrfOutput(vrfProofToHash(proof)).len; // 256
 */
export function nodeLabelFromVrfOutput(output: Uint8Array): NodeLabel {
  if (!(output instanceof Uint8Array) || output.length !== VRF_OUTPUT_LENGTH) {
    throw new TypeError(`VRF output must be ${VRF_OUTPUT_LENGTH} bytes`);
  }
  const val = alloc32();
  for (let i = 0; i < 32; i++) val[i] = output[i]!;
  return new NodeLabel(val, LEAF_LEN);
}

/**
 * Client-side label check (spec 5.4 `verify_label`): parse the key, compute alpha, verify the
 * proof, and compare the NodeLabel it yields with the one the Merkle proof claims.
 *
 * @throws AkdError `VRF_INVALID_PUBLIC_KEY`, `VRF_INVALID_PROOF`, `VRF_VERIFY_FAILED` (see
 *   `vrfVerify`), or `VRF_LABEL_MISMATCH` when the proof's label differs from `claimed`
 * @example
 * verifyVrfLabel(config, pk, utf8('hello'), VersionFreshness.Fresh, 1n, proof, claimedLabel);
 */
export function verifyVrfLabel(
  config: Configuration,
  publicKey: VrfPublicKey | Uint8Array,
  label: Uint8Array,
  freshness: VersionFreshness,
  version: bigint,
  proof: Uint8Array,
  claimed: NodeLabel,
): void {
  // spec 5.4 order: the key is parsed before anything else
  const pk = toPublicKey(publicKey);
  const alpha = config.getHashFromLabelInput(label, freshness, version);
  const computed = nodeLabelFromVrfOutput(vrfVerify(pk, proof, alpha));
  if (!computed.equals(claimed)) {
    throw new AkdError(
      'VRF_LABEL_MISMATCH',
      `the VRF proof yields node label ${computed}, but the proof claims ${claimed}`,
      { field: 'label' },
    );
  }
}

/**
 * Server side (spec 5.8 `get_node_label`): the NodeLabel of (label, freshness, version),
 * computed with `evaluate` (no proof).
 *
 * @example
 * vrfNodeLabel(new WhatsAppV1Configuration(), key, utf8('hello'), VersionFreshness.Fresh, 1n);
 * // (0x35973b40..., 256)
 */
export function vrfNodeLabel(
  config: Configuration,
  key: VrfSecretKey | Uint8Array,
  label: Uint8Array,
  freshness: VersionFreshness,
  version: bigint,
): NodeLabel {
  const alpha = config.getHashFromLabelInput(label, freshness, version);
  return nodeLabelFromVrfOutput(vrfEvaluate(key, alpha));
}

/**
 * Server side (spec 5.8 `get_label_proof`): the 80-byte VRF proof for (label, freshness,
 * version).
 *
 * @example
 * toHex(vrfLabelProof(config, key, utf8('hello'), VersionFreshness.Fresh, 1n)); // 'f1e4b9dd...'
 */
export function vrfLabelProof(
  config: Configuration,
  key: VrfSecretKey | Uint8Array,
  label: Uint8Array,
  freshness: VersionFreshness,
  version: bigint,
): Uint8Array {
  return vrfProve(key, config.getHashFromLabelInput(label, freshness, version));
}
