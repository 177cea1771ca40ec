/**
 * Small byte arrays carved from shared 4 KiB buffers: 32-byte ones (hashes, label values) and
 * copies of short inputs (a publish's labels and values). The tree keeps
 * hundreds of thousands of them alive, and in V8 a standalone 32-byte Uint8Array costs about
 * 240 bytes and a microsecond to create and promote through the young generation; a view of a
 * shared buffer costs about half of both (inserting 200,000 leaves into 200,000 takes 10-15%
 * less time). A view keeps its 4 KiB buffer alive, which bounds what one long-lived array can
 * retain. Each view is handed out once, zero-filled; code that reaches for `.buffer` must use
 * `byteOffset` and `byteLength` with it (every use in this project does).
 */

const SLAB_BYTES = 4096;
let slab = new Uint8Array(0);
let used = SLAB_BYTES;

/** A fresh zero-filled 32-byte array. */
export function alloc32(): Uint8Array {
  if (used === SLAB_BYTES) {
    slab = new Uint8Array(SLAB_BYTES);
    used = 0;
  }
  return slab.subarray(used, (used += 32));
}

const TEXT_SLAB_BYTES = 4096;
/** Larger inputs get an array of their own: a view would pin most of a buffer. */
const MAX_CARVED = 1024;
const encoder = new TextEncoder();
let textSlab = new Uint8Array(0);
let textUsed = 0;

/** Makes room for `n` more bytes in the current shared buffer, starting a new one if needed. */
function makeRoom(n: number): void {
  if (textUsed + n > textSlab.length) {
    textSlab = new Uint8Array(TEXT_SLAB_BYTES);
    textUsed = 0;
  }
}

/** `n` bytes from the shared buffers, or undefined when they do not fit a fresh one. */
function carve(n: number): Uint8Array | undefined {
  if (n > MAX_CARVED) return undefined;
  makeRoom(n);
  return textSlab.subarray(textUsed, (textUsed += n));
}

/**
 * A copy of `bytes` carved from shared 4 KiB buffers (`carvedUtf8`).
 * @example carvedCopy(fromHex('0a0b')) // Uint8Array [10, 11], a view of a shared buffer
 */
export function carvedCopy(bytes: Uint8Array): Uint8Array {
  const out = carve(bytes.length);
  if (out === undefined) return bytes.slice();
  out.set(bytes);
  return out;
}

/**
 * The UTF-8 bytes of `text`, like `utf8`, carved from shared 4 KiB buffers: a publish of
 * 100,000 updates parses 200,000 short labels and values, and each standalone array would cost
 * an ArrayBuffer, its backing store and an allocation on top of its bytes (about 200 bytes).
 * Lone surrogates become U+FFFD, as with `utf8` (check `isWellFormedText` first).
 *
 * @example carvedUtf8('alice') // the bytes of utf8('alice'), a view of a shared buffer
 */
export function carvedUtf8(text: string): Uint8Array {
  // a UTF-16 code unit takes at most 3 bytes of UTF-8
  if (3 * text.length > MAX_CARVED) return encoder.encode(text);
  makeRoom(3 * text.length);
  const { written } = encoder.encodeInto(text, textSlab.subarray(textUsed));
  return textSlab.subarray(textUsed, (textUsed += written));
}
