/**
 * Serial versus parallel preloading before a batch insertion (upstream PR #454), on the
 * in-memory store and on a store that adds a fixed delay to every read round trip and serves
 * at most a fixed number of keys per round trip, as a remote database would.
 *
 *   npm run bench -- preload [--json] [--quick] [--degree 32] [--delay 2] [--cap 1000] [--runs 3]
 *                            [--postgres]
 *
 * For each case it prints the preload time of both modes (median of the runs, modes
 * alternating), the tree levels the walk read, the batched reads issued, the latency floor
 * (levels x delay: one round trip per level is the least any walk can wait), the ratio of the
 * parallel time to that floor, and the speedup of parallel over serial.
 */

import { WhatsAppV1Configuration, type NodeLabel } from '@akd-ts/core';
import { randomBytes } from 'node:crypto';
import pg from 'pg';
import {
  InstrumentedDatabase,
  MemoryDatabase,
  StorageManager,
  type Database,
} from '@akd-ts/storage';
import { PostgresDatabase } from '@akd-ts/storage-postgres';
import { Azks, Parallelism, parallelLevels } from '@akd-ts/directory';
import { Rng, randomLeaves } from './support/random.js';
import { median } from './support/common.js';

const args = process.argv.slice(2);
const flag = (name: string) => args.includes(`--${name}`);
const num = (name: string, fallback: number) => {
  const i = args.indexOf(`--${name}`);
  return i >= 0 ? Number(args[i + 1]) : fallback;
};
const json = flag('json');
const quick = flag('quick');
const degree = num('degree', 32);
const delayMs = num('delay', 2);
const cap = num('cap', 1000);
const runs = num('runs', quick ? 1 : 3);
const sizes = quick ? [1_000, 20_000] : [1_000, 200_000];

const config = new WhatsAppV1Configuration();
const azks = new Azks(config);

interface Measure {
  ms: number;
  count: number;
  levels: number;
  reads: number;
}

/** A tree of `n` random leaves (epoch 1) in `db`, built without delay. */
async function buildTree(rng: Rng, n: number, db: Database): Promise<Database> {
  const storage = new StorageManager(db);
  const record = await azks.create(storage);
  const tx = storage.beginTransaction();
  await azks.insert(tx, record, randomLeaves(rng, n), { levels: undefined, maxBatchSize: 10_000 });
  await tx.commit();
  return db;
}

async function measure(
  db: InstrumentedDatabase,
  targets: NodeLabel[],
  levels: number | undefined,
): Promise<Measure> {
  const storage = new StorageManager(db); // a cold cache for every run
  const stats = { levels: 0, reads: 0 };
  const start = performance.now();
  const count = await azks.preloadFor(storage, targets, 1n, { levels, maxBatchSize: cap, stats });
  return { ms: performance.now() - start, count, levels: stats.levels, reads: stats.reads };
}

type Store = 'memory' | 'remote' | 'postgres';

/** The database a case reads from, and how to dispose of it. */
async function storeFor(store: Store): Promise<{ db: Database; dispose: () => Promise<void> }> {
  if (store !== 'postgres') return { db: new MemoryDatabase(), dispose: async () => {} };
  const url = process.env['AKD_TEST_POSTGRES_URL'];
  if (url === undefined) throw new Error('--postgres needs AKD_TEST_POSTGRES_URL');
  const schema = `akd_bench_${randomBytes(4).toString('hex')}`;
  const db = await PostgresDatabase.open(url, { schema, poolSize: 16 });
  return {
    db,
    dispose: async () => {
      await db.close();
      const client = new pg.Client({ connectionString: url });
      await client.connect();
      await client.query(`DROP SCHEMA IF EXISTS "${schema}" CASCADE`);
      await client.end();
    },
  };
}

async function runCase(leaves: number, store: Store) {
  const rng = new Rng(42n);
  const { db: base, dispose } = await storeFor(store);
  await buildTree(rng, leaves, base);
  const delay = store === 'remote' ? delayMs : 0;
  const db = new InstrumentedDatabase(base, {
    readDelayMs: delay,
    maxKeysPerRead: store === 'remote' ? cap : undefined,
  });
  // sorted, as a batch insertion hands them to its preload
  const targets = randomLeaves(rng, leaves)
    .map((e) => e.label)
    .sort((a, b) => (a.key < b.key ? -1 : a.key > b.key ? 1 : 0));
  const parallel = parallelLevels(Parallelism.static(degree));
  const serialRuns: Measure[] = [];
  const parallelRuns: Measure[] = [];
  for (let r = 0; r < runs; r++) {
    serialRuns.push(await measure(db, targets, undefined));
    parallelRuns.push(await measure(db, targets, parallel));
  }
  const serialMs = median(serialRuns.map((m) => m.ms));
  const parallelMs = median(parallelRuns.map((m) => m.ms));
  const { levels, reads, count } = serialRuns[0]!;
  if (parallelRuns.some((m) => m.count !== count))
    throw new Error('preload counts differ between modes');
  const floorMs = levels * delay;
  await dispose();
  const where =
    store === 'memory'
      ? 'in-memory'
      : store === 'remote'
        ? `remote (${delay} ms, ${cap} keys/read)`
        : `PostgreSQL (${cap} keys/read)`;
  return {
    case: `${leaves} + ${leaves}, ${where}`,
    leaves,
    store,
    delayMs: delay,
    maxKeysPerRead: store === 'remote' ? cap : null,
    degree,
    levels,
    reads,
    parallelReads: parallelRuns[0]!.reads,
    nodesRequested: count,
    serialMs: Number(serialMs.toFixed(1)),
    parallelMs: Number(parallelMs.toFixed(1)),
    speedup: Number((serialMs / parallelMs).toFixed(2)),
    floorMs,
    floorRatio: floorMs > 0 ? Number((parallelMs / floorMs).toFixed(2)) : null,
    serialFloorRatio: floorMs > 0 ? Number((serialMs / floorMs).toFixed(2)) : null,
  };
}

const rows = [];
for (const leaves of sizes) {
  const stores: Store[] = ['memory', 'remote'];
  if (args.includes('--postgres')) stores.push('postgres');
  for (const store of stores) {
    const row = await runCase(leaves, store);
    rows.push(row);
    if (json) console.log(JSON.stringify(row));
    else {
      console.log(
        `${row.case}: serial ${row.serialMs} ms, parallel ${row.parallelMs} ms (degree ${degree}), speedup ${row.speedup}x; ` +
          `${row.levels} levels, ${row.reads} batched reads (${row.parallelReads} parallel), ${row.nodesRequested} nodes` +
          (row.floorMs > 0
            ? `; floor ${row.floorMs} ms, parallel/floor ${row.floorRatio}, serial/floor ${row.serialFloorRatio}`
            : ''),
      );
    }
  }
}
