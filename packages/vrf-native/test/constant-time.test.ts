/**
 * The constant-time claims of the C, checked mechanically (scripts/ct-check.mjs): the
 * addon's proving and key paths (the evaluation that keeps points and the proof from them
 * among them) and core's WebAssembly C, each built natively and run under valgrind's
 * memcheck with the secret scalar and nonce key marked undefined, report no branch
 * or memory index that depends on them; a deliberate secret branch is reported (the check can
 * fail); and the outputs are core's, so the checked code is the code that proves. Skipped
 * without cc or valgrind, except under CI=true, which installs both.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { VrfSecretKey, expandSecretKeyBytes, toHex, vrfEvaluate, vrfProve } from '@akd-ts/core';
import { ctCheck, ctCheckUnavailable } from '../../../scripts/ct-check.mjs';

const missing = ctCheckUnavailable();
const skip =
  missing !== undefined && process.env['CI'] !== 'true'
    ? `${missing}: the constant-time check needs cc and valgrind (CI installs both)`
    : false;
if (skip) console.log(`# SKIP ${skip}`);

const L = (1n << 252n) + 27742317777372353535851937790883648493n;

function le32(v: bigint): string {
  const out = new Uint8Array(32);
  for (let i = 0; i < 32; i++, v >>= 8n) out[i] = Number(v & 0xffn);
  return toHex(out);
}

test('no secret-dependent branch or index on the proving and key paths', { skip }, () => {
  assert.equal(missing, undefined, missing);
  const keys = [new Uint8Array(32).fill(7), crypto.getRandomValues(new Uint8Array(32))];
  const alphas = [new Uint8Array(0), crypto.getRandomValues(new Uint8Array(40))];
  const cases = keys.map((sk, i) => {
    const { scalarBytes, nonceKey } = expandSecretKeyBytes(sk);
    return {
      sk,
      alpha: alphas[i]!,
      hex: {
        clamped: toHex(scalarBytes),
        nonceKey: toHex(nonceKey),
        publicKey: toHex(VrfSecretKey.fromBytes(sk).publicKeyBytes),
        alpha: toHex(alphas[i]!),
      },
      s: BigInt(`0x${toHex(Uint8Array.from(scalarBytes).reverse())}`),
    };
  });
  const results = ctCheck(cases.map((c) => c.hex));
  assert.deepEqual(
    results.map((r) => r.limbs),
    [5, 10],
  );
  for (const { limbs, leak, runs } of results) {
    // the check sees a secret branch when there is one
    assert.equal(leak.status, 3, `field ${limbs}: the deliberate leak was not reported`);
    assert.ok(leak.reports.some((l) => /depends on uninitialised/.test(l)));
    runs.forEach((run, i) => {
      assert.deepEqual(run.reports, [], `field ${limbs}, case ${i}:\n${run.stderr}`);
      assert.equal(run.status, 0, run.stderr);
      const { sk, alpha, s } = cases[i]!;
      const proof = toHex(vrfProve(sk, alpha, 'noble'));
      const expected = [`x ${le32(s % L)}`, `x8 ${le32((8n * s) % L)}`, `proof ${proof}`];
      // the addon's build also runs the evaluation that keeps points and the proof from them
      if (limbs === 5)
        expected.push(`output ${toHex(vrfEvaluate(sk, alpha))}`, `kept-proof ${proof}`);
      assert.deepEqual(run.stdout.trim().split('\n'), expected, `field ${limbs}, case ${i}`);
    });
  }
});
