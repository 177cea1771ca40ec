// The direct lookup-proof reader (proto/lookup-reader.ts) against the general decoding path
// (wire check, protobuf-es, from-message.ts): it reads upstream's vectors and our encodings,
// and whatever it accepts, however edited, decodes to the same proof the general way; what it
// declines still decodes (or fails) exactly as before through decodeLookupProof.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import fc from 'fast-check';
import { fromBinary } from '@bufbuild/protobuf';
import { isAkdError } from '../src/errors.js';
import { decodeLookupProof, encodeLookupProof } from '../src/proto/codec.js';
import { lookupProofFromMessage } from '../src/proto/from-message.js';
import { LookupProofSchema } from '../src/proto/gen/types_pb.js';
import { readCanonicalLookupProof } from '../src/proto/lookup-reader.js';
import { checkWireStructure } from '../src/proto/wire-check.js';
import { loadVectors } from '../../../test/support/vectors.js';

/** The general path's answer: a proof, or the error's code and field. */
function general(bytes: Uint8Array): unknown {
  try {
    checkWireStructure(LookupProofSchema, bytes);
    return lookupProofFromMessage(fromBinary(LookupProofSchema, bytes));
  } catch (e) {
    if (isAkdError(e)) return { code: e.code, field: e.field };
    throw e;
  }
}

/** What decodeLookupProof answers, in the same form. */
function decoded(bytes: Uint8Array): unknown {
  try {
    return decodeLookupProof(bytes);
  } catch (e) {
    if (isAkdError(e)) return { code: e.code, field: e.field };
    throw e;
  }
}

const VECTORS = (['whatsapp_v1', 'experimental'] as const).map((c) => loadVectors(c).lookupProof);

/** `tag || varint(len) || body` of a length-delimited field. */
function lenField(fieldNo: number, body: number[]): number[] {
  return [(fieldNo << 3) | 2, body.length, ...body];
}

for (const [i, bytes] of VECTORS.entries()) {
  test(`vector ${i}: read directly, equal to the general path, also after re-encoding`, () => {
    const direct = readCanonicalLookupProof(bytes);
    assert.ok(direct !== undefined, 'the vector is in the encoders’ form');
    assert.deepEqual(direct, general(bytes));
    const again = readCanonicalLookupProof(encodeLookupProof(direct));
    assert.deepEqual(again, direct);
    // copies, not views of the input
    assert.notEqual(direct.value.buffer, bytes.buffer);
    assert.notEqual(direct.existenceProof.hashVal.buffer, bytes.buffer);
  });
}

test('edited vectors: whatever the reader accepts decodes to the same proof the general way', () => {
  let accepted = 0;
  let declined = 0;
  const edit = fc.record({
    at: fc.nat({ max: 4000 }),
    byte: fc.integer({ min: 0, max: 255 }),
    cut: fc.nat({ max: 2 }),
  });
  fc.assert(
    fc.property(
      fc.nat({ max: 1 }),
      fc.array(edit, { minLength: 1, maxLength: 3 }),
      (which, edits) => {
        let bytes = VECTORS[which]!.slice();
        for (const { at, byte, cut } of edits) {
          const p = at % bytes.length;
          bytes[p] = byte;
          if (cut > 0)
            bytes = Uint8Array.from([...bytes.subarray(0, p), ...bytes.subarray(p + cut)]);
        }
        const direct = readCanonicalLookupProof(bytes);
        if (direct === undefined) declined++;
        else {
          accepted++;
          assert.deepEqual(direct, general(bytes));
        }
        assert.deepEqual(decoded(bytes), general(bytes));
      },
    ),
    { numRuns: 3000 },
  );
  assert.ok(accepted > 100 && declined > 100, `accepted ${accepted}, declined ${declined}`);
});

test('forms the reader declines still decode, or fail, the general way', () => {
  const base = Array.from(VECTORS[0]!);
  const cases: Record<string, number[]> = {
    'an unknown field at the end': [...base, 0x98, 0x01, 0x05],
    'a repeated singular field': [...base, 0x08, 0x02],
    'fields out of order': [...base.slice(2), ...base.slice(0, 2)],
    'a non-minimal epoch varint': [base[0]!, base[1]! | 0x80, 0x00, ...base.slice(2)],
    'a varint past 7 bytes': [0x08, ...Array(9).fill(0xff), 0x01, ...base.slice(2)],
    'a truncated varint': [0x08, 0x80],
    'a length past the end': [0x12, 0x7f, 0x00],
    empty: [],
  };
  for (const [what, bytes] of Object.entries(cases)) {
    const b = Uint8Array.from(bytes);
    assert.equal(readCanonicalLookupProof(b), undefined, what);
    assert.deepEqual(decoded(b), general(b), what);
  }
});

test('values outside the domain types are declined and then refused with their error', () => {
  // a NodeLabel message (spec 15.2) of 33 value bytes, one of length 257, and a sibling level
  // with direction 16 (which upstream reads as Left) or two siblings
  const label = (val: number[], len: number[]) => [...lenField(1, val), 0x10, ...len];
  const element = [...lenField(1, label([1], [8])), ...lenField(2, Array(32).fill(7))];
  const level = (direction: number, siblings = 1) => [
    ...lenField(1, label([], [0])),
    ...Array.from({ length: siblings }, () => lenField(2, element)).flat(),
    0x18,
    direction,
  ];
  const membership = (levels: number[][], l = label([1], [8])) => [
    ...lenField(1, l),
    ...lenField(2, Array(32).fill(9)),
    ...levels.flatMap((x) => lenField(3, x)),
  ];
  const lookup = (existence: number[]) => [
    0x08,
    1,
    ...lenField(2, []),
    0x18,
    1,
    ...lenField(4, Array(80).fill(0)),
    ...lenField(5, existence),
  ];
  const cases: Record<string, number[]> = {
    'label_val of 33 bytes': lookup(membership([], label(Array(33).fill(1), [8]))),
    'label_len 257': lookup(membership([], label([1], [0x81, 0x02]))),
    'direction 16': lookup(membership([level(16)])),
    'two siblings': lookup(membership([level(0, 2)])),
    'a 31-byte digest': lookup([
      ...lenField(1, label([1], [8])),
      ...lenField(2, Array(31).fill(9)),
    ]),
    'a nested message with a field after its own': lookup(
      membership([], [...label([1], [8]), 0x18, 1]),
    ),
  };
  for (const [what, bytes] of Object.entries(cases)) {
    const b = Uint8Array.from(bytes);
    assert.equal(readCanonicalLookupProof(b), undefined, what);
    const answer = decoded(b);
    assert.deepEqual(answer, general(b), what);
    assert.ok(typeof answer === 'object' && answer !== null && 'code' in answer, what);
  }
});
