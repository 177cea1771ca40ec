/**
 * The auditor over a 100-epoch, 10,000-leaves-per-epoch history (upstream's "Audit proof
 * generation. 10000 leaves over 100 epochs" tree): blob export as each epoch is published,
 * export of old steps after the fact, and verification of the whole chain of blobs from a
 * folder, with peak memory and throughput.
 *
 *   npm run bench -- auditor [--json] [--quick] [--epochs 100] [--leaves 10000] [--runs 1]
 *                            [--config whatsapp_v1|experimental] [--keep <dir>] [--verify <dir>]
 *                            [--no-upstream]
 *
 * `--keep <dir>` writes the blobs there and keeps them; `--verify <dir>` only verifies such a
 * folder again (the verification figures, without rebuilding the tree). Verification is
 * measured side by side with upstream's verifier (`akd-rs bench-blobs`) when present.
 *
 * The history is built with the tree directly from random leaves (bench/support/random.ts), as
 * upstream's benchmark does: a million VRF evaluations would take minutes and measure the VRF.
 * Each step's blob is exported right after its epoch is published (the step is then the
 * latest, as a publisher exporting blobs as it goes sees it): the proof, the two roots derived
 * from it, the encoding, and the file write. Verification runs in a fresh child process, so
 * its peak memory (maxRSS, from /usr/bin/time -v) is the auditor's alone and not the
 * million-leaf tree's: once with core's AuditChain over the files on one thread (the
 * verification proper), once as `akd audit verify <folder>` in-process (what a user runs: its
 * blobs verified on worker threads), alternating with upstream's single-threaded verifier.
 */

import {
  mkdirSync,
  mkdtempSync,
  readFileSync,
  readdirSync,
  rmSync,
  statSync,
  writeFileSync,
} from 'node:fs';
import { availableParallelism, tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { Readable } from 'node:stream';
import {
  AuditChain,
  configurationByName,
  parseAuditBlobName,
  type AuditBlobName,
  type Configuration,
} from '@akd-ts/core';
import { MemoryDatabase, StorageManager } from '@akd-ts/storage';
import {
  Azks,
  DEFAULT_PARALLELISM,
  exportAuditBlobs,
  parallelLevels,
  type AuditBlobDirectory,
} from '@akd-ts/directory';
import { Rng, randomLeaves } from './support/random.js';
import { median, reportRow } from './support/common.js';
import { measure, measureSelf, upstreamCommand, type Measured } from './support/upstream.js';

const args = process.argv.slice(2);
const flag = (name: string) => args.includes(`--${name}`);
const opt = (name: string, fallback: string) => {
  const i = args.indexOf(`--${name}`);
  return i >= 0 ? args[i + 1]! : fallback;
};
const json = flag('json');
const quick = flag('quick');
const MB = 1024 * 1024;

const report = (row: Record<string, string | number | null>) =>
  reportRow(row as Record<string, string | number>, json);

const maxRssMb = () => Number((process.resourceUsage().maxRSS / 1024).toFixed(1));

/** The blob files of a folder in epoch order, with their names. */
function blobFiles(dir: string): { path: string; name: AuditBlobName }[] {
  const out: { path: string; name: AuditBlobName }[] = [];
  for (const epoch of readdirSync(dir)) {
    for (const prev of readdirSync(join(dir, epoch))) {
      for (const cur of readdirSync(join(dir, epoch, prev))) {
        out.push({
          path: join(dir, epoch, prev, cur),
          name: parseAuditBlobName(`${epoch}/${prev}/${cur}`),
        });
      }
    }
  }
  return out.sort((a, b) => (a.name.epoch < b.name.epoch ? -1 : 1));
}

/** Child process: verify the folder's chain with core, report time and memory. */
function verifyChild(dir: string, configName: string): void {
  const config = configurationByName(configName);
  const files = blobFiles(dir);
  let heapPeak = 0;
  let bytes = 0;
  let elements = 0;
  const chain = new AuditChain(config, { naming: 'end' });
  const started = performance.now();
  for (const f of files) {
    const data = new Uint8Array(readFileSync(f.path));
    bytes += data.length;
    const v = chain.verify({ name: f.name, data });
    elements += v.inserted + v.unchanged;
    heapPeak = Math.max(heapPeak, process.memoryUsage().heapUsed);
  }
  const seconds = (performance.now() - started) / 1000;
  console.log(
    JSON.stringify({
      seconds,
      blobs: files.length,
      bytes,
      elements,
      heapPeakMb: heapPeak / MB,
      maxRssMb: maxRssMb(),
      head: chain.head!.epoch.toString(),
    }),
  );
}

/** Child process: `akd audit verify <dir>` in-process. */
async function cliChild(dir: string, configName: string): Promise<void> {
  const { run } = await import('../packages/cli/dist/program.js');
  let out = '';
  const started = performance.now();
  const code = await run(
    ['audit', 'verify', dir, '--config', configName, '--progress-every', '1000000', '--json'],
    {
      stdout: { write: (s: string) => (out += s) },
      stderr: { write: (s: string) => process.stderr.write(s) },
      stdin: Readable.from([]),
      env: {},
    },
  );
  const seconds = (performance.now() - started) / 1000;
  const summary = JSON.parse(out.trim().split('\n').pop()!) as { verified: number; epoch: number };
  console.log(
    JSON.stringify({
      code,
      seconds,
      verified: summary.verified,
      epoch: summary.epoch,
      maxRssMb: maxRssMb(),
    }),
  );
}

function child(mode: string, dir: string, configName: string): Measured {
  return measureSelf(import.meta.url, [mode, dir, '--config', configName]);
}

/** The folder's bytes, as our figures count them. */
function folderBytes(dir: string): number {
  return blobFiles(dir).reduce((n, f) => n + statSync(f.path).size, 0);
}

/**
 * The verification figures for a folder of blobs, side by side, alternating, each run in a
 * fresh process: core's AuditChain on one thread, `akd audit verify` (worker threads, as many
 * as cores), and upstream's verifier (one thread) when present. MB/s counts 2^20 bytes on both
 * sides (upstream's own figure counts 10^6); the ratios compare times over the same bytes.
 */
function verifyFolder(dir: string, configName: string): void {
  const upstream = upstreamCommand(args);
  const runs = Number(opt('runs', '1'));
  const bytes = folderBytes(dir);
  const core: number[] = [];
  const cli: number[] = [];
  const theirs: number[] = [];
  const rss: { core: number[]; cli: number[]; upstream: number[] } = {
    core: [],
    cli: [],
    upstream: [],
  };
  let blobs = 0;
  for (let r = 0; r < runs; r++) {
    if (upstream !== undefined) {
      const u = measure(upstream, ['bench-blobs', '--config', configName, '--dir', dir]);
      theirs.push(Number(u.json['seconds']));
      rss.upstream.push(u.maxRssMb ?? 0);
    }
    const c = child('--verify-child', dir, configName);
    core.push(Number(c.json['seconds']));
    rss.core.push(c.maxRssMb ?? 0);
    blobs = Number(c.json['blobs']);
    const l = child('--cli-child', dir, configName);
    if (Number(l.json['code']) !== 0) throw new Error('akd audit verify failed');
    cli.push(Number(l.json['seconds']));
    rss.cli.push(l.maxRssMb ?? 0);
  }
  const mbps = (seconds: number) => Number((bytes / MB / seconds).toFixed(2));
  const upstreamSeconds = theirs.length > 0 ? median(theirs) : null;
  const row = (benchmark: string, seconds: number, maxRss: number[], threads: number) => ({
    benchmark,
    configuration: configName,
    blobs,
    MB: Number((bytes / MB).toFixed(1)),
    threads,
    seconds: Number(seconds.toFixed(2)),
    MBPerSecond: mbps(seconds),
    maxRssMb: median(maxRss),
    upstreamMBPerSecond: upstreamSeconds === null ? null : mbps(upstreamSeconds),
    upstreamMaxRssMb: rss.upstream.length > 0 ? median(rss.upstream) : null,
    // throughput over upstream's single thread
    ratio: upstreamSeconds === null ? null : Number((upstreamSeconds / seconds).toFixed(2)),
    runs,
  });
  report(row('chain verification (core AuditChain, one thread)', median(core), rss.core, 1));
  report(
    row('akd audit verify <folder> (worker threads)', median(cli), rss.cli, availableParallelism()),
  );
}

async function main(config: Configuration, epochs: number, leaves: number): Promise<void> {
  const rng = new Rng(42n);
  const azks = new Azks(config);
  const storage = new StorageManager(new MemoryDatabase());
  let record = await azks.create(storage);
  const preload = { levels: parallelLevels(DEFAULT_PARALLELISM.preload), maxBatchSize: 10_000 };
  const directory: AuditBlobDirectory = {
    config,
    getEpochHash: async () => ({
      epoch: record.latestEpoch,
      hash: await azks.rootHash(storage, record.latestEpoch),
    }),
    // as ReadOnlyDirectory.audit: preload the nodes the proof reads, then build it
    audit: async (start, end) => {
      await azks.preloadAudit(storage, start, end, record.latestEpoch, preload);
      return azks.appendOnlyProof(storage, start, end, record.latestEpoch);
    },
  };
  const keep = args.includes('--keep') ? opt('keep', '') : undefined;
  const dir = keep ?? mkdtempSync(join(tmpdir(), 'akd-bench-auditor-'));
  if (keep !== undefined) mkdirSync(keep, { recursive: true });
  try {
    let insertMs = 0;
    let exportMs = 0;
    let writeMs = 0;
    let bytes = 0;
    let largest = 0;
    for (let e = 1; e <= epochs; e++) {
      const t0 = performance.now();
      const tx = storage.beginTransaction();
      record = await azks.insert(tx, record, randomLeaves(rng, leaves), preload);
      await tx.commit();
      const t1 = performance.now();
      insertMs += t1 - t0;
      for await (const blob of exportAuditBlobs(directory, BigInt(e - 1), BigInt(e))) {
        const t2 = performance.now();
        exportMs += t2 - t1;
        const path = join(dir, blob.key);
        mkdirSync(dirname(path), { recursive: true });
        writeFileSync(path, blob.data);
        writeMs += performance.now() - t2;
        bytes += blob.data.length;
        largest = Math.max(largest, blob.data.length);
      }
    }
    report({
      benchmark: 'build (tree insertion, not the auditor)',
      configuration: config.name,
      epochs,
      leavesPerEpoch: leaves,
      seconds: Number((insertMs / 1000).toFixed(2)),
    });
    report({
      benchmark: 'blob export as published (proof + roots + encoding)',
      configuration: config.name,
      blobs: epochs,
      msPerBlob: Number((exportMs / epochs).toFixed(1)),
      totalSeconds: Number((exportMs / 1000).toFixed(2)),
      writeMsPerBlob: Number((writeMs / epochs).toFixed(2)),
      totalMB: Number((bytes / MB).toFixed(1)),
      meanKB: Number((bytes / epochs / 1024).toFixed(0)),
      largestKB: Number((largest / 1024).toFixed(0)),
      exporterMaxRssMb: maxRssMb(),
    });
    // after the fact: an old step's proof is read at the latest epoch, where later insertions
    // have split its unchanged subtrees into many smaller ones (still valid, much larger)
    for (const start of [0, Math.floor(epochs / 2), epochs - 1]) {
      const t0 = performance.now();
      let size = 0;
      for await (const blob of exportAuditBlobs(directory, BigInt(start), BigInt(start + 1)))
        size = blob.data.length;
      report({
        benchmark: 'blob export after the fact (at the latest epoch)',
        configuration: config.name,
        step: `${start} -> ${start + 1}`,
        ms: Number((performance.now() - t0).toFixed(0)),
        sizeKB: Number((size / 1024).toFixed(0)),
      });
    }
    verifyFolder(dir, config.name);
  } finally {
    if (keep === undefined) rmSync(dir, { recursive: true, force: true });
  }
}

if (args[0] === '--verify-child') {
  verifyChild(args[1]!, opt('config', 'whatsapp_v1'));
} else if (args[0] === '--cli-child') {
  await cliChild(args[1]!, opt('config', 'whatsapp_v1'));
} else if (args.includes('--verify')) {
  verifyFolder(opt('verify', ''), opt('config', 'whatsapp_v1'));
} else {
  const epochs = Number(opt('epochs', quick ? '10' : '100'));
  const leaves = Number(opt('leaves', quick ? '2000' : '10000'));
  await main(configurationByName(opt('config', 'whatsapp_v1')), epochs, leaves);
}
