/**
 * The tree benchmarks of upstream's akd/benches/azks.rs, side by side with upstream: batch
 * insertion of random leaves into a tree of random leaves (1,000 + 1,000, and the 200,000 +
 * 200,000 of upstream PR #454), serial and with the default parallelism, each run in a fresh
 * process under `/usr/bin/time -v` (peak memory), alternating with upstream's `akd-rs
 * bench-azks` when it is present; and audit verification of a 10,000 + 10,000 leaf step.
 *
 *   npm run bench -- azks [--json] [--quick] [--runs 3] [--config whatsapp_v1|experimental]
 *                         [--cases small,big,audit] [--no-upstream]
 *
 * Insertion time covers what upstream's `batch_insert_nodes` does: the preload and the
 * insertion into a transaction, not the commit, which upstream's benchmark does not run (and
 * which builds our records; `commitMs` reports it). Parallel means the default
 * `AzksParallelismConfig` on both sides: as many workers as cores.
 */

import {
  ExperimentalConfiguration,
  WhatsAppV1Configuration,
  auditVerify,
  configurationByName,
  toHex,
  type Configuration,
} from '@akd-ts/core';
import { MemoryDatabase, StorageManager } from '@akd-ts/storage';
import {
  Azks,
  DEFAULT_PARALLELISM,
  NO_PARALLELISM,
  parallelLevels,
  type InsertOptions,
  type ParallelismConfig,
} from '@akd-ts/directory';
import { Rng, randomLeaves } from './support/random.js';
import { median, reportRow } from './support/common.js';
import { measure, measureSelf, ratio, upstreamCommand } from './support/upstream.js';

const args = process.argv.slice(2);
const opt = (name: string, fallback: string) => {
  const i = args.indexOf(`--${name}`);
  return i >= 0 ? args[i + 1]! : fallback;
};
const json = args.includes('--json');
const quick = args.includes('--quick');
const runs = Number(opt('runs', quick ? '1' : '3'));
const report = (row: Record<string, string | number | null>) =>
  reportRow(row as Record<string, string | number>, json);

function insertOptions(parallelism: ParallelismConfig): InsertOptions {
  return {
    levels: parallelLevels(parallelism.preload),
    maxBatchSize: 10_000,
    insertion: parallelism.insertion,
  };
}

/**
 * Child process: inserts `initial` leaves (committed), then times inserting `inserted` more,
 * `times` times (a fresh tree each time): wall and CPU time of the insertion, then of its
 * commit. Prints one JSON line with the medians and the root hash.
 */
async function insertionChild(
  config: Configuration,
  initial: number,
  inserted: number,
  parallel: boolean,
  times: number,
): Promise<void> {
  const options = insertOptions(parallel ? DEFAULT_PARALLELISM : NO_PARALLELISM);
  const ms: number[] = [];
  const cpuMs: number[] = [];
  const commitMs: number[] = [];
  let root = '';
  for (let r = 0; r < times; r++) {
    const rng = new Rng(42n + BigInt(r));
    const azks = new Azks(config);
    const storage = new StorageManager(new MemoryDatabase());
    let record = await azks.create(storage);
    const first = storage.beginTransaction();
    record = await azks.insert(first, record, randomLeaves(rng, initial), options);
    await first.commit();
    const more = randomLeaves(rng, inserted);
    const tx = storage.beginTransaction();
    const cpuStart = process.cpuUsage();
    const start = performance.now();
    record = await azks.insert(tx, record, more, options);
    ms.push(performance.now() - start);
    const used = process.cpuUsage(cpuStart);
    cpuMs.push((used.user + used.system) / 1000);
    if (r === 0) root = toHex(await azks.rootHash(tx, record.latestEpoch));
    const commitStart = performance.now();
    await tx.commit();
    commitMs.push(performance.now() - commitStart);
  }
  console.log(
    JSON.stringify({ ms: median(ms), cpuMs: median(cpuMs), commitMs: median(commitMs), root }),
  );
}

/** Child process: audit verification of a 10,000 + 10,000 leaf step (median of the runs). */
async function auditChild(config: Configuration, n: number): Promise<void> {
  const rng = new Rng(7n);
  const azks = new Azks(config);
  const storage = new StorageManager(new MemoryDatabase());
  let record = await azks.create(storage);
  const roots: Uint8Array[] = [];
  for (let e = 0; e < 2; e++) {
    const tx = storage.beginTransaction();
    record = await azks.insert(tx, record, randomLeaves(rng, n), insertOptions(NO_PARALLELISM));
    await tx.commit();
    roots.push(await azks.rootHash(storage, record.latestEpoch));
  }
  const proof = await azks.appendOnlyProof(storage, 1n, 2n, 2n);
  const times: number[] = [];
  for (let r = 0; r < Math.max(5, runs); r++) {
    const start = performance.now();
    auditVerify(config, roots, proof);
    times.push(performance.now() - start);
  }
  const elements = proof.proofs[0]!.inserted.length + proof.proofs[0]!.unchangedNodes.length;
  console.log(JSON.stringify({ ms: median(times), elements }));
}

/** Both sides of one insertion case, alternating, each run in a fresh process. */
function insertionCase(
  configName: string,
  initial: number,
  inserted: number,
  parallel: boolean,
  upstream: string | undefined,
): void {
  // small cases repeat inside one process (upstream's Criterion does the same)
  const perProcess = initial + inserted <= 10_000 ? 20 : 1;
  const ours: { ms: number; cpuMs: number; commitMs: number; rss: number | null }[] = [];
  const theirs: { ms: number; cpuMs: number; rss: number | null }[] = [];
  const roots = new Set<string>();
  for (let r = 0; r < runs; r++) {
    if (upstream !== undefined) {
      const u = measure(upstream, [
        'bench-azks',
        '--config',
        configName,
        '--initial',
        String(initial),
        '--inserted',
        String(inserted),
        '--runs',
        String(perProcess),
        '--parallel',
        parallel ? 'on' : 'off',
      ]);
      theirs.push({
        ms: Number(u.json['median_ms']),
        cpuMs: Number(u.json['cpu_median_ms']),
        rss: u.maxRssMb,
      });
    }
    const o = measureSelf(import.meta.url, [
      '--child',
      'insert',
      configName,
      String(initial),
      String(inserted),
      parallel ? 'on' : 'off',
      String(perProcess),
    ]);
    roots.add(String(o.json['root']));
    ours.push({
      ms: Number(o.json['ms']),
      cpuMs: Number(o.json['cpuMs']),
      commitMs: Number(o.json['commitMs']),
      rss: o.maxRssMb,
    });
  }
  if (roots.size !== 1) throw new Error(`runs disagree on the root: ${[...roots].join(', ')}`);
  const ms = median(ours.map((x) => x.ms));
  const upstreamMs = theirs.length > 0 ? median(theirs.map((x) => x.ms)) : null;
  const round = (x: number) => (x >= 100 ? Math.round(x) : Number(x.toFixed(1)));
  report({
    benchmark: 'batch insertion',
    configuration: configName,
    initial,
    inserted,
    parallel: parallel ? 'default (cores)' : 'off',
    ms: round(ms),
    cpuMs: round(median(ours.map((x) => x.cpuMs))),
    commitMs: round(median(ours.map((x) => x.commitMs))),
    maxRssMb: median(ours.map((x) => x.rss ?? 0)),
    upstreamMs: upstreamMs === null ? null : round(upstreamMs),
    upstreamCpuMs: theirs.length > 0 ? round(median(theirs.map((x) => x.cpuMs))) : null,
    upstreamMaxRssMb: theirs.length > 0 ? median(theirs.map((x) => x.rss ?? 0)) : null,
    ratio: ratio(ms, upstreamMs),
    runs,
  });
}

const child = args.indexOf('--child');
if (child >= 0) {
  const [mode, configName, ...rest] = args.slice(child + 1);
  const config = configurationByName(configName!);
  if (mode === 'insert') {
    const [initial, inserted, parallel, times] = rest;
    await insertionChild(
      config,
      Number(initial),
      Number(inserted),
      parallel === 'on',
      Number(times),
    );
  } else await auditChild(config, 10_000);
} else {
  const upstream = upstreamCommand(args);
  const configs: Configuration[] = ['whatsapp_v1', 'experimental'].includes(opt('config', ''))
    ? [configurationByName(opt('config', ''))]
    : [new WhatsAppV1Configuration(), new ExperimentalConfiguration()];
  const cases = opt('cases', 'small,big,audit').split(',');
  const big = quick ? 20_000 : 200_000;
  if (upstream === undefined) console.error('upstream akd-rs not found: our figures only');
  for (const config of configs) {
    for (const parallel of [false, true]) {
      if (cases.includes('small')) insertionCase(config.name, 1_000, 1_000, parallel, upstream);
      if (cases.includes('big')) insertionCase(config.name, big, big, parallel, upstream);
    }
    if (cases.includes('audit')) {
      const a = measureSelf(import.meta.url, ['--child', 'audit', config.name]).json;
      report({
        benchmark: 'audit verify',
        configuration: config.name,
        epoch1: 10000,
        epoch2: 10000,
        proofElements: Number(a['elements']),
        ms: Number(Number(a['ms']).toFixed(1)),
        upstreamMs: null,
        ratio: null,
      });
    }
  }
}
