/**
 * The tree benchmarks of upstream's akd/benches/azks.rs: batch insertion of random leaves into
 * a tree of random leaves (1,000 + 1,000, and the 200,000 + 200,000 of upstream PR #454), and
 * audit verification of a 10,000 + 10,000 leaf step, on the in-memory store with a cache.
 *
 *   npm run bench -- azks [--json] [--quick] [--runs 3]
 *
 * Insertion time covers what upstream's `batch_insert_nodes` does: the preload and the
 * insertion into a transaction (not the commit, which upstream's benchmark does not run).
 */

import {
  ExperimentalConfiguration,
  WhatsAppV1Configuration,
  auditVerify,
  type Configuration,
} from '@akd-ts/core';
import { MemoryDatabase, StorageManager } from '@akd-ts/storage';
import { Azks, DEFAULT_PARALLELISM, parallelLevels } from '@akd-ts/directory';
import { Rng, randomLeaves } from './support/random.js';
import { median, reportRow } from './support/common.js';

const args = process.argv.slice(2);
const json = args.includes('--json');
const quick = args.includes('--quick');
const runsAt = args.indexOf('--runs');
const runs = runsAt >= 0 ? Number(args[runsAt + 1]) : quick ? 1 : 3;
const preload = { levels: parallelLevels(DEFAULT_PARALLELISM.preload), maxBatchSize: 10_000 };

const report = (row: Record<string, string | number>) => reportRow(row, json);

/**
 * Inserts `initial` leaves (committed), then times inserting `inserted` more: wall time, and
 * the process's CPU time, which other load on this shared machine inflates much less.
 */
async function insertion(
  config: Configuration,
  initial: number,
  inserted: number,
): Promise<{ ms: number; cpuMs: number }> {
  const times: number[] = [];
  const cpu: number[] = [];
  for (let r = 0; r < runs; r++) {
    const rng = new Rng(42n + BigInt(r));
    const azks = new Azks(config);
    const storage = new StorageManager(new MemoryDatabase());
    let record = await azks.create(storage);
    const first = storage.beginTransaction();
    record = await azks.insert(first, record, randomLeaves(rng, initial), preload);
    await first.commit();
    const more = randomLeaves(rng, inserted);
    const tx = storage.beginTransaction();
    const cpuStart = process.cpuUsage();
    const start = performance.now();
    await azks.insert(tx, record, more, preload);
    times.push(performance.now() - start);
    const used = process.cpuUsage(cpuStart);
    cpu.push((used.user + used.system) / 1000);
    await tx.rollback();
  }
  return { ms: median(times), cpuMs: median(cpu) };
}

async function auditVerification(
  config: Configuration,
  n: number,
): Promise<{ ms: number; bytes: number }> {
  const rng = new Rng(7n);
  const azks = new Azks(config);
  const storage = new StorageManager(new MemoryDatabase());
  let record = await azks.create(storage);
  const roots: Uint8Array[] = [];
  for (let e = 0; e < 2; e++) {
    const tx = storage.beginTransaction();
    record = await azks.insert(tx, record, randomLeaves(rng, n), preload);
    await tx.commit();
    roots.push(await azks.rootHash(storage, record.latestEpoch));
  }
  const proof = await azks.appendOnlyProof(storage, 1n, 2n, 2n);
  const times: number[] = [];
  for (let r = 0; r < Math.max(3, runs); r++) {
    const start = performance.now();
    auditVerify(config, roots, proof);
    times.push(performance.now() - start);
  }
  const elements = proof.proofs[0]!.inserted.length + proof.proofs[0]!.unchangedNodes.length;
  return { ms: median(times), bytes: elements };
}

const configs: Configuration[] = [new WhatsAppV1Configuration(), new ExperimentalConfiguration()];
const big = quick ? 20_000 : 200_000;
for (const config of configs) {
  const small = await insertion(config, 1_000, 1_000);
  report({
    benchmark: 'batch insertion',
    configuration: config.name,
    initial: 1000,
    inserted: 1000,
    ms: Number(small.ms.toFixed(1)),
    cpuMs: Number(small.cpuMs.toFixed(1)),
  });
}
for (const config of configs) {
  const { ms, cpuMs } = await insertion(config, big, big);
  report({
    benchmark: 'batch insertion',
    configuration: config.name,
    initial: big,
    inserted: big,
    ms: Math.round(ms),
    cpuMs: Math.round(cpuMs),
  });
}
for (const config of configs) {
  const { ms, bytes } = await auditVerification(config, 10_000);
  report({
    benchmark: 'audit verify',
    configuration: config.name,
    epoch1: 10000,
    epoch2: 10000,
    proofElements: bytes,
    ms: Number(ms.toFixed(1)),
  });
}
