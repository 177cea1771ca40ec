// Point-encoding edge cases of the ECVRF (spec 5.3, 5.5; spec 21 item 4 listed them as
// untested): the non-canonical filter of encode_to_curve on crafted `y = p + j` and `x = 0`
// encodings, lenient decoding of public keys and Gamma, proofs whose Gamma or public key carries
// a torsion component, and the s >= L leniency. These pin down upstream's behaviour: dalek
// decompression (non-canonical y taken mod p, x = 0 with the sign bit accepted), exact scalar
// multiples of points outside the prime-order subgroup, and s reduced mod L.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import fc from 'fast-check';
import { ED25519_TORSION_SUBGROUP } from '@noble/curves/ed25519.js';
import { fromHex, toHex, utf8 } from '../src/bytes.js';
import { isAkdError, type AkdError, type AkdErrorCode } from '../src/errors.js';
import {
  CURVE_ORDER,
  Point,
  bytesToScalarLE,
  compressPoints,
  decodePointLenient,
  modL,
  multiplySecret,
  scalarToBytesLE,
  type EdwardsPoint,
} from '../src/vrf/curve.js';
import {
  VrfPublicKey,
  VrfSecretKey,
  challenge,
  encodeToCurve,
  expandSecretKeyBytes,
  interpretHashAsPoint,
  isRejectedNonCanonical,
  verifyWithTrace,
  vrfEvaluate,
  vrfProofToHash,
  vrfProve,
  vrfVerify,
} from '../src/vrf/ecvrf.js';
import { tryAndIncrement } from '../src/vrf/encode-to-curve.js';
import { WindowTable } from '../src/vrf/window-table.js';

const P = 2n ** 255n - 19n;

function assertAkdError(fn: () => unknown, code: AkdErrorCode): AkdError {
  let caught: unknown;
  try {
    fn();
  } catch (e) {
    caught = e;
  }
  assert.ok(isAkdError(caught), `expected AkdError ${code}, got ${String(caught)}`);
  assert.equal(caught.code, code, caught.message);
  return caught;
}

/** 32-byte little-endian encoding of `y` (< 2^255) with the sign bit set or not. */
function encodeY(y: bigint, sign: boolean): Uint8Array {
  const out = scalarToBytesLE(y, 32);
  if (sign) out[31]! |= 0x80;
  return out;
}

/** RFC 8032 5.1.3 strict decoding (y < p, no x = 0 with the sign bit). */
function decodeStrict(bytes: Uint8Array): EdwardsPoint | undefined {
  try {
    return Point.fromBytes(bytes, false);
  } catch {
    return undefined;
  }
}

// Computed in spec 5.3: the j in 0..18 for which y = p + j (that is, y = j) is on the curve.
const ON_CURVE_J = [0, 1, 3, 4, 5, 6, 9, 10, 14, 15, 16, 18];
// The j the filter removes: 256 - h[0] in {1,3,4,5,9,10,13,14,15,16}, h[0] = (p + j) mod 256.
const FILTERED_J = [3, 4, 5, 6, 9, 10, 14, 15, 16, 18];

test('y = p + j: which encodings are on the curve, and which the filter rejects (spec 5.3)', () => {
  for (let j = 0; j <= 18; j++) {
    for (const sign of [false, true]) {
      const bytes = encodeY(P + BigInt(j), sign);
      assert.equal(bytes[31]! & 0x7f, 0x7f, 'bytes 1..31 are all ones for y >= p');
      assert.equal(
        decodePointLenient(bytes) !== undefined,
        ON_CURVE_J.includes(j),
        `lenient decode j=${j}`,
      );
      assert.equal(decodeStrict(bytes), undefined, `strict decoding refuses y >= p (j=${j})`);
      assert.equal(isRejectedNonCanonical(bytes), FILTERED_J.includes(j), `filter j=${j}`);
      // every one of them is refused as a hash-to-curve candidate: filtered, off the curve, or
      // (j = 0, 1) a small-order point whose cofactor multiple is the identity
      assert.equal(interpretHashAsPoint(bytes), undefined, `candidate j=${j} sign=${sign}`);
    }
  }
  // The filter covers every on-curve j except 0 and 1, which are small order.
  for (const j of [0, 1]) {
    const p = decodePointLenient(encodeY(P + BigInt(j), false))!;
    assert.ok(p.isSmallOrder());
  }
});

test('the filter checks every byte it names (spec 5.3)', () => {
  const base = encodeY(P + 3n, true); // filtered
  assert.ok(isRejectedNonCanonical(base));
  for (const i of [1, 15, 30]) {
    const b = base.slice();
    b[i] = 0xfe;
    assert.ok(!isRejectedNonCanonical(b), `byte ${i}`);
  }
  for (const last of [0xfe, 0x7e, 0x00]) {
    const b = base.slice();
    b[31] = last;
    assert.ok(!isRejectedNonCanonical(b), `last byte ${last}`);
  }
  for (let first = 0; first < 256; first++) {
    const b = base.slice();
    b[0] = first;
    const expected = [1, 3, 4, 5, 9, 10, 13, 14, 15, 16].includes(256 - first);
    assert.equal(isRejectedNonCanonical(b), expected, `first byte ${first}`);
  }
  assert.ok(!isRejectedNonCanonical(new Uint8Array(32)));
});

test('x = 0 with the sign bit: decoded leniently, refused as a candidate (spec 5.3, 5.5)', () => {
  // y = 1 is the identity and y = p - 1 the point of order 2; both have x = 0.
  for (const y of [1n, P - 1n]) {
    const signed = encodeY(y, true);
    const lenient = decodePointLenient(signed);
    assert.ok(lenient !== undefined, 'dalek accepts x = 0 with the sign bit');
    assert.equal(lenient.x, 0n);
    assert.equal(decodeStrict(signed), undefined, 'RFC 8032 refuses it');
    assert.ok(lenient.isSmallOrder());
    assert.equal(interpretHashAsPoint(signed), undefined);
    assert.equal(interpretHashAsPoint(encodeY(y, false)), undefined);
  }
});

test('candidates behave like strict decoding minus small-order points (spec 5.3)', () => {
  const crafted: Uint8Array[] = [];
  for (let y = 0n; y < 40n; y++) for (const s of [false, true]) crafted.push(encodeY(y, s));
  for (let j = 0n; j <= 18n; j++) for (const s of [false, true]) crafted.push(encodeY(P + j, s));
  for (const t of ED25519_TORSION_SUBGROUP) crafted.push(fromHex(t));
  const check = (h: Uint8Array): void => {
    const strict = decodeStrict(h);
    const expected = strict === undefined || strict.isSmallOrder() ? undefined : strict;
    const got = interpretHashAsPoint(h);
    if (expected === undefined) assert.equal(got, undefined, toHex(h));
    else assert.ok(got!.equals(expected.clearCofactor()), toHex(h));
  };
  crafted.forEach(check);
  fc.assert(
    fc.property(fc.uint8Array({ minLength: 32, maxLength: 32 }), (h) => check(h)),
    { numRuns: 300 },
  );
});

test('try-and-increment gives up after 256 counter values (RFC 9381 5.4.1.1)', () => {
  const seen: number[] = [];
  const offCurve = encodeY(2n, false); // y = 2 is not on the curve
  assert.equal(decodePointLenient(offCurve), undefined);
  assertAkdError(
    () =>
      tryAndIncrement((ctr) => {
        seen.push(ctr);
        return offCurve;
      }),
    'VRF_VERIFY_FAILED',
  );
  assert.deepEqual(
    seen,
    Array.from({ length: 256 }, (_, i) => i),
  );
  const found = tryAndIncrement((ctr) => (ctr < 5 ? offCurve : Point.BASE.toBytes()));
  assert.equal(found.counter, 5);
  assert.ok(found.point.equals(Point.BASE.clearCofactor()));
});

test('small-order public keys are rejected, in every encoding (spec 5.2)', () => {
  const encodings = ED25519_TORSION_SUBGROUP.map((t) => fromHex(t));
  for (const j of [0n, 1n]) for (const s of [false, true]) encodings.push(encodeY(P + j, s));
  encodings.push(encodeY(1n, true), encodeY(P - 1n, true));
  for (const bytes of encodings) {
    const err = assertAkdError(() => VrfPublicKey.fromBytes(bytes), 'VRF_INVALID_PUBLIC_KEY');
    assert.match(err.message, /small-order/);
    assertAkdError(() => vrfVerify(bytes, new Uint8Array(80), utf8('a')), 'VRF_INVALID_PUBLIC_KEY');
  }
});

test('public keys that are not curve points are rejected (spec 5.2)', () => {
  for (const bytes of [encodeY(2n, false), encodeY(P + 2n, true), encodeY(P + 17n, false)]) {
    const err = assertAkdError(() => VrfPublicKey.fromBytes(bytes), 'VRF_INVALID_PUBLIC_KEY');
    assert.match(err.message, /not a curve point/);
  }
});

test('a non-canonical public key is accepted and hashed as received (spec 5.2, 5.5)', () => {
  // y = p + 3 decodes (leniently) to the point with y = 3, which is not small order.
  const raw = encodeY(P + 3n, false);
  const canonical = encodeY(3n, false);
  const pk = VrfPublicKey.fromBytes(raw);
  assert.equal(toHex(pk.toBytes()), toHex(raw));
  assert.ok(pk.point.equals(VrfPublicKey.fromBytes(canonical).point));
  assert.ok(!pk.equals(VrfPublicKey.fromBytes(canonical)));
  // Upstream salts encode_to_curve with the received bytes, so the two encodings give
  // different H for the same alpha.
  const alpha = utf8('salt');
  assert.notEqual(
    toHex(encodeToCurve(raw, alpha).point.toBytes()),
    toHex(encodeToCurve(canonical, alpha).point.toBytes()),
  );
  // Nobody knows its secret; a proof made under another key must fail cleanly.
  const proof = vrfProve(new Uint8Array(32).fill(1), alpha);
  assertAkdError(() => vrfVerify(pk, proof, alpha), 'VRF_VERIFY_FAILED');
});

const KEY = VrfSecretKey.fromBytes(
  fromHex('c9afa9d845ba75166b5c215767b1d6934e50c3db36e89b127b8a622b120f6721'),
);
const X = modL(
  bytesToScalarLE(
    expandSecretKeyBytes(
      fromHex('c9afa9d845ba75166b5c215767b1d6934e50c3db36e89b127b8a622b120f6721'),
    ).scalarBytes,
  ),
);
const ALPHA = utf8('torsion');

test('Gamma encodings: non-canonical decodes then fails the check; off-curve is invalid', () => {
  const honest = vrfProve(KEY, ALPHA);
  const withGamma = (gamma: Uint8Array): Uint8Array => {
    const p = honest.slice();
    p.set(gamma, 0);
    return p;
  };
  // on the curve, but not the honest Gamma: decoded (leniently), then the challenge differs
  for (const g of [encodeY(P + 3n, false), encodeY(1n, true), encodeY(P - 1n, true)]) {
    const proof = withGamma(g);
    const err = assertAkdError(() => vrfVerify(KEY.publicKey, proof, ALPHA), 'VRF_VERIFY_FAILED');
    assert.equal(err.field, 'proof');
    // proof_to_hash hashes the canonical encoding of 8·Gamma, whatever Gamma's encoding
    const canonical = withGamma(decodePointLenient(g)!.toBytes());
    assert.equal(toHex(vrfProofToHash(proof)), toHex(vrfProofToHash(canonical)));
  }
  for (const g of [encodeY(2n, false), encodeY(P + 2n, false), encodeY(P + 7n, true)]) {
    const err = assertAkdError(
      () => vrfVerify(KEY.publicKey, withGamma(g), ALPHA),
      'VRF_INVALID_PROOF',
    );
    assert.match(err.message, /Gamma/);
    assertAkdError(() => vrfProofToHash(withGamma(g)), 'VRF_INVALID_PROOF');
  }
});

test('s >= L is reduced mod L, not rejected (spec 5.5)', () => {
  const proof = vrfProve(KEY, ALPHA);
  const expected = toHex(vrfEvaluate(KEY, ALPHA));
  const s = bytesToScalarLE(proof.subarray(48));
  let accepted = 0;
  for (let m = 1n; s + m * CURVE_ORDER < 2n ** 256n; m++) {
    const lifted = proof.slice();
    lifted.set(scalarToBytesLE(s + m * CURVE_ORDER, 32), 48);
    assert.equal(toHex(vrfVerify(KEY.publicKey, lifted, ALPHA)), expected, `s + ${m}L`);
    accepted++;
  }
  assert.ok(accepted >= 14, 'L < 2^253, so at least s + 14L still fits in 32 bytes');
});

/** Proof of `alpha` under `pkBytes` with nonce `k`, optionally adding `extra` to Gamma. */
function craftProof(pkBytes: Uint8Array, k: bigint, extra: EdwardsPoint = Point.ZERO) {
  const H = encodeToCurve(pkBytes, ALPHA).point;
  const gamma = H.multiply(X).add(extra);
  const [hB, gB, uB, vB] = compressPoints([H, gamma, Point.BASE.multiply(k), H.multiply(k)]);
  const c = challenge(pkBytes, hB!, gB!, uB!, vB!);
  const cValue = bytesToScalarLE(c);
  const proof = new Uint8Array(80);
  proof.set(gB!, 0);
  proof.set(c, 32);
  proof.set(scalarToBytesLE(modL(k + cValue * X), 32), 48);
  return { proof, c: cValue, u: uB!, v: vB! };
}

const ORDER8 = ED25519_TORSION_SUBGROUP.map((t) => Point.fromBytes(fromHex(t))).find(
  (t) => !t.multiplyUnsafe(4n).is0(),
)!;

test('Gamma with a torsion component verifies exactly when c kills it (spec 5.5)', () => {
  // V = s·H - c·(Gamma + T) = k·H - c·T: equal to the prover's k·H iff 8 | c. Upstream does
  // not check Gamma's subgroup (RFC 9381 does not either); 8·Gamma, and so the output, ignores T.
  const pkBytes = KEY.publicKeyBytes;
  const seen = new Set<boolean>();
  for (let k = 1n; seen.size < 2; k++) {
    const { proof, c, u, v } = craftProof(pkBytes, k, ORDER8);
    const killed = c % 8n === 0n;
    const trace = verifyWithTrace(KEY.publicKey, proof, ALPHA);
    assert.equal(trace.valid, killed, `k=${k}`);
    assert.equal(toHex(trace.u), toHex(u));
    const expectedV = compressPoints([
      decodePointLenient(v)!.subtract(ORDER8.multiplyUnsafe(c % 8n)),
    ]);
    assert.equal(toHex(trace.v), toHex(expectedV[0]!), 'V keeps the exact torsion term');
    if (killed)
      assert.equal(toHex(vrfVerify(KEY.publicKey, proof, ALPHA)), toHex(vrfEvaluate(KEY, ALPHA)));
    else assertAkdError(() => vrfVerify(KEY.publicKey, proof, ALPHA), 'VRF_VERIFY_FAILED');
    seen.add(killed);
  }
});

test('a public key with a torsion component verifies exactly when c kills it (spec 5.2)', () => {
  // Y' = x·B + T is not small order, so upstream accepts it; U = s·B - c·Y' = k·B - c·T.
  const mixed = KEY.publicKey.point.add(ORDER8);
  const pkBytes = mixed.toBytes();
  const pk = VrfPublicKey.fromBytes(pkBytes);
  const seen = new Set<boolean>();
  for (let k = 1n; seen.size < 2; k++) {
    const { proof, c, u } = craftProof(pkBytes, k);
    const killed = c % 8n === 0n;
    const trace = verifyWithTrace(pk, proof, ALPHA);
    assert.equal(trace.valid, killed, `k=${k}`);
    const expectedU = compressPoints([
      decodePointLenient(u)!.subtract(ORDER8.multiplyUnsafe(c % 8n)),
    ]);
    assert.equal(toHex(trace.u), toHex(expectedU[0]!), 'U keeps the exact torsion term');
    seen.add(killed);
  }
});

test('WindowTable multiplies exactly, torsion included, and checks its range', () => {
  const points = [Point.BASE, KEY.publicKey.point.add(ORDER8), ORDER8];
  for (const windowBits of [2, 4, 5, 8]) {
    for (const point of points) {
      const table = new WindowTable(point, 128, windowBits);
      const edge = [0n, 1n, 2n, 7n, 8n, (1n << 128n) - 1n, 1n << 127n, (1n << 64n) + 31n];
      for (const k of edge) assert.ok(table.multiply(k).equals(point.multiplyUnsafe(k)), `${k}`);
    }
  }
  const table = new WindowTable(points[1]!, 128, 5);
  fc.assert(
    fc.property(fc.bigInt({ min: 0n, max: (1n << 128n) - 1n }), (k) =>
      table.multiply(k).equals(points[1]!.multiplyUnsafe(k)),
    ),
    { numRuns: 100 },
  );
  assert.throws(() => table.multiply(1n << 128n), RangeError);
  assert.throws(() => table.multiply(-1n), RangeError);
  for (const w of [1, 17, 2.5])
    assert.throws(() => new WindowTable(Point.BASE, 128, w), RangeError);
});

test('curve helpers: scalar codecs, secret multiply by zero, batched compression', () => {
  assert.equal(bytesToScalarLE(Uint8Array.of(1, 2)), 0x0201n);
  assert.equal(toHex(scalarToBytesLE(0x0201n, 4)), '01020000');
  assert.equal(modL(-1n), CURVE_ORDER - 1n);
  assert.ok(multiplySecret(Point.BASE, 0n).is0());
  assert.ok(multiplySecret(Point.BASE, 5n).equals(Point.BASE.multiplyUnsafe(5n)));
  const pts = [Point.BASE.double(), Point.ZERO, ORDER8.add(Point.BASE)];
  assert.deepEqual(
    compressPoints(pts).map(toHex),
    pts.map((p) => toHex(p.toBytes())),
  );
});
