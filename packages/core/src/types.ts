/**
 * Domain types of the protocol (spec 1, 10): labels, values, tree elements and the three proof
 * families. These are the decoded, validated forms; `proto/` converts them to and from the
 * protobuf wire format of spec 15. Epochs and versions are unsigned 64-bit, so `bigint`.
 */

import type { Direction, NodeLabel } from './node-label.js';

/** A user identifier, arbitrary bytes. */
export type AkdLabel = Uint8Array;
/** A user's value (key material), arbitrary bytes. The empty value marks a tombstone. */
export type AkdValue = Uint8Array;
/** A 32-byte hash. */
export type Digest = Uint8Array;

/** A tree position with its 32-byte value (spec 6). */
export interface AzksElement {
  label: NodeLabel;
  value: Uint8Array;
}

/** One level of a membership path: the sibling hanging next to the path (spec 10.1). */
export interface SiblingProof {
  /** The parent's label; at the outermost level (the root's) no verifier reads it (spec 11.1). */
  label: NodeLabel;
  /** Exactly one element: the sibling's label and value. */
  siblings: [AzksElement];
  /** The side on which the *path* continues below `label`. */
  direction: Direction;
}

/** A path from a node up to the root, root level first (spec 10.1). */
export interface MembershipProof {
  label: NodeLabel;
  hashVal: Digest;
  siblingProofs: SiblingProof[];
}

/** Proof that `label` is not in the tree (spec 10.2). */
export interface NonMembershipProof {
  label: NodeLabel;
  longestPrefix: NodeLabel;
  /** Left child, then right child, of the longest-prefix node. */
  longestPrefixChildren: [AzksElement, AzksElement];
  longestPrefixMembershipProof: MembershipProof;
}

/** Proof of a label's current value (spec 10.3). */
export interface LookupProof {
  epoch: bigint;
  value: AkdValue;
  version: bigint;
  existenceVrfProof: Uint8Array;
  existenceProof: MembershipProof;
  markerVrfProof: Uint8Array;
  markerProof: MembershipProof;
  freshnessVrfProof: Uint8Array;
  freshnessProof: NonMembershipProof;
  commitmentNonce: Uint8Array;
}

/** Proof of one version in a key history (spec 10.4). */
export interface UpdateProof {
  epoch: bigint;
  value: AkdValue;
  version: bigint;
  existenceVrfProof: Uint8Array;
  existenceProof: MembershipProof;
  /** Absent for version 1. */
  previousVersionVrfProof?: Uint8Array | undefined;
  /** Absent for version 1. */
  previousVersionProof?: MembershipProof | undefined;
  commitmentNonce: Uint8Array;
}

/** Proof of a label's versions, newest first, with marker proofs (spec 10.4). */
export interface HistoryProof {
  updateProofs: UpdateProof[];
  pastMarkerVrfProofs: Uint8Array[];
  existenceOfPastMarkerProofs: MembershipProof[];
  futureMarkerVrfProofs: Uint8Array[];
  nonExistenceOfFutureMarkerProofs: NonMembershipProof[];
}

/** Append-only proof of one epoch step (spec 10.5). */
export interface SingleAppendOnlyProof {
  /** New leaves with their raw stored values (the verifier binds them to the end epoch). */
  inserted: AzksElement[];
  /** Roots of the subtrees that did not change, with their values as seen from the parent. */
  unchangedNodes: AzksElement[];
}

/** Append-only proofs of consecutive epoch steps: `proofs[i]` covers `epochs[i] -> epochs[i]+1`. */
export interface AppendOnlyProof {
  proofs: SingleAppendOnlyProof[];
  epochs: bigint[];
}

/** What a verifier returns for one version (spec 11.3). */
export interface VerifyResult {
  epoch: bigint;
  version: bigint;
  value: AkdValue;
}

/** An epoch with its published root hash. */
export interface EpochHash {
  epoch: bigint;
  hash: Digest;
}

/** Which versions a history proof covers (spec 12.5). */
export type HistoryParams = { kind: 'complete' } | { kind: 'mostRecent'; count: number };

/** How a client verifies a history proof (spec 11.4). */
export interface HistoryVerificationParams {
  historyParams: HistoryParams;
  /** Accept tombstoned (empty) values without the commitment check. */
  allowMissingValues?: boolean;
}
