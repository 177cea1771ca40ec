/**
 * Structural check of a protobuf encoding against the wire schema, run before protobuf-es
 * parses it. protobuf-es's parser is lenient where upstream's rust-protobuf is not, and it
 * would turn such input into a plausible-looking message instead of an error:
 *
 * - a field that runs past the end of its enclosing message is read on into the parent
 *   (rust-protobuf enforces every nested length and fails, with one exception: its top level
 *   has no limit, so a last message field whose length runs past the end of the bytes is read
 *   up to that end, and accepted when what is there parses);
 * - a known field number with the wrong wire type is parsed as if the wire type were right
 *   (rust-protobuf matches on the whole tag, so it keeps such a field as unknown);
 * - a singular message field that occurs twice is merged (rust-protobuf keeps the last one);
 * - a packed list whose varints overrun its length is read on past it.
 *
 * This walk rejects all four as DECODE_MALFORMED (spec 15.4: a parse failure). For the second
 * and third, and for the top-level overrun, that is stricter than upstream; no encoder emits
 * any of them (an upstream server writes exact lengths). Unknown field numbers are
 * skipped, groups included, as every protobuf parser does. Once this check passes, protobuf-es
 * reads exactly the structure checked here.
 *
 * The walk is driven by the generated descriptors, so it cannot drift from the schema. It
 * handles the constructs the schema uses: scalar, message and list fields (no maps, enums or
 * group-encoded messages).
 */

import { ScalarType } from '@bufbuild/protobuf';
import type { DescField, DescMessage } from '@bufbuild/protobuf';
import { AkdError } from '../errors.js';

const VARINT = 0;
const I64 = 1;
const LEN = 2;
const SGROUP = 3;
const EGROUP = 4;
const I32 = 5;

/** Unknown groups nest at most this deep (protobuf-es allows 100 levels in all). */
const MAX_GROUP_DEPTH = 32;

interface FieldRule {
  /** The proto field name, for error paths. */
  name: string;
  /** The wire type an element is written with. */
  wireType: number;
  repeated: boolean;
  /** A repeated varint list that may also arrive packed (one LEN field). */
  packable: boolean;
  /** The nested message type, for message fields and lists of messages. */
  message: DescMessage | undefined;
}

type Rules = Map<number, FieldRule>;
const rulesCache = new WeakMap<DescMessage, Rules>();

function scalarWireType(t: ScalarType): number {
  switch (t) {
    case ScalarType.STRING:
    case ScalarType.BYTES:
      return LEN;
    case ScalarType.FIXED64:
    case ScalarType.SFIXED64:
    case ScalarType.DOUBLE:
      return I64;
    case ScalarType.FIXED32:
    case ScalarType.SFIXED32:
    case ScalarType.FLOAT:
      return I32;
    default:
      return VARINT;
  }
}

function ruleOf(f: DescField): FieldRule {
  const base = { name: f.name, repeated: false, packable: false, message: undefined };
  if (f.fieldKind === 'scalar') return { ...base, wireType: scalarWireType(f.scalar) };
  if (f.fieldKind === 'message' && !f.delimitedEncoding) {
    return { ...base, wireType: LEN, message: f.message };
  }
  if (f.fieldKind === 'list' && f.listKind === 'scalar') {
    const wireType = scalarWireType(f.scalar);
    return { ...base, wireType, repeated: true, packable: wireType !== LEN };
  }
  if (f.fieldKind === 'list' && f.listKind === 'message' && !f.delimitedEncoding) {
    return { ...base, wireType: LEN, repeated: true, message: f.message };
  }
  // Programming error: the schema gained a construct this walk does not know.
  throw new Error(`wire check does not support field ${f.name} (${f.fieldKind})`);
}

function rulesFor(desc: DescMessage): Rules {
  let rules = rulesCache.get(desc);
  if (rules === undefined) {
    rules = new Map(desc.fields.map((f) => [f.number, ruleOf(f)]));
    rulesCache.set(desc, rules);
  }
  return rules;
}

/** A cursor over one encoding; `path` names where we are, for error messages. */
class Walker {
  pos = 0;
  constructor(
    readonly buf: Uint8Array,
    readonly root: string,
  ) {}

  fail(path: string, what: string): never {
    throw new AkdError(
      'DECODE_MALFORMED',
      `${this.root}: malformed protobuf at ${path === '' ? 'top level' : path} (byte ${this.pos}): ${what}`,
      path === '' ? {} : { field: path },
    );
  }

  /** Reads a varint of at most 10 bytes that ends before `end`. Exact below 2^53, which is
   * all a length or tag can be; larger values only need to compare as too large. */
  varint(end: number, path: string): number {
    let value = 0;
    let scale = 1;
    for (let i = 0; i < 10; i++) {
      if (this.pos >= end) this.fail(path, 'truncated varint');
      const b = this.buf[this.pos++]!;
      value += (b & 0x7f) * scale;
      scale *= 128;
      if ((b & 0x80) === 0) return value;
    }
    this.fail(path, 'varint longer than 10 bytes');
  }

  /** Reads a tag: a varint of at most 5 bytes that fits 32 bits (as protobuf-es requires),
   * with a field number above 0 and a wire type of 0 to 5. */
  tag(end: number, path: string): [fieldNo: number, wireType: number] {
    const start = this.pos;
    const tag = this.varint(end, path);
    const fieldNo = Math.floor(tag / 8);
    const wireType = tag % 8;
    if (this.pos - start > 5 || tag > 0xffffffff || fieldNo === 0 || wireType > 5) {
      this.fail(path, `invalid tag ${tag}`);
    }
    return [fieldNo, wireType];
  }

  /** Reads a length prefix and returns the end of the data it announces. */
  lengthDelimited(end: number, path: string): number {
    const len = this.varint(end, path);
    if (len > end - this.pos) this.fail(path, 'length runs past the end of its message');
    return this.pos + len;
  }

  message(desc: DescMessage, end: number, path: string): void {
    const rules = rulesFor(desc);
    const counts = new Map<number, number>();
    while (this.pos < end) {
      const [fieldNo, wireType] = this.tag(end, path);
      const rule = rules.get(fieldNo);
      if (rule === undefined) {
        this.skip(fieldNo, wireType, end, join(path, `#${fieldNo}`), 0);
        continue;
      }
      const n = counts.get(fieldNo) ?? 0;
      counts.set(fieldNo, n + 1);
      const at = join(path, rule.repeated ? `${rule.name}[${n}]` : rule.name);
      if (rule.packable && wireType === LEN) {
        this.packed(rule.wireType, this.lengthDelimited(end, at), at);
      } else if (wireType !== rule.wireType) {
        this.fail(at, `wire type ${wireType}, expected ${rule.wireType}`);
      } else if (rule.message !== undefined) {
        if (!rule.repeated && n > 0) this.fail(at, 'singular message field occurs twice');
        this.message(rule.message, this.lengthDelimited(end, at), at);
      } else {
        this.skip(fieldNo, wireType, end, at, 0);
      }
    }
  }

  /** Packed varints must fill their length exactly. */
  packed(wireType: number, end: number, path: string): void {
    while (this.pos < end) this.skip(0, wireType, end, path, 0);
  }

  /** Skips one value of `wireType` (a whole group for a start-group tag). */
  skip(fieldNo: number, wireType: number, end: number, path: string, depth: number): void {
    switch (wireType) {
      case VARINT:
        this.varint(end, path);
        return;
      case LEN:
        this.pos = this.lengthDelimited(end, path);
        return;
      case I64:
      case I32: {
        const size = wireType === I64 ? 8 : 4;
        if (size > end - this.pos) this.fail(path, 'truncated fixed-width value');
        this.pos += size;
        return;
      }
      case SGROUP:
        if (depth >= MAX_GROUP_DEPTH) this.fail(path, 'groups nested too deeply');
        for (;;) {
          const [innerNo, innerType] = this.tag(end, path);
          if (innerType === EGROUP) {
            if (innerNo !== fieldNo) this.fail(path, 'mismatched end-group tag');
            return;
          }
          this.skip(innerNo, innerType, end, path, depth + 1);
        }
      default:
        this.fail(path, 'end-group tag without a start');
    }
  }
}

function join(path: string, name: string): string {
  return path === '' ? name : `${path}.${name}`;
}

/**
 * Checks that `bytes` is a well-formed encoding of `desc` (see the module comment).
 * @throws AkdError DECODE_MALFORMED naming the field path and byte offset.
 */
export function checkWireStructure(desc: DescMessage, bytes: Uint8Array): void {
  const w = new Walker(bytes, desc.name);
  w.message(desc, bytes.length, '');
}
