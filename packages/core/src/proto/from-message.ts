/**
 * Wire -> domain: turns parsed protobuf messages (src/proto/gen, all fields optional) into the
 * validated domain types of types.ts, with the checks of spec 15.4. Every error names the
 * message and field and carries the field's path from the top-level message in `field`, e.g.
 * `existence_proof.sibling_proofs[3].direction`.
 *
 * Byte fields are copied, so a decoded proof never aliases the caller's input buffer.
 */

import { isFieldSet } from '@bufbuild/protobuf';
import type { DescField, Message } from '@bufbuild/protobuf';
import { AkdError } from '../errors.js';
import { LEAF_LEN, NodeLabel } from '../node-label.js';
import type { Direction } from '../node-label.js';
import type * as akd from '../types.js';
import * as pb from './gen/types_pb.js';

/** Length of a digest or AzksValue (spec 15.2). */
const DIGEST_LEN = 32;

function at(path: string, name: string): string {
  return path === '' ? name : `${path}.${name}`;
}

function missing(field: DescField, path: string): AkdError {
  const where = at(path, field.name);
  return new AkdError(
    'DECODE_MISSING_FIELD',
    `required field ${field.parent.name}.${field.name} is missing (at ${where})`,
    { field: where },
  );
}

/** Throws DECODE_MISSING_FIELD unless the proto2 field was present on the wire. */
function need(msg: Message, field: DescField, path: string): void {
  if (!isFieldSet(msg, field)) throw missing(field, path);
}

/** A present nested message, or DECODE_MISSING_FIELD. */
function needMessage<T>(value: T | undefined, field: DescField, path: string): T {
  if (value === undefined) throw missing(field, path);
  return value;
}

/** A copy of a 32-byte digest field, or DECODE_INVALID_LENGTH. */
function digest(value: Uint8Array, field: DescField, path: string): Uint8Array {
  if (value.length !== DIGEST_LEN) {
    const where = at(path, field.name);
    throw new AkdError(
      'DECODE_INVALID_LENGTH',
      `${field.parent.name}.${field.name} must be ${DIGEST_LEN} bytes, got ${value.length} (at ${where})`,
      { field: where },
    );
  }
  return value.slice();
}

/**
 * A NodeLabel from its wire form (spec 15.4): `label_val` is at most 32 bytes and is
 * right-padded with zeros, `label_len` at most 256; bits beyond `label_len` are kept unchecked
 * (the WhatsAppV1 empty label needs them).
 *
 * @param path where the label sits, for error messages (`''` for a bare label)
 * @throws AkdError DECODE_MISSING_FIELD, DECODE_INVALID_LENGTH or DECODE_INVALID_VALUE
 * @example
 * ```ts
 * const msg = create(NodeLabelSchema, { labelVal: new Uint8Array([0x80]), labelLen: 1 });
 * nodeLabelFromMessage(msg, 'label').val[0]; // 0x80, followed by 31 zero bytes
 * ```
 */
export function nodeLabelFromMessage(msg: pb.NodeLabel, path = ''): NodeLabel {
  const F = pb.NodeLabelSchema.field;
  need(msg, F.labelVal, path);
  need(msg, F.labelLen, path);
  if (msg.labelVal.length > 32) {
    const where = at(path, 'label_val');
    throw new AkdError(
      'DECODE_INVALID_LENGTH',
      `NodeLabel.label_val is too long: ${msg.labelVal.length} bytes, at most 32 (at ${where})`,
      { field: where },
    );
  }
  if (msg.labelLen > LEAF_LEN) {
    const where = at(path, 'label_len');
    throw new AkdError(
      'DECODE_INVALID_VALUE',
      `NodeLabel.label_len is ${msg.labelLen}, at most ${LEAF_LEN} (at ${where})`,
      { field: where },
    );
  }
  const val = new Uint8Array(32);
  val.set(msg.labelVal);
  return new NodeLabel(val, msg.labelLen);
}

/**
 * An AzksElement from its wire form: a label and a 32-byte value, both required.
 *
 * @param path where the element sits, for error messages
 * @throws AkdError DECODE_MISSING_FIELD, DECODE_INVALID_LENGTH or DECODE_INVALID_VALUE
 * @example
 * ```ts
 * const el = azksElementFromMessage(msg.inserted[0]!, 'inserted[0]');
 * ```
 */
export function azksElementFromMessage(msg: pb.AzksElement, path = ''): akd.AzksElement {
  const F = pb.AzksElementSchema.field;
  const label = needMessage(msg.label, F.label, path);
  need(msg, F.value, path);
  return {
    label: nodeLabelFromMessage(label, at(path, 'label')),
    value: digest(msg.value, F.value, path),
  };
}

function siblingProofFromMessage(msg: pb.SiblingProof, path: string): akd.SiblingProof {
  const F = pb.SiblingProofSchema.field;
  const label = needMessage(msg.label, F.label, path);
  need(msg, F.direction, path);
  // Upstream keeps only the first sibling and ignores any extra ones (spec 15.4).
  const first = needMessage(msg.siblings[0], F.siblings, path);
  // Upstream tests `direction & 0x0F` (spec 15.4), so 16 reads as Left and 17 as Right: the
  // bits above the low four are dropped here and change nothing the verifiers see. Refusing
  // them would refuse proofs upstream's verifiers accept, for no gain: honest servers send 0
  // or 1, and protobuf allows other byte-level variants of the same proof anyway.
  const direction = msg.direction & 0x0f;
  if (direction > 1) {
    const where = at(path, 'direction');
    throw new AkdError(
      'DECODE_INVALID_VALUE',
      `SiblingProof.direction is ${msg.direction}, not a direction (at ${where})`,
      { field: where },
    );
  }
  return {
    label: nodeLabelFromMessage(label, at(path, 'label')),
    siblings: [azksElementFromMessage(first, at(path, 'siblings[0]'))],
    direction: direction as Direction,
  };
}

/** A MembershipProof from its wire form; `sibling_proofs` may be empty. */
export function membershipProofFromMessage(
  msg: pb.MembershipProof,
  path = '',
): akd.MembershipProof {
  const F = pb.MembershipProofSchema.field;
  const label = needMessage(msg.label, F.label, path);
  need(msg, F.hashVal, path);
  return {
    label: nodeLabelFromMessage(label, at(path, 'label')),
    hashVal: digest(msg.hashVal, F.hashVal, path),
    siblingProofs: msg.siblingProofs.map((s, i) =>
      siblingProofFromMessage(s, at(path, `sibling_proofs[${i}]`)),
    ),
  };
}

/** A NonMembershipProof from its wire form; exactly two longest-prefix children. */
export function nonMembershipProofFromMessage(
  msg: pb.NonMembershipProof,
  path = '',
): akd.NonMembershipProof {
  const F = pb.NonMembershipProofSchema.field;
  const label = needMessage(msg.label, F.label, path);
  const longestPrefix = needMessage(msg.longestPrefix, F.longestPrefix, path);
  const membership = needMessage(
    msg.longestPrefixMembershipProof,
    F.longestPrefixMembershipProof,
    path,
  );
  const children = msg.longestPrefixChildren;
  if (children.length !== 2) {
    const where = at(path, 'longest_prefix_children');
    throw new AkdError(
      'DECODE_INVALID_LENGTH',
      `NonMembershipProof.longest_prefix_children has ${children.length} entries, expected 2 (at ${where})`,
      { field: where },
    );
  }
  return {
    label: nodeLabelFromMessage(label, at(path, 'label')),
    longestPrefix: nodeLabelFromMessage(longestPrefix, at(path, 'longest_prefix')),
    longestPrefixChildren: [
      azksElementFromMessage(children[0]!, at(path, 'longest_prefix_children[0]')),
      azksElementFromMessage(children[1]!, at(path, 'longest_prefix_children[1]')),
    ],
    longestPrefixMembershipProof: membershipProofFromMessage(
      membership,
      at(path, 'longest_prefix_membership_proof'),
    ),
  };
}

/** A LookupProof from its wire form; all ten fields are required (spec 15.4). */
export function lookupProofFromMessage(msg: pb.LookupProof, path = ''): akd.LookupProof {
  const F = pb.LookupProofSchema.field;
  need(msg, F.epoch, path);
  need(msg, F.value, path);
  need(msg, F.version, path);
  need(msg, F.existenceVrfProof, path);
  const existence = needMessage(msg.existenceProof, F.existenceProof, path);
  need(msg, F.markerVrfProof, path);
  const marker = needMessage(msg.markerProof, F.markerProof, path);
  need(msg, F.freshnessVrfProof, path);
  const freshness = needMessage(msg.freshnessProof, F.freshnessProof, path);
  need(msg, F.commitmentNonce, path);
  return {
    epoch: msg.epoch,
    value: msg.value.slice(),
    version: msg.version,
    existenceVrfProof: msg.existenceVrfProof.slice(),
    existenceProof: membershipProofFromMessage(existence, at(path, 'existence_proof')),
    markerVrfProof: msg.markerVrfProof.slice(),
    markerProof: membershipProofFromMessage(marker, at(path, 'marker_proof')),
    freshnessVrfProof: msg.freshnessVrfProof.slice(),
    freshnessProof: nonMembershipProofFromMessage(freshness, at(path, 'freshness_proof')),
    commitmentNonce: msg.commitmentNonce.slice(),
  };
}

/** An UpdateProof from its wire form; fields 6 and 7 are optional and independent. */
export function updateProofFromMessage(msg: pb.UpdateProof, path = ''): akd.UpdateProof {
  const F = pb.UpdateProofSchema.field;
  need(msg, F.epoch, path);
  need(msg, F.value, path);
  need(msg, F.version, path);
  need(msg, F.existenceVrfProof, path);
  const existence = needMessage(msg.existenceProof, F.existenceProof, path);
  need(msg, F.commitmentNonce, path);
  const previous = msg.previousVersionProof;
  return {
    epoch: msg.epoch,
    value: msg.value.slice(),
    version: msg.version,
    existenceVrfProof: msg.existenceVrfProof.slice(),
    existenceProof: membershipProofFromMessage(existence, at(path, 'existence_proof')),
    // A missing one is the verifier's business, and only when version > 1 (spec 15.4).
    previousVersionVrfProof: isFieldSet(msg, F.previousVersionVrfProof)
      ? msg.previousVersionVrfProof.slice()
      : undefined,
    previousVersionProof:
      previous === undefined
        ? undefined
        : membershipProofFromMessage(previous, at(path, 'previous_version_proof')),
    commitmentNonce: msg.commitmentNonce.slice(),
  };
}

/** A HistoryProof from its wire form, element by element. */
export function historyProofFromMessage(msg: pb.HistoryProof, path = ''): akd.HistoryProof {
  return {
    updateProofs: msg.updateProofs.map((u, i) =>
      updateProofFromMessage(u, at(path, `update_proofs[${i}]`)),
    ),
    pastMarkerVrfProofs: msg.pastMarkerVrfProofs.map((b) => b.slice()),
    existenceOfPastMarkerProofs: msg.existenceOfPastMarkerProofs.map((m, i) =>
      membershipProofFromMessage(m, at(path, `existence_of_past_marker_proofs[${i}]`)),
    ),
    futureMarkerVrfProofs: msg.futureMarkerVrfProofs.map((b) => b.slice()),
    nonExistenceOfFutureMarkerProofs: msg.nonExistenceOfFutureMarkerProofs.map((m, i) =>
      nonMembershipProofFromMessage(m, at(path, `non_existence_of_future_marker_proofs[${i}]`)),
    ),
  };
}

/** A SingleAppendOnlyProof from its wire form, element by element. */
export function singleAppendOnlyProofFromMessage(
  msg: pb.SingleAppendOnlyProof,
  path = '',
): akd.SingleAppendOnlyProof {
  return {
    inserted: msg.inserted.map((e, i) => azksElementFromMessage(e, at(path, `inserted[${i}]`))),
    unchangedNodes: msg.unchangedNodes.map((e, i) =>
      azksElementFromMessage(e, at(path, `unchanged_nodes[${i}]`)),
    ),
  };
}

/** An AppendOnlyProof from its wire form (epochs packed or not). */
export function appendOnlyProofFromMessage(
  msg: pb.AppendOnlyProof,
  path = '',
): akd.AppendOnlyProof {
  return {
    proofs: msg.proofs.map((p, i) => singleAppendOnlyProofFromMessage(p, at(path, `proofs[${i}]`))),
    epochs: msg.epochs.slice(),
  };
}
