// The keys of stored VRF proofs: the bytes SQL drivers index round-trip, and the in-process
// map key is equal for two keys exactly when their fields are (labels of any bytes, colons
// and digits among them, and labels longer than one String.fromCharCode call takes).
import assert from 'node:assert/strict';
import { test } from 'node:test';
import {
  VRF_PROOF_BYTES,
  vrfProofKeyBytes,
  vrfProofKeyFromBytes,
  vrfProofMapKey,
  vrfProofRecordOf,
  type VrfProofKey,
} from '@akd-ts/storage';

const bytes = (...b: number[]) => new Uint8Array(b);
const long = (n: number, last: number) => {
  const out = new Uint8Array(n).fill(7);
  out[n - 1] = last;
  return out;
};

const keys: VrfProofKey[] = [
  { freshness: 0, version: 1n, label: bytes() },
  { freshness: 1, version: 1n, label: bytes() },
  { freshness: 0, version: 11n, label: bytes() },
  { freshness: 0, version: 1n, label: bytes(0x31) }, // "1": version 11 vs 1 then "1"
  { freshness: 0, version: 1n, label: bytes(0x3a) }, // ":"
  { freshness: 0, version: 1n, label: bytes(0x3a, 0x31) },
  { freshness: 1, version: 0n, label: bytes(0x31) },
  { freshness: 0, version: 10n, label: bytes() },
  { freshness: 0, version: 1n, label: bytes(0) },
  { freshness: 0, version: 1n, label: bytes(0, 0) },
  { freshness: 0, version: 1n, label: bytes(255) },
  { freshness: 1, version: (1n << 63n) - 1n, label: bytes(1, 2, 3) },
  { freshness: 0, version: 1n, label: long(10_000, 1) },
  { freshness: 0, version: 1n, label: long(10_000, 2) },
  { freshness: 0, version: 1n, label: long(10_001, 1) },
];

test('map keys are equal exactly when the fields are', () => {
  const seen = new Map<string, number>();
  keys.forEach((k, i) => {
    const at = vrfProofMapKey(k);
    assert.equal(seen.get(at), undefined, `key ${i} collides with key ${seen.get(at)}`);
    seen.set(at, i);
    // a copy with the same fields (another label buffer) maps to the same key
    assert.equal(vrfProofMapKey({ ...k, label: k.label.slice() }), at, `key ${i} copied`);
  });
  // a view into a larger buffer counts only its own bytes
  const big = bytes(9, 0x3a, 0x31, 9);
  assert.equal(
    vrfProofMapKey({ freshness: 0, version: 1n, label: big.subarray(1, 3) }),
    vrfProofMapKey(keys[5]!),
  );
});

test('key bytes round-trip, and only 80- or 112-byte values are records', () => {
  for (const k of keys) {
    const back = vrfProofKeyFromBytes(vrfProofKeyBytes(k));
    assert.deepEqual(back, { ...k, label: k.label.slice() });
  }
  assert.throws(() => vrfProofKeyFromBytes(bytes(0, 0, 0)), RangeError);
  assert.throws(() => vrfProofKeyFromBytes(bytes(2, 0, 0, 0, 0, 0, 0, 0, 1)), RangeError);
  const key = keys[0]!;
  const proof = new Uint8Array(VRF_PROOF_BYTES).fill(5);
  assert.equal(vrfProofRecordOf(key, proof).nonce, undefined);
  const withNonce = new Uint8Array(VRF_PROOF_BYTES + 32).fill(6);
  assert.deepEqual(vrfProofRecordOf(key, withNonce).nonce, new Uint8Array(32).fill(6));
  for (const n of [0, 79, 81, 111, 113]) {
    assert.throws(() => vrfProofRecordOf(key, new Uint8Array(n)), /80 or 112 bytes/);
  }
});
