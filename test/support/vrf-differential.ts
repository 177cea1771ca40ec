/**
 * The VRF on WebAssembly against noble's, run where the tests call it (Node or a browser page:
 * browser-safe, imports only core): seeded random keys and inputs, valid proofs and proofs
 * with random bytes changed or replaced, compared outcome for outcome (bytes, or error code
 * and message).
 */

import {
  AkdError,
  VrfPublicKey,
  VrfSecretKey,
  setVrfArithmetic,
  toHex,
  vrfArithmetic,
  vrfEvaluate,
  vrfProofToHash,
  vrfProve,
  vrfVerify,
  type VrfArithmetic,
} from '@akd-ts/core';

/** What a differential run found. */
export interface DifferentialReport {
  /** Outcomes compared. */
  compared: number;
  /** How many outcomes were valid results and how many were AkdErrors (on both sides). */
  accepted: number;
  rejected: number;
  /** Descriptions of the outcomes that differ (none expected). */
  mismatches: string[];
}

/** xorshift32: deterministic bytes from a seed. */
function randomBytes(state: { s: number }, n: number): Uint8Array {
  const out = new Uint8Array(n);
  for (let i = 0; i < n; i++) {
    let x = state.s;
    x ^= x << 13;
    x ^= x >>> 17;
    x ^= x << 5;
    state.s = x >>> 0;
    out[i] = state.s & 0xff;
  }
  return out;
}

function outcome(arithmetic: VrfArithmetic, fn: () => Uint8Array | string): string {
  setVrfArithmetic(arithmetic);
  try {
    if (vrfArithmetic() !== arithmetic) throw new Error(`not on ${arithmetic}`);
    const r = fn();
    return typeof r === 'string' ? r : toHex(r);
  } catch (e) {
    if (e instanceof AkdError) return `${e.code}: ${e.message}`;
    throw e;
  } finally {
    setVrfArithmetic('auto');
  }
}

/**
 * `count` rounds from `seed`; each proves and evaluates under a random key and verifies the
 * valid proof, a proof with one byte changed, random proof bytes and random key bytes.
 * The WebAssembly module must be loaded (in a page: after `await initVrfWasm()`).
 */
export function vrfDifferential(seed: number, count: number): DifferentialReport {
  const state = { s: seed >>> 0 || 1 };
  const report: DifferentialReport = { compared: 0, accepted: 0, rejected: 0, mismatches: [] };
  const compare = (what: string, fn: () => Uint8Array | string) => {
    const wasm = outcome('wasm', fn);
    const noble = outcome('noble', fn);
    report.compared++;
    if (wasm !== noble) report.mismatches.push(`${what}: wasm ${wasm}, noble ${noble}`);
    else if (/^[A-Z_]+: /.test(wasm)) report.rejected++;
    else report.accepted++;
  };
  for (let round = 0; round < count; round++) {
    const sk = randomBytes(state, 32);
    const alpha = randomBytes(state, randomBytes(state, 1)[0]! % 48);
    const key = VrfSecretKey.fromBytes(sk);
    const pk = key.publicKeyBytes;
    compare(`public key ${toHex(sk)}`, () => VrfSecretKey.fromBytes(sk).publicKeyBytes);
    compare(`prove ${toHex(sk)} ${toHex(alpha)}`, () => vrfProve(key, alpha));
    compare(`evaluate ${toHex(sk)} ${toHex(alpha)}`, () => vrfEvaluate(key, alpha));
    const proof = vrfProve(key, alpha);
    const changed = proof.slice();
    const [at, flip] = randomBytes(state, 2);
    changed[at! % 80]! ^= flip! | 1;
    const randomProof = randomBytes(state, 80);
    for (const p of [proof, changed, randomProof]) {
      compare(`verify ${toHex(p)}`, () => vrfVerify(pk, p, alpha));
      compare(`proof_to_hash ${toHex(p)}`, () => vrfProofToHash(p));
    }
    const keyBytes = randomBytes(state, 32);
    compare(`parse ${toHex(keyBytes)}`, () => VrfPublicKey.fromBytes(keyBytes).toString());
    compare(`verify under ${toHex(keyBytes)}`, () => vrfVerify(keyBytes, proof, alpha));
  }
  return report;
}
