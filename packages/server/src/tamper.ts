/**
 * A test-only fault: serve proofs with one bit flipped, so end-to-end tests can check that a
 * client (the web page, the CLI) refuses a proof the server tampered with. The bit is in the
 * first sibling hash of the existence proof: the proof still decodes, and a verifier must
 * fail on the root hash it leads to (VERIFY_ROOT_MISMATCH), not on its encoding. Enabled only
 * by the `unsafeTamperProofsForTesting` option of buildApp, never by the CLI.
 */

import type { HistoryProof, LookupProof, MembershipProof } from '@akd-ts/core';

function flipInPath(proof: MembershipProof): MembershipProof {
  const [first, ...rest] = proof.siblingProofs;
  if (first === undefined) {
    // a one-leaf tree has no siblings: flip the proven hash instead
    const hashVal = proof.hashVal.slice();
    hashVal[0]! ^= 1;
    return { ...proof, hashVal };
  }
  const sibling = first.siblings[0];
  const value = sibling.value.slice();
  value[value.length - 1]! ^= 1;
  return {
    ...proof,
    siblingProofs: [{ ...first, siblings: [{ ...sibling, value }] }, ...rest],
  };
}

/** A copy of `proof` with one bit of its existence proof flipped. */
export function tamperLookup(proof: LookupProof): LookupProof {
  return { ...proof, existenceProof: flipInPath(proof.existenceProof) };
}

/** A copy of `proof` with one bit of its newest existence proof flipped. */
export function tamperHistory(proof: HistoryProof): HistoryProof {
  const [first, ...rest] = proof.updateProofs;
  if (first === undefined) return proof;
  return {
    ...proof,
    updateProofs: [{ ...first, existenceProof: flipInPath(first.existenceProof) }, ...rest],
  };
}
