/**
 * Verification speed of the browser-safe core in Node and in headless Chromium.
 *
 * Lookup and history proofs (upstream's vectors) and the spec 10.5 audit proof, both
 * configurations, plus the two costs a lookup is made of (one VRF verification, one
 * membership-path level) so that the time for a lookup in a 1M-entry tree can be extrapolated.
 *
 *   npm run bench -- verify [--json] [--quick] [--no-browser]
 */

import { cpus, loadavg } from 'node:os';
import { CONFIGURATION_NAMES } from '@akd-ts/core';
import { loadVectors } from '../test/support/vectors.js';
import { AUDIT_EXAMPLES } from '../test/support/audit-example.js';
import { bundleForBrowser, chromiumPath, openInChromium } from '../test/browser/harness.js';
import { toHexInputs } from '../test/browser/wire.js';
import { DEFAULT_TIMING, QUICK_TIMING, time, type Timing } from './support/timing.js';
import {
  firstLookupMs,
  verifyCases,
  type BenchCase,
  type CaseInfo,
} from './support/verify-cases.js';
import type { AkdBenchApi } from './support/verify-browser.js';

/** "a Rust-to-WASM build verifies a 4 KB lookup proof of a 1M-entry tree in about 1.1 ms in V8" */
const REFERENCE_MS = 1.1;
/** A 1M-entry tree: about 20 levels per path, three paths per lookup. */
const LEVELS_1M = 3 * 20;

const args = process.argv.slice(2);
const known = new Set(['--json', '--quick', '--no-browser', '--help']);
for (const a of args) {
  if (!known.has(a)) {
    console.error(
      `unknown argument ${a}; usage: npm run bench -- verify [--json] [--quick] [--no-browser]`,
    );
    process.exit(2);
  }
}
if (args.includes('--help')) {
  console.log('usage: npm run bench -- verify [--json] [--quick] [--no-browser]');
  process.exit(0);
}
const json = args.includes('--json');
const timing = args.includes('--quick') ? QUICK_TIMING : DEFAULT_TIMING;

interface Row {
  env: 'node' | 'chromium';
  engine: string;
  configuration: string;
  c: BenchCase;
  t: Timing;
}

interface EnvSummary {
  env: Row['env'];
  engine: string;
  firstLookupMs: number;
}

const loadAtStart = loadavg();
const rows: Row[] = [];
const envs: EnvSummary[] = [];
const infos = new Map<string, CaseInfo>();
const progress = (msg: string) => {
  if (process.stderr.isTTY) process.stderr.write(`\r\x1b[K${msg}`);
};

const vectors = CONFIGURATION_NAMES.map((name) => loadVectors(name));
const auditFor = (name: string) => AUDIT_EXAMPLES.find((e) => e.configuration === name)!;

// Node: the first lookup of the process, then every case under each configuration.
{
  const engine = `Node ${process.version} (V8 ${process.versions.v8})`;
  envs.push({ env: 'node', engine, firstLookupMs: firstLookupMs(vectors[0]!) });
  for (const v of vectors) {
    const { cases, info } = verifyCases(v, auditFor(v.configuration));
    infos.set(v.configuration, info);
    for (const c of cases) {
      progress(`node ${v.configuration} ${c.id}`);
      rows.push({ env: 'node', engine, configuration: v.configuration, c, t: time(c.fn, timing) });
    }
  }
}

// Chromium: the same cases, bundled as in the in-browser test, timed inside the page.
const executablePath = chromiumPath();
if (args.includes('--no-browser')) {
  // asked for
} else if (!executablePath) {
  console.error(
    'no Chromium (set AKD_CHROMIUM_PATH or install Debian chromium): Node figures only',
  );
} else {
  progress('bundling for Chromium');
  const bundle = await bundleForBrowser('bench/support/verify-browser.ts');
  const session = await openInChromium(bundle, 'akdBench', executablePath);
  try {
    const { page } = session;
    const call = <M extends keyof AkdBenchApi>(method: M, ...a: Parameters<AkdBenchApi[M]>) =>
      page.evaluate(
        ({ method, a }) =>
          (globalThis as unknown as { akdBench: Record<string, (...x: unknown[]) => unknown> })
            .akdBench[method]!(...a),
        { method, a: a as unknown[] },
      ) as Promise<ReturnType<AkdBenchApi[M]>>;
    const engine = `Chromium ${session.version}`;
    envs.push({
      env: 'chromium',
      engine,
      firstLookupMs: await call('firstLookupMs', toHexInputs(vectors[0]!)),
    });
    for (const v of vectors) {
      const hex = toHexInputs(v);
      const audit = auditFor(v.configuration);
      for (const c of rows.filter((r) => r.env === 'node' && r.configuration === v.configuration)) {
        progress(`chromium ${v.configuration} ${c.c.id}`);
        const t = await call('run', hex, audit, c.c.id, timing);
        rows.push({ env: 'chromium', engine, configuration: v.configuration, c: c.c, t });
      }
    }
  } finally {
    await session.close();
  }
}
progress('');

// The model: a lookup is its VRF verifications plus its path levels (plus small change), so a
// 1M-entry lookup is the measured one with its path levels replaced by 60.
interface Estimate {
  env: Row['env'];
  configuration: string;
  /** Figures from the median sample, then from the best sample. */
  median: EstimateFigures;
  best: EstimateFigures;
}
interface EstimateFigures {
  vrfMs: number;
  levelMs: number;
  lookupMs: number;
  lookupParsedKeyMs: number;
  modelMs: number;
  estimate1MMs: number;
  estimate1MParsedKeyMs: number;
}
const find = (env: string, conf: string, id: string) =>
  rows.find((r) => r.env === env && r.configuration === conf && r.c.id === id)!;
const perUnit = (r: Row, best = false) => (best ? r.t.minMsPerOp : r.t.msPerOp) / (r.c.units ?? 1);
const estimates: Estimate[] = [];
for (const { env } of envs) {
  for (const conf of CONFIGURATION_NAMES) {
    const info = infos.get(conf)!;
    const figures = (best: boolean): EstimateFigures => {
      const vrfMs = perUnit(find(env, conf, 'vrf-verify'), best);
      const levelMs = perUnit(find(env, conf, 'path-level'), best);
      const lookupMs = perUnit(find(env, conf, 'lookup'), best);
      const lookupParsedKeyMs = perUnit(find(env, conf, 'lookup-parsed-key'), best);
      const extraLevels = (LEVELS_1M - info.lookupLevels) * levelMs;
      return {
        vrfMs,
        levelMs,
        lookupMs,
        lookupParsedKeyMs,
        modelMs: info.lookupVrfs * vrfMs + info.lookupLevels * levelMs,
        estimate1MMs: lookupMs + extraLevels,
        estimate1MParsedKeyMs: lookupParsedKeyMs + extraLevels,
      };
    };
    estimates.push({ env, configuration: conf, median: figures(false), best: figures(true) });
  }
}

const date = new Date().toISOString();
const cpu = cpus();
const fmtLoad = (l: number[]) => l.map((x) => x.toFixed(2)).join(' ');
const machine = `${cpu.length} cores (${cpu[0]?.model.trim() ?? 'unknown CPU'}), load average ${fmtLoad(loadAtStart)} at start, ${fmtLoad(loadavg())} at end`;

if (json) {
  for (const r of rows) {
    console.log(
      JSON.stringify({
        bench: 'verify',
        date,
        machine,
        env: r.env,
        engine: r.engine,
        configuration: r.configuration,
        case: r.c.id,
        label: r.c.label,
        opsPerSec: r.t.opsPerSec,
        msPerOp: r.t.msPerOp,
        minMsPerOp: r.t.minMsPerOp,
        ...(r.c.units ? { units: r.c.units, msPerUnit: perUnit(r) } : {}),
        samples: r.t.samples,
        callsPerSample: r.t.callsPerSample,
      }),
    );
  }
  for (const e of envs)
    console.log(JSON.stringify({ bench: 'verify', date, kind: 'first-lookup', ...e }));
  for (const e of estimates) {
    console.log(
      JSON.stringify({
        bench: 'verify',
        date,
        kind: 'estimate-1M',
        referenceMs: REFERENCE_MS,
        ...e,
      }),
    );
  }
} else {
  const fmtMs = (ms: number) =>
    ms >= 1 ? ms.toFixed(2) : ms >= 0.01 ? ms.toFixed(3) : ms.toFixed(4);
  const fmtOps = (ops: number) => Math.round(ops).toLocaleString('en-US');
  console.log(`verify benchmark, ${date}`);
  console.log(`machine: ${machine}`);
  for (const e of envs) console.log(`${e.env}: ${e.engine}`);
  console.log(
    `timing: ${timing.warmupMs} ms warm-up, median of ${timing.samples} samples of ~${timing.sampleMs} ms`,
  );
  for (const [conf, info] of infos) {
    console.log(
      `proofs (${conf}): lookup ${info.lookupProofBytes} B (${info.lookupVrfs} VRF proofs, ${info.lookupLevels} path levels), ` +
        `history Complete ${info.historyCompleteBytes} B, MostRecent(1) ${info.historyMostRecent1Bytes} B, audit ${info.auditProofBytes} B`,
    );
  }
  const table: string[][] = [['env', 'configuration', 'case', 'ops/s', 'ms/op', 'best ms/op']];
  for (const r of rows) {
    const u = r.c.units ?? 1;
    table.push([
      r.env,
      r.configuration,
      r.c.label,
      fmtOps(r.t.opsPerSec * u),
      fmtMs(r.t.msPerOp / u),
      fmtMs(r.t.minMsPerOp / u),
    ]);
  }
  printTable(table, [3, 4, 5]);
  console.log('');
  console.log(
    `lookup in a 1M-entry tree (estimate: measured lookup + (${LEVELS_1M} - vector levels) x level), against ${REFERENCE_MS} ms (Rust->WASM in V8):`,
  );
  const est: string[][] = [
    [
      'env',
      'configuration',
      'figure',
      'VRF verify ms',
      'level us',
      'lookup ms',
      'lookup ms, parsed key',
      'model ms',
      '1M est. ms',
      '1M est. ms, parsed key',
      'vs 1.1 ms',
    ],
  ];
  for (const e of estimates) {
    for (const which of ['median', 'best'] as const) {
      const f = e[which];
      est.push([
        e.env,
        e.configuration,
        which,
        fmtMs(f.vrfMs),
        (f.levelMs * 1000).toFixed(2),
        fmtMs(f.lookupMs),
        fmtMs(f.lookupParsedKeyMs),
        fmtMs(f.modelMs),
        fmtMs(f.estimate1MMs),
        fmtMs(f.estimate1MParsedKeyMs),
        `${(f.estimate1MMs / REFERENCE_MS).toFixed(2)}x / ${(f.estimate1MParsedKeyMs / REFERENCE_MS).toFixed(2)}x`,
      ]);
    }
  }
  printTable(est, [3, 4, 5, 6, 7, 8, 9, 10]);
  console.log(
    '(model = 3 VRF verifications + the path levels of the vector lookup, with the key parsed once; lookup with key bytes also parses the key and builds its table)',
  );
  for (const e of envs) {
    console.log(
      `first lookup in a fresh ${e.env} (cold JIT, key parse, key table): ${fmtMs(e.firstLookupMs)} ms`,
    );
  }
}

function printTable(t: string[][], right: number[]) {
  const widths = t[0]!.map((_, i) => Math.max(...t.map((r) => r[i]!.length)));
  const line = (r: string[]) =>
    '| ' +
    r
      .map((c, i) => (right.includes(i) ? c.padStart(widths[i]!) : c.padEnd(widths[i]!)))
      .join(' | ') +
    ' |';
  console.log(line(t[0]!));
  console.log(
    '| ' +
      widths
        .map((w, i) => (right.includes(i) ? '-'.repeat(w - 1) + ':' : '-'.repeat(w)))
        .join(' | ') +
      ' |',
  );
  for (const r of t.slice(1)) console.log(line(r));
}
