/**
 * PostgreSQL array literals (`{\\x0102,NULL,7}`) written byte by byte into one growing buffer.
 * A batch of 10,000 tree nodes is 19 such literals; building them with one native hex call
 * per value costs more than the server's upsert of the rows, so this writes the hex digits
 * from a table instead. The text goes to the server as a text parameter cast to `bytea[]` or
 * `int8[]` (literal syntax: PostgreSQL docs, "8.15.6 Array Input and Output Syntax"; a bytea
 * element is `\x` + hex, with the backslash doubled because backslash escapes in arrays).
 */

const HEX = new TextEncoder().encode('0123456789abcdef');
const COMMA = 0x2c;
const NULL_TEXT = new TextEncoder().encode('NULL');

export class ArrayLiteral {
  private buf: Buffer;
  private pos = 1;
  private empty = true;

  constructor(capacity = 1024) {
    this.buf = Buffer.allocUnsafe(Math.max(16, capacity));
    this.buf[0] = 0x7b; // {
  }

  private reserve(n: number): void {
    if (this.pos + n <= this.buf.length) return;
    const bigger = Buffer.allocUnsafe(Math.max(this.buf.length * 2, this.pos + n));
    this.buf.copy(bigger, 0, 0, this.pos);
    this.buf = bigger;
  }

  private separate(n: number): void {
    this.reserve(n + 2);
    if (!this.empty) this.buf[this.pos++] = COMMA;
    this.empty = false;
  }

  private hexByte(b: number): void {
    this.buf[this.pos++] = HEX[b >> 4]!;
    this.buf[this.pos++] = HEX[b & 15]!;
  }

  private hexBytes(bytes: Uint8Array): void {
    const { buf } = this;
    let p = this.pos;
    for (let i = 0; i < bytes.length; i++) {
      const b = bytes[i]!;
      buf[p++] = HEX[b >> 4]!;
      buf[p++] = HEX[b & 15]!;
    }
    this.pos = p;
  }

  private bytesPrefix(): void {
    this.buf[this.pos++] = 0x5c; // \
    this.buf[this.pos++] = 0x5c; // \
    this.buf[this.pos++] = 0x78; // x
  }

  /** Appends NULL. */
  null(): this {
    this.separate(4);
    this.buf.set(NULL_TEXT, this.pos);
    this.pos += 4;
    return this;
  }

  /** Appends a bytea element, or NULL for undefined. */
  bytes(bytes: Uint8Array | undefined): this {
    if (bytes === undefined) return this.null();
    this.separate(3 + 2 * bytes.length);
    this.bytesPrefix();
    this.hexBytes(bytes);
    return this;
  }

  /** Appends a bytea element `be32(len) || val` (a label's storage key), or NULL. */
  labelKey(label: { len: number; val: Uint8Array } | undefined): this {
    if (label === undefined) return this.null();
    this.separate(3 + 72);
    this.bytesPrefix();
    const { len } = label;
    this.hexByte(len >>> 24);
    this.hexByte((len >>> 16) & 255);
    this.hexByte((len >>> 8) & 255);
    this.hexByte(len & 255);
    this.hexBytes(label.val);
    return this;
  }

  /** Appends an integer element, or NULL for undefined. */
  int(v: bigint | number | undefined): this {
    if (v === undefined) return this.null();
    const text = v.toString();
    this.separate(text.length);
    this.pos += this.buf.write(text, this.pos, 'latin1');
    return this;
  }

  /** The literal's text. */
  toString(): string {
    this.reserve(1);
    this.buf[this.pos] = 0x7d; // }
    return this.buf.toString('latin1', 0, this.pos + 1);
  }
}

/**
 * A bytea[] array literal of `values`, about `bytesEach` bytes each (its first capacity, 18
 * by default: a growing literal doubles, so a guess costs little).
 */
export function byteaArray(values: readonly Uint8Array[], bytesEach = 18): string {
  const literal = new ArrayLiteral(values.length * (4 + 2 * bytesEach));
  for (const v of values) literal.bytes(v);
  return literal.toString();
}
