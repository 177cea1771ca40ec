// The direct proof writers (src/proto/proof-writer.ts) against protobuf-es's generic encoder
// of the same messages (src/proto/to-message.ts): upstream's vectors, crafted extremes and
// seeded random proofs give the same bytes, and caller mistakes the same errors.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { toBinary } from '@bufbuild/protobuf';
import { loadVectors, type VectorConfig } from '../../../test/support/vectors.js';
import { toHex } from '../src/bytes.js';
import { NodeLabel } from '../src/node-label.js';
import type * as akd from '../src/types.js';
import {
  decodeHistoryProof,
  decodeLookupProof,
  encodeHistoryProof,
  encodeLookupProof,
  encodeMembershipProof,
  encodeNonMembershipProof,
} from '../src/proto/codec.js';
import * as pb from '../src/proto/gen/types_pb.js';
import {
  historyProofToMessage,
  lookupProofToMessage,
  membershipProofToMessage,
  nonMembershipProofToMessage,
} from '../src/proto/to-message.js';

const generic = {
  lookup: (p: akd.LookupProof) => toBinary(pb.LookupProofSchema, lookupProofToMessage(p)),
  history: (p: akd.HistoryProof) => toBinary(pb.HistoryProofSchema, historyProofToMessage(p)),
  membership: (p: akd.MembershipProof) =>
    toBinary(pb.MembershipProofSchema, membershipProofToMessage(p)),
  nonMembership: (p: akd.NonMembershipProof) =>
    toBinary(pb.NonMembershipProofSchema, nonMembershipProofToMessage(p)),
};

/** A small seeded generator (xorshift32), so a failure names a reproducible case. */
function rng(seed: number) {
  let s = seed >>> 0 || 1;
  const next = () => {
    s ^= s << 13;
    s >>>= 0;
    s ^= s >>> 17;
    s ^= s << 5;
    s >>>= 0;
    return s;
  };
  const int = (n: number) => next() % n;
  const bytes = (n: number) => Uint8Array.from({ length: n }, () => int(256));
  const u64 = (): bigint => {
    switch (int(4)) {
      case 0:
        return BigInt(int(200));
      case 1:
        return 2n ** 64n - 1n - BigInt(int(3));
      case 2:
        return (BigInt(next()) << 32n) | BigInt(next());
      default:
        return 2n ** 53n + BigInt(int(1000));
    }
  };
  const label = (): NodeLabel => {
    const len = [0, 1, 7, 8, 9, 255, 256][int(7)]!;
    const val = new Uint8Array(32);
    if (len > 0) val.set(bytes(Math.ceil(len / 8)));
    // some labels end in zero bytes, which the wire form drops
    if (int(3) === 0) val.fill(0, int(32));
    return new NodeLabel(val, len);
  };
  const element = (): akd.AzksElement => ({ label: label(), value: bytes(32) });
  const membership = (): akd.MembershipProof => ({
    label: label(),
    hashVal: bytes(32),
    // enough siblings, now and then, for lengths of two and three varint bytes
    siblingProofs: Array.from({ length: [0, 1, 3, 40, 256][int(5)]! }, () => ({
      label: label(),
      siblings: [element()] as [akd.AzksElement],
      direction: int(2) as akd.SiblingProof['direction'],
    })),
  });
  const nonMembership = (): akd.NonMembershipProof => ({
    label: label(),
    longestPrefix: label(),
    longestPrefixChildren: [element(), element()],
    longestPrefixMembershipProof: membership(),
  });
  const value = () => bytes([0, 1, 127, 128, 20_000][int(5)]!);
  const lookup = (): akd.LookupProof => ({
    epoch: u64(),
    value: value(),
    version: u64(),
    existenceVrfProof: bytes(80),
    existenceProof: membership(),
    markerVrfProof: bytes(int(2) * 80),
    markerProof: membership(),
    freshnessVrfProof: bytes(80),
    freshnessProof: nonMembership(),
    commitmentNonce: bytes(int(2) * 32),
  });
  const update = (): akd.UpdateProof => ({
    epoch: u64(),
    value: value(),
    version: u64(),
    existenceVrfProof: bytes(80),
    existenceProof: membership(),
    ...(int(2) === 0 ? { previousVersionVrfProof: bytes(int(2) * 80) } : {}),
    ...(int(2) === 0 ? { previousVersionProof: membership() } : {}),
    commitmentNonce: bytes(32),
  });
  const history = (): akd.HistoryProof => ({
    updateProofs: Array.from({ length: int(4) }, update),
    pastMarkerVrfProofs: Array.from({ length: int(3) }, () => bytes(80)),
    existenceOfPastMarkerProofs: Array.from({ length: int(3) }, membership),
    futureMarkerVrfProofs: Array.from({ length: int(3) }, () => bytes(int(2) * 80)),
    nonExistenceOfFutureMarkerProofs: Array.from({ length: int(3) }, nonMembership),
  });
  return { lookup, update, history, membership, nonMembership };
}

for (const name of ['whatsapp_v1', 'experimental'] as VectorConfig[]) {
  test(`${name}: upstream's proofs are written byte for byte, as the generic encoder writes them`, () => {
    const v = loadVectors(name);
    const lookup = decodeLookupProof(v.lookupProof);
    assert.equal(toHex(encodeLookupProof(lookup)), toHex(v.lookupProof));
    assert.equal(toHex(encodeLookupProof(lookup)), toHex(generic.lookup(lookup)));
    for (const bytes of [v.historyMostRecent1, v.historyComplete]) {
      const history = decodeHistoryProof(bytes);
      assert.equal(toHex(encodeHistoryProof(history)), toHex(bytes));
      assert.equal(toHex(encodeHistoryProof(history)), toHex(generic.history(history)));
    }
    const m = lookup.existenceProof;
    assert.equal(toHex(encodeMembershipProof(m)), toHex(generic.membership(m)));
    const n = lookup.freshnessProof;
    assert.equal(toHex(encodeNonMembershipProof(n)), toHex(generic.nonMembership(n)));
  });
}

test('random proofs (u64 extremes, empty and long fields, root and leaf labels) match', () => {
  for (let seed = 1; seed <= 60; seed++) {
    const g = rng(seed);
    const lookup = g.lookup();
    assert.equal(toHex(encodeLookupProof(lookup)), toHex(generic.lookup(lookup)), `seed ${seed}`);
    const history = g.history();
    assert.equal(
      toHex(encodeHistoryProof(history)),
      toHex(generic.history(history)),
      `seed ${seed}`,
    );
    const m = g.membership();
    assert.equal(toHex(encodeMembershipProof(m)), toHex(generic.membership(m)), `seed ${seed}`);
    const n = g.nonMembership();
    assert.equal(
      toHex(encodeNonMembershipProof(n)),
      toHex(generic.nonMembership(n)),
      `seed ${seed}`,
    );
  }
});

test('an empty history and a membership proof without siblings match', () => {
  const empty: akd.HistoryProof = {
    updateProofs: [],
    pastMarkerVrfProofs: [],
    existenceOfPastMarkerProofs: [],
    futureMarkerVrfProofs: [],
    nonExistenceOfFutureMarkerProofs: [],
  };
  assert.equal(encodeHistoryProof(empty).length, 0);
  const m: akd.MembershipProof = {
    label: NodeLabel.root(),
    hashVal: new Uint8Array(32),
    siblingProofs: [],
  };
  // label {label_val: empty, label_len: 0}, then hash_val
  assert.equal(toHex(encodeMembershipProof(m)), toHex(generic.membership(m)));
  assert.equal(toHex(encodeMembershipProof(m)).slice(0, 12), '0a040a001000');
});

test('caller mistakes get the generic encoder’s errors, naming the field', () => {
  const g = rng(7);
  const errorOf = (f: () => unknown) => {
    try {
      f();
    } catch (e) {
      return { type: (e as Error).constructor.name, message: (e as Error).message };
    }
    return assert.fail('no error');
  };
  const cases: [string, (p: akd.LookupProof) => void][] = [
    ['hash_val of 31 bytes', (p) => (p.existenceProof.hashVal = new Uint8Array(31))],
    [
      'element value of 33 bytes',
      (p) => (p.freshnessProof.longestPrefixChildren[1].value = new Uint8Array(33)),
    ],
    ['a negative epoch', (p) => (p.epoch = -1n)],
    ['a version of 2^64', (p) => (p.version = 2n ** 64n)],
    ['an epoch that is a number', (p) => (p.epoch = 3 as unknown as bigint)],
  ];
  for (const [what, spoil] of cases) {
    const p = g.lookup();
    spoil(p);
    assert.deepEqual(
      errorOf(() => encodeLookupProof(p)),
      errorOf(() => generic.lookup(p)),
      what,
    );
  }
  const h = g.history();
  h.updateProofs = [g.update(), { ...g.update(), epoch: 2n ** 64n }];
  assert.deepEqual(
    errorOf(() => encodeHistoryProof(h)),
    errorOf(() => generic.history(h)),
  );
});
