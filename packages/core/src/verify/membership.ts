/**
 * Membership and non-membership verification (spec 11.1, 11.2): recompute the root hash from a
 * path and compare it with the trusted one. These checks accept exactly what upstream accepts:
 * the hash chain is what binds a proof. It covers every label on the path but one: the label
 * of the outermost SiblingProof (the root's, in honest proofs), which no step hashes. The root
 * enters only through `computeRootHashFromVal`, as a constant (WhatsAppV1) or not at all
 * (Experimental), so whatever that label says, the path proves the same thing; upstream 0.12
 * ignores it too, and an honest upstream server always sends the root there.
 */

import { bytesEqual, toHex } from '../bytes.js';
import type { Configuration } from '../config/configuration.js';
import { AkdError } from '../errors.js';
import { Direction, NodeLabel } from '../node-label.js';
import type { Digest, MembershipProof, NonMembershipProof } from '../types.js';

/** The root value a membership path leads to (before `computeRootHashFromVal`). */
export function membershipRootValue(config: Configuration, proof: MembershipProof): Uint8Array {
  let value = proof.hashVal;
  let label = proof.label;
  // leaf-most level first: the last sibling proof is the one next to the proven node
  for (let i = proof.siblingProofs.length - 1; i >= 0; i--) {
    const level = proof.siblingProofs[i]!;
    const sibling = level.siblings[0];
    const own = config.nodeLabelValue(label);
    const other = config.nodeLabelValue(sibling.label);
    value =
      level.direction === Direction.Left
        ? config.computeParentHashFromChildren(value, own, sibling.value, other)
        : config.computeParentHashFromChildren(sibling.value, other, value, own);
    // the parent's label, hashed one level up; the outermost level's is never read
    label = level.label;
  }
  return value;
}

/**
 * Checks that `proof` leads to `rootHash` (spec 11.1).
 *
 * @throws AkdError `VERIFY_ROOT_MISMATCH` when it does not.
 * @example verifyMembership(config, rootHash, lookupProof.existenceProof)
 */
export function verifyMembership(
  config: Configuration,
  rootHash: Digest,
  proof: MembershipProof,
  what = `membership proof of node ${proof.label}`,
): void {
  const computed = config.computeRootHashFromVal(membershipRootValue(config, proof));
  if (!bytesEqual(computed, rootHash)) {
    throw new AkdError(
      'VERIFY_ROOT_MISMATCH',
      `${what} leads to root ${toHex(computed)}, not ${toHex(rootHash)}`,
    );
  }
}

/**
 * Checks that `proof.label` is absent from the tree with root `rootHash` (spec 11.2, in its
 * order of checks).
 *
 * @throws AkdError `VERIFY_NONMEMBERSHIP` for an inconsistent proof, `VERIFY_ROOT_MISMATCH`
 * when the longest-prefix node's path does not lead to the root.
 * @example verifyNonMembership(config, rootHash, lookupProof.freshnessProof)
 */
export function verifyNonMembership(
  config: Configuration,
  rootHash: Digest,
  proof: NonMembershipProof,
): void {
  const [left, right] = proof.longestPrefixChildren;
  if (proof.label.equals(left.label) || proof.label.equals(right.label)) {
    throw new AkdError(
      'VERIFY_NONMEMBERSHIP',
      `label ${proof.label} is one of the longest-prefix node's children`,
    );
  }
  if (!proof.longestPrefix.isPrefixOf(proof.label)) {
    throw new AkdError(
      'VERIFY_NONMEMBERSHIP',
      `longest prefix ${proof.longestPrefix} is not a prefix of ${proof.label}`,
    );
  }
  let lcp = left.label.longestCommonPrefix(right.label, config.emptyLabel);
  // a root with fewer than two children has the empty placeholder in a child slot
  if (lcp.equals(config.emptyLabel)) lcp = NodeLabel.root();
  if (!proof.longestPrefix.equals(lcp)) {
    throw new AkdError(
      'VERIFY_NONMEMBERSHIP',
      `longest prefix ${proof.longestPrefix} is not the children's common prefix ${lcp}`,
    );
  }
  const hash = config.computeParentHashFromChildren(
    left.value,
    config.nodeLabelValue(left.label),
    right.value,
    config.nodeLabelValue(right.label),
  );
  const parent = proof.longestPrefixMembershipProof;
  if (!lcp.equals(parent.label) || !bytesEqual(hash, parent.hashVal)) {
    throw new AkdError(
      'VERIFY_NONMEMBERSHIP',
      `the children of ${lcp} do not hash to the longest-prefix node's value`,
    );
  }
  verifyMembership(config, rootHash, parent, 'longest-prefix membership proof');
}
