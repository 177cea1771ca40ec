import { test } from 'node:test';
import assert from 'node:assert/strict';
import {
  AkdError,
  auditorHeadMessage,
  auditorPublicKey,
  fromHex,
  signAuditorHead,
  signedHeadFromJson,
  signedHeadToJson,
  toHex,
  verifyAuditorHead,
  type SignedAuditorHead,
} from '@akd-ts/core';

// RFC 8032 section 7.1, test 1: the secret key and its public key
const SECRET = fromHex('9d61b19deffd5a60ba844af492ec2cc44449c5697b326919703bac031cae7f60');
const PUBLIC = 'd75a980182b10ab7d54bfed3c964073a0ee172f3daa62325af021a68f707511a';
const HEAD = {
  namespace: 'https://example.com/v1/audit-blobs',
  epoch: 722_606n,
  timestamp: 1_700_000_000_000n,
  rootHash: new Uint8Array(32).fill(0xab),
};

function rejected(f: () => unknown, code = 'AUDIT_SIGNATURE'): AkdError {
  try {
    f();
  } catch (e) {
    assert.ok(e instanceof AkdError, String(e));
    assert.equal(e.code, code);
    return e;
  }
  assert.fail('accepted');
}

test('the signed message has the documented layout', () => {
  const m = auditorHeadMessage(HEAD);
  const ns = new TextEncoder().encode(HEAD.namespace);
  assert.equal(m.length, 24 + 4 + ns.length + 8 + 8 + 32);
  assert.equal(new TextDecoder().decode(m.subarray(0, 22)), 'akd-ts auditor head v1');
  assert.deepEqual([...m.subarray(22, 24)], [0, 0]);
  assert.equal(toHex(m.subarray(24, 28)), ns.length.toString(16).padStart(8, '0'));
  assert.deepEqual(m.subarray(28, 28 + ns.length), ns);
  let o = 28 + ns.length;
  assert.equal(toHex(m.subarray(o, o + 8)), '00000000000b06ae'); // 722606
  o += 8;
  assert.equal(BigInt(`0x${toHex(m.subarray(o, o + 8))}`), HEAD.timestamp);
  assert.deepEqual(m.subarray(o + 8), HEAD.rootHash);
});

test('a signed head verifies with the auditor key, and every change breaks it', () => {
  assert.equal(toHex(auditorPublicKey(SECRET)), PUBLIC);
  const signed = signAuditorHead(SECRET, HEAD);
  assert.equal(toHex(signed.publicKey), PUBLIC);
  assert.equal(signed.signature.length, 64);
  verifyAuditorHead(fromHex(PUBLIC), signed);
  // deterministic (RFC 8032): the same head gives the same signature
  assert.deepEqual(signAuditorHead(SECRET, HEAD).signature, signed.signature);

  const tamper = (change: Partial<SignedAuditorHead>) =>
    rejected(() => verifyAuditorHead(fromHex(PUBLIC), { ...signed, ...change }));
  assert.match(
    tamper({ epoch: HEAD.epoch + 1n }).message,
    /signature of epoch 722607 does not verify/,
  );
  tamper({ timestamp: 0n });
  tamper({ namespace: 'another log' });
  tamper({ rootHash: new Uint8Array(32) });
  const flipped = signed.signature.slice();
  flipped[5]! ^= 1;
  tamper({ signature: flipped });
  tamper({ signature: signed.signature.subarray(1) });
  // a non-canonical S (S + L) is refused: RFC 8032 strict decoding, not ZIP-215
  const sPlusL = signed.signature.slice();
  const L = [
    0xed, 0xd3, 0xf5, 0x5c, 0x1a, 0x63, 0x12, 0x58, 0xd6, 0x9c, 0xf7, 0xa2, 0xde, 0xf9, 0xde, 0x14,
    0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0x10,
  ];
  let carry = 0;
  for (let i = 0; i < 32; i++) {
    const v = sPlusL[32 + i]! + L[i]! + carry;
    sPlusL[32 + i] = v & 0xff;
    carry = v >> 8;
  }
  tamper({ signature: sPlusL });
  // another auditor's key
  const other = auditorPublicKey(new Uint8Array(32).fill(7));
  assert.match(
    rejected(() => verifyAuditorHead(other, signed)).message,
    /signed by auditor key d75a/,
  );
  assert.equal(rejected(() => verifyAuditorHead(other, signed)).field, 'publicKey');
  // a key that is not a curve point
  const notPoint = new Uint8Array(32).fill(0xff);
  rejected(() => verifyAuditorHead(notPoint, { ...signed, publicKey: notPoint }));
});

test('caller mistakes are RangeErrors', () => {
  assert.throws(() => auditorHeadMessage({ ...HEAD, epoch: -1n }), RangeError);
  assert.throws(() => auditorHeadMessage({ ...HEAD, timestamp: 1n << 64n }), RangeError);
  assert.throws(() => auditorHeadMessage({ ...HEAD, rootHash: new Uint8Array(31) }), RangeError);
  assert.throws(() => auditorHeadMessage({ ...HEAD, namespace: 'x'.repeat(1025) }), RangeError);
  assert.throws(() => auditorPublicKey(new Uint8Array(31)), RangeError);
  const signed = signAuditorHead(SECRET, HEAD);
  assert.throws(() => verifyAuditorHead(fromHex(PUBLIC), { ...signed, epoch: -1n }), RangeError);
});

test('the JSON form round-trips exactly, and malformed JSON is DECODE_INVALID_VALUE', () => {
  const signed = signAuditorHead(SECRET, { ...HEAD, epoch: (1n << 64n) - 1n });
  const json = signedHeadToJson(signed);
  assert.equal(json.epoch, '18446744073709551615');
  assert.equal(json.publicKey, PUBLIC);
  const back = signedHeadFromJson(JSON.parse(JSON.stringify(json)));
  assert.deepEqual(back, signed);
  verifyAuditorHead(fromHex(PUBLIC), back);
  const bad = (o: unknown, field?: string) => {
    const e = rejected(() => signedHeadFromJson(o), 'DECODE_INVALID_VALUE');
    if (field !== undefined) assert.equal(e.field, field);
  };
  bad(null);
  bad('head');
  bad({ ...json, namespace: 5 }, 'namespace');
  bad({ ...json, epoch: 5 }, 'epoch');
  bad({ ...json, epoch: '05' }, 'epoch');
  bad({ ...json, timestamp: '99999999999999999999' });
  bad({ ...json, rootHash: 'ab' }, 'rootHash');
  bad({ ...json, signature: json.signature.slice(2) }, 'signature');
  bad({ ...json, publicKey: undefined }, 'publicKey');
});
