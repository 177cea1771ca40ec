/**
 * The page side of `npm run bench -- verify` (bundled by esbuild, see test/browser/harness.ts):
 * exposes the verification cases and the timing loop on `globalThis.akdBench`.
 */

import type { AuditExample } from '../../test/support/audit-example.js';
import { fromHexInputs, type HexVectorInputs } from '../../test/browser/wire.js';
import { time, type Timing, type TimingOptions } from './timing.js';
import { firstLookupMs, verifyCases, type BenchCase } from './verify-cases.js';

export interface AkdBenchApi {
  userAgent(): string;
  firstLookupMs(v: HexVectorInputs): number;
  run(v: HexVectorInputs, audit: AuditExample, id: string, options: TimingOptions): Timing;
}

const built = new Map<string, BenchCase[]>();

const api: AkdBenchApi = {
  userAgent: () => navigator.userAgent,
  firstLookupMs: (v) => firstLookupMs(fromHexInputs(v)),
  run(v, audit, id, options) {
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
