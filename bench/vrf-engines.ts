/**
 * The VRF backends of the directory side by side, in one process on one key: evaluating one
 * label, evaluating a batch of labels (the publish hot path), and proving (lookups and
 * histories): one proof, a batch of proofs (a publish's stored proofs) and the three proofs of
 * a keyed lookup in one call; where the backend keeps what an evaluation computed toward a
 * proof (native), the batch evaluation that keeps it and the batch proof from it (a publish's
 * new labels' existence proofs). Each backend `vrfKeyBackend` can load is measured; the native
 * addon twice, with its eight-lane path (AVX-512F) and forced to one lane, when the processor
 * has the former.
 *
 *   npm run bench -- vrf-engines [--json] [--quick] [--batch 256] [--noble]
 *                                [--backends native,wasm]
 *
 * `--noble` adds core's portable BigInt backend (about 1 ms a call). `--backends` names the
 * backends to try (a name this checkout does not know is reported as not available, so the
 * same file can measure an older checkout's packages beside this one's). Figures are
 * microseconds of one thread per label or proof (median of the samples, and the best sample),
 * and CPU microseconds (`process.cpuUsage`, user and system, over a fixed number of calls),
 * which a machine shared with other work disturbs far less than the elapsed time.
 */

import { randomBytes } from 'node:crypto';
import { cpus, loadavg } from 'node:os';
import { vrfKeyBackend, type VrfBackendName, type VrfKeyBackend } from '@akd-ts/directory';
import { loadNativeVrf } from '@akd-ts/vrf-native';
import { reportRow } from './support/common.js';
import { DEFAULT_TIMING, QUICK_TIMING, time } from './support/timing.js';

const args = process.argv.slice(2);
const json = args.includes('--json');
const timing = args.includes('--quick') ? QUICK_TIMING : DEFAULT_TIMING;
const batchAt = args.indexOf('--batch');
const batch = batchAt >= 0 ? Number(args[batchAt + 1]) : 256;

const secretKey = randomBytes(32);
const alphas = Array.from({ length: batch }, () => randomBytes(32));
let next = 0;
const oneAlpha = (): Uint8Array => alphas[next++ % alphas.length]!;

const backendsAt = args.indexOf('--backends');
const names = (
  backendsAt >= 0 ? args[backendsAt + 1]!.split(',') : ['native', 'wasm']
) as VrfBackendName[];
if (args.includes('--noble')) names.push('noble');

if (!json) {
  console.log(
    `vrf-engines: ${cpus()[0]?.model ?? 'unknown cpu'}, ${cpus().length} cores, load ` +
      `${loadavg()
        .map((l) => l.toFixed(2))
        .join(' ')}, batch ${batch}, Node ${process.version}\n`,
  );
}

/** CPU microseconds a call of `fn`, over `calls` calls after a few unmeasured ones. */
function cpuUs(fn: () => unknown, calls: number): number {
  for (let i = 0; i < 3; i++) fn();
  const start = process.cpuUsage();
  for (let i = 0; i < calls; i++) fn();
  const used = process.cpuUsage(start);
  return (used.user + used.system) / calls;
}

/** Times one backend's three cases and reports them as one row. */
function measure(label: string, key: VrfKeyBackend): void {
  const evaluateOne = time(() => key.evaluate(oneAlpha()), timing);
  const evaluateBatch = time(() => key.evaluateMany(alphas), timing);
  const prove = time(() => key.prove(oneAlpha()), timing);
  const us = (ms: number) => Number((ms * 1000).toFixed(1));
  const cpu = (v: number) => Number(v.toFixed(1));
  const kept = key.evaluateKeeping?.(alphas).kept;
  reportRow(
    {
      backend: label,
      'cpu evaluate us': cpu(cpuUs(() => key.evaluate(oneAlpha()), 200)),
      'cpu batch us/label': cpu(cpuUs(() => key.evaluateMany(alphas), 4) / batch),
      'cpu prove us': cpu(cpuUs(() => key.prove(oneAlpha()), 200)),
      // a publish's stored proofs come in batches; a keyed lookup proves three in one call
      'cpu batch prove us/proof': cpu(cpuUs(() => key.proveMany(alphas), 2) / batch),
      'cpu lookup prove us': cpu(cpuUs(() => key.proveMany(alphas.slice(0, 3)), 100)),
      // a new label's existence proof, from what its evaluation kept (native only)
      ...(kept === undefined
        ? {}
        : {
            'cpu batch keeping us/label': cpu(cpuUs(() => key.evaluateKeeping!(alphas), 4) / batch),
            'cpu batch prove kept us/proof': cpu(cpuUs(() => key.proveKept!(kept), 2) / batch),
          }),
      'evaluate us': us(evaluateOne.msPerOp),
      'evaluate best us': us(evaluateOne.minMsPerOp),
      'batch us/label': us(evaluateBatch.msPerOp / batch),
      'batch best us/label': us(evaluateBatch.minMsPerOp / batch),
      'prove us': us(prove.msPerOp),
      'prove best us': us(prove.minMsPerOp),
    },
    json,
  );
}

for (const name of names) {
  let key: VrfKeyBackend;
  try {
    key = vrfKeyBackend(secretKey, name);
  } catch (error) {
    if (!json) console.log(`${name}: not available (${(error as Error).message})`);
    continue;
  }
  if (key.name !== name) {
    // an older checkout may fall back to another backend for a name it does not know
    if (!json) console.log(`${name}: not available (${key.name} would stand in)`);
    continue;
  }
  if (name !== 'native') {
    measure(name, key);
    continue;
  }
  const addon = loadNativeVrf()!;
  if (addon.eightLanes(true)) measure('native, eight lanes', key);
  addon.eightLanes(false);
  measure('native, one lane', key);
  addon.eightLanes(true);
}
