/**
 * The page side of the in-browser test (bundled by esbuild, see harness.ts): exposes core's
 * verifiers on `globalThis.akdTest` taking hex in and giving plain JSON out. Imports nothing
 * but core and browser-safe test modules.
 */

import {
  AkdError,
  auditVerify,
  configurationByName,
  decodeAppendOnlyProof,
  fromHex,
  VrfSecretKey,
  initVrfWasm,
  setVrfArithmetic,
  toHex,
  vrfEvaluate,
  vrfProofToHash,
  vrfProve,
  vrfVerify,
  vrfArithmetic,
  vrfWasmError,
  type ConfigurationName,
  type VrfArithmetic,
} from '@akd-ts/core';
import { runMutations, verifyVectors } from '../support/mutations.js';
import { vrfDifferential } from '../support/vrf-differential.js';
import type { RfcVector } from '../../packages/core/test/support/rfc9381.js';
import { fromHexInputs, plain, type HexVectorInputs, type Plain } from './wire.js';

/** What the page offers to Node (called through `page.evaluate`). */
export interface AkdTestApi {
  /** Awaits the module's load; then which arithmetic is in use, and why not wasm if not. */
  loadWasm(): Promise<{ loaded: boolean; arithmetic: VrfArithmetic; error: string | null }>;
  /** Chooses the arithmetic of the calls that follow. */
  useArithmetic(arithmetic: VrfArithmetic): VrfArithmetic;
  differential(seed: number, count: number): Plain;
  /** RFC 9381's examples on the current arithmetic: key, proof, output three ways. */
  rfc(vectors: RfcVector[]): Plain;
  verifyVectors(v: HexVectorInputs): Plain;
  runMutations(v: HexVectorInputs): Plain;
  /** The verified epoch range, or `{ code }` when verification fails with an AkdError. */
  auditVerify(configuration: ConfigurationName, roots: string[], proof: string): Plain;
}

const api: AkdTestApi = {
  loadWasm: async () => {
    const loaded = await initVrfWasm();
    return { loaded, arithmetic: vrfArithmetic(), error: vrfWasmError() ?? null };
  },
  useArithmetic: (arithmetic) => {
    setVrfArithmetic(arithmetic);
    return vrfArithmetic();
  },
  differential: (seed, count) => plain(vrfDifferential(seed, count)),
  rfc: (vectors) =>
    vectors.map((v) => {
      const key = VrfSecretKey.fromBytes(fromHex(v.sk));
      const alpha = fromHex(v.alpha);
      const pi = fromHex(v.pi);
      return {
        pk: toHex(key.publicKeyBytes),
        pi: toHex(vrfProve(key, alpha)),
        verify: toHex(vrfVerify(fromHex(v.pk), pi, alpha)),
        proofToHash: toHex(vrfProofToHash(pi)),
        evaluate: toHex(vrfEvaluate(key, alpha)),
      };
    }),
  verifyVectors: (v) => plain(verifyVectors(fromHexInputs(v))),
  runMutations: (v) => plain(runMutations(fromHexInputs(v))),
  auditVerify: (configuration, roots, proof) => {
    try {
      return plain(
        auditVerify(
          configurationByName(configuration),
          roots.map((r) => fromHex(r)),
          decodeAppendOnlyProof(fromHex(proof)),
        ),
      );
    } catch (e) {
      if (e instanceof AkdError) return { code: e.code };
      throw e;
    }
  },
};

(globalThis as unknown as { akdTest: AkdTestApi }).akdTest = api;
