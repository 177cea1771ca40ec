/**
 * A direct reader for lookup proofs (spec 10.3) in the form every encoder writes, upstream's
 * and ours: each message's fields in field-number order, every field present once (a
 * repeated one in one run), no unknown fields, lengths within their message, and values the
 * domain types accept (32-byte digests, labels of at most 32 bytes and 256 bits, directions
 * 0 and 1, one sibling per level, two longest-prefix children). It reads the bytes straight
 * into the domain types, which spares a page's first lookup the protobuf-es reflection that
 * otherwise runs before the engine has compiled it (most of the cost of a first decode).
 *
 * Anything else it declines, and codec.ts decodes the bytes the general way (wire check,
 * protobuf-es, from-message.ts), which accepts them or fails with the error of spec 15.4. So
 * this reader changes neither what decodes nor how a failure reads; a test checks that
 * whenever it accepts bytes, the general path returns the same proof.
 */

import { NodeLabel } from '../node-label.js';
import type { Direction } from '../node-label.js';
import type * as akd from '../types.js';

const VARINT = 0;
const LEN = 2;

/** Thrown inside the reader when the bytes are not in the form above. */
const DECLINE = Symbol('decline');

class Reader {
  pos = 0;
  constructor(readonly buf: Uint8Array) {}

  /** A minimally encoded varint of at most 7 bytes (below 2^49, exact as a number) ending
   * before `end`. */
  varint(end: number): number {
    let value = 0;
    let scale = 1;
    for (let i = 0; i < 7 && this.pos < end; i++) {
      const b = this.buf[this.pos++]!;
      value += (b & 0x7f) * scale;
      if (b < 0x80) {
        if (b === 0 && i > 0) break;
        return value;
      }
      scale *= 128;
    }
    throw DECLINE;
  }

  /** Whether the next tag, if any before `end`, is field `fieldNo` (consumed if so). */
  next(fieldNo: number, wireType: number, end: number): boolean {
    if (this.pos >= end || this.buf[this.pos] !== ((fieldNo << 3) | wireType)) return false;
    this.pos++;
    return true;
  }

  /** The next tag must be `fieldNo` (field numbers here are below 16: one tag byte). */
  expect(fieldNo: number, wireType: number, end: number): void {
    if (!this.next(fieldNo, wireType, end)) throw DECLINE;
  }

  /** A length-delimited field's end, after its length prefix. */
  delimited(end: number): number {
    const len = this.varint(end);
    if (len > end - this.pos) throw DECLINE;
    return this.pos + len;
  }

  bytes(fieldNo: number, end: number): Uint8Array {
    this.expect(fieldNo, LEN, end);
    const stop = this.delimited(end);
    const out = this.buf.slice(this.pos, stop);
    this.pos = stop;
    return out;
  }

  digest(fieldNo: number, end: number): Uint8Array {
    const out = this.bytes(fieldNo, end);
    if (out.length !== 32) throw DECLINE;
    return out;
  }

  uint(fieldNo: number, end: number): number {
    this.expect(fieldNo, VARINT, end);
    return this.varint(end);
  }

  /** A nested message read by `read`, which must consume it exactly. */
  message<T>(fieldNo: number, end: number, read: (r: Reader, end: number) => T): T {
    this.expect(fieldNo, LEN, end);
    const stop = this.delimited(end);
    const value = read(this, stop);
    if (this.pos !== stop) throw DECLINE;
    return value;
  }
}

function nodeLabel(r: Reader, end: number): NodeLabel {
  const bytes = r.bytes(1, end);
  const len = r.uint(2, end);
  if (bytes.length > 32 || len > 256) throw DECLINE;
  const val = new Uint8Array(32);
  val.set(bytes);
  return new NodeLabel(val, len);
}

function azksElement(r: Reader, end: number): akd.AzksElement {
  return { label: r.message(1, end, nodeLabel), value: r.digest(2, end) };
}

function siblingProof(r: Reader, end: number): akd.SiblingProof {
  const label = r.message(1, end, nodeLabel);
  const sibling = r.message(2, end, azksElement);
  const direction = r.uint(3, end);
  if (direction > 1) throw DECLINE;
  return { label, siblings: [sibling], direction: direction as Direction };
}

function membershipProof(r: Reader, end: number): akd.MembershipProof {
  const label = r.message(1, end, nodeLabel);
  const hashVal = r.digest(2, end);
  const siblingProofs: akd.SiblingProof[] = [];
  while (r.pos < end) siblingProofs.push(r.message(3, end, siblingProof));
  return { label, hashVal, siblingProofs };
}

function nonMembershipProof(r: Reader, end: number): akd.NonMembershipProof {
  const label = r.message(1, end, nodeLabel);
  const longestPrefix = r.message(2, end, nodeLabel);
  const left = r.message(3, end, azksElement);
  const right = r.message(3, end, azksElement);
  return {
    label,
    longestPrefix,
    longestPrefixChildren: [left, right],
    longestPrefixMembershipProof: r.message(4, end, membershipProof),
  };
}

/**
 * The lookup proof `bytes` encode, when they are in the form described above; otherwise
 * undefined (decode them the general way).
 */
export function readCanonicalLookupProof(bytes: Uint8Array): akd.LookupProof | undefined {
  const r = new Reader(bytes);
  const end = bytes.length;
  try {
    const proof: akd.LookupProof = {
      epoch: BigInt(r.uint(1, end)),
      value: r.bytes(2, end),
      version: BigInt(r.uint(3, end)),
      existenceVrfProof: r.bytes(4, end),
      existenceProof: r.message(5, end, membershipProof),
      markerVrfProof: r.bytes(6, end),
      markerProof: r.message(7, end, membershipProof),
      freshnessVrfProof: r.bytes(8, end),
      freshnessProof: r.message(9, end, nonMembershipProof),
      commitmentNonce: r.bytes(10, end),
    };
    return r.pos === end ? proof : undefined;
  } catch (e) {
    if (e === DECLINE) return undefined;
    /* c8 ignore next 2 */
    throw e;
  }
}
