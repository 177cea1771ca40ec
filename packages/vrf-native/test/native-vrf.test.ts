/**
 * The native evaluation and proving against core's portable ECVRF, the reference: random keys
 * and inputs, then crafted try-and-increment candidates that SHA-512 would essentially never
 * produce (non-canonical y, small-order points, x = 0 with the sign bit), on the one-lane code
 * and on each of the eight lanes, then bad arguments. Skipped where the addon was not built,
 * except under CI=true or AKD_REQUIRE_NATIVE_VRF=1 (test/support/native-vrf-rule.ts).
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import fc from 'fast-check';
import { ED25519_TORSION_SUBGROUP, ed25519 } from '@noble/curves/ed25519.js';
import { readFileSync } from 'node:fs';
import {
  VrfSecretKey,
  expandSecretKeyBytes,
  fromHex,
  isRejectedNonCanonical,
  toHex,
  vrfEvaluate,
  vrfProve,
  vrfPublicKeyFromSecret,
  vrfVerify,
} from '@akd-ts/core';
// core's own candidate check (not part of its public API): the reference for crafted inputs
import { interpretHashAsPoint } from '../../core/src/vrf/ecvrf.js';
import {
  NativeVrfKey,
  VRF_KEPT_BYTES,
  addonMismatch,
  loadNativeVrf,
  nativeVrfLoadError,
  type NativeVrfAddon,
} from '@akd-ts/vrf-native';
import { nativeVrfSkip } from '../../../test/support/native-vrf-rule.js';

/** The native key of `sk`, expanded by core as the directory does (vrf/backend.ts). */
function nativeKey(addon: NativeVrfAddon, sk: Uint8Array): NativeVrfKey {
  const { scalarBytes, nonceKey } = expandSecretKeyBytes(sk);
  return new NativeVrfKey(addon, { scalarBytes, nonceKey, publicKey: vrfPublicKeyFromSecret(sk) });
}

const addon = loadNativeVrf();
const skip = nativeVrfSkip(addon !== null, nativeVrfLoadError());

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
  candidates.forEach((c, i) => {
    // the addon leaves upstream's non-canonical filter to its caller, as NativeVrfKey applies it
    const ours = accepted[i] === 1 && !isRejectedNonCanonical(c);
    const reference = interpretHashAsPoint(c);
    assert.equal(ours, reference !== undefined, `candidate ${toHex(c)}`);
    if (reference !== undefined) {
      points++;
      const expected = scalar === 0n ? ed25519.Point.ZERO : reference.multiply(scalar);
      assert.equal(toHex(out.subarray(32 * i, 32 * i + 32)), toHex(expected.toBytes()));
    }
  });
  checkLanes(candidates, scalar, out, accepted);
  return points;
}

/** Whether this processor has AVX-512F, read from the kernel (Linux), else undefined. */
function cpuHasAvx512f(): boolean | undefined {
  try {
    return /^flags\s*:.*\bavx512f\b/m.test(readFileSync('/proc/cpuinfo', 'utf8'));
  } catch {
    return undefined;
  }
}

/** Groups of eight candidates that went through the eight lanes, for the report below. */
let laneGroups = 0;

/**
 * The same candidates through the eight-lane code, eight at a time (the last group padded
 * with its first), each result compared with the one-lane code's: every lane position sees
 * accepted and refused candidates alike.
 */
function checkLanes(candidates: Uint8Array[], scalar: bigint, out: Uint8Array, ok: Uint8Array) {
  for (let first = 0; first < candidates.length; first += 8) {
    const group = new Uint8Array(256);
    const lanes = Array.from({ length: 8 }, (_, k) =>
      first + k < candidates.length ? first + k : first,
    );
    lanes.forEach((i, k) => group.set(candidates[i]!, 32 * k));
    const laneOut = new Uint8Array(256);
    const laneOk = new Uint8Array(8);
    if (!addon!.eightLaneCandidates(group, scalarBytes(scalar), laneOut, laneOk)) return;
    laneGroups++;
    lanes.forEach((i, k) => {
      assert.equal(laneOk[k], ok[i], `lane ${k}, candidate ${toHex(candidates[i]!)}`);
      const expected = ok[i] === 1 ? out.subarray(32 * i, 32 * i + 32) : new Uint8Array(32);
      assert.equal(toHex(laneOut.subarray(32 * k, 32 * k + 32)), toHex(expected), `lane ${k}`);
    });
  }
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
          const native = nativeKey(addon!, sk);
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
    const native = nativeKey(addon!, sk);
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
  assert.equal(toHex(nativeKey(addon!, sk).evaluate(new Uint8Array(0))), beta);
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

  const reduce = addon!.reduceSecret.bind(addon) as (...args: unknown[]) => void;
  const x = new Uint8Array(32);
  assert.throws(() => reduce(x, x), TypeError);
  assert.throws(() => reduce(x, x, new Uint8Array(31)), RangeError);
  assert.throws(() => reduce(new Uint8Array(64), x, x), RangeError);

  const prove = addon!.prove.bind(addon) as (...args: unknown[]) => void;
  const secret = new Uint8Array(64).fill(1);
  const proof = new Uint8Array(80);
  const key = ed25519.Point.BASE.toBytes();
  assert.throws(() => prove(secret, key, c), TypeError);
  assert.throws(() => prove(secret.subarray(1), key, c, proof), RangeError);
  assert.throws(
    () =>
      prove(
        secret.map((b, i) => (i === 31 ? 0x80 : b)),
        key,
        c,
        proof,
      ),
    RangeError,
  );
  assert.throws(() => prove(secret, key.subarray(1), c, proof), RangeError);
  assert.throws(() => prove(secret, key, c, new Uint8Array(64)), RangeError);
  assert.deepEqual([...proof], new Array<number>(80).fill(0));

  const lanes = addon!.eightLaneCandidates.bind(addon) as (...args: unknown[]) => boolean;
  assert.throws(() => lanes(new Uint8Array(256), s, new Uint8Array(256)), TypeError);
  assert.throws(() => lanes(c, s, new Uint8Array(256), new Uint8Array(8)), RangeError);
  assert.throws(() => lanes(new Uint8Array(256), s, out, new Uint8Array(8)), RangeError);
  assert.throws(
    () => lanes(new Uint8Array(256), scalarBytes(1n << 255n), new Uint8Array(256), ok),
    RangeError,
  );

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

test('native proofs are the portable ones, and verify', { skip }, () => {
  fc.assert(
    fc.property(
      fc.uint8Array({ minLength: 32, maxLength: 32 }),
      fc.uint8Array({ maxLength: 100 }),
      (sk, alpha) => {
        const proof = nativeKey(addon!, sk).prove(alpha);
        const reference = vrfProve(sk, alpha, 'noble');
        assert.equal(toHex(proof), toHex(reference));
        const publicKey = VrfSecretKey.fromBytes(sk).publicKeyBytes;
        assert.equal(toHex(vrfVerify(publicKey, proof, alpha)), toHex(vrfEvaluate(sk, alpha)));
      },
    ),
    { numRuns: 80 },
  );
});

test(
  'batched proofs, eight lanes at a time and one at a time, are the portable ones',
  { skip },
  () => {
    const sk = crypto.getRandomValues(new Uint8Array(32));
    const native = nativeKey(addon!, sk);
    const publicKey = VrfSecretKey.fromBytes(sk).publicKeyBytes;
    // full groups of eight, short last groups, a batch below the eight-lane minimum; each lane
    // has its own nonce, so every lane position must match the one-lane prover
    for (const [n, length] of [
      [19, 32],
      [8, 32],
      [9, 7],
      [5, 32],
      [3, 0],
      [2, 32],
      [1, 5],
    ] as const) {
      const alphas = Array.from({ length: n }, () =>
        crypto.getRandomValues(new Uint8Array(length)),
      );
      const expected = alphas.map((a) => toHex(vrfProve(sk, a, 'noble')));
      const lanes = addon!.eightLanes(true);
      assert.deepEqual(native.proveMany(alphas).map(toHex), expected, `${n} alphas, lanes`);
      assert.equal(addon!.eightLanes(false), false);
      assert.deepEqual(native.proveMany(alphas).map(toHex), expected, `${n} alphas, one lane`);
      assert.equal(addon!.eightLanes(true), lanes);
      for (const [i, proof] of native.proveMany(alphas).entries()) {
        assert.equal(
          toHex(vrfVerify(publicKey, proof, alphas[i]!)),
          toHex(vrfEvaluate(sk, alphas[i]!)),
        );
      }
    }
    // alphas of mixed lengths are proven one call each, in order
    const mixed = [new Uint8Array(3), new Uint8Array(40).fill(7), new Uint8Array(0)];
    assert.deepEqual(
      native.proveMany(mixed).map(toHex),
      mixed.map((a) => toHex(vrfProve(sk, a, 'noble'))),
    );
    assert.deepEqual(native.proveMany([]), []);
    // the entry point's own checks
    const secret = new Uint8Array(64);
    const pk = new Uint8Array(32);
    assert.throws(
      () => addon!.proveMany(new Uint8Array(63), pk, new Uint8Array(32), new Uint8Array(80)),
      /secret must be 64 bytes/,
    );
    assert.throws(
      () => addon!.proveMany(secret, pk, new Uint8Array(33), new Uint8Array(160)),
      /80 bytes per alpha/,
    );
    assert.throws(
      () => addon!.proveMany(secret, pk, new Uint8Array(32), new Uint8Array(81)),
      /80 bytes per alpha/,
    );
    assert.equal(addon!.proveMany(secret, pk, new Uint8Array(0), new Uint8Array(0)), 0);
  },
);

test(
  'an evaluation that keeps its points gives the same outputs, and proofs from them are the portable ones',
  { skip },
  () => {
    const sk = crypto.getRandomValues(new Uint8Array(32));
    const native = nativeKey(addon!, sk);
    const lanes = addon!.eightLanes(true);
    // kept by either path and proved by either path: the kept bytes are the same points
    for (const [evaluateLanes, proveLanes] of [
      [true, true],
      [true, false],
      [false, true],
      [false, false],
    ] as const) {
      for (const [n, length] of [
        [19, 32],
        [8, 32],
        [3, 7],
        [2, 32],
        [1, 0],
      ] as const) {
        const alphas = Array.from({ length: n }, () =>
          crypto.getRandomValues(new Uint8Array(length)),
        );
        const at = `${n} alphas, evaluated ${evaluateLanes ? 'in lanes' : 'one at a time'}`;
        addon!.eightLanes(evaluateLanes && lanes);
        const { outputs, kept } = native.evaluateKeeping(alphas);
        assert.deepEqual(
          outputs.map(toHex),
          alphas.map((a) => toHex(vrfEvaluate(sk, a))),
          at,
        );
        assert.ok(kept.every((k) => k.length === VRF_KEPT_BYTES));
        addon!.eightLanes(proveLanes && lanes);
        assert.deepEqual(
          native.proveKept(kept).map(toHex),
          alphas.map((a) => toHex(vrfProve(sk, a, 'noble'))),
          `${at}, proved ${proveLanes ? 'in lanes' : 'one at a time'}`,
        );
      }
    }
    addon!.eightLanes(lanes);
    // alphas of mixed lengths are evaluated one call each, in order
    const mixed = [new Uint8Array(3), new Uint8Array(40).fill(7), new Uint8Array(0)];
    const { outputs, kept } = native.evaluateKeeping(mixed);
    assert.deepEqual(
      outputs.map(toHex),
      mixed.map((a) => toHex(vrfEvaluate(sk, a))),
    );
    assert.deepEqual(
      native.proveKept(kept).map(toHex),
      mixed.map((a) => toHex(vrfProve(sk, a, 'noble'))),
    );
    assert.deepEqual(native.evaluateKeeping([]), { outputs: [], kept: [] });
    assert.deepEqual(native.proveKept([]), []);
    assert.throws(() => native.proveKept([new Uint8Array(159)]), /kept entry 0 is 159 bytes/);
    // the entry points' own checks
    const secret = new Uint8Array(64);
    const pk = new Uint8Array(32);
    const one = new Uint8Array(32);
    assert.throws(
      () =>
        addon!.evaluateKeeping(
          new Uint8Array(63),
          pk,
          one,
          new Uint8Array(64),
          new Uint8Array(160),
        ),
      /secret must be 64 bytes/,
    );
    assert.throws(
      () => addon!.evaluateKeeping(secret, pk, one, new Uint8Array(64), new Uint8Array(159)),
      /kept 160 per alpha/,
    );
    assert.throws(
      () =>
        (addon!.evaluateKeeping as (...a: unknown[]) => number)(
          secret,
          pk,
          one,
          new Uint8Array(64),
        ),
      /wrong number of arguments/,
    );
    assert.throws(
      () =>
        addon!.evaluateKeeping(secret, pk, one, new Uint8Array(64), [] as unknown as Uint8Array),
      /expected a Uint8Array/,
    );
    assert.throws(
      () =>
        addon!.proveKept(new Uint8Array(64).fill(255), pk, new Uint8Array(160), new Uint8Array(80)),
      /secret must be 64 bytes/,
    );
    assert.throws(
      () => addon!.proveKept(secret, pk, new Uint8Array(160), new Uint8Array(81)),
      /80 bytes and kept 160 per proof/,
    );
  },
);

test('a key is made of 32-byte parts: any other length is a RangeError naming the part', () => {
  const stub = { reduceSecret: () => {} } as unknown as NativeVrfAddon;
  const part = () => new Uint8Array(32);
  for (const name of ['scalarBytes', 'nonceKey', 'publicKey'] as const) {
    const key = {
      scalarBytes: part(),
      nonceKey: part(),
      publicKey: part(),
      [name]: new Uint8Array(31),
    };
    assert.throws(() => new NativeVrfKey(stub, key), new RegExp(`key\\.${name} must be 32 bytes`));
  }
  // the secret parts are zeroed once read; the public key is copied
  const key = { scalarBytes: part().fill(7), nonceKey: part().fill(7), publicKey: part().fill(9) };
  const made = new NativeVrfKey(stub, key);
  assert.deepEqual([key.scalarBytes, key.nonceKey], [part(), part()]);
  key.publicKey.fill(0);
  assert.deepEqual(made.publicKey, part().fill(9));
});

test('a batched proof of an alpha without a point is an error', () => {
  // a stand-in addon: the real one cannot be made to miss 256 candidates in a row
  const stub = { proveMany: () => 1, reduceSecret: () => {} } as unknown as NativeVrfAddon;
  const key = nativeKey(stub, new Uint8Array(32).fill(1));
  assert.throws(
    () => key.proveMany([new Uint8Array(3), new Uint8Array(3)]),
    /no point in 256 tries/,
  );
});

test('the secret scalar is reduced in C: x mod L and 8x mod L', { skip }, () => {
  fc.assert(
    fc.property(fc.uint8Array({ minLength: 32, maxLength: 32 }), (sk) => {
      const clamped = expandSecretKeyBytes(sk).scalarBytes;
      const s = BigInt(`0x${toHex(Uint8Array.from(clamped).reverse())}`);
      const x = new Uint8Array(32);
      const x8 = new Uint8Array(32);
      addon!.reduceSecret(clamped, x, x8);
      assert.equal(toHex(x), toHex(scalarBytes(s % L)));
      assert.equal(toHex(x8), toHex(scalarBytes((8n * s) % L)));
    }),
    { numRuns: 100 },
  );
  // the extremes of a 256-bit input: 0, L - 1, L, 2^256 - 1
  for (const s of [0n, L - 1n, L, (1n << 256n) - 1n]) {
    const x = new Uint8Array(32);
    const x8 = new Uint8Array(32);
    addon!.reduceSecret(scalarBytes(s), x, x8);
    assert.equal(toHex(x), toHex(scalarBytes(s % L)));
    assert.equal(toHex(x8), toHex(scalarBytes((8n * s) % L)));
  }
});

test(
  'the eight lanes were each tested with crafted inputs, or it is said they were not',
  {
    skip,
  },
  (t) => {
    const cpu = cpuHasAvx512f();
    const probe = addon!.eightLaneCandidates(
      new Uint8Array(256),
      new Uint8Array(32),
      new Uint8Array(256),
      new Uint8Array(8),
    );
    if (cpu === true) {
      // a processor with AVX-512F whose build lost the eight-lane code is a defect
      assert.equal(probe, true, 'this processor has AVX-512F but the addon has no eight-lane path');
      assert.ok(laneGroups >= 50, `only ${laneGroups} groups went through the eight lanes`);
    } else {
      // nothing to fix on a processor without it: the path cannot run here
      assert.equal(laneGroups, 0);
      t.diagnostic(
        `the eight-lane (AVX-512F) path was NOT exercised: this processor ${cpu === false ? 'has no AVX-512F' : 'was not identified'}`,
      );
      console.log('# eight-lane path not exercised on this processor');
    }
  },
);

test('evaluating no alphas gives none; an alpha without a point is an error', () => {
  // a stand-in addon: the real one cannot be made to miss 256 candidates in a row
  let calls = 0;
  const stub = {
    evaluate: () => {
      calls++;
      return 0;
    },
    reduceSecret: () => {},
  } as unknown as NativeVrfAddon;
  const key = nativeKey(stub, new Uint8Array(32).fill(1));
  assert.deepEqual(key.evaluateMany([]), []);
  assert.throws(() => key.evaluate(new Uint8Array(3)), /no point in 256 tries/);
  assert.equal(calls, 2);
});

test('a binary built from other sources (a function missing) is named and not used', () => {
  const complete = {
    evaluate() {},
    eightLanes() {},
    multiplyCandidates() {},
    reduceSecret() {},
    prove() {},
    proveMany() {},
    eightLaneCandidates() {},
    evaluateKeeping() {},
    proveKept() {},
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
