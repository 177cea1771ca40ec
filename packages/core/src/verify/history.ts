/**
 * Key history verification (spec 11.4): a run of consecutive versions, newest first, each with
 * its existence proof and the proof that the previous version went stale in the same epoch,
 * plus past-marker memberships and future-marker non-memberships that pin down where the
 * history ends.
 */

import { bytesEqual } from '../bytes.js';
import { VersionFreshness, type Configuration } from '../config/configuration.js';
import { AkdError, isAkdError } from '../errors.js';
import { getMarkerVersions } from '../markers.js';
import type {
  AkdLabel,
  Digest,
  HistoryParams,
  HistoryProof,
  HistoryVerificationParams,
  UpdateProof,
  VerifyResult,
} from '../types.js';
import { verifyVrfLabel } from '../vrf/vrf-label.js';
import { toVrfPublicKey, verifyExistence, type PublicKeyInput } from './lookup.js';
import { withLabelContext } from './label-errors.js';
import { verifyMembership, verifyNonMembership } from './membership.js';

function historyError(message: string): AkdError {
  return new AkdError('VERIFY_HISTORY', message);
}

/** Structural checks 1-4 of spec 11.4; returns (start, end) versions. */
function checkShape(
  updates: UpdateProof[],
  currentEpoch: bigint,
  params: HistoryParams,
): { start: bigint; end: bigint } {
  if (updates.length === 0) throw historyError('the proof holds no update proofs');
  for (let i = 1; i < updates.length; i++) {
    if (updates[i]!.version + 1n !== updates[i - 1]!.version) {
      throw historyError(
        `update ${i} has version ${updates[i]!.version}, expected ${updates[i - 1]!.version - 1n}`,
      );
    }
  }
  const end = updates[0]!.version;
  const start = updates[updates.length - 1]!.version;
  if (start === 0n) throw historyError('version 0 does not exist');
  if (end > currentEpoch) {
    throw historyError(`version ${end} is greater than the current epoch ${currentEpoch}`);
  }
  if (params.kind === 'complete') {
    if (start !== 1n)
      throw historyError(`a complete history must start at version 1, not ${start}`);
  } else {
    if (!Number.isSafeInteger(params.count) || params.count < 0) {
      throw new RangeError('mostRecent count must be a non-negative integer');
    }
    const n = BigInt(params.count);
    const count = BigInt(updates.length);
    if (count > n) throw historyError(`${count} updates where at most ${n} were asked for`);
    if (count < n && start !== 1n) {
      throw historyError(`${count} of ${n} updates, but the history does not reach version 1`);
    }
  }
  return { start, end };
}

/** Checks of one update proof (spec 11.4 steps 7-8). */
function verifyUpdate(
  config: Configuration,
  key: ReturnType<typeof toVrfPublicKey>,
  rootHash: Digest,
  label: AkdLabel,
  update: UpdateProof,
  allowMissingValues: boolean,
): void {
  const tombstone = allowMissingValues && update.value.length === 0;
  verifyExistence(config, key, rootHash, label, update, !tombstone);
  if (update.version <= 1n) return;
  const proof = update.previousVersionProof;
  const vrfProof = update.previousVersionVrfProof;
  if (proof === undefined) {
    throw historyError(`version ${update.version} lacks the membership proof of its stale leaf`);
  }
  if (vrfProof === undefined) {
    throw historyError(`version ${update.version} lacks the VRF proof of its stale leaf`);
  }
  // the stale leaf of version v-1 is inserted in the same epoch as version v
  const staleLeaf = config.hashLeafWithCommitment(config.staleAzksValue, update.epoch);
  if (!bytesEqual(staleLeaf, proof.hashVal)) {
    throw new AkdError(
      'VERIFY_STALE_MISMATCH',
      `the stale leaf of version ${update.version - 1n} was not inserted in epoch ${update.epoch}`,
    );
  }
  verifyVrfLabel(
    config,
    key,
    label,
    VersionFreshness.Stale,
    update.version - 1n,
    vrfProof,
    proof.label,
  );
  verifyMembership(config, rootHash, proof, `stale proof of version ${update.version - 1n}`);
}

/** The checks of `keyHistoryVerify`, failing in the words of the proof's internals. */
function historyChecks(
  config: Configuration,
  publicKey: PublicKeyInput,
  rootHash: Digest,
  currentEpoch: bigint,
  label: AkdLabel,
  proof: HistoryProof,
  params: HistoryVerificationParams,
): VerifyResult[] {
  const updates = proof.updateProofs;
  const { start, end } = checkShape(updates, currentEpoch, params.historyParams);
  const { past, future } = getMarkerVersions(start, end, currentEpoch);
  if (
    past.length !== proof.pastMarkerVrfProofs.length ||
    past.length !== proof.existenceOfPastMarkerProofs.length
  ) {
    throw historyError(`expected ${past.length} past marker proofs`);
  }
  if (
    future.length !== proof.futureMarkerVrfProofs.length ||
    future.length !== proof.nonExistenceOfFutureMarkerProofs.length
  ) {
    throw historyError(`expected ${future.length} future marker proofs`);
  }

  const key = toVrfPublicKey(publicKey);
  const results: VerifyResult[] = [];
  let previousEpoch: bigint | undefined;
  for (const update of updates) {
    // versions are published in distinct epochs, so epochs strictly decrease with them
    if (previousEpoch !== undefined && update.epoch >= previousEpoch) {
      throw historyError(
        `version ${update.version} claims epoch ${update.epoch}, not before ${previousEpoch}`,
      );
    }
    if (update.epoch > currentEpoch) {
      throw historyError(`version ${update.version} claims the future epoch ${update.epoch}`);
    }
    previousEpoch = update.epoch;
    verifyUpdate(config, key, rootHash, label, update, params.allowMissingValues === true);
    results.push({ epoch: update.epoch, version: update.version, value: update.value });
  }

  past.forEach((version, i) => {
    const membership = proof.existenceOfPastMarkerProofs[i]!;
    const vrf = proof.pastMarkerVrfProofs[i]!;
    verifyVrfLabel(config, key, label, VersionFreshness.Fresh, version, vrf, membership.label);
    verifyMembership(config, rootHash, membership, `past marker proof of version ${version}`);
  });

  future.forEach((version, i) => {
    const absence = proof.nonExistenceOfFutureMarkerProofs[i]!;
    const vrf = proof.futureMarkerVrfProofs[i]!;
    try {
      verifyVrfLabel(config, key, label, VersionFreshness.Fresh, version, vrf, absence.label);
      verifyNonMembership(config, rootHash, absence);
    } catch (e) {
      if (!isAkdError(e)) throw e;
      throw new AkdError(
        'VERIFY_FUTURE_MARKER',
        `the absence of future marker version ${version} at epoch ${currentEpoch} does not verify: ${e.message}`,
        { cause: e },
      );
    }
  });
  return results;
}

/**
 * Verifies a key history proof and returns one result per version, newest first. `params`
 * must name the history parameters the server used (default: complete history).
 *
 * @throws AkdError with a `VERIFY_*` or `VRF_*` code when the proof does not verify; a VRF
 *   proof or path that fails is reported with the label as text (label-errors.ts).
 * @example
 * ```ts
 * const versions = keyHistoryVerify(config, pk, root, 49n, utf8('16'), proof, {
 *   historyParams: { kind: 'mostRecent', count: 1 },
 * });
 * ```
 */
export function keyHistoryVerify(
  config: Configuration,
  publicKey: PublicKeyInput,
  rootHash: Digest,
  currentEpoch: bigint,
  label: AkdLabel,
  proof: HistoryProof,
  params: HistoryVerificationParams = { historyParams: { kind: 'complete' } },
): VerifyResult[] {
  return withLabelContext(label, () =>
    historyChecks(config, publicKey, rootHash, currentEpoch, label, proof, params),
  );
}
