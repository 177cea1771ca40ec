/**
 * Byte helpers shared by every package: hex, concatenation, comparison and the fixed-width
 * integer encodings of spec section 2 (`be32`, `be64`, `i2osp`). Browser-safe.
 */

const HEX = '0123456789abcdef';
const HEX_CODES = Uint8Array.from(HEX, (c) => c.charCodeAt(0));
/** Decodes the hex digits' codes: ASCII, which UTF-8 (every platform's decoder) keeps as is. */
const ASCII = new TextDecoder('utf-8');
/** Inputs up to this many bytes reuse one scratch buffer for their digits. */
const SCRATCH_BYTES = 4096;
let scratch = new Uint8Array(64);

/**
 * Lowercase hex of `bytes`, as one flat string. Built by `+=`, a hex string is a chain of
 * string pieces in V8 (one per byte), which maps keyed by hex keep as they are: a
 * transaction's log of 200,000 value states held 75 MB of such chains. Decoding the digits'
 * codes is also about twice as fast for 32-byte labels.
 */
export function toHex(bytes: Uint8Array): string {
  const n = bytes.length;
  if (n === 0) return '';
  let out = scratch;
  if (2 * n > out.length) {
    out = new Uint8Array(2 * n);
    if (n <= SCRATCH_BYTES) scratch = out;
  }
  for (let i = 0; i < n; i++) {
    const b = bytes[i]!;
    out[2 * i] = HEX_CODES[b >> 4]!;
    out[2 * i + 1] = HEX_CODES[b & 15]!;
  }
  return ASCII.decode(out.subarray(0, 2 * n));
}

function hexNibble(code: number): number {
  if (code >= 48 && code <= 57) return code - 48;
  if (code >= 97 && code <= 102) return code - 87;
  if (code >= 65 && code <= 70) return code - 55;
  return -1;
}

/**
 * Decodes hex, either case (upstream's vectors are lowercase, its fixtures uppercase).
 * @throws TypeError when `hex` has an odd length or a non-hex character.
 */
export function fromHex(hex: string, name = 'hex'): Uint8Array {
  if (hex.length % 2 !== 0) throw new TypeError(`${name}: hex string has an odd length`);
  const out = new Uint8Array(hex.length / 2);
  for (let i = 0; i < out.length; i++) {
    const hi = hexNibble(hex.charCodeAt(2 * i));
    const lo = hexNibble(hex.charCodeAt(2 * i + 1));
    if (hi < 0 || lo < 0) throw new TypeError(`${name}: not a hex string`);
    out[i] = (hi << 4) | lo;
  }
  return out;
}

/** Concatenates byte arrays into a new array. */
export function concatBytes(...parts: Uint8Array[]): Uint8Array {
  let total = 0;
  for (const p of parts) total += p.length;
  const out = new Uint8Array(total);
  let offset = 0;
  for (const p of parts) {
    out.set(p, offset);
    offset += p.length;
  }
  return out;
}

/** Byte equality (not constant time: every compared value here is public). */
export function bytesEqual(a: Uint8Array, b: Uint8Array): boolean {
  if (a.length !== b.length) return false;
  for (let i = 0; i < a.length; i++) if (a[i] !== b[i]) return false;
  return true;
}

/** Unsigned lexicographic order: negative, zero or positive. */
export function compareBytes(a: Uint8Array, b: Uint8Array): number {
  const n = Math.min(a.length, b.length);
  for (let i = 0; i < n; i++) {
    const d = a[i]! - b[i]!;
    if (d !== 0) return d;
  }
  return a.length - b.length;
}

const U64_MAX = (1n << 64n) - 1n;

/** Checks that `v` fits an unsigned 64-bit integer. */
export function assertU64(v: bigint, name: string): void {
  if (typeof v !== 'bigint') throw new TypeError(`${name} must be a bigint`);
  if (v < 0n || v > U64_MAX) throw new RangeError(`${name} must be an unsigned 64-bit integer`);
}

/** `be32(v)`, spec section 2. */
export function be32(v: number): Uint8Array {
  const out = new Uint8Array(4);
  new DataView(out.buffer).setUint32(0, v >>> 0, false);
  return out;
}

/** `be64(v)`, spec section 2. */
export function be64(v: bigint): Uint8Array {
  const out = new Uint8Array(8);
  new DataView(out.buffer).setBigUint64(0, v, false);
  return out;
}

const MAX_SAFE = BigInt(Number.MAX_SAFE_INTEGER);

/**
 * Writes `be64(v)` into `out` at `offset` (hot paths avoid the allocation of `be64`). Epochs
 * and versions stay far below 2^53, so they take a path with no DataView and no BigInt
 * arithmetic; larger values are written by `setBigUint64` (which wraps modulo 2^64).
 */
export function writeBe64(out: Uint8Array, offset: number, v: bigint): void {
  if (v >= 0n && v <= MAX_SAFE) writeBe64Number(out, offset, Number(v));
  else new DataView(out.buffer, out.byteOffset, out.byteLength).setBigUint64(offset, v, false);
}

/** `writeBe64` of a non-negative safe integer, such as a length. */
export function writeBe64Number(out: Uint8Array, offset: number, n: number): void {
  const hi = Math.floor(n / 0x1_0000_0000);
  const lo = n >>> 0;
  out[offset] = hi >>> 24;
  out[offset + 1] = (hi >>> 16) & 0xff;
  out[offset + 2] = (hi >>> 8) & 0xff;
  out[offset + 3] = hi & 0xff;
  out[offset + 4] = lo >>> 24;
  out[offset + 5] = (lo >>> 16) & 0xff;
  out[offset + 6] = (lo >>> 8) & 0xff;
  out[offset + 7] = lo & 0xff;
}

/** `i2osp(b) = be64(len(b)) || b`, spec section 2. */
export function i2osp(bytes: Uint8Array): Uint8Array {
  const out = new Uint8Array(8 + bytes.length);
  writeBe64Number(out, 0, bytes.length);
  out.set(bytes, 8);
  return out;
}

const encoder = new TextEncoder();
const decoder = new TextDecoder('utf-8', { fatal: false });

// a high surrogate not followed by a low one, or a low surrogate not preceded by a high one
const LONE_SURROGATE = /[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/;

/**
 * True when `text` has no lone surrogate, so that it has a UTF-8 encoding: `utf8` would turn
 * each lone surrogate into U+FFFD, making two different strings the same bytes. Where text
 * from outside becomes a label or value, check this first.
 *
 * @example isWellFormedText('\ud800') // false
 */
export function isWellFormedText(text: string): boolean {
  return !LONE_SURROGATE.test(text);
}

/** UTF-8 bytes of a string (each lone surrogate becomes U+FFFD: see isWellFormedText). */
export function utf8(text: string): Uint8Array {
  return encoder.encode(text);
}

/** Decodes UTF-8 (invalid sequences become U+FFFD; use for display only). */
export function fromUtf8(bytes: Uint8Array): string {
  return decoder.decode(bytes);
}

/** True when `bytes` is valid UTF-8 (used to choose how to display a label). */
export function isUtf8(bytes: Uint8Array): boolean {
  try {
    new TextDecoder('utf-8', { fatal: true }).decode(bytes);
    return true;
  } catch {
    return false;
  }
}
