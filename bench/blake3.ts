/**
 * The BLAKE3 implementations side by side in one process, on the inputs of the tree (a node's
 * 36-136 bytes) and longer ones: core's WebAssembly module (`akd_blake3`, inputs up to 4 KiB),
 * blake3-jit (WebAssembly it generates at run time) and @noble/hashes (plain JavaScript).
 *
 *   npm run bench -- blake3 [--json] [--quick]
 *
 * Figures are nanoseconds a hash (median of the samples, and the best sample).
 */

import { randomBytes } from 'node:crypto';
import { cpus, loadavg } from 'node:os';
import { hashInto } from 'blake3-jit';
import { blake3 as nobleBlake3 } from '@noble/hashes/blake3.js';
import { initVrfWasm, setVrfArithmetic, toHex } from '@akd-ts/core';
import { blake3 as coreBlake3 } from '../packages/core/dist/config/hash.js';
import { reportRow } from './support/common.js';
import { DEFAULT_TIMING, QUICK_TIMING, time } from './support/timing.js';

const args = process.argv.slice(2);
const json = args.includes('--json');
const timing = args.includes('--quick') ? QUICK_TIMING : DEFAULT_TIMING;

if (!(await initVrfWasm())) throw new Error('the WebAssembly module does not load');
setVrfArithmetic('wasm');
if (!json) {
  console.log(
    `blake3: ${cpus()[0]?.model ?? 'unknown cpu'}, load ${loadavg()
      .map((l) => l.toFixed(2))
      .join(' ')}, Node ${process.version}\n`,
  );
}

const out = new Uint8Array(32);
for (const size of [36, 72, 136, 1024, 4096, 65536]) {
  const inputs = Array.from({ length: 64 }, () => randomBytes(size));
  let i = 0;
  const next = () => inputs[i++ & 63]!;
  // the three agree before anything is timed
  const sample = inputs[0]!;
  hashInto(sample, out);
  const expected = toHex(nobleBlake3(sample));
  if (toHex(out) !== expected) throw new Error(`blake3-jit differs at ${size} bytes`);
  if (size <= 4096 && toHex(coreBlake3(sample)) !== expected) {
    throw new Error(`the module differs at ${size} bytes`);
  }
  const ns = (ms: number) => Math.round(ms * 1e6);
  const row: Record<string, string | number> = { bytes: size };
  if (size <= 4096) {
    const t = time(() => coreBlake3(next()), timing);
    row['module ns'] = ns(t.msPerOp);
    row['module best ns'] = ns(t.minMsPerOp);
  }
  const jit = time(() => hashInto(next(), out), timing);
  row['blake3-jit ns'] = ns(jit.msPerOp);
  row['blake3-jit best ns'] = ns(jit.minMsPerOp);
  const noble = time(() => nobleBlake3(next()), timing);
  row['noble ns'] = ns(noble.msPerOp);
  row['noble best ns'] = ns(noble.minMsPerOp);
  reportRow(row, json);
}
