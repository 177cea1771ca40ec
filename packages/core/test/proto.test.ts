// Wire format (spec 15): upstream's test vectors and the worked examples of spec 10.5 and 15.2
// decode and re-encode byte for byte; u64 extremes, packed epochs and unknown fields.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { loadVectors as loadUpstream, type VectorConfig } from '../../../test/support/vectors.js';
import { create, toBinary } from '@bufbuild/protobuf';
import { fromHex, toHex, utf8 } from '../src/bytes.js';
import { NodeLabel } from '../src/node-label.js';
import { WhatsAppV1Configuration } from '../src/config/whatsapp-v1.js';
import { ExperimentalConfiguration } from '../src/config/experimental.js';
import type { AzksElement, LookupProof } from '../src/types.js';
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
  encodeNonMembershipProof,
  encodeSingleAppendOnlyProof,
} from '../src/proto/codec.js';
import { nodeLabelToMessage, azksElementToMessage } from '../src/proto/to-message.js';
import { nodeLabelFromMessage, azksElementFromMessage } from '../src/proto/from-message.js';
import { AzksElementSchema, NodeLabelSchema } from '../src/proto/gen/types_pb.js';

/** The three proofs of an upstream test-vector file (spec 17.1). */
function loadVectors(name: VectorConfig): {
  lookup: Uint8Array;
  mostRecent: Uint8Array;
  complete: Uint8Array;
} {
  const v = loadUpstream(name);
  return { lookup: v.lookupProof, mostRecent: v.historyMostRecent1, complete: v.historyComplete };
}

const CONFIGS: { name: VectorConfig; sizes: number[] }[] = [
  { name: 'whatsapp_v1', sizes: [2130, 3397, 4764] },
  { name: 'experimental', sizes: [1715, 2756, 4124] },
];

/** The bytes `tag || varint(len) || body` of a length-delimited field. */
function lenField(fieldNo: number, body: Uint8Array): Uint8Array {
  const len: number[] = [];
  for (let n = body.length; ; n >>>= 7) {
    if (n < 0x80) {
      len.push(n);
      break;
    }
    len.push((n & 0x7f) | 0x80);
  }
  return Uint8Array.from([(fieldNo << 3) | 2, ...len, ...body]);
}

function contains(haystack: Uint8Array, needle: Uint8Array): boolean {
  return Buffer.from(haystack).indexOf(Buffer.from(needle)) >= 0;
}

for (const { name, sizes } of CONFIGS) {
  const v = loadVectors(name);

  test(`${name}: lookup proof vector decodes and re-encodes byte for byte (spec 17.1)`, () => {
    assert.equal(v.lookup.length, sizes[0]);
    const p = decodeLookupProof(v.lookup);
    assert.equal(p.epoch, 48n);
    assert.equal(p.version, 3n);
    assert.deepEqual(p.value, utf8('16,48'));
    assert.equal(p.existenceVrfProof.length, 80);
    assert.equal(p.commitmentNonce.length, 32);
    assert.equal(p.existenceProof.label.len, 256);
    assert.equal(p.freshnessProof.longestPrefixChildren.length, 2);
    assert.equal(toHex(encodeLookupProof(p)), toHex(v.lookup));
    // The sub-proofs encode to exactly the nested bytes of the vector.
    const existence = encodeMembershipProof(p.existenceProof);
    assert.ok(contains(v.lookup, lenField(5, existence)));
    assert.deepEqual(decodeMembershipProof(existence), p.existenceProof);
    const freshness = encodeNonMembershipProof(p.freshnessProof);
    assert.ok(contains(v.lookup, lenField(9, freshness)));
    assert.deepEqual(decodeNonMembershipProof(freshness), p.freshnessProof);
  });

  test(`${name}: history proof vectors decode and re-encode byte for byte (spec 17.1)`, () => {
    assert.equal(v.mostRecent.length, sizes[1]);
    assert.equal(v.complete.length, sizes[2]);

    const complete = decodeHistoryProof(v.complete);
    assert.deepEqual(
      complete.updateProofs.map((u) => [u.epoch, u.version]),
      [
        [48n, 3n],
        [32n, 2n],
        [16n, 1n],
      ],
    );
    assert.deepEqual(complete.updateProofs[2]!.value, utf8('16,16'));
    // Version 1 has no previous-version proof; later versions have both fields.
    assert.equal(complete.updateProofs[2]!.previousVersionVrfProof, undefined);
    assert.equal(complete.updateProofs[2]!.previousVersionProof, undefined);
    assert.equal(complete.updateProofs[0]!.previousVersionVrfProof?.length, 80);
    assert.ok(complete.updateProofs[0]!.previousVersionProof);
    assert.equal(complete.pastMarkerVrfProofs.length, 0);
    assert.equal(complete.existenceOfPastMarkerProofs.length, 0);
    assert.equal(complete.futureMarkerVrfProofs.length, 2);
    assert.equal(complete.nonExistenceOfFutureMarkerProofs.length, 2);
    assert.equal(toHex(encodeHistoryProof(complete)), toHex(v.complete));

    const recent = decodeHistoryProof(v.mostRecent);
    assert.equal(recent.updateProofs.length, 1);
    assert.equal(recent.updateProofs[0]!.version, 3n);
    assert.deepEqual(recent.updateProofs[0]!.value, utf8('16,48'));
    assert.equal(recent.pastMarkerVrfProofs.length, 1);
    assert.equal(recent.existenceOfPastMarkerProofs.length, 1);
    assert.equal(recent.futureMarkerVrfProofs.length, 2);
    assert.equal(recent.nonExistenceOfFutureMarkerProofs.length, 2);
    assert.equal(toHex(encodeHistoryProof(recent)), toHex(v.mostRecent));
  });
}

const AUDIT_EXAMPLES = {
  whatsapp_v1: `
0aac020a490a250a20b0eb5864ae16a797ae0ffb2ad9073d57581c24c4f602f53cdabd58836291ac901080021220f0fcc7e8
bd6d86fac0d0b108eb2f6adc024513743769a0617717a3b9360c070b0a490a250a20b2bf229926955cb4f0af54ebef90d724
a552fb721b40a1c220658e1b6730fa9c10800212202d3adedff11b61f14c886e35afa036736dcd87a74d27b5c1510225d0f5
92e2130a490a250a20f3e5f535007982bb233742bf46ef575ee64529491cc1c8dd4e28f40d585cfbf01080021220ab314685
c563af7f23fea85cef35feed883490a5614014c955d159ef21f100b312490a250a2035973b407c2f9bbd7258e4b827ce6374
ada8cdb306616f4698a2324a14ac2be21080021220c808614ea61081d33722259ac79b3d589b52ec14deea8b3a7b371ab240
ccf0371001`,
  experimental: `
0aac020a490a250a20479f2e2207236b59950445ee326c032b5fa53fd80bbaeaa83537c5d968bdb5d41080021220000000
00000000000000000000000000000000000000000000000000000000000a490a250a20b9ac121b2af1e5912df1f233afe900
87f204169c1042bed5fb9401e43f8e8f761080021220e73418c154676b03e5cdd2bec15e9f51960ae4b1eae9172fc879f731
00ba76640a490a250a20fe79c12d0f4cc19cbcab36ac3004a0a242ad4d2e538dff82cb89ebd96b38e3951080021220189a64
2babe44e75120a12e7f596826e93c21a8b2c4a9625e356b0cffe70778f12490a250a20e2be063020e44fedb3a3a884112cef
e21099ae8cd0bb5401e3dd4bb0f246c34d1080021220d7875c515584973ae13b18af01a4e129ba0eee994ee0d6690a1af9e5
ae1aaf041001`,
};

for (const [name, hex] of Object.entries(AUDIT_EXAMPLES)) {
  test(`${name}: the AppendOnlyProof example of spec 10.5 round-trips byte for byte`, () => {
    const bytes = fromHex(hex.replace(/\s+/g, ''));
    const p = decodeAppendOnlyProof(bytes);
    assert.deepEqual(p.epochs, [1n]);
    assert.equal(p.proofs.length, 1);
    const step = p.proofs[0]!;
    assert.equal(step.inserted.length, 3);
    assert.equal(step.unchangedNodes.length, 1);
    assert.ok(step.inserted.every((e) => e.label.len === 256 && e.value.length === 32));
    assert.equal(toHex(encodeAppendOnlyProof(p)), toHex(bytes));
    // proofs[0] is the bare SingleAppendOnlyProof after its 3-byte header `0a ac 02`.
    const single = bytes.subarray(3, 3 + 300);
    assert.deepEqual(decodeSingleAppendOnlyProof(single), step);
    assert.equal(toHex(encodeSingleAppendOnlyProof(step)), toHex(single));
  });
}

function labelHex(label: NodeLabel): string {
  return toHex(toBinary(NodeLabelSchema, nodeLabelToMessage(label)));
}

test('NodeLabel encodings of spec 15.2: trailing zero bytes are dropped', () => {
  assert.equal(labelHex(NodeLabel.root()), '0a001000');
  assert.equal(labelHex(new WhatsAppV1Configuration().emptyLabel), `0a20${'01'.repeat(32)}1000`);
  assert.equal(labelHex(new ExperimentalConfiguration().emptyLabel), '0a01011000');
  const leaf = new Uint8Array(32).fill(0xab);
  assert.equal(labelHex(new NodeLabel(leaf, 256)), `0a20${'ab'.repeat(32)}108002`);
  const one = new Uint8Array(32);
  one[0] = 0x80;
  assert.equal(labelHex(new NodeLabel(one, 1)), '0a01801001');
  const low = new Uint8Array(32);
  low[31] = 1;
  assert.equal(labelHex(new NodeLabel(low, 0)), `0a20${'00'.repeat(31)}011000`);
});

test('NodeLabel and AzksElement helpers invert each other; short label_val is zero-padded', () => {
  for (const label of [NodeLabel.root(), new WhatsAppV1Configuration().emptyLabel]) {
    assert.ok(nodeLabelFromMessage(nodeLabelToMessage(label)).equals(label));
  }
  const short = create(NodeLabelSchema, { labelVal: Uint8Array.from([0xc0]), labelLen: 2 });
  const label = nodeLabelFromMessage(short);
  assert.equal(label.val.length, 32);
  assert.equal(label.val[0], 0xc0);
  assert.equal(label.len, 2);
  // Bits beyond label_len are kept as they are, not rejected (spec 15.4).
  const junk = create(NodeLabelSchema, { labelVal: Uint8Array.from([0xff, 0x01]), labelLen: 1 });
  assert.deepEqual(nodeLabelFromMessage(junk).val.subarray(0, 3), Uint8Array.from([0xff, 1, 0]));

  const el: AzksElement = { label: NodeLabel.root(), value: new Uint8Array(32).fill(7) };
  const msg = azksElementToMessage(el);
  assert.equal(toHex(toBinary(AzksElementSchema, msg)), `0a040a0010001220${'07'.repeat(32)}`);
  assert.deepEqual(azksElementFromMessage(msg), el);
});

test('decoded bytes are copies, not views of the input', () => {
  const v = loadVectors('whatsapp_v1');
  const input = v.lookup.slice();
  const p = decodeLookupProof(input);
  input.fill(0);
  assert.deepEqual(p.value, utf8('16,48'));
  assert.equal(toHex(encodeLookupProof(p)), toHex(v.lookup));
});

const U64_MAX = (1n << 64n) - 1n;

test('u64 extremes round-trip: epochs 0 and 2^64-1, unpacked', () => {
  const proof = { proofs: [], epochs: [0n, 1n, U64_MAX] };
  const bytes = encodeAppendOnlyProof(proof);
  assert.equal(toHex(bytes), `10001001 10ffffffffffffffffff01`.replace(' ', ''));
  assert.deepEqual(decodeAppendOnlyProof(bytes), proof);

  const base = decodeLookupProof(loadVectors('experimental').lookup);
  const big: LookupProof = { ...base, epoch: U64_MAX, version: U64_MAX };
  const again = decodeLookupProof(encodeLookupProof(big));
  assert.equal(again.epoch, U64_MAX);
  assert.equal(again.version, U64_MAX);
});

test('a packed epochs field decodes, alone or mixed with unpacked elements (spec 15.4)', () => {
  const packed = Uint8Array.from([0x12, 0x03, 0x01, 0x02, 0x03, 0x10, 0x05]);
  assert.deepEqual(decodeAppendOnlyProof(packed).epochs, [1n, 2n, 3n, 5n]);
  const max = Uint8Array.from([0x12, 0x0a, ...Array(9).fill(0xff), 0x01]);
  assert.deepEqual(decodeAppendOnlyProof(max).epochs, [U64_MAX]);
  assert.deepEqual(decodeAppendOnlyProof(Uint8Array.from([0x12, 0x00])).epochs, []);
});

test('unknown fields of every wire type are skipped, at the top level and nested', () => {
  const unknown = Uint8Array.from([
    ...[0x78, 0x96, 0x01], // field 15, varint
    ...[0x82, 0x01, 0x02, 0xaa, 0xbb], // field 16, length-delimited
    ...[0x8d, 0x01, 1, 2, 3, 4], // field 17, fixed32
    ...[0x91, 0x01, 1, 2, 3, 4, 5, 6, 7, 8], // field 18, fixed64
    ...[0x9b, 0x01, 0x08, 0x01, 0xa3, 0x01, 0xa4, 0x01, 0x9c, 0x01], // group 19 holding group 20
  ]);
  const v = loadVectors('whatsapp_v1');
  const withTail = Uint8Array.from([...unknown, ...v.lookup, ...unknown]);
  assert.equal(toHex(encodeLookupProof(decodeLookupProof(withTail))), toHex(v.lookup));

  // Inside an AzksElement, and inside its NodeLabel.
  const label = Uint8Array.from([0x0a, 0x00, ...unknown, 0x10, 0x00]);
  const element = Uint8Array.from([
    ...lenField(1, label),
    ...unknown,
    ...lenField(2, new Uint8Array(32)),
  ]);
  const single = lenField(2, element);
  const p = decodeSingleAppendOnlyProof(single);
  assert.equal(p.unchangedNodes.length, 1);
  assert.ok(p.unchangedNodes[0]!.label.equals(NodeLabel.root()));
  assert.equal(
    toHex(encodeSingleAppendOnlyProof(p)),
    toHex(
      lenField(
        2,
        Uint8Array.from([0x0a, 0x04, 0x0a, 0x00, 0x10, 0x00, ...lenField(2, new Uint8Array(32))]),
      ),
    ),
  );
});

test('an empty value and empty byte strings are still written (spec 15.2)', () => {
  const base = decodeLookupProof(loadVectors('whatsapp_v1').lookup);
  const empty: LookupProof = { ...base, value: new Uint8Array(0), epoch: 0n };
  const bytes = encodeLookupProof(empty);
  assert.equal(toHex(bytes.subarray(0, 6)), '080012001803');
  assert.deepEqual(decodeLookupProof(bytes).value, new Uint8Array(0));
});
