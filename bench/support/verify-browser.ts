/**
 * The page side of `npm run bench -- verify` (bundled by esbuild, see test/browser/harness.ts):
 * exposes the verification cases and the timing loop on `globalThis.akdBench`.
 */

import { initVrfWasm, setVrfArithmetic, type VrfArithmetic } from '@akd-ts/core';
import type { AuditExample } from '../../test/support/audit-example.js';
import { fromHexInputs, type HexVectorInputs } from '../../test/browser/wire.js';
import { time, type Timing, type TimingOptions } from './timing.js';
import { firstLookupMs, verifyCases, type BenchCase } from './verify-cases.js';

/** The first verification of a fresh page. */
export interface FirstLookup {
  /** Waiting for the WebAssembly module (if asked for) plus decoding and verifying. */
  ms: number;
  /** When that verification had finished, in ms since the navigation started. */
  doneAtMs: number;
}

export interface AkdBenchApi {
  userAgent(): string;
  /** Awaits `initVrfWasm()` first when `arithmetic` is `wasm`. */
  firstLookup(v: HexVectorInputs, arithmetic: VrfArithmetic): Promise<FirstLookup>;
  run(
    v: HexVectorInputs,
    audit: AuditExample,
    id: string,
    options: TimingOptions,
    arithmetic: VrfArithmetic,
  ): Timing;
}

const built = new Map<string, BenchCase[]>();

const api: AkdBenchApi = {
  userAgent: () => navigator.userAgent,
  async firstLookup(v, arithmetic) {
    const t0 = performance.now();
    if (arithmetic === 'wasm' && !(await initVrfWasm())) throw new Error('no WebAssembly');
    setVrfArithmetic(arithmetic);
    const ms = performance.now() - t0 + firstLookupMs(fromHexInputs(v));
    return { ms, doneAtMs: performance.now() };
  },
  run(v, audit, id, options, arithmetic) {
    setVrfArithmetic(arithmetic);
    let cases = built.get(v.configuration);
    if (cases === undefined) {
      cases = verifyCases(fromHexInputs(v), audit).cases;
      built.set(v.configuration, cases);
    }
    const c = cases.find((x) => x.id === id);
    if (c === undefined) throw new Error(`no benchmark case ${id}`);
    return time(c.fn, options);
  },
};

(globalThis as unknown as { akdBench: AkdBenchApi }).akdBench = api;
