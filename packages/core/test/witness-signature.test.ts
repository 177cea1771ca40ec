// Witness signatures: every field, the signature, the key id and the signed bytes tampered
// with are refused with their own code, as are another namespace, another key, and the points
// a strict (non-ZIP-215, torsion-free) verifier must refuse.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { ED25519_TORSION_SUBGROUP, ed25519 } from '@noble/curves/ed25519.js';
import { sha512 } from '@noble/hashes/sha2.js';
import {
  AkdError,
  concatBytes,
  encodeSignatureMessage,
  signWitness,
  verifyWitnessSignature,
  witnessKeyId,
  type AkdErrorCode,
  type PlexiCiphersuite,
  type WitnessSignature,
} from '@akd-ts/core';

const SEED = new Uint8Array(32).fill(3);
const KEY = ed25519.getPublicKey(SEED);
const OTHER_SEED = new Uint8Array(32).fill(4);
const ROOT = new Uint8Array(32).fill(0x5a);
const L = ed25519.Point.Fn.ORDER;

function sign(ciphersuite: PlexiCiphersuite): WitnessSignature {
  const m = { ciphersuite, namespace: 'log.example', timestamp: 1_700_000_000_000n, epoch: 42n };
  return signWitness({ ...m, digest: ROOT }, SEED);
}

function refused(s: WitnessSignature, code: AkdErrorCode, key: Uint8Array = KEY): AkdError {
  try {
    verifyWitnessSignature(s, key);
  } catch (e) {
    assert.ok(e instanceof AkdError, String(e));
    assert.equal(e.code, code, e.message);
    return e;
  }
  assert.fail('accepted');
}

function flip(bytes: Uint8Array, at = 0): Uint8Array {
  const out = bytes.slice();
  out[at]! ^= 1;
  return out;
}

for (const cs of [1, 2] as const) {
  test(`ciphersuite ${cs}: a fresh signature verifies and names the key`, () => {
    const s = sign(cs);
    verifyWitnessSignature(s, KEY);
    assert.equal(s.keyId, KEY[31]);
    assert.equal(s.ciphersuite, cs);
    assert.deepEqual(s.serializedMessage, encodeSignatureMessage(s));
  });

  const fields: [string, (s: WitnessSignature) => WitnessSignature][] = [
    ['namespace', (s) => ({ ...s, namespace: 'another.log' })],
    ['timestamp', (s) => ({ ...s, timestamp: s.timestamp + 1n })],
    ['epoch', (s) => ({ ...s, epoch: s.epoch + 1n })],
    ['digest', (s) => ({ ...s, digest: flip(s.digest, 31) })],
    ['ciphersuite', (s) => ({ ...s, ciphersuite: 3 - cs, version: 3 - cs }) as WitnessSignature],
  ];
  for (const [name, tamper] of fields) {
    test(`ciphersuite ${cs}: a tampered ${name} is refused, with or without its bytes`, () => {
      const t = tamper(sign(cs));
      const e = refused(t, 'WITNESS_MESSAGE_MISMATCH');
      assert.equal(e.field, 'serialized_message');
      // re-encoded so that the bytes match the fields: the signature no longer covers them
      const e2 = refused(
        { ...t, serializedMessage: encodeSignatureMessage(t) },
        'WITNESS_SIGNATURE_INVALID',
      );
      assert.equal(e2.field, 'signature');
    });
  }

  test(`ciphersuite ${cs}: a tampered signature, key id or serialized message is refused`, () => {
    const s = sign(cs);
    refused({ ...s, signature: flip(s.signature) }, 'WITNESS_SIGNATURE_INVALID'); // R
    refused({ ...s, signature: flip(s.signature, 40) }, 'WITNESS_SIGNATURE_INVALID'); // s
    refused({ ...s, signature: s.signature.subarray(0, 63) }, 'WITNESS_SIGNATURE_INVALID');
    assert.equal(
      refused({ ...s, keyId: (s.keyId + 1) % 256 }, 'WITNESS_KEY_MISMATCH').field,
      'key_id',
    );
    refused({ ...s, serializedMessage: flip(s.serializedMessage, 5) }, 'WITNESS_MESSAGE_MISMATCH');
  });

  test(`ciphersuite ${cs}: another witness's key is refused`, () => {
    const s = sign(cs);
    const other = ed25519.getPublicKey(OTHER_SEED);
    assert.notEqual(other[31], KEY[31]);
    refused(s, 'WITNESS_KEY_MISMATCH', other);
    // a key with the same key id (last byte) still fails on the signature itself
    let seed = 5;
    let sameId = ed25519.getPublicKey(new Uint8Array(32).fill(seed));
    while (sameId[31] !== KEY[31]) sameId = ed25519.getPublicKey(new Uint8Array(32).fill(++seed));
    refused(s, 'WITNESS_SIGNATURE_INVALID', sameId);
    // and 32 bytes that are no point at all, with the right id
    const notAPoint = new Uint8Array(32).fill(0xff);
    notAPoint[31] = KEY[31]!;
    refused(s, 'WITNESS_SIGNATURE_INVALID', notAPoint);
  });

  test(`ciphersuite ${cs}: a signature by another key with its id is refused`, () => {
    const forged = signWitness(sign(cs), OTHER_SEED);
    refused({ ...forged, keyId: KEY[31]! }, 'WITNESS_SIGNATURE_INVALID');
  });
}

test('a version that is not the ciphersuite, or an unknown ciphersuite, is refused', () => {
  const s = sign(1);
  assert.equal(refused({ ...s, version: 2 }, 'WITNESS_DECODE').field, 'version');
  const unknown = { ...s, ciphersuite: 3, version: 3 } as unknown as WitnessSignature;
  assert.equal(refused(unknown, 'WITNESS_DECODE').field, 'ciphersuite');
});

// Strictness: a signature that a cofactored verifier accepts but a cofactorless one (Plexi's
// ed25519-dalek verify_strict) refuses, because the key or R carries an order-8 component.
const TORSION = ed25519.Point.fromHex(ED25519_TORSION_SUBGROUP[1]!);
const G = ed25519.Point.BASE;
function le256(n: bigint): Uint8Array {
  const out = new Uint8Array(32);
  for (let i = 0; i < 32; i++) out[i] = Number((n >> BigInt(8 * i)) & 0xffn);
  return out;
}
function scalar(bytes: Uint8Array): bigint {
  let n = 0n;
  for (let i = bytes.length - 1; i >= 0; i--) n = (n << 8n) | BigInt(bytes[i]!);
  return n % L;
}
/** A signature by secret scalar `a` with nonce `r`, where the points written may differ. */
function craft(
  message: Uint8Array,
  a: bigint,
  r: bigint,
  keyBytes: Uint8Array,
  rBytes: Uint8Array,
): Uint8Array {
  const k = scalar(sha512(concatBytes(rBytes, keyBytes, message)));
  return concatBytes(rBytes, le256((r + k * a) % L));
}

test('a key with a small-order component is refused, though a cofactored check passes', () => {
  const s = sign(1);
  const a = 123_456_789n;
  const mixedKey = G.multiply(a).add(TORSION).toBytes();
  // keep the key id consistent so that only the point itself is at fault
  const signature = craft(s.serializedMessage, a, 1000n, mixedKey, G.multiply(1000n).toBytes());
  // R + kA' - sB = kT, which the cofactor clears
  assert.ok(ed25519.verify(signature, s.serializedMessage, mixedKey, { zip215: false }));
  refused({ ...s, signature, keyId: mixedKey[31]! }, 'WITNESS_SIGNATURE_INVALID', mixedKey);
});

test('an R with a small-order component is refused, though a cofactored check passes', () => {
  const s = sign(2);
  const a = scalar(ed25519.utils.getExtendedPublicKey(SEED).head);
  const r = 987_654_321n;
  const signature = craft(s.serializedMessage, a, r, KEY, G.multiply(r).add(TORSION).toBytes());
  assert.ok(ed25519.verify(signature, s.serializedMessage, KEY, { zip215: false }));
  refused({ ...s, signature }, 'WITNESS_SIGNATURE_INVALID');
});

test('a small-order key and a non-canonical s are refused', () => {
  const s = sign(1);
  const identity = G.subtract(G).toBytes();
  const zeroSig = concatBytes(identity, new Uint8Array(32));
  refused(
    { ...s, signature: zeroSig, keyId: identity[31]! },
    'WITNESS_SIGNATURE_INVALID',
    identity,
  );
  const sPlusL = le256(scalar(s.signature.subarray(32)) + L);
  refused(
    { ...s, signature: concatBytes(s.signature.subarray(0, 32), sPlusL) },
    'WITNESS_SIGNATURE_INVALID',
  );
});

test('caller mistakes throw TypeError or RangeError naming the argument', () => {
  const m = { ciphersuite: 1, namespace: 'n', timestamp: 0n, epoch: 0n, digest: ROOT } as const;
  assert.throws(() => encodeSignatureMessage({ ...m, ciphersuite: 3 as 1 }), /ciphersuite/);
  assert.throws(() => encodeSignatureMessage({ ...m, epoch: -1n }), RangeError);
  assert.throws(() => encodeSignatureMessage({ ...m, timestamp: 1n << 64n }), RangeError);
  assert.throws(() => encodeSignatureMessage({ ...m, namespace: 'a\ud800' }), /namespace/);
  assert.throws(
    () => encodeSignatureMessage({ ...m, namespace: 1 as unknown as string }),
    TypeError,
  );
  assert.throws(
    () => encodeSignatureMessage({ ...m, digest: [1] as unknown as Uint8Array }),
    TypeError,
  );
  assert.throws(() => encodeSignatureMessage(null as unknown as typeof m), TypeError);
  assert.throws(() => signWitness(m, new Uint8Array(31)), /secretKey/);
  assert.throws(() => verifyWitnessSignature(sign(1), new Uint8Array(31)), /publicKey/);
  assert.throws(() => witnessKeyId(new Uint8Array(33)), RangeError);
  assert.equal(witnessKeyId(KEY), KEY[31]);
});
