/**
 * The native evaluation against core's portable ECVRF, the reference: random keys and inputs,
 * then crafted try-and-increment candidates that SHA-512 would essentially never produce
 * (non-canonical y, small-order points, x = 0 with the sign bit), then bad arguments.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import fc from 'fast-check';
import { ED25519_TORSION_SUBGROUP, ed25519 } from '@noble/curves/ed25519.js';
import { VrfSecretKey, fromHex, isRejectedNonCanonical, toHex, vrfEvaluate } from '@akd-ts/core';
// core's own candidate check (not part of its public API): the reference for crafted inputs
import { interpretHashAsPoint } from '../../core/src/vrf/ecvrf.js';
import {
  NativeVrfKey,
  addonMismatch,
  loadNativeVrf,
  nativeVrfLoadError,
  proofPointArithmetic,
} from '@akd-ts/vrf-native';

const addon = loadNativeVrf();
const skip =
  addon === null && process.env['CI'] !== 'true'
    ? `native VRF addon not built here (${nativeVrfLoadError()}); CI always builds it`
    : false;
if (skip) console.log(`# SKIP ${skip}`);

const L = ed25519.Point.Fn.ORDER;
const P = ed25519.Point.Fp.ORDER;

function scalarBytes(v: bigint): Uint8Array {
  const out = new Uint8Array(32);
  for (let i = 0; i < 32; i++, v >>= 8n) out[i] = Number(v & 0xffn);
  return out;
}

/** The little-endian encoding of y (any value below 2^255) with the sign bit. */
function encodeY(y: bigint, sign: boolean): Uint8Array {
  const out = scalarBytes(y);
  if (sign) out[31]! |= 0x80;
  return out;
}

/** Runs the addon on candidates and checks each against noble's candidate check and multiply. */
function checkCandidates(candidates: Uint8Array[], scalar: bigint): number {
  const n = candidates.length;
  const flat = new Uint8Array(32 * n);
  candidates.forEach((c, i) => flat.set(c, 32 * i));
  const out = new Uint8Array(32 * n);
  const accepted = new Uint8Array(n);
  addon!.multiplyCandidates(flat, scalarBytes(scalar), out, accepted);
  let points = 0;
  const cleared = new Uint8Array(32 * n);
  const clearedAccepted = new Uint8Array(n);
  addon!.clearCofactor(flat, cleared, clearedAccepted);
  const prover = proofPointArithmetic(addon!);
  candidates.forEach((c, i) => {
    // the addon leaves upstream's non-canonical filter to its caller, as NativeVrfKey applies it
    const ours = accepted[i] === 1 && !isRejectedNonCanonical(c);
    const reference = interpretHashAsPoint(c);
    assert.equal(ours, reference !== undefined, `candidate ${toHex(c)}`);
    assert.equal(clearedAccepted[i], accepted[i]);
    assert.equal(prover.hashToCurve(c) !== undefined, reference !== undefined);
    if (reference !== undefined) {
      points++;
      const expected = scalar === 0n ? ed25519.Point.ZERO : reference.multiply(scalar);
      assert.equal(toHex(out.subarray(32 * i, 32 * i + 32)), toHex(expected.toBytes()));
      const h = cleared.subarray(32 * i, 32 * i + 32);
      assert.equal(toHex(h), toHex(reference.toBytes()));
      assert.equal(toHex(prover.hashToCurve(c)!), toHex(h));
      assert.equal(toHex(prover.multiply(h, scalarBytes(scalar))), toHex(expected.toBytes()));
    }
  });
  return points;
}

test('the addon loads (CI builds it at install)', { skip }, () => {
  assert.notEqual(addon, null);
});

test(
  'native evaluation gives the bytes of the portable ECVRF on random keys and inputs',
  { skip },
  () => {
    fc.assert(
      fc.property(
        fc.uint8Array({ minLength: 32, maxLength: 32 }),
        fc.array(fc.uint8Array({ maxLength: 80 }), { minLength: 1, maxLength: 12 }),
        (sk, alphas) => {
          const native = new NativeVrfKey(addon!, sk);
          const reference = VrfSecretKey.fromBytes(sk);
          assert.equal(toHex(native.publicKey), toHex(reference.publicKeyBytes));
          const many = native.evaluateMany(alphas).map(toHex);
          assert.deepEqual(
            many,
            alphas.map((a) => toHex(vrfEvaluate(reference, a))),
          );
          assert.equal(toHex(native.evaluate(alphas[0]!)), many[0]);
        },
      ),
      { numRuns: 120 },
    );
  },
);

test(
  'batches of alphas of one length, eight lanes at a time and one at a time, give the same bytes',
  { skip },
  () => {
    const sk = crypto.getRandomValues(new Uint8Array(32));
    const reference = VrfSecretKey.fromBytes(sk);
    const native = new NativeVrfKey(addon!, sk);
    // full groups of eight, a short last group, and a batch shorter than one group
    for (const n of [19, 8, 3]) {
      const alphas = Array.from({ length: n }, () => crypto.getRandomValues(new Uint8Array(32)));
      const expected = alphas.map((a) => toHex(vrfEvaluate(reference, a)));
      const lanes = addon!.eightLanes(true);
      assert.deepEqual(native.evaluateMany(alphas).map(toHex), expected);
      assert.equal(addon!.eightLanes(false), false);
      assert.deepEqual(native.evaluateMany(alphas).map(toHex), expected);
      assert.equal(addon!.eightLanes(true), lanes);
    }
    assert.throws(() => (addon!.eightLanes as (...a: unknown[]) => boolean)(), TypeError);
    assert.throws(() => (addon!.eightLanes as (...a: unknown[]) => boolean)(1), TypeError);
  },
);

test('RFC 9381 example 16 (empty alpha) through the native path', { skip }, () => {
  const sk = fromHex('9d61b19deffd5a60ba844af492ec2cc44449c5697b326919703bac031cae7f60');
  const beta =
    '90cf1df3b703cce59e2a35b925d411164068269d7b2d29f3301c03dd757876ff' +
    '66b71dda49d2de59d03450451af026798e8f81cd2e333de5cdf4f3e140fdd8ae';
  assert.equal(toHex(new NativeVrfKey(addon!, sk).evaluate(new Uint8Array(0))), beta);
});

test(
  'random candidates: same acceptance and points as noble, for several scalars',
  { skip },
  () => {
    const candidates = Array.from({ length: 300 }, () =>
      crypto.getRandomValues(new Uint8Array(32)),
    );
    for (const scalar of [1n, 2n, 8n, L - 1n, (1n << 252n) + 12345n, 0n]) {
      assert.ok(checkCandidates(candidates, scalar) > 100);
    }
  },
);

test(
  'crafted candidates: non-canonical y, y near 0 and 1, small-order points, both signs',
  { skip },
  () => {
    const crafted: Uint8Array[] = [];
    for (let j = 0n; j < 19n; j++) {
      for (const sign of [false, true]) {
        crafted.push(encodeY(P + j, sign)); // y >= p, taken mod p by the lenient decoder
        crafted.push(encodeY(j, sign));
        crafted.push(encodeY(P - 1n - j, sign));
      }
    }
    for (const point of ED25519_TORSION_SUBGROUP) {
      const bytes = fromHex(point);
      crafted.push(
        bytes,
        Uint8Array.from(bytes, (b, i) => (i === 31 ? b ^ 0x80 : b)),
      );
    }
    crafted.push(ed25519.Point.BASE.toBytes(), ed25519.Point.BASE.negate().toBytes());
    const scalar = (1n << 252n) + 987654321n;
    // most crafted values are refused; the base point and a few near-p values are points
    assert.ok(checkCandidates(crafted, scalar) >= 2);
  },
);

test('bad arguments are refused with a clear error and write nothing', { skip }, () => {
  const c = new Uint8Array(64);
  const ok = new Uint8Array(2);
  const out = new Uint8Array(64);
  const s = scalarBytes(5n);
  const f = addon!.multiplyCandidates.bind(addon) as (...args: unknown[]) => void;
  assert.throws(() => f(c, s, out), TypeError);
  assert.throws(() => f(c, s, out, [0, 0]), TypeError);
  assert.throws(() => f(c, new Uint16Array(16), out, ok), TypeError);
  assert.throws(() => f(c, new Uint8Array(31), out, ok), RangeError);
  assert.throws(() => f(c, scalarBytes(1n << 255n), out, ok), RangeError);
  assert.throws(() => f(c, s, new Uint8Array(32), ok), RangeError);
  assert.throws(() => f(new Uint8Array(63), s, out, ok), RangeError);
  assert.throws(() => f(c, s, out, new Uint8Array(3)), RangeError);
  assert.deepEqual([...ok], [0, 0]);

  const clear = addon!.clearCofactor.bind(addon) as (...args: unknown[]) => void;
  assert.throws(() => clear(c, out), TypeError);
  assert.throws(() => clear(c, out, new Uint8Array(1)), RangeError);
  assert.throws(() => clear(c, new Uint8Array(64), 'no'), TypeError);

  const multiply = addon!.multiplyPoint.bind(addon) as (...args: unknown[]) => void;
  const base = ed25519.Point.BASE.toBytes();
  const product = new Uint8Array(32);
  multiply(base, s, product);
  assert.equal(toHex(product), toHex(ed25519.Point.BASE.multiply(5n).toBytes()));
  assert.throws(() => multiply(base, s), TypeError);
  assert.throws(() => multiply(base.subarray(1), s, product), RangeError);
  assert.throws(() => multiply(base, scalarBytes(1n << 255n), product), RangeError);
  assert.throws(() => multiply(base, s, new Uint8Array(31)), RangeError);
  // y = 2 is not the y of any curve point
  assert.throws(() => multiply(encodeY(2n, false), s, product), /does not decode/);

  const evaluate = addon!.evaluate.bind(addon) as (...args: unknown[]) => number;
  const pk = ed25519.Point.BASE.toBytes();
  const outputs = new Uint8Array(128);
  assert.throws(() => evaluate(pk, s, c), TypeError);
  assert.throws(() => evaluate(pk.subarray(1), s, c, outputs), RangeError);
  assert.throws(() => evaluate(pk, scalarBytes(1n << 255n), c, outputs), RangeError);
  assert.throws(() => evaluate(pk, s, c, new Uint8Array(100)), RangeError);
  assert.throws(() => evaluate(pk, s, new Uint8Array(3), outputs), /equal length/);
  assert.throws(() => evaluate(pk, s, c, new Uint8Array(0)), /equal length/);
  assert.deepEqual([...outputs], new Array<number>(128).fill(0));
  assert.equal(evaluate(pk, s, new Uint8Array(0), new Uint8Array(0)), 0);
});

test('evaluating no alphas gives none; an alpha without a point is an error', () => {
  // a stand-in addon: the real one cannot be made to miss 256 candidates in a row
  let calls = 0;
  const stub = {
    evaluate: () => {
      calls++;
      return 0;
    },
  } as unknown as Parameters<typeof proofPointArithmetic>[0];
  const key = new NativeVrfKey(stub, new Uint8Array(32).fill(1));
  assert.deepEqual(key.evaluateMany([]), []);
  assert.throws(() => key.evaluate(new Uint8Array(3)), /no point in 256 tries/);
  assert.equal(calls, 2);
});

test('a binary built from other sources (a function missing) is named and not used', () => {
  const complete = {
    evaluate() {},
    eightLanes() {},
    multiplyCandidates() {},
    clearCofactor() {},
    multiplyPoint() {},
  };
  assert.equal(addonMismatch(complete), undefined);
  const { evaluate: _e, eightLanes: _l, ...old } = complete;
  assert.match(
    addonMismatch(old)!,
    /lacks evaluate, eightLanes: .*npm rebuild @akd-ts\/vrf-native/,
  );
  assert.match(addonMismatch(null)!, /lacks evaluate, eightLanes, multiplyCandidates/);
  // the binary this checkout built has them all
  if (loadNativeVrf() !== null) assert.equal(addonMismatch(loadNativeVrf()), undefined);
});
