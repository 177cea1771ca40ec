/**
 * Direct writers for the proofs a server sends with every answer (spec 15): lookup, history,
 * membership and non-membership proofs, written straight into one buffer. The generic path
 * (to-message.ts, then protobuf-es) builds a message object per label, element and sibling
 * and costs about as much as a quarter of a served lookup; this one computes each message's
 * size, allocates once and writes. The bytes are exactly the generic encoder's (spec 15.2):
 * every field present in ascending field order (zero and empty included), `label_val` without
 * its trailing zero bytes, repeated fields unpacked, UpdateProof fields 6 and 7 only when set.
 * The same caller mistakes are refused with the same errors (a digest that is not 32 bytes,
 * an epoch or version outside u64).
 */

import { assertU64 } from '../bytes.js';
import type { NodeLabel } from '../node-label.js';
import type * as akd from '../types.js';

/** A field's key: (field number << 3) | wire type (0 varint, 2 length-delimited). */
const LEN = 2;
const key = (field: number, wire: number) => (field << 3) | wire;

function varintSize(n: number): number {
  let size = 1;
  while (n >= 0x80) {
    n = Math.floor(n / 128);
    size++;
  }
  return size;
}

function u64Size(v: bigint): number {
  let size = 1;
  while (v >= 0x80n) {
    v >>= 7n;
    size++;
  }
  return size;
}

/** A length-delimited field of `n` bytes: its key, its length and its body. */
const fieldSize = (n: number) => 1 + varintSize(n) + n;

function digest(value: Uint8Array, name: string): void {
  if (!(value instanceof Uint8Array) || value.length !== 32) {
    throw new RangeError(`${name} must be 32 bytes`);
  }
}

/** `label_val`'s length on the wire: the 32 bytes without their trailing zeros. */
function trimmed(label: NodeLabel): number {
  const val = label.val;
  let n = val.length;
  while (n > 0 && val[n - 1] === 0) n--;
  return n;
}

// Sizes of message bodies (without their own key and length).

function labelSize(l: NodeLabel): number {
  return fieldSize(trimmed(l)) + 1 + varintSize(l.len);
}

function elementSize(e: akd.AzksElement): number {
  digest(e.value, 'AzksElement.value');
  return fieldSize(labelSize(e.label)) + fieldSize(32);
}

function siblingSize(s: akd.SiblingProof): number {
  let n = fieldSize(labelSize(s.label)) + 1 + varintSize(s.direction);
  for (const e of s.siblings) n += fieldSize(elementSize(e));
  return n;
}

function membershipSize(m: akd.MembershipProof): number {
  digest(m.hashVal, 'MembershipProof.hash_val');
  let n = fieldSize(labelSize(m.label)) + fieldSize(32);
  for (const s of m.siblingProofs) n += fieldSize(siblingSize(s));
  return n;
}

function nonMembershipSize(p: akd.NonMembershipProof): number {
  let n = fieldSize(labelSize(p.label)) + fieldSize(labelSize(p.longestPrefix));
  for (const e of p.longestPrefixChildren) n += fieldSize(elementSize(e));
  return n + fieldSize(membershipSize(p.longestPrefixMembershipProof));
}

function lookupSize(p: akd.LookupProof): number {
  assertU64(p.epoch, 'LookupProof.epoch');
  assertU64(p.version, 'LookupProof.version');
  return (
    1 +
    u64Size(p.epoch) +
    fieldSize(p.value.length) +
    1 +
    u64Size(p.version) +
    fieldSize(p.existenceVrfProof.length) +
    fieldSize(membershipSize(p.existenceProof)) +
    fieldSize(p.markerVrfProof.length) +
    fieldSize(membershipSize(p.markerProof)) +
    fieldSize(p.freshnessVrfProof.length) +
    fieldSize(nonMembershipSize(p.freshnessProof)) +
    fieldSize(p.commitmentNonce.length)
  );
}

function updateSize(p: akd.UpdateProof): number {
  assertU64(p.epoch, 'UpdateProof.epoch');
  assertU64(p.version, 'UpdateProof.version');
  let n =
    1 +
    u64Size(p.epoch) +
    fieldSize(p.value.length) +
    1 +
    u64Size(p.version) +
    fieldSize(p.existenceVrfProof.length) +
    fieldSize(membershipSize(p.existenceProof)) +
    fieldSize(p.commitmentNonce.length);
  if (p.previousVersionVrfProof !== undefined) n += fieldSize(p.previousVersionVrfProof.length);
  if (p.previousVersionProof !== undefined) {
    n += fieldSize(membershipSize(p.previousVersionProof));
  }
  return n;
}

function historySize(p: akd.HistoryProof): number {
  let n = 0;
  for (const u of p.updateProofs) n += fieldSize(updateSize(u));
  for (const b of p.pastMarkerVrfProofs) n += fieldSize(b.length);
  for (const m of p.existenceOfPastMarkerProofs) n += fieldSize(membershipSize(m));
  for (const b of p.futureMarkerVrfProofs) n += fieldSize(b.length);
  for (const q of p.nonExistenceOfFutureMarkerProofs) n += fieldSize(nonMembershipSize(q));
  return n;
}

/** Writes into a buffer sized beforehand; nested messages are sized again as they are written. */
class Writer {
  readonly out: Uint8Array;
  pos = 0;

  constructor(size: number) {
    this.out = new Uint8Array(size);
  }

  varint(n: number): void {
    const out = this.out;
    while (n >= 0x80) {
      out[this.pos++] = (n & 0x7f) | 0x80;
      n = Math.floor(n / 128);
    }
    out[this.pos++] = n;
  }

  u64(field: number, v: bigint): void {
    this.out[this.pos++] = key(field, 0);
    while (v >= 0x80n) {
      this.out[this.pos++] = Number(v & 0x7fn) | 0x80;
      v >>= 7n;
    }
    this.out[this.pos++] = Number(v);
  }

  uint(field: number, n: number): void {
    this.out[this.pos++] = key(field, 0);
    this.varint(n);
  }

  bytes(field: number, b: Uint8Array, length = b.length): void {
    this.out[this.pos++] = key(field, LEN);
    this.varint(length);
    this.out.set(length === b.length ? b : b.subarray(0, length), this.pos);
    this.pos += length;
  }

  /** A nested message's key and length; its body follows. */
  open(field: number, size: number): void {
    this.out[this.pos++] = key(field, LEN);
    this.varint(size);
  }

  label(field: number, l: NodeLabel): void {
    this.open(field, labelSize(l));
    this.bytes(1, l.val, trimmed(l));
    this.uint(2, l.len);
  }

  element(field: number, e: akd.AzksElement): void {
    this.open(field, elementSize(e));
    this.label(1, e.label);
    this.bytes(2, e.value);
  }

  membership(field: number, m: akd.MembershipProof): void {
    this.open(field, membershipSize(m));
    this.membershipBody(m);
  }

  membershipBody(m: akd.MembershipProof): void {
    this.label(1, m.label);
    this.bytes(2, m.hashVal);
    for (const s of m.siblingProofs) {
      this.open(3, siblingSize(s));
      this.label(1, s.label);
      for (const e of s.siblings) this.element(2, e);
      this.uint(3, s.direction);
    }
  }

  nonMembership(field: number, p: akd.NonMembershipProof): void {
    this.open(field, nonMembershipSize(p));
    this.nonMembershipBody(p);
  }

  nonMembershipBody(p: akd.NonMembershipProof): void {
    this.label(1, p.label);
    this.label(2, p.longestPrefix);
    for (const e of p.longestPrefixChildren) this.element(3, e);
    this.membership(4, p.longestPrefixMembershipProof);
  }

  update(field: number, p: akd.UpdateProof): void {
    this.open(field, updateSize(p));
    this.u64(1, p.epoch);
    this.bytes(2, p.value);
    this.u64(3, p.version);
    this.bytes(4, p.existenceVrfProof);
    this.membership(5, p.existenceProof);
    if (p.previousVersionVrfProof !== undefined) this.bytes(6, p.previousVersionVrfProof);
    if (p.previousVersionProof !== undefined) this.membership(7, p.previousVersionProof);
    this.bytes(8, p.commitmentNonce);
  }

  done(): Uint8Array {
    /* c8 ignore next 3 -- the sizes and the writes follow the same fields */
    if (this.pos !== this.out.length) {
      throw new Error(`proof writer: wrote ${this.pos} of ${this.out.length} bytes`);
    }
    return this.out;
  }
}

/** A `LookupProof`'s bytes (spec 10.3, 15.2). @throws RangeError as the generic encoder */
export function writeLookupProof(p: akd.LookupProof): Uint8Array {
  const w = new Writer(lookupSize(p));
  w.u64(1, p.epoch);
  w.bytes(2, p.value);
  w.u64(3, p.version);
  w.bytes(4, p.existenceVrfProof);
  w.membership(5, p.existenceProof);
  w.bytes(6, p.markerVrfProof);
  w.membership(7, p.markerProof);
  w.bytes(8, p.freshnessVrfProof);
  w.nonMembership(9, p.freshnessProof);
  w.bytes(10, p.commitmentNonce);
  return w.done();
}

/** A `HistoryProof`'s bytes (spec 10.4, 15.2). @throws RangeError as the generic encoder */
export function writeHistoryProof(p: akd.HistoryProof): Uint8Array {
  const w = new Writer(historySize(p));
  for (const u of p.updateProofs) w.update(1, u);
  for (const b of p.pastMarkerVrfProofs) w.bytes(2, b);
  for (const m of p.existenceOfPastMarkerProofs) w.membership(3, m);
  for (const b of p.futureMarkerVrfProofs) w.bytes(4, b);
  for (const q of p.nonExistenceOfFutureMarkerProofs) w.nonMembership(5, q);
  return w.done();
}

/** A `MembershipProof`'s bytes (spec 15.2). @throws RangeError as the generic encoder */
export function writeMembershipProof(m: akd.MembershipProof): Uint8Array {
  const w = new Writer(membershipSize(m));
  w.membershipBody(m);
  return w.done();
}

/** A `NonMembershipProof`'s bytes (spec 15.2). @throws RangeError as the generic encoder */
export function writeNonMembershipProof(p: akd.NonMembershipProof): Uint8Array {
  const w = new Writer(nonMembershipSize(p));
  w.nonMembershipBody(p);
  return w.done();
}
