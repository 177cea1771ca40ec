/**
 * Domain -> wire: builds the protobuf messages (src/proto/gen) whose encoding is byte-identical
 * to upstream's (spec 15.2). protobuf-es writes a proto2 field whenever it was set, zero or
 * empty included, in ascending field order, with `epochs` unpacked: exactly what rust-protobuf
 * emits. So every field the Rust struct populates is set here, and only UpdateProof fields 6/7
 * are left out when absent.
 *
 * Caller mistakes that would produce bytes upstream cannot decode (a digest that is not 32
 * bytes, an epoch outside u64) throw RangeError / TypeError naming the field.
 */

import { create } from '@bufbuild/protobuf';
import { assertU64 } from '../bytes.js';
import type { NodeLabel } from '../node-label.js';
import type * as akd from '../types.js';
import * as pb from './gen/types_pb.js';

function assertDigest(value: Uint8Array, name: string): void {
  if (!(value instanceof Uint8Array) || value.length !== 32) {
    throw new RangeError(`${name} must be 32 bytes`);
  }
}

/**
 * The wire form of a NodeLabel: `label_val` is the 32 bytes without their trailing zero bytes
 * (spec 15.2 "minimal encoding"), so the root label encodes as `0a 00 10 00`.
 *
 * @example
 * ```ts
 * toBinary(NodeLabelSchema, nodeLabelToMessage(NodeLabel.root())); // 0a 00 10 00
 * ```
 */
export function nodeLabelToMessage(label: NodeLabel): pb.NodeLabel {
  const val = label.val;
  let n = val.length;
  while (n > 0 && val[n - 1] === 0) n--;
  return create(pb.NodeLabelSchema, { labelVal: val.subarray(0, n), labelLen: label.len });
}

/**
 * The wire form of an AzksElement.
 * @throws RangeError when `value` is not 32 bytes
 * @example
 * ```ts
 * azksElementToMessage({ label: NodeLabel.root(), value: new Uint8Array(32) });
 * ```
 */
export function azksElementToMessage(el: akd.AzksElement): pb.AzksElement {
  assertDigest(el.value, 'AzksElement.value');
  return create(pb.AzksElementSchema, { label: nodeLabelToMessage(el.label), value: el.value });
}

function siblingProofToMessage(p: akd.SiblingProof): pb.SiblingProof {
  return create(pb.SiblingProofSchema, {
    label: nodeLabelToMessage(p.label),
    siblings: p.siblings.map(azksElementToMessage),
    direction: p.direction,
  });
}

/** The wire form of a MembershipProof. @throws RangeError when `hashVal` is not 32 bytes */
export function membershipProofToMessage(p: akd.MembershipProof): pb.MembershipProof {
  assertDigest(p.hashVal, 'MembershipProof.hash_val');
  return create(pb.MembershipProofSchema, {
    label: nodeLabelToMessage(p.label),
    hashVal: p.hashVal,
    siblingProofs: p.siblingProofs.map(siblingProofToMessage),
  });
}

/** The wire form of a NonMembershipProof. */
export function nonMembershipProofToMessage(p: akd.NonMembershipProof): pb.NonMembershipProof {
  return create(pb.NonMembershipProofSchema, {
    label: nodeLabelToMessage(p.label),
    longestPrefix: nodeLabelToMessage(p.longestPrefix),
    longestPrefixChildren: p.longestPrefixChildren.map(azksElementToMessage),
    longestPrefixMembershipProof: membershipProofToMessage(p.longestPrefixMembershipProof),
  });
}

/** The wire form of a LookupProof. @throws RangeError when epoch or version is not a u64 */
export function lookupProofToMessage(p: akd.LookupProof): pb.LookupProof {
  assertU64(p.epoch, 'LookupProof.epoch');
  assertU64(p.version, 'LookupProof.version');
  return create(pb.LookupProofSchema, {
    epoch: p.epoch,
    value: p.value,
    version: p.version,
    existenceVrfProof: p.existenceVrfProof,
    existenceProof: membershipProofToMessage(p.existenceProof),
    markerVrfProof: p.markerVrfProof,
    markerProof: membershipProofToMessage(p.markerProof),
    freshnessVrfProof: p.freshnessVrfProof,
    freshnessProof: nonMembershipProofToMessage(p.freshnessProof),
    commitmentNonce: p.commitmentNonce,
  });
}

/** The wire form of an UpdateProof; fields 6 and 7 are written only when present. */
export function updateProofToMessage(p: akd.UpdateProof): pb.UpdateProof {
  assertU64(p.epoch, 'UpdateProof.epoch');
  assertU64(p.version, 'UpdateProof.version');
  const msg = create(pb.UpdateProofSchema, {
    epoch: p.epoch,
    value: p.value,
    version: p.version,
    existenceVrfProof: p.existenceVrfProof,
    existenceProof: membershipProofToMessage(p.existenceProof),
    commitmentNonce: p.commitmentNonce,
  });
  // Assigning a proto2 field marks it present; leaving it alone keeps it off the wire.
  if (p.previousVersionVrfProof !== undefined) {
    msg.previousVersionVrfProof = p.previousVersionVrfProof;
  }
  if (p.previousVersionProof !== undefined) {
    msg.previousVersionProof = membershipProofToMessage(p.previousVersionProof);
  }
  return msg;
}

/** The wire form of a HistoryProof. */
export function historyProofToMessage(p: akd.HistoryProof): pb.HistoryProof {
  return create(pb.HistoryProofSchema, {
    updateProofs: p.updateProofs.map(updateProofToMessage),
    pastMarkerVrfProofs: p.pastMarkerVrfProofs,
    existenceOfPastMarkerProofs: p.existenceOfPastMarkerProofs.map(membershipProofToMessage),
    futureMarkerVrfProofs: p.futureMarkerVrfProofs,
    nonExistenceOfFutureMarkerProofs: p.nonExistenceOfFutureMarkerProofs.map(
      nonMembershipProofToMessage,
    ),
  });
}

/** The wire form of a SingleAppendOnlyProof. */
export function singleAppendOnlyProofToMessage(
  p: akd.SingleAppendOnlyProof,
): pb.SingleAppendOnlyProof {
  return create(pb.SingleAppendOnlyProofSchema, {
    inserted: p.inserted.map(azksElementToMessage),
    unchangedNodes: p.unchangedNodes.map(azksElementToMessage),
  });
}

/** The wire form of an AppendOnlyProof. @throws RangeError when an epoch is not a u64 */
export function appendOnlyProofToMessage(p: akd.AppendOnlyProof): pb.AppendOnlyProof {
  p.epochs.forEach((e, i) => assertU64(e, `AppendOnlyProof.epochs[${i}]`));
  return create(pb.AppendOnlyProofSchema, {
    proofs: p.proofs.map(singleAppendOnlyProofToMessage),
    epochs: p.epochs,
  });
}
