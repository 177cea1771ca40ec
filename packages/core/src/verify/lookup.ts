/**
 * Lookup proof verification (spec 11.3): a label's current value, its version's marker, and
 * the absence of a stale leaf for that version, all against one trusted root hash.
 */

import { bytesEqual } from '../bytes.js';
import { VersionFreshness, type Configuration } from '../config/configuration.js';
import { AkdError } from '../errors.js';
import { markerVersion } from '../markers.js';
import type { AkdLabel, Digest, LookupProof, MembershipProof, VerifyResult } from '../types.js';
import { VrfPublicKey, toPublicKey } from '../vrf/ecvrf.js';
import { verifyVrfLabel } from '../vrf/vrf-label.js';
import { withLabelContext } from './label-errors.js';
import { verifyMembership, verifyNonMembership } from './membership.js';

/** A VRF public key as bytes or already parsed (parsing validates it, spec 5.2). */
export type PublicKeyInput = VrfPublicKey | Uint8Array;

/**
 * The parsed key: parsing validates it (spec 5.2) and builds its precomputed tables, so key
 * bytes go through the VRF module's cache of recently parsed keys.
 */
export function toVrfPublicKey(key: PublicKeyInput): VrfPublicKey {
  return toPublicKey(key);
}

/**
 * The existence check of one version (spec 11.3 step 2): the plaintext value and nonce hash
 * to the proven leaf, the VRF binds the leaf's position to (label, Fresh, version), and the
 * path leads to the root.
 */
export function verifyExistence(
  config: Configuration,
  key: VrfPublicKey,
  rootHash: Digest,
  label: AkdLabel,
  update: {
    epoch: bigint;
    value: Uint8Array;
    version: bigint;
    existenceVrfProof: Uint8Array;
    existenceProof: MembershipProof;
    commitmentNonce: Uint8Array;
  },
  checkValue = true,
): void {
  if (checkValue) {
    const leaf = config.hashLeafWithValue(update.value, update.epoch, update.commitmentNonce);
    if (!bytesEqual(leaf, update.existenceProof.hashVal)) {
      throw new AkdError(
        'VERIFY_VALUE_MISMATCH',
        `value and commitment nonce of version ${update.version} do not hash to the proven leaf`,
      );
    }
  }
  verifyVrfLabel(
    config,
    key,
    label,
    VersionFreshness.Fresh,
    update.version,
    update.existenceVrfProof,
    update.existenceProof.label,
  );
  verifyMembership(
    config,
    rootHash,
    update.existenceProof,
    `existence proof of version ${update.version}`,
  );
}

/** The checks of `lookupVerify`, failing in the words of the proof's internals. */
function lookupChecks(
  config: Configuration,
  publicKey: PublicKeyInput,
  rootHash: Digest,
  currentEpoch: bigint,
  label: AkdLabel,
  proof: LookupProof,
): VerifyResult {
  const { version } = proof;
  if (version === 0n) throw new AkdError('VERIFY_LOOKUP', 'version 0 does not exist');
  if (version > currentEpoch) {
    throw new AkdError(
      'VERIFY_LOOKUP',
      `proof version ${version} is greater than the current epoch ${currentEpoch}`,
    );
  }
  const key = toVrfPublicKey(publicKey);
  verifyExistence(config, key, rootHash, label, proof);

  const marker = markerVersion(version);
  verifyVrfLabel(
    config,
    key,
    label,
    VersionFreshness.Fresh,
    marker,
    proof.markerVrfProof,
    proof.markerProof.label,
  );
  verifyMembership(config, rootHash, proof.markerProof, `marker proof of version ${marker}`);

  verifyVrfLabel(
    config,
    key,
    label,
    VersionFreshness.Stale,
    version,
    proof.freshnessVrfProof,
    proof.freshnessProof.label,
  );
  verifyNonMembership(config, rootHash, proof.freshnessProof);

  return { epoch: proof.epoch, version, value: proof.value };
}

/**
 * Verifies a lookup proof for `label` against the trusted `(epoch, rootHash)` and returns the
 * proven `(epoch, version, value)`.
 *
 * @throws AkdError with a `VERIFY_*` or `VRF_*` code when the proof does not verify; a VRF
 *   proof or path that fails is reported with the label as text (label-errors.ts).
 * @example
 * ```ts
 * const { version, value } = lookupVerify(config, publicKey, rootHash, 49n, utf8('16'), proof);
 * ```
 */
export function lookupVerify(
  config: Configuration,
  publicKey: PublicKeyInput,
  rootHash: Digest,
  currentEpoch: bigint,
  label: AkdLabel,
  proof: LookupProof,
): VerifyResult {
  return withLabelContext(label, () =>
    lookupChecks(config, publicKey, rootHash, currentEpoch, label, proof),
  );
}
