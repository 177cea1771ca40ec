/**
 * Names every byte of a protobuf encoding after the field it belongs to, walking the wire
 * schema's descriptors: the bit-flip test uses it to say which field a flipped bit landed in
 * and which flips the verifiers are documented to accept. It reads the encoders' form only
 * (known fields, wire types as declared, no groups) and throws on anything else.
 */

import type { DescField, DescMessage } from '@bufbuild/protobuf';

/** Where one byte sits: the path of its field from the top-level message, and which part. */
export interface ByteSite {
  /** e.g. `existence_proof.sibling_proofs[0].label.label_len` */
  path: string;
  /** The tag, the length prefix of a length-delimited field, or the field's value bytes. */
  part: 'tag' | 'length' | 'value';
  /** How many bytes this part of the field spans. */
  size: number;
}

const VARINT = 0;
const LEN = 2;

function isMessage(f: DescField): boolean {
  return f.fieldKind === 'message' || (f.fieldKind === 'list' && f.listKind === 'message');
}

/** The site of every byte of `bytes`, an encoding of `desc`, in byte order. */
export function wireSites(desc: DescMessage, bytes: Uint8Array): ByteSite[] {
  const sites: ByteSite[] = [];
  /** Reads a varint ending before `end` and names its bytes. */
  const varint = (end: number, path: string, part: ByteSite['part']): number => {
    const start = sites.length;
    let value = 0;
    for (let scale = 1; ; scale *= 128) {
      if (sites.length >= end) throw new Error(`truncated varint at byte ${start}`);
      const b = bytes[sites.length]!;
      sites.push({ path, part, size: 0 });
      value += (b & 0x7f) * scale;
      if (b < 0x80) break;
    }
    const site = { path, part, size: sites.length - start };
    sites.fill(site, start);
    return value;
  };
  const message = (d: DescMessage, end: number, prefix: string): void => {
    const seen = new Map<number, number>();
    while (sites.length < end) {
      const at = sites.length;
      const tag = varint(end, prefix, 'tag');
      const field = d.fields.find((f) => f.number === Math.floor(tag / 8));
      if (field === undefined) throw new Error(`unknown field ${tag >> 3} at byte ${at}`);
      const index = seen.get(field.number) ?? 0;
      seen.set(field.number, index + 1);
      const name = field.fieldKind === 'list' ? `${field.name}[${index}]` : field.name;
      const path = prefix === '' ? name : `${prefix}.${name}`;
      sites.fill({ path, part: 'tag', size: sites.length - at }, at);
      if (tag % 8 === VARINT) {
        varint(end, path, 'value');
      } else if (tag % 8 === LEN) {
        const size = varint(end, path, 'length');
        const stop = sites.length + size;
        if (stop > end) throw new Error(`${path} runs past its message`);
        if (isMessage(field)) message(field.message!, stop, path);
        else while (sites.length < stop) sites.push({ path, part: 'value', size });
      } else {
        throw new Error(`wire type ${tag % 8} of ${path} is not in the encoders' form`);
      }
    }
  };
  message(desc, bytes.length, '');
  return sites;
}
