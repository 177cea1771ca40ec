// Strict decoding (spec 15.4): every malformed, incomplete or out-of-range encoding fails
// with an AkdError carrying a DECODE_* code and the offending field's path; truncated and
// random input never decodes to garbage and never throws anything else.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { loadVectors } from '../../../test/support/vectors.js';
import fc from 'fast-check';
import { clearField, create, fromBinary, toBinary } from '@bufbuild/protobuf';
import type { DescMessage, MessageShape } from '@bufbuild/protobuf';
import { toHex } from '../src/bytes.js';
import { AkdError } from '../src/errors.js';
import type { AkdErrorCode } from '../src/errors.js';
import { NodeLabel } from '../src/node-label.js';
import {
  decodeAppendOnlyProof,
  decodeHistoryProof,
  decodeLookupProof,
  decodeMembershipProof,
  decodeNonMembershipProof,
  decodeSingleAppendOnlyProof,
  encodeAppendOnlyProof,
  encodeHistoryProof,
  encodeLookupProof,
  encodeMembershipProof,
  encodeSingleAppendOnlyProof,
} from '../src/proto/codec.js';
import * as pb from '../src/proto/gen/types_pb.js';

const LOOKUP = loadVectors('whatsapp_v1').lookupProof;
const COMPLETE = loadVectors('whatsapp_v1').historyComplete;

/** Parses `bytes` with the generated schema, lets `edit` change it, and re-encodes it. */
function mutate<D extends DescMessage>(
  schema: D,
  bytes: Uint8Array,
  edit: (m: MessageShape<D>) => void,
): Uint8Array {
  const msg = fromBinary(schema, bytes);
  edit(msg);
  return toBinary(schema, msg);
}
const mutateLookup = (edit: (m: pb.LookupProof) => void) =>
  mutate(pb.LookupProofSchema, LOOKUP, edit);

/** Asserts that `fn` throws an AkdError with `code` whose `field` (and message) is `field`. */
function throwsAkd(fn: () => unknown, code: AkdErrorCode, field?: string, text?: RegExp): void {
  assert.throws(fn, (e: unknown) => {
    assert.ok(e instanceof AkdError, `expected an AkdError, got ${String(e)}`);
    assert.equal(e.code, code, e.message);
    assert.equal(e.field, field, e.message);
    if (field !== undefined) assert.ok(e.message.includes(field), e.message);
    if (text !== undefined) assert.match(e.message, text);
    return true;
  });
}

test('a missing required field names the message, the field and its full path', () => {
  const bytes = mutateLookup((m) => {
    clearField(m.existenceProof!.siblingProofs[3]!, pb.SiblingProofSchema.field.direction);
  });
  throwsAkd(
    () => decodeLookupProof(bytes),
    'DECODE_MISSING_FIELD',
    'existence_proof.sibling_proofs[3].direction',
    /SiblingProof\.direction/,
  );
});

test('every required field of a LookupProof and its parts is enforced (spec 15.4)', () => {
  const F = pb.LookupProofSchema.field;
  for (const field of Object.values(F)) {
    const bytes = mutateLookup((m) => clearField(m, field));
    throwsAkd(() => decodeLookupProof(bytes), 'DECODE_MISSING_FIELD', field.name);
  }
  const cases: [string, (m: pb.LookupProof) => void][] = [
    [
      'existence_proof.label',
      (m) => clearField(m.existenceProof!, pb.MembershipProofSchema.field.label),
    ],
    [
      'existence_proof.hash_val',
      (m) => clearField(m.existenceProof!, pb.MembershipProofSchema.field.hashVal),
    ],
    [
      'marker_proof.label.label_val',
      (m) => clearField(m.markerProof!.label!, pb.NodeLabelSchema.field.labelVal),
    ],
    [
      'marker_proof.label.label_len',
      (m) => clearField(m.markerProof!.label!, pb.NodeLabelSchema.field.labelLen),
    ],
    [
      'existence_proof.sibling_proofs[0].label',
      (m) => clearField(m.existenceProof!.siblingProofs[0]!, pb.SiblingProofSchema.field.label),
    ],
    [
      'existence_proof.sibling_proofs[1].siblings',
      (m) => (m.existenceProof!.siblingProofs[1]!.siblings = []),
    ],
    [
      'existence_proof.sibling_proofs[2].siblings[0].label',
      (m) =>
        clearField(
          m.existenceProof!.siblingProofs[2]!.siblings[0]!,
          pb.AzksElementSchema.field.label,
        ),
    ],
    [
      'existence_proof.sibling_proofs[2].siblings[0].value',
      (m) =>
        clearField(
          m.existenceProof!.siblingProofs[2]!.siblings[0]!,
          pb.AzksElementSchema.field.value,
        ),
    ],
    [
      'freshness_proof.label',
      (m) => clearField(m.freshnessProof!, pb.NonMembershipProofSchema.field.label),
    ],
    [
      'freshness_proof.longest_prefix',
      (m) => clearField(m.freshnessProof!, pb.NonMembershipProofSchema.field.longestPrefix),
    ],
    [
      'freshness_proof.longest_prefix_membership_proof',
      (m) =>
        clearField(
          m.freshnessProof!,
          pb.NonMembershipProofSchema.field.longestPrefixMembershipProof,
        ),
    ],
    [
      'freshness_proof.longest_prefix_membership_proof.sibling_proofs[0].siblings[0].value',
      (m) =>
        clearField(
          m.freshnessProof!.longestPrefixMembershipProof!.siblingProofs[0]!.siblings[0]!,
          pb.AzksElementSchema.field.value,
        ),
    ],
  ];
  for (const [path, edit] of cases) {
    throwsAkd(() => decodeLookupProof(mutateLookup(edit)), 'DECODE_MISSING_FIELD', path);
  }
});

test('UpdateProof requires fields 1-5 and 8; 6 and 7 are optional and independent', () => {
  const F = pb.UpdateProofSchema.field;
  const required = [
    F.epoch,
    F.value,
    F.version,
    F.existenceVrfProof,
    F.existenceProof,
    F.commitmentNonce,
  ];
  for (const field of required) {
    const bytes = mutate(pb.HistoryProofSchema, COMPLETE, (m) =>
      clearField(m.updateProofs[1]!, field),
    );
    throwsAkd(
      () => decodeHistoryProof(bytes),
      'DECODE_MISSING_FIELD',
      `update_proofs[1].${field.name}`,
    );
  }
  for (const [drop, kept] of [
    [F.previousVersionProof, 'previousVersionVrfProof'],
    [F.previousVersionVrfProof, 'previousVersionProof'],
  ] as const) {
    const bytes = mutate(pb.HistoryProofSchema, COMPLETE, (m) =>
      clearField(m.updateProofs[0]!, drop),
    );
    const p = decodeHistoryProof(bytes);
    const u = p.updateProofs[0]!;
    assert.equal(
      u[drop.localName as 'previousVersionProof' | 'previousVersionVrfProof'],
      undefined,
    );
    assert.notEqual(u[kept], undefined);
    assert.equal(toHex(encodeHistoryProof(p)), toHex(bytes), 'only the present field is written');
  }
  const deep = mutate(pb.HistoryProofSchema, COMPLETE, (m) =>
    clearField(m.updateProofs[0]!.previousVersionProof!, pb.MembershipProofSchema.field.hashVal),
  );
  throwsAkd(
    () => decodeHistoryProof(deep),
    'DECODE_MISSING_FIELD',
    'update_proofs[0].previous_version_proof.hash_val',
  );
});

test('digests must be 32 bytes and label_val at most 32 (DECODE_INVALID_LENGTH)', () => {
  const cases: [string, (m: pb.LookupProof) => void][] = [
    [
      'existence_proof.hash_val',
      (m) => (m.existenceProof!.hashVal = m.existenceProof!.hashVal.subarray(0, 31)),
    ],
    [
      'existence_proof.sibling_proofs[2].siblings[0].value',
      (m) => (m.existenceProof!.siblingProofs[2]!.siblings[0]!.value = new Uint8Array(33)),
    ],
    [
      'freshness_proof.label.label_val',
      (m) => (m.freshnessProof!.label!.labelVal = new Uint8Array(33).fill(1)),
    ],
    [
      'freshness_proof.longest_prefix_children',
      (m) => m.freshnessProof!.longestPrefixChildren.pop(),
    ],
    [
      'freshness_proof.longest_prefix_children',
      (m) =>
        m.freshnessProof!.longestPrefixChildren.push(m.freshnessProof!.longestPrefixChildren[0]!),
    ],
    [
      'freshness_proof.longest_prefix_children',
      (m) => (m.freshnessProof!.longestPrefixChildren = []),
    ],
  ];
  for (const [path, edit] of cases) {
    throwsAkd(() => decodeLookupProof(mutateLookup(edit)), 'DECODE_INVALID_LENGTH', path);
  }
  const empty = mutate(
    pb.MembershipProofSchema,
    encodeMembershipProof(decodeLookupProof(LOOKUP).existenceProof),
    (m) => (m.hashVal = new Uint8Array(0)),
  );
  throwsAkd(() => decodeMembershipProof(empty), 'DECODE_INVALID_LENGTH', 'hash_val', /got 0/);
});

test('label_len above 256 and bad directions are rejected (DECODE_INVALID_VALUE)', () => {
  throwsAkd(
    () => decodeLookupProof(mutateLookup((m) => (m.existenceProof!.label!.labelLen = 257))),
    'DECODE_INVALID_VALUE',
    'existence_proof.label.label_len',
  );
  for (const direction of [2, 15, 18, 0xffffffff]) {
    const bytes = mutateLookup((m) => (m.markerProof!.siblingProofs[4]!.direction = direction));
    throwsAkd(
      () => decodeLookupProof(bytes),
      'DECODE_INVALID_VALUE',
      'marker_proof.sibling_proofs[4].direction',
    );
  }
});

test('direction is read as `direction & 0x0F` like upstream: 16 is Left, 17 is Right', () => {
  for (const [wire, expected] of [
    [16, 0],
    [17, 1],
    [0x100, 0],
    [0x101, 1],
  ] as const) {
    const bytes = mutateLookup((m) => (m.existenceProof!.siblingProofs[0]!.direction = wire));
    const p = decodeLookupProof(bytes);
    assert.equal(p.existenceProof.siblingProofs[0]!.direction, expected);
  }
});

test('extra siblings are ignored: only the first is kept', () => {
  const bytes = mutateLookup((m) => {
    const s = m.existenceProof!.siblingProofs[0]!;
    s.siblings.push(create(pb.AzksElementSchema));
  });
  const p = decodeLookupProof(bytes);
  assert.equal(p.existenceProof.siblingProofs[0]!.siblings.length, 1);
  assert.equal(toHex(encodeLookupProof(p)), toHex(LOOKUP));
});

test('malformed encodings fail with DECODE_MALFORMED and the field path', () => {
  const u8 = (...b: number[]) => Uint8Array.from(b);
  const cases: [string, () => unknown, string | undefined, RegExp][] = [
    [
      'truncated last field',
      () => decodeLookupProof(LOOKUP.subarray(0, LOOKUP.length - 1)),
      'commitment_nonce',
      /runs past/,
    ],
    [
      'wire type mismatch',
      () => decodeMembershipProof(u8(0x08, 0x01)),
      'label',
      /wire type 0, expected 2/,
    ],
    [
      'field overruns its message',
      () => decodeMembershipProof(u8(0x0a, 0x02, 0x0a, 0x03, 1, 2, 3)),
      'label.label_val',
      /runs past/,
    ],
    [
      'singular message twice',
      () => decodeMembershipProof(u8(0x0a, 0x02, 0x10, 0x05, 0x0a, 0x02, 0x10, 0x05)),
      'label',
      /twice/,
    ],
    [
      'packed list overruns',
      () => decodeAppendOnlyProof(u8(0x12, 0x01, 0x81, 0x01)),
      'epochs[0]',
      /truncated varint/,
    ],
    [
      'varint of 11 bytes',
      () => decodeAppendOnlyProof(u8(0x10, ...Array(10).fill(0xff), 0x01)),
      'epochs[0]',
      /longer than 10/,
    ],
    ['truncated varint', () => decodeAppendOnlyProof(u8(0x10)), 'epochs[0]', /truncated varint/],
    [
      'nested length past the end',
      () => decodeAppendOnlyProof(u8(0x0a, 0x05, 0x00)),
      'proofs[0]',
      /runs past/,
    ],
    ['field number 0', () => decodeAppendOnlyProof(u8(0x00)), undefined, /invalid tag 0/],
    ['wire type 6', () => decodeAppendOnlyProof(u8(0x0e)), undefined, /invalid tag/],
    [
      'wire type 7 nested',
      () => decodeAppendOnlyProof(u8(0x0a, 0x01, 0x0f)),
      'proofs[0]',
      /invalid tag/,
    ],
    [
      'tag of 6 bytes',
      () => decodeAppendOnlyProof(u8(0xf8, 0x80, 0x80, 0x80, 0x80, 0x00)),
      undefined,
      /invalid tag/,
    ],
    [
      'tag above 32 bits',
      () => decodeAppendOnlyProof(u8(0xff, 0xff, 0xff, 0xff, 0x7f)),
      undefined,
      /invalid tag/,
    ],
    ['end group without start', () => decodeAppendOnlyProof(u8(0x7c)), '#15', /without a start/],
    [
      'mismatched end group',
      () => decodeAppendOnlyProof(u8(0x7b, 0x84, 0x01)),
      '#15',
      /mismatched/,
    ],
    [
      'unterminated group',
      () => decodeAppendOnlyProof(u8(0x7b, 0x08, 0x01)),
      '#15',
      /truncated varint/,
    ],
    ['bad tag in a group', () => decodeAppendOnlyProof(u8(0x7b, 0x00)), '#15', /invalid tag/],
    [
      'groups too deep',
      () => decodeAppendOnlyProof(u8(...Array(40).fill(0x7b))),
      '#15',
      /too deeply/,
    ],
    ['truncated fixed32', () => decodeAppendOnlyProof(u8(0x7d, 1, 2)), '#15', /fixed-width/],
    [
      'truncated fixed64',
      () => decodeSingleAppendOnlyProof(u8(0x0a, 0x05, 0x79, 1, 2, 3, 4, 5)),
      'inserted[0].#15',
      /fixed-width/,
    ],
  ];
  for (const [name, fn, field, text] of cases) {
    assert.doesNotThrow(() => {
      throwsAkd(fn, 'DECODE_MALFORMED', field, text);
    }, name);
  }
});

test('a last top-level message whose length runs past the end is refused (upstream reads to the end)', () => {
  // rust-protobuf sets no limit at the top level, so upstream parses the last future-marker
  // proof up to the end of the bytes and verifies the history; no encoder writes this
  const bytes = COMPLETE.slice();
  const at = bytes.length - 645 - 2; // the two-byte length (645) of the last element
  assert.deepEqual([bytes[at - 1], bytes[at], bytes[at + 1]], [0x2a, 0x85, 0x05]);
  bytes[at]! += 2;
  throwsAkd(
    () => decodeHistoryProof(bytes),
    'DECODE_MALFORMED',
    'non_existence_of_future_marker_proofs[1]',
    /runs past/,
  );
});

test('the empty encoding is a message with every field missing', () => {
  throwsAkd(() => decodeLookupProof(new Uint8Array(0)), 'DECODE_MISSING_FIELD', 'epoch');
  throwsAkd(() => decodeMembershipProof(new Uint8Array(0)), 'DECODE_MISSING_FIELD', 'label');
  throwsAkd(() => decodeNonMembershipProof(new Uint8Array(0)), 'DECODE_MISSING_FIELD', 'label');
  assert.deepEqual(decodeHistoryProof(new Uint8Array(0)).updateProofs, []);
  assert.deepEqual(decodeAppendOnlyProof(new Uint8Array(0)), { proofs: [], epochs: [] });
});

test('a truncated proof never decodes: every prefix fails with an AkdError', () => {
  for (const [bytes, decode] of [
    [LOOKUP, decodeLookupProof],
    [COMPLETE, decodeHistoryProof],
  ] as const) {
    const full = toHex(encodeAny(decode(bytes)));
    for (let n = 0; n < bytes.length; n++) {
      let result: unknown;
      try {
        result = decode(bytes.subarray(0, n));
      } catch (e) {
        assert.ok(e instanceof AkdError, `offset ${n}: ${String(e)}`);
        assert.ok(e.code === 'DECODE_MALFORMED' || e.code === 'DECODE_MISSING_FIELD', e.code);
        continue;
      }
      // A history proof cut between two whole update proofs is a valid shorter proof; it
      // must then be an exact prefix of the original, never garbage.
      assert.equal(decode, decodeHistoryProof, `lookup prefix of ${n} bytes decoded`);
      assert.ok(full.startsWith(toHex(encodeAny(result))), `offset ${n}`);
    }
  }
});

function encodeAny(p: unknown): Uint8Array {
  return 'updateProofs' in (p as object)
    ? encodeHistoryProof(p as Parameters<typeof encodeHistoryProof>[0])
    : encodeLookupProof(p as Parameters<typeof encodeLookupProof>[0]);
}

const DECODERS = [
  decodeLookupProof,
  decodeHistoryProof,
  decodeAppendOnlyProof,
  decodeSingleAppendOnlyProof,
  decodeMembershipProof,
  decodeNonMembershipProof,
];

function onlyAkdErrors(fn: () => unknown): void {
  try {
    fn();
  } catch (e) {
    if (!(e instanceof AkdError)) throw e;
  }
}

test('random bytes never throw anything but AkdError', () => {
  fc.assert(
    fc.property(fc.uint8Array({ maxLength: 400 }), (bytes) => {
      for (const decode of DECODERS) onlyAkdErrors(() => decode(bytes));
    }),
    { numRuns: 2000 },
  );
});

test('randomly edited vectors never throw anything but AkdError', () => {
  const edit = fc.record({
    at: fc.nat({ max: LOOKUP.length - 1 }),
    byte: fc.integer({ min: 0, max: 255 }),
    cut: fc.nat({ max: 3 }),
  });
  fc.assert(
    fc.property(fc.array(edit, { minLength: 1, maxLength: 4 }), (edits) => {
      let bytes = LOOKUP.slice();
      for (const { at, byte, cut } of edits) {
        bytes[at % bytes.length] = byte;
        if (cut > 0)
          bytes = Uint8Array.from([...bytes.subarray(0, at), ...bytes.subarray(at + cut)]);
      }
      for (const decode of DECODERS) onlyAkdErrors(() => decode(bytes));
    }),
    { numRuns: 1000 },
  );
});

test('encoding rejects values upstream could not decode, naming the field', () => {
  const lookup = decodeLookupProof(LOOKUP);
  assert.throws(() => encodeLookupProof({ ...lookup, epoch: -1n }), /LookupProof\.epoch/);
  assert.throws(() => encodeLookupProof({ ...lookup, version: 1n << 64n }), RangeError);
  assert.throws(
    () =>
      encodeLookupProof({
        ...lookup,
        existenceProof: { ...lookup.existenceProof, hashVal: new Uint8Array(31) },
      }),
    /MembershipProof\.hash_val must be 32 bytes/,
  );
  const history = decodeHistoryProof(COMPLETE);
  const u = history.updateProofs[0]!;
  assert.throws(
    () => encodeHistoryProof({ ...history, updateProofs: [{ ...u, epoch: 1n << 64n }] }),
    /UpdateProof\.epoch/,
  );
  assert.throws(
    () => encodeHistoryProof({ ...history, updateProofs: [{ ...u, version: -2n }] }),
    /UpdateProof\.version/,
  );
  assert.throws(
    () => encodeAppendOnlyProof({ proofs: [], epochs: [1n, 1n << 64n] }),
    /AppendOnlyProof\.epochs\[1\]/,
  );
  assert.throws(
    () => encodeAppendOnlyProof({ proofs: [], epochs: [1 as unknown as bigint] }),
    TypeError,
  );
  assert.throws(
    () =>
      encodeSingleAppendOnlyProof({
        inserted: [{ label: NodeLabel.root(), value: new Uint8Array(33) }],
        unchangedNodes: [],
      }),
    /AzksElement\.value must be 32 bytes/,
  );
  assert.throws(() => decodeLookupProof('0830' as unknown as Uint8Array), TypeError);
});
