/**
 * Direct writers for the proofs a server sends with every answer (spec 15): lookup, history,
 * membership and non-membership proofs, written straight into one buffer. The generic path
 * (to-message.ts, then protobuf-es) builds a message object per label, element and sibling
 * and costs about as much as a quarter of a served lookup; this one computes the size once,
 * allocates once and writes back to front. The bytes are exactly the generic encoder's (spec
 * 15.2): every field present in ascending field order (zero and empty included), `label_val` without
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

/** The bytes of `n` as a protobuf varint (a non-negative integer below 2^53). */
export function varintSize(n: number): number {
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

/** Fields 1-5, which lookup and update proofs share: epoch, value, version, existence. */
function existenceSize(p: akd.LookupProof | akd.UpdateProof, message: string): number {
  assertU64(p.epoch, `${message}.epoch`);
  assertU64(p.version, `${message}.version`);
  return (
    1 +
    u64Size(p.epoch) +
    fieldSize(p.value.length) +
    1 +
    u64Size(p.version) +
    fieldSize(p.existenceVrfProof.length) +
    fieldSize(membershipSize(p.existenceProof))
  );
}

function lookupSize(p: akd.LookupProof): number {
  return (
    existenceSize(p, 'LookupProof') +
    fieldSize(p.markerVrfProof.length) +
    fieldSize(membershipSize(p.markerProof)) +
    fieldSize(p.freshnessVrfProof.length) +
    fieldSize(nonMembershipSize(p.freshnessProof)) +
    fieldSize(p.commitmentNonce.length)
  );
}

function updateSize(p: akd.UpdateProof): number {
  let n = existenceSize(p, 'UpdateProof') + fieldSize(p.commitmentNonce.length);
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

/**
 * Writes back to front into a buffer of the exact size (computed once, beforehand): a nested
 * message's body is written before its key and length, so its length is known by then and no
 * size is computed twice. Fields, and the items of repeated fields, are therefore written in
 * reverse order.
 */
class Writer {
  readonly out: Uint8Array;
  pos: number;

  constructor(size: number) {
    this.out = new Uint8Array(size);
    this.pos = size;
  }

  varint(n: number): void {
    const out = this.out;
    let at = (this.pos -= varintSize(n));
    while (n >= 0x80) {
      out[at++] = (n & 0x7f) | 0x80;
      n = Math.floor(n / 128);
    }
    out[at] = n;
  }

  u64(field: number, v: bigint): void {
    const out = this.out;
    let at = (this.pos -= u64Size(v));
    while (v >= 0x80n) {
      out[at++] = Number(v & 0x7fn) | 0x80;
      v >>= 7n;
    }
    out[at] = Number(v);
    out[--this.pos] = key(field, 0);
  }

  uint(field: number, n: number): void {
    this.varint(n);
    this.out[--this.pos] = key(field, 0);
  }

  bytes(field: number, b: Uint8Array, length = b.length): void {
    this.pos -= length;
    this.out.set(length === b.length ? b : b.subarray(0, length), this.pos);
    this.close(field, length);
  }

  /** The key and length in front of a nested message of `length` bytes just written. */
  close(field: number, length: number): void {
    this.varint(length);
    this.out[--this.pos] = key(field, LEN);
  }

  label(field: number, l: NodeLabel): void {
    const end = this.pos;
    this.uint(2, l.len);
    this.bytes(1, l.val, trimmed(l));
    this.close(field, end - this.pos);
  }

  element(field: number, e: akd.AzksElement): void {
    const end = this.pos;
    this.bytes(2, e.value);
    this.label(1, e.label);
    this.close(field, end - this.pos);
  }

  membership(field: number, m: akd.MembershipProof): void {
    const end = this.pos;
    this.membershipBody(m);
    this.close(field, end - this.pos);
  }

  membershipBody(m: akd.MembershipProof): void {
    const siblings = m.siblingProofs;
    for (let i = siblings.length - 1; i >= 0; i--) {
      const s = siblings[i]!;
      const end = this.pos;
      this.uint(3, s.direction);
      for (let j = s.siblings.length - 1; j >= 0; j--) this.element(2, s.siblings[j]!);
      this.label(1, s.label);
      this.close(3, end - this.pos);
    }
    this.bytes(2, m.hashVal);
    this.label(1, m.label);
  }

  nonMembership(field: number, p: akd.NonMembershipProof): void {
    const end = this.pos;
    this.nonMembershipBody(p);
    this.close(field, end - this.pos);
  }

  nonMembershipBody(p: akd.NonMembershipProof): void {
    this.membership(4, p.longestPrefixMembershipProof);
    const children = p.longestPrefixChildren;
    for (let i = children.length - 1; i >= 0; i--) this.element(3, children[i]!);
    this.label(2, p.longestPrefix);
    this.label(1, p.label);
  }

  update(field: number, p: akd.UpdateProof): void {
    const end = this.pos;
    this.bytes(8, p.commitmentNonce);
    if (p.previousVersionProof !== undefined) this.membership(7, p.previousVersionProof);
    if (p.previousVersionVrfProof !== undefined) this.bytes(6, p.previousVersionVrfProof);
    this.membership(5, p.existenceProof);
    this.bytes(4, p.existenceVrfProof);
    this.u64(3, p.version);
    this.bytes(2, p.value);
    this.u64(1, p.epoch);
    this.close(field, end - this.pos);
  }

  done(): Uint8Array {
    /* c8 ignore next 3 -- the size and the writes follow the same fields */
    if (this.pos !== 0) throw new Error(`proof writer: ${this.pos} bytes left unwritten`);
    return this.out;
  }
}

/** Writes a list's items last first (the writer goes back to front). */
function reversed<T>(list: readonly T[], write: (item: T) => void): void {
  for (let i = list.length - 1; i >= 0; i--) write(list[i]!);
}

/** A `LookupProof`'s bytes (spec 10.3, 15.2). @throws RangeError as the generic encoder */
export function writeLookupProof(p: akd.LookupProof): Uint8Array {
  const w = new Writer(lookupSize(p));
  w.bytes(10, p.commitmentNonce);
  w.nonMembership(9, p.freshnessProof);
  w.bytes(8, p.freshnessVrfProof);
  w.membership(7, p.markerProof);
  w.bytes(6, p.markerVrfProof);
  w.membership(5, p.existenceProof);
  w.bytes(4, p.existenceVrfProof);
  w.u64(3, p.version);
  w.bytes(2, p.value);
  w.u64(1, p.epoch);
  return w.done();
}

/** A `HistoryProof`'s bytes (spec 10.4, 15.2). @throws RangeError as the generic encoder */
export function writeHistoryProof(p: akd.HistoryProof): Uint8Array {
  const w = new Writer(historySize(p));
  reversed(p.nonExistenceOfFutureMarkerProofs, (q) => w.nonMembership(5, q));
  reversed(p.futureMarkerVrfProofs, (b) => w.bytes(4, b));
  reversed(p.existenceOfPastMarkerProofs, (m) => w.membership(3, m));
  reversed(p.pastMarkerVrfProofs, (b) => w.bytes(2, b));
  reversed(p.updateProofs, (u) => w.update(1, u));
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
