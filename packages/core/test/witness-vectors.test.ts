// Plexi's published vectors (test/vectors/plexi): our encodings of SignatureMessage must give
// the bytes Plexi signs, which the deterministic Ed25519 signatures prove, and the byte layouts
// written out by hand from message.ts's tables.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { ed25519 } from '@noble/curves/ed25519.js';
import {
  encodeSignatureMessage,
  fromHex,
  isPlexiCiphersuite,
  parseWitnessSignature,
  signWitness,
  toHex,
  verifyWitnessSignature,
  witnessKeyId,
  witnessSignatureToJson,
  type SignatureMessage,
} from '@akd-ts/core';

interface PlexiVector {
  signing_key: string;
  verifying_key: string;
  key_id: number;
  namespace: string;
  timestamp: number;
  epoch: number;
  digest: string;
  signature: string;
  ciphersuite: number;
}

const FILE = new URL('../../../test/vectors/plexi/test-vectors.json', import.meta.url);
const VECTORS = (JSON.parse(readFileSync(FILE, 'utf8')) as { vectors: PlexiVector[] }).vectors;

// message.ts's layouts applied by hand to the two vectors (timestamp 1717084639921 is the
// varint b1a5e1d1fc31 and the little-endian u64 b15238ca8f010000)
const LAYOUTS = [
  '0801' + // field 1, ciphersuite 1
    '1210' +
    toHex(new TextEncoder().encode('log1.example.com')) + // field 2, 16 bytes
    '18b1a5e1d1fc31' + // field 3, timestamp
    '22020801' + // field 4, Epoch { 1: 1 }
    '2a20' +
    '11'.repeat(32), // field 5, 32 bytes
  '02000000' + // ciphersuite 2
    '1000000000000000' +
    toHex(new TextEncoder().encode('log2.example.com')) +
    'b15238ca8f010000' + // timestamp
    '0100000000000000' + // epoch
    '2000000000000000' +
    '11'.repeat(32), // digest
];

function messageOf(v: PlexiVector): SignatureMessage {
  assert.ok(isPlexiCiphersuite(v.ciphersuite));
  return {
    ciphersuite: v.ciphersuite,
    namespace: v.namespace,
    timestamp: BigInt(v.timestamp),
    epoch: BigInt(v.epoch),
    digest: fromHex(v.digest),
  };
}

test('the vector file has both ciphersuites', () => {
  assert.deepEqual(
    VECTORS.map((v) => v.ciphersuite),
    [1, 2],
  );
});

VECTORS.forEach((v, i) => {
  test(`Plexi vector ${i} (ciphersuite ${v.ciphersuite}): layout, signature, key id`, () => {
    const seed = fromHex(v.signing_key);
    const publicKey = ed25519.getPublicKey(seed);
    assert.equal(toHex(publicKey), v.verifying_key);
    assert.equal(witnessKeyId(publicKey), v.key_id);
    const m = messageOf(v);
    assert.equal(toHex(encodeSignatureMessage(m)), LAYOUTS[i]);
    const s = signWitness(m, seed);
    assert.equal(toHex(s.signature), v.signature);
    assert.equal(s.keyId, v.key_id);
    assert.equal(s.version, v.ciphersuite);
    verifyWitnessSignature(s, publicKey);
  });

  test(`Plexi vector ${i}: its JSON as Plexi would serve it verifies`, () => {
    const m = messageOf(v);
    const json = {
      version: v.ciphersuite,
      ciphersuite: v.ciphersuite,
      namespace: v.namespace,
      timestamp: v.timestamp,
      epoch: v.epoch,
      digest: v.digest,
      signature: v.signature,
      key_id: v.key_id,
      serialized_message: toHex(encodeSignatureMessage(m)),
    };
    const parsed = parseWitnessSignature(JSON.parse(JSON.stringify(json)));
    verifyWitnessSignature(parsed, fromHex(v.verifying_key));
    // written back field for field, in Plexi's order
    assert.deepEqual(Object.entries(witnessSignatureToJson(parsed)), Object.entries(json));
  });
});

test('every field is written even when zero or empty (proto2 required fields)', () => {
  const zero = { namespace: '', timestamp: 0n, epoch: 0n, digest: new Uint8Array(0) };
  assert.equal(
    toHex(encodeSignatureMessage({ ciphersuite: 1, ...zero })),
    '0801' + '1200' + '1800' + '22020800' + '2a00',
  );
  assert.equal(
    toHex(encodeSignatureMessage({ ciphersuite: 2, ...zero })),
    '02000000' + '00'.repeat(8 * 4),
  );
});

test('u64 extremes take ten varint bytes and eight little-endian bytes', () => {
  const max = (1n << 64n) - 1n;
  const m = { namespace: 'n', timestamp: max, epoch: max, digest: new Uint8Array([7]) };
  const v = 'ffffffffffffffffff01';
  assert.equal(
    toHex(encodeSignatureMessage({ ciphersuite: 1, ...m })),
    '0801' + '12016e' + '18' + v + '220b08' + v + '2a0107',
  );
  assert.equal(
    toHex(encodeSignatureMessage({ ciphersuite: 2, ...m })),
    '02000000' + '0100000000000000' + '6e' + 'ff'.repeat(16) + '0100000000000000' + '07',
  );
});
