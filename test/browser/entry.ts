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
  type ConfigurationName,
} from '@akd-ts/core';
import { runMutations, verifyVectors } from '../support/mutations.js';
import { fromHexInputs, plain, type HexVectorInputs, type Plain } from './wire.js';

/** What the page offers to Node (called through `page.evaluate`). */
export interface AkdTestApi {
  verifyVectors(v: HexVectorInputs): Plain;
  runMutations(v: HexVectorInputs): Plain;
  /** The verified epoch range, or `{ code }` when verification fails with an AkdError. */
  auditVerify(configuration: ConfigurationName, roots: string[], proof: string): Plain;
}

const api: AkdTestApi = {
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
