// The WebAssembly VRF arithmetic against noble's, the reference (spec 5): identical keys,
// proofs, outputs, verification results and errors on random inputs, crafted points
// (small order, non-canonical, undecodable), out-of-range scalars, upstream's vectors and
// their named mutations.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import fc from 'fast-check';
import { fromHex, toHex } from '../src/bytes.js';
import { isAkdError } from '../src/errors.js';
import {
  VrfPublicKey,
  VrfSecretKey,
  initVrfWasm,
  proveWithTrace,
  setVrfArithmetic,
  verifyWithTrace,
  vrfArithmetic,
  vrfEvaluate,
  vrfProofToHash,
  vrfProve,
  vrfVerify,
  vrfWasmError,
  type VrfArithmetic,
} from '../src/vrf/ecvrf.js';
import { CURVE_ORDER, bytesToScalarLE, scalarToBytesLE } from '../src/vrf/curve.js';
import { vrfWasm } from '../src/vrf/wasm/loader.js';
import { wasmScalarMulAdd, wasmScalarReduce } from '../src/vrf/wasm/ops.js';
import { loadVectors } from '../../../test/support/vectors.js';
import { runMutations, verifyVectors } from '../../../test/support/mutations.js';
import { plain } from '../../../test/browser/wire.js';

/** `fn()` on one arithmetic, as plain data: its result, or the error's code and message. */
function on<T>(arithmetic: VrfArithmetic, fn: () => T): unknown {
  setVrfArithmetic(arithmetic);
  try {
    return plain(fn());
  } catch (e) {
    if (isAkdError(e)) return { code: e.code, message: e.message };
    if (e instanceof Error) return { error: e.name, message: e.message };
    throw e;
  } finally {
    setVrfArithmetic('auto');
  }
}

/** Asserts that both arithmetics give the same (plain) result for `fn`, and returns it. */
function same<T>(fn: () => T, what: string): unknown {
  const wasm = on('wasm', fn);
  assert.deepEqual(wasm, on('noble', fn), what);
  return wasm;
}

const SEED = fromHex('c9afa9d845ba75166b5c215767b1d6934e50c3db36e89b127b8a622b120f6721');

/** Small-order points (spec 5.2), with and without the sign bit, and `y >= p` encodings. */
const CRAFTED_POINTS: string[] = [
  '0100000000000000000000000000000000000000000000000000000000000000',
  'ecffffffffffffffffffffffffffffffffffffffffffffffffffffffffffff7f',
  '0000000000000000000000000000000000000000000000000000000000000000',
  '0000000000000000000000000000000000000000000000000000000000000080',
  'c7176a703d4dd84fba3c0b760d10670f2a2053fa2c39ccc64ec7fd7792ac037a',
  'c7176a703d4dd84fba3c0b760d10670f2a2053fa2c39ccc64ec7fd7792ac03fa',
  '26e8958fc2b227b045c3f489f2ef98f0d5dfac05d3c63339b13802886d53fc05',
  '26e8958fc2b227b045c3f489f2ef98f0d5dfac05d3c63339b13802886d53fc85',
  ...Array.from({ length: 20 }, (_, j) =>
    [0x7f, 0xff].map(
      (top) => (0xed + j).toString(16).slice(-2) + 'ff'.repeat(30) + top.toString(16),
    ),
  ).flat(),
];

test('in Node the module loads synchronously and is the default arithmetic', async () => {
  assert.equal(vrfArithmetic(), 'wasm');
  assert.equal(vrfWasmError(), undefined);
  assert.equal(await initVrfWasm(), true);
  setVrfArithmetic('noble');
  assert.equal(vrfArithmetic(), 'noble');
  setVrfArithmetic('wasm');
  assert.equal(vrfArithmetic(), 'wasm');
  setVrfArithmetic('auto');
});

test('random keys and inputs: identical public keys, proof traces, outputs and verification', () => {
  fc.assert(
    fc.property(
      fc.uint8Array({ minLength: 32, maxLength: 32 }),
      fc.uint8Array({ maxLength: 80 }),
      (sk, alpha) => {
        same(() => VrfSecretKey.fromBytes(sk).publicKeyBytes, 'public key');
        const trace = same(() => proveWithTrace(sk, alpha), 'prove trace') as { proof: string };
        same(() => vrfEvaluate(sk, alpha), 'evaluate');
        const proof = fromHex(trace.proof);
        const pk = VrfSecretKey.fromBytes(sk).publicKeyBytes;
        const verified = same(() => verifyWithTrace(pk, proof, alpha), 'verify trace') as {
          valid: boolean;
        };
        assert.equal(verified.valid, true);
        same(() => vrfProofToHash(proof), 'proof_to_hash');
      },
    ),
    { numRuns: 40, seed: 9381 },
  );
});

test('random and mutated proofs: identical verification results and errors', () => {
  const key = VrfSecretKey.fromBytes(SEED);
  const pk = key.publicKeyBytes;
  fc.assert(
    fc.property(
      fc.uint8Array({ maxLength: 40 }),
      fc.uint8Array({ minLength: 80, maxLength: 80 }),
      fc.nat({ max: 79 }),
      fc.integer({ min: 1, max: 255 }),
      (alpha, random, at, flip) => {
        const valid = vrfProve(key, alpha);
        const mutated = valid.slice();
        mutated[at]! ^= flip;
        for (const proof of [valid, mutated, random]) {
          same(() => verifyWithTrace(pk, proof, alpha), 'verify trace');
          same(() => vrfVerify(pk, proof, alpha), 'verify');
          same(() => vrfProofToHash(proof), 'proof_to_hash');
        }
      },
    ),
    { numRuns: 60, seed: 16 },
  );
});

test('crafted Gammas, keys and scalars: identical results (spec 5.2, 5.5)', () => {
  const key = VrfSecretKey.fromBytes(SEED);
  const pk = key.publicKeyBytes;
  const alpha = fromHex('af82');
  const valid = vrfProve(key, alpha);
  const withGamma = (gamma: string) => {
    const proof = valid.slice();
    proof.set(fromHex(gamma), 0);
    return proof;
  };
  const withScalars = (c: bigint, s: Uint8Array) => {
    const proof = valid.slice();
    proof.set(scalarToBytesLE(c, 16), 32);
    proof.set(s, 48);
    return proof;
  };
  const s = bytesToScalarLE(valid.subarray(48));
  const proofs: Uint8Array[] = [
    ...CRAFTED_POINTS.map(withGamma),
    // s >= L is reduced (spec 5.5): s + L and s + 15 L still verify, as does the top value
    withScalars(bytesToScalarLE(valid.subarray(32, 48)), scalarToBytesLE(s + CURVE_ORDER, 32)),
    withScalars(
      bytesToScalarLE(valid.subarray(32, 48)),
      scalarToBytesLE(s + 15n * CURVE_ORDER, 32),
    ),
    withScalars(0n, new Uint8Array(32).fill(0xff)),
    // c = 0 and s = 0: both multi-scalar products are the identity
    withScalars(0n, new Uint8Array(32)),
    withScalars(0n, scalarToBytesLE(CURVE_ORDER, 32)),
    withScalars((1n << 128n) - 1n, scalarToBytesLE(CURVE_ORDER - 1n, 32)),
    valid.subarray(0, 79),
  ];
  const results = proofs.map((proof) =>
    same(() => verifyWithTrace(pk, proof, alpha), `verify ${toHex(proof)}`),
  );
  assert.ok(results.some((r) => (r as { valid?: boolean }).valid === true));
  assert.ok(results.some((r) => (r as { code?: string }).code === 'VRF_INVALID_PROOF'));
  for (const proof of proofs.slice(0, CRAFTED_POINTS.length)) {
    same(() => vrfProofToHash(proof), `proof_to_hash ${toHex(proof)}`);
  }
  // keys: small order, undecodable, non-canonical; each parse and, where it parses, a verify
  for (const bytes of CRAFTED_POINTS) {
    const parsed = same(() => VrfPublicKey.fromBytes(fromHex(bytes)).toString(), bytes);
    if (typeof parsed === 'string')
      same(() => verifyWithTrace(fromHex(bytes), valid, alpha), bytes);
  }
});

test('random public key bytes: identical parsing and verification', () => {
  const proof = vrfProve(SEED, new Uint8Array(0));
  fc.assert(
    fc.property(fc.uint8Array({ minLength: 32, maxLength: 32 }), (bytes) => {
      same(() => VrfPublicKey.fromBytes(bytes).toString(), 'parse');
      same(() => vrfVerify(bytes, proof, new Uint8Array(0)), 'verify');
    }),
    { numRuns: 60, seed: 5 },
  );
});

test('a key made on one arithmetic proves and verifies on the other', () => {
  const alpha = fromHex('72');
  setVrfArithmetic('wasm');
  const wasmKey = VrfSecretKey.fromBytes(SEED);
  const wasmPk = VrfPublicKey.fromBytes(wasmKey.publicKeyBytes);
  setVrfArithmetic('noble');
  const nobleKey = VrfSecretKey.fromBytes(SEED);
  try {
    assert.equal(toHex(vrfProve(wasmKey, alpha)), toHex(vrfProve(nobleKey, alpha)));
    // the noble point of a key checked on WebAssembly is decoded on first use
    assert.ok(wasmPk.point.equals(nobleKey.publicKey.point));
    assert.equal(
      toHex(vrfVerify(wasmPk, vrfProve(nobleKey, alpha), alpha)),
      toHex(vrfEvaluate(wasmKey, alpha)),
    );
  } finally {
    setVrfArithmetic('auto');
  }
});

for (const name of ['whatsapp_v1', 'experimental'] as const) {
  test(`${name}: upstream's vectors and every named mutation give the same answers`, () => {
    const vectors = loadVectors(name);
    same(() => verifyVectors(vectors), 'vectors');
    same(() => runMutations(vectors), 'mutations');
  });
}

test('an alpha longer than the module buffer takes the path that hashes in TypeScript', () => {
  const key = VrfSecretKey.fromBytes(SEED);
  for (const length of [768, 769, 2000]) {
    const alpha = new Uint8Array(length).map((_, i) => i * 7);
    const trace = same(() => proveWithTrace(key, alpha), `prove ${length}`) as { proof: string };
    same(() => vrfEvaluate(key, alpha), `evaluate ${length}`);
    const proof = fromHex(trace.proof);
    const bad = proof.slice();
    bad[0] = 2; // y = 2 is no curve point's: Gamma does not decode
    bad.fill(0, 1, 32);
    for (const p of [proof, bad, proof.subarray(0, 79)]) {
      same(() => verifyWithTrace(key.publicKeyBytes, p, alpha), `verify ${length}`);
    }
  }
});

test('scalars mod L in the module: random and extreme values against BigInt (spec 5.3)', () => {
  const w = vrfWasm();
  assert.ok(w, 'the module loads in Node');
  const L = CURVE_ORDER;
  const top = (1n << 512n) - 1n;
  const wide = (n: bigint) => toHex(wasmScalarReduce(w, scalarToBytesLE(n, 64)));
  const expect = (n: bigint) => toHex(scalarToBytesLE(n % L, 32));
  // the edges of a Barrett reduction: multiples of L and their neighbours, the largest
  // multiple below 2^512 and 2^512 - 1 itself, and every power of two and its predecessor
  const q = top / L;
  const extremes = [
    0n,
    1n,
    L - 1n,
    L,
    L + 1n,
    2n * L - 1n,
    3n * L,
    top,
    top - L,
    q * L,
    q * L - 1n,
  ];
  for (let k = 0n; k < 512n; k++) extremes.push(1n << k, (1n << k) - 1n);
  for (const n of extremes) assert.equal(wide(n), expect(n), `reduce ${n.toString(16)}`);
  fc.assert(
    fc.property(fc.bigInt({ min: 0n, max: top }), (n) => wide(n) === expect(n)),
    { numRuns: 2000 },
  );
  // a·b + c for 32-byte operands: the largest product and sum, and random ones
  const max = (1n << 256n) - 1n;
  const mulAdd = (a: bigint, b: bigint, c: bigint) =>
    toHex(
      wasmScalarMulAdd(w, scalarToBytesLE(a, 32), scalarToBytesLE(b, 32), scalarToBytesLE(c, 32)),
    );
  for (const [a, b, c] of [
    [max, max, max],
    [L - 1n, L - 1n, L - 1n],
    [0n, 0n, max],
    [max, 1n, 0n],
    [L, L, L],
  ] as const) {
    assert.equal(mulAdd(a, b, c), expect(a * b + c), `muladd ${a} ${b} ${c}`);
  }
  const u256 = fc.bigInt({ min: 0n, max });
  fc.assert(
    fc.property(u256, u256, u256, (a, b, c) => mulAdd(a, b, c) === expect(a * b + c)),
    { numRuns: 1000 },
  );
});
