/**
 * Verification speed of the browser-safe core in Node and in headless Chromium.
 *
 * Lookup and history proofs (upstream's vectors) and the spec 10.5 audit proof, both
 * configurations, plus the two costs a lookup is made of (one VRF verification, one
 * membership-path level) so that the time for a lookup in a 1M-entry tree can be extrapolated.
 * Every case runs on both VRF arithmetics (WebAssembly and noble's BigInt, side by side in
 * the same process or page), beside upstream's native lookup verification (`akd-rs
 * bench-lookup`, run in the same bench run), and the page's bundle is weighed (gzip).
 *
 *   npm run bench -- verify [--json] [--quick] [--no-browser] [--no-upstream]
 */

import { spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { cpus, loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { gzipSync } from 'node:zlib';
import {
  CONFIGURATION_NAMES,
  setVrfArithmetic,
  vrfArithmetic,
  type VrfArithmetic,
} from '@akd-ts/core';
import { loadVectors } from '../test/support/vectors.js';
import { AUDIT_EXAMPLES } from '../test/support/audit-example.js';
import { bundleForBrowser, chromiumPath, openInChromium } from '../test/browser/harness.js';
import { toHexInputs } from '../test/browser/wire.js';
import {
  DEFAULT_TIMING,
  QUICK_TIMING,
  time,
  type Timing,
  type TimingOptions,
} from './support/timing.js';
import {
  firstLookupMs,
  verifyCases,
  type BenchCase,
  type CaseInfo,
} from './support/verify-cases.js';
import type { AkdBenchApi } from './support/verify-browser.js';
import { measure, measureSelf, upstreamCommand } from './support/upstream.js';

/** "a Rust-to-WASM build verifies a 4 KB lookup proof of a 1M-entry tree in about 1.1 ms in V8" */
const REFERENCE_MS = 1.1;
/** A 1M-entry tree: about 20 levels per path, three paths per lookup. */
const LEVELS_1M = 3 * 20;

const ARITHMETICS: VrfArithmetic[] = ['wasm', 'noble'];
const USAGE = 'usage: npm run bench -- verify [--json] [--quick] [--no-browser] [--no-upstream]';

const args = process.argv.slice(2);

// Child mode: the first lookup of a fresh process on one arithmetic, as one JSON line.
if (args[0] === '--first-lookup') {
  const arithmetic = args[1] as VrfArithmetic;
  setVrfArithmetic(arithmetic);
  const ms = firstLookupMs(loadVectors(CONFIGURATION_NAMES[0]!));
  console.log(JSON.stringify({ arithmetic: vrfArithmetic(), ms }));
  process.exit(0);
}

const known = new Set(['--json', '--quick', '--no-browser', '--no-upstream', '--help']);
for (const a of args) {
  if (!known.has(a)) {
    console.error(`unknown argument ${a}; ${USAGE}`);
    process.exit(2);
  }
}
if (args.includes('--help')) {
  console.log(USAGE);
  process.exit(0);
}
const json = args.includes('--json');
const timing = args.includes('--quick') ? QUICK_TIMING : DEFAULT_TIMING;

interface Row {
  env: 'node' | 'chromium';
  engine: string;
  arithmetic: VrfArithmetic;
  configuration: string;
  c: BenchCase;
  t: Timing;
}

interface EnvSummary {
  env: Row['env'];
  engine: string;
  arithmetic: VrfArithmetic;
  /**
   * The first lookup of a fresh process or page (for wasm in a page: awaiting its load too),
   * the median of `FIRST_LOOKUP_RUNS` fresh ones, and each of them.
   */
  firstLookupMs: number;
  firstLookupRunsMs: number[];
  /** In a page: when the median lookup had finished, in ms since navigation started. */
  doneAtMs?: number;
}

/** Fresh processes or pages per first-lookup figure: one cold run is too noisy alone. */
const FIRST_LOOKUP_RUNS = 5;
/** Lookups a Chromium page runs, unmeasured, before its measured series of each arithmetic. */
const SETTLE_TIMING: TimingOptions = { warmupMs: 5000, sampleMs: 100, samples: 1 };
const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;

const loadAtStart = loadavg();
const rows: Row[] = [];
const envs: EnvSummary[] = [];
const infos = new Map<string, CaseInfo>();
const progress = (msg: string) => {
  if (process.stderr.isTTY) process.stderr.write(`\r\x1b[K${msg}`);
};

const vectors = CONFIGURATION_NAMES.map((name) => loadVectors(name));
const auditFor = (name: string) => AUDIT_EXAMPLES.find((e) => e.configuration === name)!;

// Node: the first lookup of a fresh process on each arithmetic, then every case on each.
{
  const engine = `Node ${process.version} (V8 ${process.versions.v8})`;
  for (const arithmetic of ARITHMETICS) {
    const runs: number[] = [];
    for (let i = 0; i < FIRST_LOOKUP_RUNS; i++) {
      progress(`node first lookup, ${arithmetic}, ${i + 1}/${FIRST_LOOKUP_RUNS}`);
      const { json: first } = measureSelf(import.meta.url, ['--first-lookup', arithmetic]);
      if (first['arithmetic'] !== arithmetic) {
        throw new Error(`no ${arithmetic} arithmetic in Node`);
      }
      runs.push(first['ms'] as number);
    }
    envs.push({
      env: 'node',
      engine,
      arithmetic,
      firstLookupMs: median(runs),
      firstLookupRunsMs: runs,
    });
  }
  for (const arithmetic of ARITHMETICS) {
    setVrfArithmetic(arithmetic);
    for (const v of vectors) {
      const { cases, info } = verifyCases(v, auditFor(v.configuration));
      infos.set(v.configuration, info);
      for (const c of cases) {
        progress(`node ${arithmetic} ${v.configuration} ${c.id}`);
        const t = time(c.fn, timing);
        rows.push({ env: 'node', engine, arithmetic, configuration: v.configuration, c, t });
      }
    }
  }
  setVrfArithmetic('auto');
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
  const open = () => openInChromium(bundle, 'akdBench', executablePath);
  const caller =
    (page: Awaited<ReturnType<typeof open>>['page']) =>
    <M extends keyof AkdBenchApi>(method: M, ...a: Parameters<AkdBenchApi[M]>) =>
      page.evaluate(
        ({ method, a }) =>
          (globalThis as unknown as { akdBench: Record<string, (...x: unknown[]) => unknown> })
            .akdBench[method]!(...a),
        { method, a: a as unknown[] },
      ) as Promise<Awaited<ReturnType<AkdBenchApi[M]>>>;
  // the first lookup, each arithmetic in a fresh browser
  for (const arithmetic of ARITHMETICS) {
    const runs: { ms: number; doneAtMs: number; engine: string }[] = [];
    for (let i = 0; i < FIRST_LOOKUP_RUNS; i++) {
      progress(`chromium first lookup, ${arithmetic}, ${i + 1}/${FIRST_LOOKUP_RUNS}`);
      const fresh = await open();
      try {
        const hex = toHexInputs(vectors[0]!);
        const first = await caller(fresh.page)('firstLookup', hex, arithmetic);
        runs.push({ ...first, engine: `Chromium ${fresh.version}` });
      } finally {
        await fresh.close();
      }
    }
    const mid = [...runs].sort((a, b) => a.ms - b.ms)[Math.floor(runs.length / 2)]!;
    envs.push({
      env: 'chromium',
      engine: mid.engine,
      arithmetic,
      firstLookupMs: mid.ms,
      firstLookupRunsMs: runs.map((r) => r.ms),
      doneAtMs: mid.doneAtMs,
    });
  }
  const session = await open();
  try {
    const call = caller(session.page);
    const engine = `Chromium ${session.version}`;
    await call('firstLookup', toHexInputs(vectors[0]!), 'wasm');
    for (const arithmetic of ARITHMETICS) {
      // A page's first seconds of lookups run before Chromium has finished optimising the
      // verifier: series right after the page's first lookup gave 0.55-0.79 ms, the same
      // series from about 4 s on 0.37-0.38 ms. Settling first makes every measured series warm.
      progress(`chromium ${arithmetic}: settling`);
      await call(
        'run',
        toHexInputs(vectors[0]!),
        auditFor(vectors[0]!.configuration),
        'lookup',
        SETTLE_TIMING,
        arithmetic,
      );
      for (const v of vectors) {
        const hex = toHexInputs(v);
        const audit = auditFor(v.configuration);
        const nodeRows = rows.filter(
          (r) =>
            r.env === 'node' && r.arithmetic === arithmetic && r.configuration === v.configuration,
        );
        for (const c of nodeRows) {
          progress(`chromium ${arithmetic} ${v.configuration} ${c.c.id}`);
          const t = await call('run', hex, audit, c.c.id, timing, arithmetic);
          rows.push({
            env: 'chromium',
            engine,
            arithmetic,
            configuration: v.configuration,
            c: c.c,
            t,
          });
        }
      }
    }
  } finally {
    await session.close();
  }
}

// Upstream: its native lookup verification, in this run (a tree of 256 keys has about the
// 8 levels per path of the vectors' fixture tree).
interface UpstreamLookup {
  configuration: string;
  verifyMs: number;
  command: string;
}
const upstream: UpstreamLookup[] = [];
const oracle = upstreamCommand(args);
if (oracle !== undefined) {
  for (const conf of CONFIGURATION_NAMES) {
    progress(`upstream bench-lookup ${conf}`);
    const a = ['bench-lookup', '--keys', '256', '--lookups', '500', '--config', conf];
    const { json: r } = measure(oracle, a);
    upstream.push({
      configuration: conf,
      verifyMs: (r['verify_us_per_lookup'] as number) / 1000,
      command: `akd-rs ${a.join(' ')}`,
    });
  }
}

// The page's bundle (packages/web: its code with core and the embedded WebAssembly), gzip -9.
progress('building the page');
const pageDir = mkdtempSync(join(tmpdir(), 'akd-page-'));
let pageBundle: { bytes: number; gzipBytes: number };
try {
  const web = fileURLToPath(new URL('../packages/web/build.mjs', import.meta.url));
  const built = spawnSync(process.execPath, [web, '--out', pageDir], { encoding: 'utf8' });
  if (built.status !== 0) throw new Error(`the page did not build: ${built.stderr}`);
  const app = readFileSync(join(pageDir, 'app.js'));
  pageBundle = { bytes: app.length, gzipBytes: gzipSync(app, { level: 9 }).length };
} finally {
  rmSync(pageDir, { recursive: true, force: true });
}
progress('');

// The model: a lookup is its VRF verifications plus its path levels (plus small change), so a
// 1M-entry lookup is the measured one with its path levels replaced by 60.
interface Estimate {
  env: Row['env'];
  arithmetic: VrfArithmetic;
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
const find = (env: string, arithmetic: VrfArithmetic, conf: string, id: string) =>
  rows.find(
    (r) =>
      r.env === env && r.arithmetic === arithmetic && r.configuration === conf && r.c.id === id,
  )!;
const perUnit = (r: Row, best = false) => (best ? r.t.minMsPerOp : r.t.msPerOp) / (r.c.units ?? 1);
const estimates: Estimate[] = [];
for (const { env, arithmetic } of envs) {
  for (const conf of CONFIGURATION_NAMES) {
    const info = infos.get(conf)!;
    const figures = (best: boolean): EstimateFigures => {
      const vrfMs = perUnit(find(env, arithmetic, conf, 'vrf-verify'), best);
      const levelMs = perUnit(find(env, arithmetic, conf, 'path-level'), best);
      const lookupMs = perUnit(find(env, arithmetic, conf, 'lookup'), best);
      const lookupParsedKeyMs = perUnit(find(env, arithmetic, conf, 'lookup-parsed-key'), best);
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
    estimates.push({
      env,
      arithmetic,
      configuration: conf,
      median: figures(false),
      best: figures(true),
    });
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
        arithmetic: r.arithmetic,
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
  for (const u of upstream)
    console.log(JSON.stringify({ bench: 'verify', date, kind: 'upstream-lookup', ...u }));
  console.log(JSON.stringify({ bench: 'verify', date, kind: 'page-bundle', ...pageBundle }));
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
  console.log(`verify benchmark, ${date}`);
  console.log(`machine: ${machine}`);
  for (const e of envs) console.log(`${e.env}: ${e.engine}`);
  console.log(
    `timing: ${timing.warmupMs} ms warm-up, median of ${timing.samples} samples of ~${timing.sampleMs} ms` +
      `; in Chromium, ${SETTLE_TIMING.warmupMs} ms of unmeasured lookups per arithmetic first`,
  );
  for (const [conf, info] of infos) {
    console.log(
      `proofs (${conf}): lookup ${info.lookupProofBytes} B (${info.lookupVrfs} VRF proofs, ${info.lookupLevels} path levels), ` +
        `history Complete ${info.historyCompleteBytes} B, MostRecent(1) ${info.historyMostRecent1Bytes} B, audit ${info.auditProofBytes} B`,
    );
  }
  // each case on both arithmetics, side by side
  const table: string[][] = [
    [
      'env',
      'configuration',
      'case',
      'wasm ms/op',
      'wasm best',
      'noble ms/op',
      'noble best',
      'noble / wasm',
    ],
  ];
  for (const r of rows.filter((x) => x.arithmetic === 'wasm')) {
    const n = find(r.env, 'noble', r.configuration, r.c.id);
    const u = r.c.units ?? 1;
    table.push([
      r.env,
      r.configuration,
      r.c.label,
      fmtMs(r.t.msPerOp / u),
      fmtMs(r.t.minMsPerOp / u),
      fmtMs(n.t.msPerOp / u),
      fmtMs(n.t.minMsPerOp / u),
      `${(n.t.msPerOp / r.t.msPerOp).toFixed(1)}x`,
    ]);
  }
  printTable(table, [3, 4, 5, 6, 7]);
  console.log('');
  if (upstream.length > 0) {
    console.log("lookup verification against upstream's native verifier (same run):");
    const up: string[][] = [
      ['env', 'configuration', 'wasm ms', 'noble ms', 'upstream native ms', 'wasm / upstream'],
    ];
    for (const { env } of envs.filter((e) => e.arithmetic === 'wasm')) {
      for (const u of upstream) {
        const w = find(env, 'wasm', u.configuration, 'lookup');
        const n = find(env, 'noble', u.configuration, 'lookup');
        up.push([
          env,
          u.configuration,
          fmtMs(w.t.msPerOp),
          fmtMs(n.t.msPerOp),
          fmtMs(u.verifyMs),
          `${(w.t.msPerOp / u.verifyMs).toFixed(2)}x`,
        ]);
      }
    }
    printTable(up, [2, 3, 4, 5]);
    for (const u of upstream) console.log(`(upstream: ${u.command}, verify_us_per_lookup)`);
    console.log('');
  }
  console.log(
    `lookup in a 1M-entry tree (estimate: measured lookup + (${LEVELS_1M} - vector levels) x level), against ${REFERENCE_MS} ms (Rust->WASM in V8):`,
  );
  const est: string[][] = [
    [
      'env',
      'arithmetic',
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
        e.arithmetic,
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
  printTable(est, [4, 5, 6, 7, 8, 9, 10, 11]);
  console.log(
    '(model = 3 VRF verifications + the path levels of the vector lookup, with the key parsed once; lookup with key bytes also parses the key and builds its table)',
  );
  for (const e of envs) {
    const page =
      e.doneAtMs === undefined ? '' : `, done ${fmtMs(e.doneAtMs)} ms after navigation started`;
    const each = e.firstLookupRunsMs.map(fmtMs).join(', ');
    console.log(
      `first lookup in a fresh ${e.env}, ${e.arithmetic} (cold JIT, key parse, key table${e.arithmetic === 'wasm' && e.env === 'chromium' ? ', awaiting the module' : ''}): ${fmtMs(e.firstLookupMs)} ms, median of ${FIRST_LOOKUP_RUNS} (${each})${page}`,
    );
  }
  console.log(
    `page bundle (packages/web app.js: page, core, WebAssembly): ${(pageBundle.bytes / 1024).toFixed(1)} KiB, ${(pageBundle.gzipBytes / 1024).toFixed(1)} KiB gzip -9`,
  );
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
