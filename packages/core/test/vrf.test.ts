// ECVRF (spec 5): the RFC 9381 vectors upstream carries (5.7) with every intermediate value,
// the HardCodedAkdVRF key and the worked VRF values of spec 3.5 under both configurations, and
// the rejections upstream's tests check (5.2, 5.3, 5.7).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { inspect } from 'node:util';
import fc from 'fast-check';
import { ed25519 } from '@noble/curves/ed25519.js';
import { fromHex, toHex, utf8 } from '../src/bytes.js';
import { AkdError, isAkdError, type AkdErrorCode } from '../src/errors.js';
import { NodeLabel } from '../src/node-label.js';
import { VersionFreshness, type Configuration } from '../src/config/configuration.js';
import { WhatsAppV1Configuration } from '../src/config/whatsapp-v1.js';
import { ExperimentalConfiguration } from '../src/config/experimental.js';
import {
  VRF_KEY_LENGTH,
  VRF_OUTPUT_LENGTH,
  VRF_PROOF_LENGTH,
  VrfPublicKey,
  VrfSecretKey,
  encodeToCurve,
  expandSecretKeyBytes,
  proveWithTrace,
  verifyWithTrace,
  vrfEvaluate,
  vrfProofToHash,
  vrfProve,
  vrfPublicKeyFromSecret,
  vrfVerify,
  setVrfArithmetic,
  vrfArithmetic,
  type VrfArithmetic,
} from '../src/vrf/ecvrf.js';
import { bytesToScalarLE, modL } from '../src/vrf/curve.js';
import { RFC_VECTORS } from './support/rfc9381.js';
import {
  nodeLabelFromVrfOutput,
  verifyVrfLabel,
  vrfLabelProof,
  vrfNodeLabel,
} from '../src/vrf/vrf-label.js';

/** Asserts that `fn` throws an AkdError with `code`. */
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

/** Runs `fn` on the given VRF arithmetic, then returns to the default. */
function on(arithmetic: VrfArithmetic, fn: () => void): void {
  setVrfArithmetic(arithmetic);
  try {
    assert.equal(vrfArithmetic(), arithmetic);
    fn();
  } finally {
    setVrfArithmetic('auto');
  }
}

for (const [vec, arithmetic] of RFC_VECTORS.flatMap((v) =>
  (['wasm', 'noble'] as const).map((a) => [v, a] as const),
)) {
  test(`RFC 9381 ${vec.name} on ${arithmetic}: keys, encode_to_curve, prove intermediates (spec 5.7)`, () =>
    on(arithmetic, () => {
      const sk = fromHex(vec.sk);
      const alpha = fromHex(vec.alpha);
      assert.equal(toHex(expandSecretKeyBytes(sk).scalarBytes), vec.x);
      assert.equal(toHex(vrfPublicKeyFromSecret(sk)), vec.pk);
      assert.equal(toHex(ed25519.getPublicKey(sk)), vec.pk, 'the VRF key is the Ed25519 key');
      const key = VrfSecretKey.fromBytes(sk);
      assert.equal(toHex(key.publicKeyBytes), vec.pk);

      const encoded = encodeToCurve(fromHex(vec.pk), alpha);
      assert.equal(toHex(encoded.point.toBytes()), vec.h);
      assert.equal(encoded.counter, vec.counter);

      const trace = proveWithTrace(key, alpha);
      assert.equal(toHex(trace.h), vec.h);
      assert.equal(trace.counter, vec.counter);
      assert.equal(toHex(trace.nonceHash), vec.k);
      assert.equal(toHex(trace.u), vec.u);
      assert.equal(toHex(trace.v), vec.v);
      assert.equal(toHex(trace.proof), vec.pi);
      assert.equal(toHex(vrfProve(key, alpha)), vec.pi);
      assert.equal(toHex(vrfProve(sk, alpha)), vec.pi, 'raw seed');
    }));

  test(`RFC 9381 ${vec.name} on ${arithmetic}: verify, proof_to_hash and evaluate (spec 5.7)`, () =>
    on(arithmetic, () => {
      const alpha = fromHex(vec.alpha);
      const pi = fromHex(vec.pi);
      assert.equal(toHex(vrfProofToHash(pi)), vec.beta);
      assert.equal(toHex(vrfEvaluate(fromHex(vec.sk), alpha)), vec.beta);
      assert.equal(toHex(vrfEvaluate(VrfSecretKey.fromBytes(fromHex(vec.sk)), alpha)), vec.beta);
      const pk = VrfPublicKey.fromBytes(fromHex(vec.pk));
      for (const key of [pk, pk, fromHex(vec.pk)]) {
        assert.equal(toHex(vrfVerify(key, pi, alpha)), vec.beta);
      }
      const trace = verifyWithTrace(pk, pi, alpha);
      assert.equal(trace.valid, true);
      assert.equal(toHex(trace.h), vec.h);
      assert.equal(trace.counter, vec.counter);
      assert.equal(toHex(trace.u), vec.u);
      assert.equal(toHex(trace.v), vec.v);
      assert.equal(toHex(trace.challenge), vec.pi.slice(64, 96));
      assert.equal(toHex(trace.output), vec.beta);
    }));
}

// spec 5.6
const HARD_CODED_SK = fromHex('c9afa9d845ba75166b5c215767b1d6934e50c3db36e89b127b8a622b120f6721');
const HARD_CODED_PK = 'f6ec49c8085f4d4be69db8e248bf11ce288026f5b8c5f6599defe58303d0702d';

test('HardCodedAkdVRF key (spec 5.6)', () => {
  assert.equal(toHex(vrfPublicKeyFromSecret(HARD_CODED_SK)), HARD_CODED_PK);
  const key = VrfSecretKey.fromBytes(HARD_CODED_SK);
  assert.equal(key.publicKey.toString(), HARD_CODED_PK);
  assert.ok(key.publicKey.equals(VrfPublicKey.fromBytes(fromHex(HARD_CODED_PK))));
  assert.equal(JSON.stringify(key.publicKey), JSON.stringify(HARD_CODED_PK));
});

test('a VrfSecretKey never shows secret bytes (architecture: errors and logs)', () => {
  const key = VrfSecretKey.fromBytes(HARD_CODED_SK);
  const { scalarBytes, nonceKey } = expandSecretKeyBytes(HARD_CODED_SK);
  const shown = [
    String(key),
    JSON.stringify(key),
    JSON.stringify(Object.entries(key)),
    Object.keys(key).join(','),
    inspect(key, { depth: 10, showHidden: true }),
  ].join('\n');
  for (const secret of [HARD_CODED_SK, scalarBytes, nonceKey]) {
    assert.ok(!shown.includes(toHex(secret)));
  }
  assert.ok(!shown.includes(String(modL(bytesToScalarLE(scalarBytes)))), 'the scalar as a bigint');
  assert.ok(shown.includes(HARD_CODED_PK));
});

interface WorkedValues {
  config: Configuration;
  proof: string;
  freshLabel1: string;
  staleLabel1: string;
  freshLabel2: string;
}

// spec 3.5
const WORKED: WorkedValues[] = [
  {
    config: new WhatsAppV1Configuration(),
    proof:
      'f1e4b9dd4b547b1c2b090dd4b212b09acf7470174983aa1b141b818501e2a088' +
      '50043b762018b80454f1e91f2b128aa1f388eb4d49bf3c321836811a802d4eb7' +
      '0f3996b43c3d746d6a21df626bc5c201',
    freshLabel1: '35973b407c2f9bbd7258e4b827ce6374ada8cdb306616f4698a2324a14ac2be2',
    staleLabel1: 'b2bf229926955cb4f0af54ebef90d724a552fb721b40a1c220658e1b6730fa9c',
    freshLabel2: 'f3e5f535007982bb233742bf46ef575ee64529491cc1c8dd4e28f40d585cfbf0',
  },
  {
    config: new ExperimentalConfiguration(),
    proof:
      '38d575a504522d463d47e8a41caf02cf4c969f7dee676c5abd250df033d79055' +
      'd1e97ecd7a7dc0d241a2d53e15ff1ef795f92f5e3bdacf81d07e7fe8d32fc502' +
      'd0a79f0a7229aaf1ebddba15f89ba90e',
    freshLabel1: 'e2be063020e44fedb3a3a884112cefe21099ae8cd0bb5401e3dd4bb0f246c34d',
    staleLabel1: '479f2e2207236b59950445ee326c032b5fa53fd80bbaeaa83537c5d968bdb5d4',
    freshLabel2: 'b9ac121b2af1e5912df1f233afe90087f204169c1042bed5fb9401e43f8e8f76',
  },
];

const HELLO = utf8('hello');
const { Fresh, Stale } = VersionFreshness;

for (const w of WORKED) {
  test(`${w.config.name}: VRF proof and node labels of "hello" (spec 3.5, 5.4, 5.8)`, () => {
    const key = VrfSecretKey.fromBytes(HARD_CODED_SK);
    const proof = vrfLabelProof(w.config, key, HELLO, Fresh, 1n);
    assert.equal(proof.length, VRF_PROOF_LENGTH);
    assert.equal(toHex(proof), w.proof);
    assert.equal(toHex(vrfLabelProof(w.config, HARD_CODED_SK, HELLO, Fresh, 1n)), w.proof);
    const alpha = w.config.getHashFromLabelInput(HELLO, Fresh, 1n);
    assert.equal(toHex(vrfProve(key, alpha)), w.proof);

    const cases: [VersionFreshness, bigint, string][] = [
      [Fresh, 1n, w.freshLabel1],
      [Stale, 1n, w.staleLabel1],
      [Fresh, 2n, w.freshLabel2],
    ];
    for (const [freshness, version, hex] of cases) {
      const expected = new NodeLabel(fromHex(hex), 256);
      assert.ok(vrfNodeLabel(w.config, key, HELLO, freshness, version).equals(expected));
      assert.ok(vrfNodeLabel(w.config, HARD_CODED_SK, HELLO, freshness, version).equals(expected));
      const p = vrfLabelProof(w.config, key, HELLO, freshness, version);
      assert.ok(nodeLabelFromVrfOutput(vrfProofToHash(p)).equals(expected));
      verifyVrfLabel(w.config, key.publicKey, HELLO, freshness, version, p, expected);
      verifyVrfLabel(w.config, fromHex(HARD_CODED_PK), HELLO, freshness, version, p, expected);
    }
  });

  test(`${w.config.name}: verifyVrfLabel rejects a wrong label, input or key (spec 5.4)`, () => {
    const proof = fromHex(w.proof);
    const label = new NodeLabel(fromHex(w.freshLabel1), 256);
    const pk = fromHex(HARD_CODED_PK);
    // the proof is fine, the claimed label is another one (or the right bytes at another length)
    const wrong = new NodeLabel(fromHex(w.staleLabel1), 256);
    const err = assertAkdError(
      () => verifyVrfLabel(w.config, pk, HELLO, Fresh, 1n, proof, wrong),
      'VRF_LABEL_MISMATCH',
    );
    assert.equal(err.field, 'label');
    assertAkdError(
      () => verifyVrfLabel(w.config, pk, HELLO, Fresh, 1n, proof, label.getPrefix(255)),
      'VRF_LABEL_MISMATCH',
    );
    // the proof was made for (hello, Fresh, 1)
    assertAkdError(
      () => verifyVrfLabel(w.config, pk, HELLO, Stale, 1n, proof, label),
      'VRF_VERIFY_FAILED',
    );
    assertAkdError(
      () => verifyVrfLabel(w.config, pk, HELLO, Fresh, 2n, proof, label),
      'VRF_VERIFY_FAILED',
    );
    assertAkdError(
      () => verifyVrfLabel(w.config, pk, utf8('hellO'), Fresh, 1n, proof, label),
      'VRF_VERIFY_FAILED',
    );
    const other = vrfPublicKeyFromSecret(new Uint8Array(32).fill(7));
    assertAkdError(
      () => verifyVrfLabel(w.config, other, HELLO, Fresh, 1n, proof, label),
      'VRF_VERIFY_FAILED',
    );
    assertAkdError(
      () => verifyVrfLabel(w.config, pk.subarray(1), HELLO, Fresh, 1n, proof, label),
      'VRF_INVALID_PUBLIC_KEY',
    );
    assertAkdError(
      () => verifyVrfLabel(w.config, pk, HELLO, Fresh, 1n, proof.subarray(1), label),
      'VRF_INVALID_PROOF',
    );
  });
}

test('the configurations give different labels for the same input (spec 3.5)', () => {
  const [wa, ex] = WORKED;
  assert.notEqual(wa!.freshLabel1, ex!.freshLabel1);
});

test('nodeLabelFromVrfOutput takes the first 32 of 64 bytes (spec 5.4)', () => {
  const output = Uint8Array.from({ length: 64 }, (_, i) => i);
  const label = nodeLabelFromVrfOutput(output);
  assert.equal(label.len, 256);
  assert.equal(toHex(label.val), toHex(output.subarray(0, 32)));
  output[0] = 99; // the label owns its bytes
  assert.equal(label.val[0], 0);
  assert.throws(() => nodeLabelFromVrfOutput(new Uint8Array(32)), TypeError);
  assert.throws(() => nodeLabelFromVrfOutput('00' as unknown as Uint8Array), TypeError);
});

test('secret keys of a length other than 32 are rejected without echoing them (spec 5.2)', () => {
  for (const len of [0, 31, 33, 64]) {
    const sk = new Uint8Array(len).fill(0xab);
    for (const fn of [
      () => VrfSecretKey.fromBytes(sk),
      () => vrfPublicKeyFromSecret(sk),
      () => expandSecretKeyBytes(sk),
      () => vrfProve(sk, HELLO),
      () => vrfEvaluate(sk, HELLO),
      () => vrfNodeLabel(WORKED[0]!.config, sk, HELLO, Fresh, 1n),
    ]) {
      const err = assertAkdError(fn, 'VRF_INVALID_SECRET_KEY');
      assert.equal(err.field, 'secretKey');
      assert.ok(!err.message.includes('abab'));
    }
  }
  assert.equal(VRF_KEY_LENGTH, 32);
  assert.throws(() => VrfSecretKey.fromBytes('00'.repeat(32) as unknown as Uint8Array), TypeError);
});

test('public keys of a length other than 32 are rejected (spec 5.2)', () => {
  const pk = fromHex(HARD_CODED_PK);
  const proof = fromHex(WORKED[0]!.proof);
  for (const bad of [pk.subarray(1), new Uint8Array(33), new Uint8Array(0)]) {
    const err = assertAkdError(() => VrfPublicKey.fromBytes(bad), 'VRF_INVALID_PUBLIC_KEY');
    assert.equal(err.field, 'publicKey');
    assertAkdError(() => vrfVerify(bad, proof, HELLO), 'VRF_INVALID_PUBLIC_KEY');
  }
  assert.throws(() => VrfPublicKey.fromBytes([1, 2] as unknown as Uint8Array), TypeError);
  assert.throws(() => vrfVerify(HARD_CODED_PK as unknown as Uint8Array, proof, HELLO), TypeError);
});

test('proofs of a length other than 80 are rejected (spec 5.3)', () => {
  const proof = fromHex(WORKED[0]!.proof);
  const longer = new Uint8Array(81);
  longer.set(proof);
  const pk = fromHex(HARD_CODED_PK);
  for (const bad of [proof.subarray(0, 79), longer, new Uint8Array(0)]) {
    const err = assertAkdError(() => vrfVerify(pk, bad, HELLO), 'VRF_INVALID_PROOF');
    assert.equal(err.field, 'proof');
    assertAkdError(() => vrfProofToHash(bad), 'VRF_INVALID_PROOF');
  }
  assert.throws(() => vrfProofToHash(WORKED[0]!.proof as unknown as Uint8Array), TypeError);
});

test('a proof for input A does not verify for input B; flipped bits in c or s fail (spec 5.7)', () => {
  const key = VrfSecretKey.fromBytes(HARD_CODED_SK);
  const a = utf8('input A');
  const proof = vrfProve(key, a);
  assert.equal(toHex(vrfVerify(key.publicKey, proof, a)), toHex(vrfEvaluate(key, a)));
  assertAkdError(() => vrfVerify(key.publicKey, proof, utf8('input B')), 'VRF_VERIFY_FAILED');
  for (const bit of [0, 7, 64, 127]) {
    const c = proof.slice();
    c[32 + (bit >> 3)]! ^= 1 << (bit & 7);
    const err = assertAkdError(() => vrfVerify(key.publicKey, c, a), 'VRF_VERIFY_FAILED');
    assert.equal(err.field, 'proof');
  }
  for (const bit of [0, 100, 250, 255]) {
    const s = proof.slice();
    s[48 + (bit >> 3)]! ^= 1 << (bit & 7);
    assertAkdError(() => vrfVerify(key.publicKey, s, a), 'VRF_VERIFY_FAILED');
  }
  // A flipped bit in Gamma either leaves the curve or gives another point.
  for (const bit of [0, 1, 100, 254, 255]) {
    const g = proof.slice();
    g[bit >> 3]! ^= 1 << (bit & 7);
    let code: string | undefined;
    try {
      vrfVerify(key.publicKey, g, a);
    } catch (e) {
      code = (e as AkdError).code;
    }
    assert.ok(code === 'VRF_VERIFY_FAILED' || code === 'VRF_INVALID_PROOF', `bit ${bit}`);
  }
});

test('evaluate equals proof_to_hash(prove) equals verify on random keys and inputs', () => {
  fc.assert(
    fc.property(
      fc.uint8Array({ minLength: 32, maxLength: 32 }),
      fc.uint8Array({ maxLength: 100 }),
      (sk, alpha) => {
        const key = VrfSecretKey.fromBytes(sk);
        const proof = vrfProve(key, alpha);
        const output = vrfEvaluate(key, alpha);
        assert.equal(output.length, VRF_OUTPUT_LENGTH);
        assert.equal(toHex(vrfProofToHash(proof)), toHex(output));
        assert.equal(toHex(vrfVerify(key.publicKeyBytes, proof, alpha)), toHex(output));
        assert.equal(toHex(vrfPublicKeyFromSecret(sk)), toHex(ed25519.getPublicKey(sk)));
      },
    ),
    { numRuns: 25 },
  );
});

test('vrfVerify with raw key bytes works across more keys than its parse cache holds', () => {
  const proofs = Array.from({ length: 6 }, (_, i) => {
    const key = VrfSecretKey.fromBytes(new Uint8Array(32).fill(i + 1));
    return { pk: key.publicKeyBytes, proof: vrfProve(key, HELLO), out: vrfEvaluate(key, HELLO) };
  });
  for (let round = 0; round < 2; round++) {
    for (const { pk, proof, out } of proofs) {
      assert.equal(toHex(vrfVerify(pk, proof, HELLO)), toHex(out));
    }
  }
});

test('reducedSecretScalars gives x mod L and 8x mod L of the expanded key, and x·B is the key', async () => {
  const { reducedSecretScalars, expandSecretKeyBytes, vrfPublicKeyFromSecret } =
    await import('../src/vrf/ecvrf.js');
  fc.assert(
    fc.property(fc.uint8Array({ minLength: 32, maxLength: 32 }), (sk) => {
      const x = bytesToScalarLE(expandSecretKeyBytes(sk).scalarBytes);
      const reduced = reducedSecretScalars(sk);
      assert.equal(bytesToScalarLE(reduced.x), modL(x));
      assert.equal(bytesToScalarLE(reduced.x8), modL(8n * x));
      assert.equal(reduced.x.length, 32);
      assert.equal(
        toHex(ed25519.Point.BASE.multiply(bytesToScalarLE(reduced.x)).toBytes()),
        toHex(vrfPublicKeyFromSecret(sk)),
      );
    }),
    { numRuns: 50 },
  );
  assert.throws(() => reducedSecretScalars(new Uint8Array(31)), /32 bytes/);
});
