/**
 * Append-only (audit) verification (spec 11.5). For each epoch step, the unchanged subtree
 * roots must rebuild the old root hash exactly, and those same subtrees plus the new leaves,
 * each bound to the step's end epoch, must rebuild the new one.
 *
 * The trees are rebuilt directly from the sorted element set (no storage), which gives the
 * same hash as upstream's Patricia insertion in Auditor mode (spec 8). Unlike upstream 0.12,
 * which silently dropped duplicate or nested labels while rebuilding (and so let a server
 * rewrite a value and still pass, fixed upstream in 0.13), such sets are rejected here, as are
 * labels with bits set beyond their length, inserted elements that are not full-length leaves,
 * and epoch steps that are not consecutive. Honest proofs never contain any of these.
 */

import type { Configuration } from '../config/configuration.js';
import { AkdError } from '../errors.js';
import type { AppendOnlyProof, AzksElement, Digest, SingleAppendOnlyProof } from '../types.js';
import { StepRebuild, packStep, rootOfOrder, verifyStep } from './append-only-step.js';
import { checkedOrder, packAzksElements } from './element-arrays.js';

/**
 * The published root hash of the tree whose leaves (or subtree roots) are `elements`, with
 * values used as given (spec 8, Auditor mode; spec 7.3 for the empty tree and missing children).
 *
 * @throws AkdError `AUDIT_MALFORMED_PROOF` for duplicate or nested labels.
 * @example rootHashOfElements(config, []) // the empty tree's root hash
 */
export function rootHashOfElements(config: Configuration, elements: AzksElement[]): Digest {
  const set = packAzksElements(elements);
  return rootOfOrder(config, set, checkedOrder(set));
}

/**
 * Verifies one epoch step: `proof` turns the tree with root `startHash` into the tree with
 * root `endHash`, inserting leaves at `endEpoch` (spec 11.5 `verify_consecutive_append_only`).
 * The labels of both sets together are checked first: the new tree is built from their union.
 *
 * @throws AkdError `AUDIT_MALFORMED_PROOF`, `AUDIT_START_HASH_MISMATCH` or
 * `AUDIT_END_HASH_MISMATCH`.
 */
export function verifyConsecutiveAppendOnly(
  config: Configuration,
  proof: SingleAppendOnlyProof,
  startHash: Digest,
  endHash: Digest,
  endEpoch: bigint,
): void {
  verifyStep(new StepRebuild(config, packStep(proof)), startHash, endHash, endEpoch);
}

/** What an audit verified. */
export interface AuditVerifyResult {
  /** First epoch of the chain (the epoch of `hashes[0]`). */
  startEpoch: bigint;
  /** Last epoch of the chain (the epoch of the last hash). */
  endEpoch: bigint;
}

/**
 * Verifies an append-only proof over the root hashes of consecutive epochs: `hashes[i]` is the
 * root at `proof.epochs[i]` and `hashes[i+1]` the root one epoch later (spec 11.5).
 *
 * @param options.startEpoch when given, the epoch `hashes[0]` belongs to; the proof must start there.
 * @throws AkdError `AUDIT_LENGTH_MISMATCH`, `AUDIT_EPOCH_GAP` or a per-step audit error.
 * @example auditVerify(config, [rootAt1, rootAt2], proof) // { startEpoch: 1n, endEpoch: 2n }
 */
export function auditVerify(
  config: Configuration,
  hashes: Digest[],
  proof: AppendOnlyProof,
  options: { startEpoch?: bigint } = {},
): AuditVerifyResult {
  if (proof.epochs.length !== proof.proofs.length) {
    throw new AkdError(
      'AUDIT_LENGTH_MISMATCH',
      `${proof.epochs.length} epochs for ${proof.proofs.length} proofs`,
    );
  }
  if (hashes.length !== proof.proofs.length + 1 || proof.proofs.length === 0) {
    throw new AkdError(
      'AUDIT_LENGTH_MISMATCH',
      `${hashes.length} hashes for ${proof.proofs.length} proofs: expected one more hash than proofs, and at least one proof`,
    );
  }
  const first = proof.epochs[0]!;
  if (options.startEpoch !== undefined && first !== options.startEpoch) {
    throw new AkdError(
      'AUDIT_EPOCH_GAP',
      `the proof starts at epoch ${first}, not ${options.startEpoch}`,
    );
  }
  proof.epochs.forEach((epoch, i) => {
    if (epoch !== first + BigInt(i)) {
      throw new AkdError(
        'AUDIT_EPOCH_GAP',
        `step ${i} starts at epoch ${epoch}, not ${first + BigInt(i)}`,
      );
    }
  });
  proof.proofs.forEach((step, i) => {
    verifyConsecutiveAppendOnly(config, step, hashes[i]!, hashes[i + 1]!, proof.epochs[i]! + 1n);
  });
  return { startEpoch: first, endEpoch: first + BigInt(proof.proofs.length) };
}
