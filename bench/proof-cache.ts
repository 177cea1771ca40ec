/**
 * A proof server's record cache, as objects or as bytes: the memory each holds and the
 * lookups each serves, side by side in one run on one store.
 *
 *   npm run bench -- proof-cache [--labels 100000] [--lookups 20000] [--warm 5000]
 *                                [--objects-mb 16] [--compact-mb 44]
 *                                [--store sqlite|postgres] [--url URL] [--json]
 *
 * A directory of `--labels` labels, each published twice (two epochs, every node with a
 * previous version), with its VRF proofs stored, in a SQLite file or a PostgreSQL schema of
 * its own (dropped at the end; `--url` or AKD_TEST_POSTGRES_URL). Two keyless readers open it
 * as `akd serve`'s proof servers do (over SQLite: a 16 MiB page cache and the file mapped),
 * each with its own connection and record cache:
 *
 * - objects: records kept as objects, bounded by `--objects-mb` of spec 14.3's accounting
 *   (the proof servers' cache before nodes were kept as bytes);
 * - bytes: tree nodes kept as their codec bytes (`CacheOptions.compactNodes`), bounded by
 *   `--compact-mb` of those bytes (`proofCache`, what proof servers use now; by default
 *   their default bound).
 *
 * Memory: each reader alone, after the warm-up and the measured lookups, what the process's
 * heap and external memory (array buffers) lose when it is closed and dropped, after full
 * collections. Lookups: both readers warmed with the same `--warm` labels, then the sample
 * cut into blocks of 500 that each reader looks up in turn (which goes first alternates); the
 * figures are medians over blocks, the ratio the median of each block's own ratio, with the
 * batched node reads a lookup made and the process's CPU time per lookup.
 */

import v8 from 'node:v8';
import vm from 'node:vm';
import { WhatsAppV1Configuration, utf8 } from '@akd-ts/core';
import type { CacheOptions } from '@akd-ts/storage';
import { DEFAULT_PROOF_CACHE_BYTES, proofCache } from '@akd-ts/server';
import type { ReadOnlyDirectory } from '@akd-ts/directory';
import { median, optionValue } from './support/common.js';
import {
  closeReader,
  placeWriter,
  proofServerReader,
  sqlStoreOption,
  storePlace,
} from './support/store-place.js';

v8.setFlagsFromString('--expose-gc');
const gc = vm.runInNewContext('gc') as () => void;

const args = process.argv.slice(2);
const value = (name: string) => optionValue(args, name);
const LABELS = Number(value('labels') ?? 100_000);
const LOOKUPS = Number(value('lookups') ?? 20_000);
const WARM = Number(value('warm') ?? 5_000);
const OBJECTS_MB = Number(value('objects-mb') ?? 16);
const COMPACT_MB = Number(value('compact-mb') ?? DEFAULT_PROOF_CACHE_BYTES / 2 ** 20);
const { store: STORE, url: PG_URL } = sqlStoreOption(value);
const config = new WhatsAppV1Configuration();
const labels = Array.from({ length: LABELS }, (_, i) => utf8(`user-${i}@example.com`));
const MiB = 2 ** 20;

interface Setup {
  name: string;
  cache: CacheOptions;
}
const setups: Setup[] = [
  { name: 'objects', cache: { memoryLimitBytes: OBJECTS_MB * MiB } },
  { name: 'bytes', cache: proofCache(COMPACT_MB * MiB) as CacheOptions },
];

/** Heap and external memory after full collections, bytes. */
async function settledMemory(): Promise<number> {
  for (let i = 0; i < 3; i++) {
    gc();
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
  const m = process.memoryUsage();
  return m.heapUsed + m.external;
}

const warm = Array.from({ length: WARM }, (_, i) => labels[(i * 104_729 + 1) % LABELS]!);
const sample = Array.from({ length: LOOKUPS }, (_, i) => labels[(i * 7919) % LABELS]!);

const at = await storePlace(STORE, 'proof-cache', PG_URL);
const memory: Record<string, { bytes: number; records: number }> = {};
let rates: { objects: number; bytes: number; ratio: number; reads: number[]; cpu: number[] };
try {
  const dir = await placeWriter(at, config);
  for (const v of ['key-1', 'key-2']) {
    await dir.publish(labels.map((label) => ({ label, value: utf8(v) })));
    await dir.vrfProofsStored();
  }
  const publicKey = dir.getPublicKey();
  await dir.close();

  const open = (setup: Setup) => proofServerReader(at, config, publicKey, setup.cache);

  for (const setup of setups) {
    let reader: ReadOnlyDirectory | undefined = await open(setup);
    for (const l of [...warm, ...sample]) await reader.lookup(l);
    const records = reader.storage.cacheSize;
    const held = await settledMemory();
    await closeReader(reader);
    reader = undefined;
    memory[setup.name] = { bytes: held - (await settledMemory()), records };
  }

  const readers = await Promise.all(setups.map(open));
  for (const l of warm) for (const r of readers) await r.lookup(l);
  const blocks = Math.max(1, Math.floor(LOOKUPS / 500));
  const size = Math.ceil(LOOKUPS / blocks);
  const perBlock = { rate: [[], []] as number[][], ratio: [] as number[] };
  const reads = [0, 0];
  const cpu = [0, 0];
  for (let b = 0; b < blocks; b++) {
    const block = sample.slice(b * size, (b + 1) * size);
    const order = b % 2 === 0 ? [0, 1] : [1, 0];
    const rate = [0, 0];
    for (const k of order) {
      const reader = readers[k]!;
      const batches = reader.storage.metrics.dbBatchGets;
      const used = process.cpuUsage();
      const start = performance.now();
      for (const l of block) await reader.lookup(l);
      rate[k] = block.length / ((performance.now() - start) / 1000);
      const c = process.cpuUsage(used);
      cpu[k] = cpu[k]! + c.user + c.system;
      reads[k] = reads[k]! + reader.storage.metrics.dbBatchGets - batches;
      perBlock.rate[k]!.push(rate[k]!);
    }
    perBlock.ratio.push(rate[1]! / rate[0]!);
  }
  rates = {
    objects: median(perBlock.rate[0]!),
    bytes: median(perBlock.rate[1]!),
    ratio: median(perBlock.ratio),
    reads: reads.map((r) => r / (blocks * size)),
    cpu: cpu.map((c) => c / (blocks * size)),
  };
  for (const r of readers) await closeReader(r);
} finally {
  await at.remove();
}

if (args.includes('--json')) {
  console.log(
    JSON.stringify({ labels: LABELS, store: STORE, lookups: LOOKUPS, warm: WARM, memory, rates }),
  );
} else {
  console.log(
    `${LABELS} labels (two epochs), ${STORE}, keyless readers as proof servers, ${WARM} warm-up then ${LOOKUPS} lookups`,
  );
  console.log(
    'cache                       memory    records   lookups/s  node reads/lookup  CPU us/lookup',
  );
  setups.forEach((s, i) => {
    const m = memory[s.name]!;
    const bound = i === 0 ? `${OBJECTS_MB} MiB` : `${COMPACT_MB} MiB`;
    console.log(
      `${`${s.name}, ${bound}`.padEnd(24)}${(m.bytes / MiB).toFixed(1).padStart(8)} MiB${String(m.records).padStart(10)}${(i === 0 ? rates.objects : rates.bytes).toFixed(0).padStart(12)}${rates.reads[i]!.toFixed(2).padStart(19)}${rates.cpu[i]!.toFixed(0).padStart(15)}`,
    );
  });
  console.log(`bytes / objects, paired blocks: ${rates.ratio.toFixed(3)}x lookups per second`);
}
