/**
 * Public codec of the wire format (spec 15): proofs to bytes and back. Encodings are bare
 * messages (no envelope, no length prefix), byte-identical to upstream's (spec 15.2).
 * Decoding is strict (spec 15.4): every failure is an AkdError with a DECODE_* code and the
 * path of the offending field; unknown fields are skipped and a packed `epochs` is accepted.
 *
 * Decoding runs in three steps: a structural check of the bytes (wire-check.ts), the
 * protobuf-es parser, and the conversion to domain types with its presence, length and value
 * checks (from-message.ts). Lookup proofs in the encoders' form are read directly instead
 * (lookup-reader.ts), with the same result.
 */

import { fromBinary, toBinary } from '@bufbuild/protobuf';
import type { DescMessage, MessageShape } from '@bufbuild/protobuf';
import { AkdError } from '../errors.js';
import type * as akd from '../types.js';
import {
  appendOnlyProofFromMessage,
  historyProofFromMessage,
  lookupProofFromMessage,
  membershipProofFromMessage,
  nonMembershipProofFromMessage,
  singleAppendOnlyProofFromMessage,
} from './from-message.js';
import * as pb from './gen/types_pb.js';
import { appendOnlyProofToMessage } from './to-message.js';
import {
  writeHistoryProof,
  writeLookupProof,
  writeMembershipProof,
  writeNonMembershipProof,
} from './proof-writer.js';
import { checkWireStructure } from './wire-check.js';
import { readCanonicalLookupProof } from './lookup-reader.js';
import {
  writeSingleAppendOnlyProof,
  writeSingleAppendOnlyProofArrays,
  writeSingleAppendOnlyProofInPlace,
  type ElementsInPlace,
} from './append-only-step.js';
import type { ElementArrays } from '../verify/element-arrays.js';

function parse<Desc extends DescMessage>(schema: Desc, bytes: Uint8Array): MessageShape<Desc> {
  if (!(bytes instanceof Uint8Array)) throw new TypeError('bytes must be a Uint8Array');
  checkWireStructure(schema, bytes);
  // The catch is unreachable once checkWireStructure passed (hence the coverage exclusion); it
  // is kept so that a parser surprise still surfaces as an AkdError, never as a bare Error.
  try {
    // Unknown fields were checked and are dropped: nothing reads them.
    return fromBinary(schema, bytes, { readUnknownFields: false });
    /* c8 ignore start */
  } catch (e) {
    throw new AkdError('DECODE_MALFORMED', `${schema.name}: ${String(e)}`, { cause: e });
  }
  /* c8 ignore stop */
}

/**
 * Encodes a lookup proof (spec 10.3) as upstream does.
 * @example
 * ```ts
 * const bytes = encodeLookupProof(proof);
 * decodeLookupProof(bytes); // an equal proof
 * ```
 */
export function encodeLookupProof(proof: akd.LookupProof): Uint8Array {
  // written directly (proof-writer.ts): the generic encoder's bytes, without its objects
  return writeLookupProof(proof);
}

/**
 * Decodes a lookup proof; all ten fields are required.
 * @throws AkdError DECODE_MALFORMED, DECODE_MISSING_FIELD, DECODE_INVALID_LENGTH or
 *   DECODE_INVALID_VALUE, with `field` set to the offending field's path
 * @example
 * ```ts
 * const proof = decodeLookupProof(fromHex(vectorHex));
 * proof.version; // 3n
 * ```
 */
export function decodeLookupProof(bytes: Uint8Array): akd.LookupProof {
  // the direct reader takes the encoders' form; whatever it declines is decoded (or refused)
  // the general way, so the result and the errors are those of the general path
  const direct = bytes instanceof Uint8Array ? readCanonicalLookupProof(bytes) : undefined;
  return direct ?? lookupProofFromMessage(parse(pb.LookupProofSchema, bytes));
}

/**
 * Encodes a key-history proof (spec 10.4); UpdateProof fields 6 and 7 only when present.
 * @example
 * ```ts
 * const bytes = encodeHistoryProof(history);
 * ```
 */
export function encodeHistoryProof(proof: akd.HistoryProof): Uint8Array {
  return writeHistoryProof(proof);
}

/**
 * Decodes a key-history proof.
 * @throws AkdError with a DECODE_* code and the field path
 * @example
 * ```ts
 * decodeHistoryProof(bytes).updateProofs.map((u) => u.version); // [3n, 2n, 1n]
 * ```
 */
export function decodeHistoryProof(bytes: Uint8Array): akd.HistoryProof {
  return historyProofFromMessage(parse(pb.HistoryProofSchema, bytes));
}

/**
 * Encodes an append-only (audit) proof (spec 10.5), `epochs` unpacked.
 * @example
 * ```ts
 * const bytes = encodeAppendOnlyProof({ proofs: [step], epochs: [1n] });
 * ```
 */
export function encodeAppendOnlyProof(proof: akd.AppendOnlyProof): Uint8Array {
  return toBinary(pb.AppendOnlyProofSchema, appendOnlyProofToMessage(proof));
}

/**
 * Decodes an append-only proof; `epochs` may be packed or not.
 * @throws AkdError with a DECODE_* code and the field path
 * @example
 * ```ts
 * decodeAppendOnlyProof(bytes).epochs; // [1n]
 * ```
 */
export function decodeAppendOnlyProof(bytes: Uint8Array): akd.AppendOnlyProof {
  return appendOnlyProofFromMessage(parse(pb.AppendOnlyProofSchema, bytes));
}

/**
 * Encodes one epoch step of an audit proof: the payload of an audit blob (spec 16).
 * @example
 * ```ts
 * const data = encodeSingleAppendOnlyProof({ inserted, unchangedNodes });
 * ```
 */
export function encodeSingleAppendOnlyProof(proof: akd.SingleAppendOnlyProof): Uint8Array {
  // the audit blob's message, written directly (append-only-step.ts; the same bytes)
  return writeSingleAppendOnlyProof(proof);
}

/**
 * Encodes one epoch step from flat arrays of its inserted leaves and unchanged subtree roots,
 * each in the order listed (spec 10.5): the bytes of `encodeSingleAppendOnlyProof` for the
 * same elements, with no object per element (a directory's publish writes its blob so).
 * @example
 * ```ts
 * const data = encodeSingleAppendOnlyProofArrays(packAzksElements(inserted), packAzksElements(unchanged));
 * ```
 */
export function encodeSingleAppendOnlyProofArrays(
  inserted: ElementArrays,
  unchanged: ElementArrays,
): Uint8Array {
  return writeSingleAppendOnlyProofArrays(inserted, unchanged);
}

/**
 * Encodes one epoch step from its elements where they lie (`ElementsInPlace`: each list's
 * labels, lengths and values read at the positions it gives), with no copy per element: the
 * bytes of `encodeSingleAppendOnlyProofArrays` for the same elements.
 * @example
 * ```ts
 * const data = encodeSingleAppendOnlyProofInPlace(
 *   { count: 1, labels, lens, labelAt: Int32Array.of(7), values: hashes, valueAt: Int32Array.of(7) },
 *   { count: 0, labels, lens, labelAt: new Int32Array(0), values: hashes },
 * );
 * ```
 */
export function encodeSingleAppendOnlyProofInPlace(
  inserted: ElementsInPlace,
  unchanged: ElementsInPlace,
): Uint8Array {
  return writeSingleAppendOnlyProofInPlace(inserted, unchanged);
}

/**
 * Decodes one epoch step of an audit proof, e.g. an audit blob's data (spec 16).
 * @throws AkdError with a DECODE_* code and the field path
 * @example
 * ```ts
 * const { inserted, unchangedNodes } = decodeSingleAppendOnlyProof(blob.data);
 * ```
 */
export function decodeSingleAppendOnlyProof(bytes: Uint8Array): akd.SingleAppendOnlyProof {
  return singleAppendOnlyProofFromMessage(parse(pb.SingleAppendOnlyProofSchema, bytes));
}

/**
 * Encodes a membership proof (spec 10.1).
 * @example
 * ```ts
 * const bytes = encodeMembershipProof(lookup.existenceProof);
 * ```
 */
export function encodeMembershipProof(proof: akd.MembershipProof): Uint8Array {
  return writeMembershipProof(proof);
}

/**
 * Decodes a membership proof.
 * @throws AkdError with a DECODE_* code and the field path
 * @example
 * ```ts
 * decodeMembershipProof(bytes).siblingProofs.length;
 * ```
 */
export function decodeMembershipProof(bytes: Uint8Array): akd.MembershipProof {
  return membershipProofFromMessage(parse(pb.MembershipProofSchema, bytes));
}

/**
 * Encodes a non-membership proof (spec 10.2).
 * @example
 * ```ts
 * const bytes = encodeNonMembershipProof(lookup.freshnessProof);
 * ```
 */
export function encodeNonMembershipProof(proof: akd.NonMembershipProof): Uint8Array {
  return writeNonMembershipProof(proof);
}

/**
 * Decodes a non-membership proof; exactly two longest-prefix children.
 * @throws AkdError with a DECODE_* code and the field path
 * @example
 * ```ts
 * decodeNonMembershipProof(bytes).longestPrefix.len;
 * ```
 */
export function decodeNonMembershipProof(bytes: Uint8Array): akd.NonMembershipProof {
  return nonMembershipProofFromMessage(parse(pb.NonMembershipProofSchema, bytes));
}
