/**
 * A direct codec for `SingleAppendOnlyProof` (spec 15), the message of an audit blob: a flat
 * list of elements, tens of thousands per blob, which the generic path turns into several
 * objects each. Writing goes straight into one buffer, byte for byte what the generic
 * encoder writes (spec 15.2: fields in order, `label_val` without trailing zeros, every field
 * present). Reading takes exactly that canonical layout straight into flat arrays and gives
 * up (returns undefined) on anything else, so that every other input, malformed or merely
 * unusual (unknown fields, repeated scalars, other field orders), goes through the generic
 * decoder and gets its result or its error.
 */

import { varintSize } from './proof-writer.js';
import type { SingleAppendOnlyProof } from '../types.js';
import { elementArrays, type ElementArrays } from '../verify/element-arrays.js';
import type { PackedStep } from '../verify/append-only-step.js';

/** Field tags: (number << 3) | wire type 2 (length-delimited), or 0 (varint). */
const TAG_1_LEN = 0x0a;
const TAG_2_LEN = 0x12;
const TAG_2_VARINT = 0x10;

/** `label_val`'s encoded length: the label's bytes at `off` without trailing zeros (spec 15.2). */
function trimmedLength(bytes: Uint8Array, off: number): number {
  let n = 32;
  while (n > 0 && bytes[off + n - 1] === 0) n--;
  return n;
}

/** Encoded size of a label message whose `label_val` keeps `n` bytes, of `len` bits. */
function labelSize(n: number, len: number): number {
  return 1 + varintSize(n) + n + 1 + varintSize(len);
}

/** Encoded size of an element message around a label message of `l` bytes. */
function elementSize(l: number): number {
  return 1 + varintSize(l) + l + 2 + 32;
}

/**
 * Where a writer is: one output buffer, written front to back. Elements are written from any
 * bytes at offsets, so the object form and the flat arrays share one writer.
 */
class StepWriter {
  pos = 0;
  constructor(readonly out: Uint8Array) {}

  varint(n: number): void {
    const out = this.out;
    while (n >= 0x80) {
      out[this.pos++] = (n & 0x7f) | 0x80;
      n = Math.floor(n / 128);
    }
    out[this.pos++] = n;
  }

  /** One repeated element under `tag`: label (label_val, label_len) then the 32-byte value. */
  element(
    tag: number,
    labels: Uint8Array,
    at: number,
    len: number,
    values: Uint8Array,
    vAt: number,
  ) {
    const out = this.out;
    const n = trimmedLength(labels, at);
    const l = labelSize(n, len);
    out[this.pos++] = tag;
    this.varint(elementSize(l));
    out[this.pos++] = TAG_1_LEN;
    this.varint(l);
    out[this.pos++] = TAG_1_LEN;
    this.varint(n);
    for (let k = 0; k < n; k++) out[this.pos++] = labels[at + k]!;
    out[this.pos++] = TAG_2_VARINT;
    this.varint(len);
    out[this.pos++] = TAG_2_LEN;
    out[this.pos++] = 32;
    for (let k = 0; k < 32; k++) out[this.pos++] = values[vAt + k]!;
  }
}

/** Bytes one element takes in the message, its tag and length included. */
function fieldSize(labels: Uint8Array, at: number, len: number): number {
  const size = elementSize(labelSize(trimmedLength(labels, at), len));
  return 1 + varintSize(size) + size;
}

/**
 * `SingleAppendOnlyProof` bytes, identical to the generic encoder's.
 * @throws RangeError when a value is not 32 bytes
 */
export function writeSingleAppendOnlyProof(proof: SingleAppendOnlyProof): Uint8Array {
  let total = 0;
  for (const list of [proof.inserted, proof.unchangedNodes]) {
    for (const e of list) {
      if (!(e.value instanceof Uint8Array) || e.value.length !== 32) {
        throw new RangeError('AzksElement.value must be 32 bytes');
      }
      total += fieldSize(e.label.val, 0, e.label.len);
    }
  }
  const w = new StepWriter(new Uint8Array(total));
  for (const e of proof.inserted) w.element(TAG_1_LEN, e.label.val, 0, e.label.len, e.value, 0);
  for (const e of proof.unchangedNodes) {
    w.element(TAG_2_LEN, e.label.val, 0, e.label.len, e.value, 0);
  }
  return w.out;
}

/**
 * One list of a step's elements where they already lie: element `i`'s label is the 32 bytes
 * at `32 * labelAt[i]` of `labels`, `lens[labelAt[i]]` bits long, and its value the 32 bytes
 * at `32 * valueAt[i]` of `values` (`valueAt` omitted: `i`). A directory's insertion writes
 * its audit blob so, straight from the slots of its arena.
 */
export interface ElementsInPlace {
  count: number;
  labels: Uint8Array;
  lens: Uint16Array;
  labelAt: Int32Array;
  values: Uint8Array;
  valueAt?: Int32Array;
}

/**
 * The same bytes from elements where they lie: `inserted` and `unchanged` in the order they
 * are to be listed (spec 10.5), without an object or a copy per element.
 * @throws RangeError for a position outside the arrays
 *
 * @example writeSingleAppendOnlyProofInPlace(leaves, subtreeRoots) // an audit blob's data
 */
export function writeSingleAppendOnlyProofInPlace(
  inserted: ElementsInPlace,
  unchanged: ElementsInPlace,
): Uint8Array {
  let total = 0;
  for (const set of [inserted, unchanged]) {
    const { labels, lens, labelAt, values, valueAt } = set;
    if (labelAt.length < set.count || (valueAt !== undefined && valueAt.length < set.count)) {
      throw new RangeError(`a list of ${set.count} elements needs as many positions`);
    }
    for (let i = 0; i < set.count; i++) {
      const at = labelAt[i]!;
      const v = valueAt === undefined ? i : valueAt[i]!;
      if (at < 0 || at >= lens.length || 32 * at + 32 > labels.length) {
        throw new RangeError(`element ${i}: no label at position ${at}`);
      }
      if (v < 0 || 32 * v + 32 > values.length) {
        throw new RangeError(`element ${i}: no 32-byte value at position ${v}`);
      }
      total += fieldSize(labels, 32 * at, lens[at]!);
    }
  }
  const w = new StepWriter(new Uint8Array(total));
  for (const [tag, set] of [
    [TAG_1_LEN, inserted],
    [TAG_2_LEN, unchanged],
  ] as const) {
    const valueAt = set.valueAt;
    for (let i = 0; i < set.count; i++) {
      const at = set.labelAt[i]!;
      const v = valueAt === undefined ? i : valueAt[i]!;
      w.element(tag, set.labels, 32 * at, set.lens[at]!, set.values, 32 * v);
    }
  }
  return w.out;
}

/**
 * The same bytes from flat arrays (`ElementArrays`, element `i` at index `i`).
 *
 * @example writeSingleAppendOnlyProofArrays(leaves, subtreeRoots) // an audit blob's data
 */
export function writeSingleAppendOnlyProofArrays(
  inserted: ElementArrays,
  unchanged: ElementArrays,
): Uint8Array {
  const inPlace = (set: ElementArrays): ElementsInPlace => ({
    ...set,
    labelAt: Int32Array.from({ length: set.count }, (_, i) => i),
  });
  return writeSingleAppendOnlyProofInPlace(inPlace(inserted), inPlace(unchanged));
}

/** Reads a varint of at most `max` bytes ending by `end`, or -1. */
function readVarint(bytes: Uint8Array, at: number, end: number, max: number): [number, number] {
  let value = 0;
  let scale = 1;
  for (let i = 0; i < max && at < end; i++) {
    const b = bytes[at++]!;
    value += (b & 0x7f) * scale;
    if ((b & 0x80) === 0) return [value, at];
    scale *= 128;
  }
  return [-1, at];
}

/**
 * The elements of a canonically encoded `SingleAppendOnlyProof` as a packed step (unchanged
 * nodes first), or undefined when the bytes are laid out any other way.
 */
export function readSingleAppendOnlyProof(bytes: Uint8Array): PackedStep | undefined {
  // first pass: where each element is, by list
  const inserted: number[] = [];
  const unchanged: number[] = [];
  let pos = 0;
  const end = bytes.length;
  while (pos < end) {
    const tag = bytes[pos++];
    const [len, at] = readVarint(bytes, pos, end, 5);
    if (len < 0 || len > end - at) return undefined;
    if (tag === TAG_1_LEN) inserted.push(at, at + len);
    else if (tag === TAG_2_LEN) unchanged.push(at, at + len);
    else return undefined;
    pos = at + len;
  }
  const u = unchanged.length / 2;
  const set = elementArrays(u + inserted.length / 2);
  const read = (ranges: number[], first: number) => {
    for (let k = 0; k < ranges.length; k += 2) {
      if (!readElement(bytes, ranges[k]!, ranges[k + 1]!, set, first + k / 2)) return false;
    }
    return true;
  };
  return read(unchanged, 0) && read(inserted, u) ? { set, unchanged: u } : undefined;
}

/** One `AzksElement` in [start, end): label (label_val, label_len) then a 32-byte value. */
function readElement(
  bytes: Uint8Array,
  start: number,
  end: number,
  set: ElementArrays,
  i: number,
): boolean {
  let pos = start;
  if (end - start < 2 || bytes[pos++] !== TAG_1_LEN) return false;
  const [labelLen, labelAt] = readVarint(bytes, pos, end, 2);
  if (labelLen < 0 || labelLen > end - labelAt) return false;
  const labelEnd = labelAt + labelLen;
  pos = labelAt;
  if (labelLen < 2 || bytes[pos++] !== TAG_1_LEN) return false;
  const [n, valAt] = readVarint(bytes, pos, labelEnd, 1);
  if (n < 0 || n > 32 || n > labelEnd - valAt) return false;
  for (let k = 0; k < n; k++) set.labels[32 * i + k] = bytes[valAt + k]!;
  pos = valAt + n;
  if (pos >= labelEnd || bytes[pos++] !== TAG_2_VARINT) return false;
  const [bits, after] = readVarint(bytes, pos, labelEnd, 2);
  if (bits < 0 || bits > 256 || after !== labelEnd) return false;
  set.lens[i] = bits;
  pos = labelEnd;
  if (bytes[pos] !== TAG_2_LEN || bytes[pos + 1] !== 32 || pos + 34 !== end) return false;
  set.values.set(bytes.subarray(pos + 2, end), 32 * i);
  return true;
}
