/**
 * The preload of a batch insertion (upstream PR #454): the walk that loads every node the
 * insertion reads, one batched read per tree level, timed inside a real insertion (from the
 * insertion's start to its tree phase) on the in-memory stores (`memory`: records as objects,
 * `packed`: as bytes, answering node reads in bytes), on each behind a wrapper that adds a fixed
 * delay to every read round trip and serves at most a fixed number of keys per round trip (a
 * remote database: `remote`, `remote-packed`), on a SQLite file and on PostgreSQL.
 *
 *   npm run bench -- preload [--json] [--quick] [--degree 32] [--delay 2] [--cap 1000] [--runs 3]
 *                            [--postgres] [--sizes 1000,200000]
 *                            [--stores memory,packed,remote,remote-packed,sqlite,postgres]
 *
 * Three modes, alternating, a cold cache and a collected heap each run: serial (no
 * parallelism), split (the frontier always cut in halves down to the degree's levels, reads in
 * flight together), and the default (the degree's levels, splitting only once the reads are
 * seen to wait on round trips rather than work on this thread). For each it prints the median
 * time, and the latency floor (levels x delay: one round trip per level is the least any walk
 * can wait). Of the default's time it also prints the part the store spent on this thread
 * answering the reads (`defaultStoreMs`: the lookups a remote store does on its own machine, and
 * an in-memory store behind the delay does here) and the rest (`defaultWalkMs`); over a store
 * that answers in bytes, `copyMs` is the least any walk does with the records it reads (see
 * `copyTime`).
 * Upstream has no preload-only figure; its whole insertion is in `npm run bench -- azks`.
 */

import { WhatsAppV1Configuration, type AzksElement } from '@akd-ts/core';
import { randomBytes } from 'node:crypto';
import v8 from 'node:v8';
import { runInNewContext } from 'node:vm';
import pg from 'pg';
import {
  InstrumentedDatabase,
  MemoryDatabase,
  NODE_FIELD,
  PackedMemoryDatabase,
  RECORD_LATEST,
  StorageManager,
  nodeHashAt,
  u64Number,
  type Database,
  type NodeRecordBytes,
} from '@akd-ts/storage';
import { PostgresDatabase } from '@akd-ts/storage-postgres';
import { SqliteDatabase } from '@akd-ts/storage-sqlite';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Azks, Parallelism, parallelLevels, type InsertOptions } from '@akd-ts/directory';
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
const sizes = quick
  ? [1_000, 20_000]
  : args.includes('--sizes')
    ? args[args.indexOf('--sizes') + 1]!.split(',').map(Number)
    : [1_000, 200_000];
const onlyStores = args.includes('--stores')
  ? args[args.indexOf('--stores') + 1]!.split(',')
  : undefined;

const config = new WhatsAppV1Configuration();
const azks = new Azks(config);

v8.setFlagsFromString('--expose-gc');
/**
 * A full collection, before each measured walk: the previous walk's garbage, still being
 * collected while the next walk's first reads waited, kept that thread busy, so the default
 * mode saw busy reads and read serially whenever it ran right after another walk.
 */
const collect = runInNewContext('gc') as () => void;

interface Measure {
  ms: number;
  /** Of `ms`, the time the wrapped store worked on this thread answering the walk's reads. */
  storeMs: number;
  nodes: number;
  levels: number;
  reads: number;
  splits: number;
}

type Mode = 'serial' | 'split' | 'default';

function optionsOf(mode: Mode): InsertOptions {
  const levels = mode === 'serial' ? undefined : parallelLevels(Parallelism.static(degree));
  return { levels, maxBatchSize: cap, splitAlways: mode === 'split' };
}

/** A tree of `n` random leaves (epoch 1) in `db`, built without delay. */
async function buildTree(rng: Rng, n: number, db: Database): Promise<void> {
  const storage = new StorageManager(db);
  const record = await azks.create(storage);
  const tx = storage.beginTransaction();
  await azks.insert(tx, record, randomLeaves(rng, n), { levels: undefined, maxBatchSize: 10_000 });
  await tx.commit();
}

/** The preload of inserting `elements`, from a cold cache (the insertion is rolled back). */
async function measure(
  db: InstrumentedDatabase,
  elements: AzksElement[],
  mode: Mode,
): Promise<Measure> {
  collect();
  db.resetStats();
  const storage = new StorageManager(db);
  const stats = { levels: 0, reads: 0, nodes: 0, splits: 0 };
  const tx = storage.beginTransaction();
  let start = 0;
  let end = 0;
  await azks.insert(
    tx,
    await azks.read(storage),
    elements,
    { ...optionsOf(mode), stats },
    (phase) => {
      if (phase === 'preload') start = performance.now();
      else end = performance.now();
    },
  );
  await tx.rollback();
  return { ms: end - start, storeMs: db.stats.storeMs, ...stats };
}

/**
 * The least a walk over record bytes does with what it reads, timed over the answers of one
 * serial walk of this case: each record's label, epochs, type and hash copied into a fresh
 * shared buffer, a word at a time, with no check, no children and no request (median of 3
 * after one untimed, a collected heap each). What the store's lookups and this leave is the
 * walk's own work.
 */
async function copyTime(base: Database, elements: AzksElement[]): Promise<number> {
  const answers: NodeRecordBytes[] = [];
  const inner = base.batchGetNodeBytes!.bind(base);
  const record = async (labels: Uint8Array) => {
    const answer = await inner(labels);
    answers.push(answer);
    return answer;
  };
  // the store's methods called on the store itself (drivers keep private fields)
  const recording = new Proxy(base, {
    get(target, prop) {
      if (prop === 'batchGetNodeBytes') return record;
      const v: unknown = Reflect.get(target, prop, target);
      return typeof v === 'function' ? (v as () => unknown).bind(target) : v;
    },
  });
  const storage = new StorageManager(recording);
  const tx = storage.beginTransaction();
  await azks.insert(tx, await azks.read(storage), elements, optionsOf('serial'));
  await tx.rollback();
  const times: number[] = [];
  copyAnswers(answers); // compiled before it is timed, as the walk is by earlier runs
  for (let r = 0; r < 3; r++) {
    collect();
    const start = performance.now();
    copyAnswers(answers);
    times.push(performance.now() - start);
  }
  return median(times);
}

function copyAnswers(answers: NodeRecordBytes[]): number {
  const n = answers.reduce((sum, a) => sum + a.buffer.length, 0);
  // per slot: two epochs, a label (length and 8 words), a type and a hash (8 words)
  const shared = new SharedArrayBuffer(88 * n + 8);
  const epochs = new Float64Array(shared, 0, 2 * n);
  const labels = new Int32Array(shared, 16 * n, 8 * n);
  const hashes = new Int32Array(shared, 48 * n, 8 * n);
  const lens = new Uint16Array(shared, 80 * n, n);
  const types = new Uint8Array(shared, 82 * n, n);
  let slot = 0;
  for (const a of answers) {
    const views = a.buffers.map((b) => new DataView(b.buffer, b.byteOffset, b.byteLength));
    for (let i = 0; i < a.buffer.length; i++) {
      const b = a.buffer[i]!;
      if (b < 0) continue;
      const bytes = a.buffers[b]!;
      const view = views[b]!;
      const at = a.starts[i]!;
      const s = slot++;
      lens[s] = view.getUint16(at + 1);
      for (let k = 0; k < 8; k++) labels[8 * s + k] = view.getInt32(at + 3 + 4 * k, true);
      const node = at + RECORD_LATEST;
      // the epochs as the walk reads them
      epochs[2 * s] = u64Number(bytes, node + NODE_FIELD.lastEpoch);
      epochs[2 * s + 1] = u64Number(bytes, node + NODE_FIELD.minEpoch);
      types[s] = bytes[node + NODE_FIELD.type]!;
      const hash = nodeHashAt(bytes, node);
      for (let k = 0; k < 8; k++) hashes[8 * s + k] = view.getInt32(hash + 4 * k, true);
    }
  }
  return slot;
}

type Store = 'memory' | 'packed' | 'remote' | 'remote-packed' | 'sqlite' | 'postgres';

/** The database a case reads from, and how to dispose of it. */
async function storeFor(store: Store): Promise<{ db: Database; dispose: () => Promise<void> }> {
  if (store === 'sqlite') {
    const dir = mkdtempSync(join(tmpdir(), 'akd-bench-preload-'));
    const db = await SqliteDatabase.open(join(dir, 'store.db'));
    return {
      db,
      dispose: async () => {
        await db.close();
        rmSync(dir, { recursive: true, force: true });
      },
    };
  }
  if (store !== 'postgres') {
    const db = store.endsWith('packed') ? new PackedMemoryDatabase() : new MemoryDatabase();
    return { db, dispose: async () => {} };
  }
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
  const remote = store.startsWith('remote');
  const delay = remote ? delayMs : 0;
  const db = new InstrumentedDatabase(base, {
    readDelayMs: delay,
    maxKeysPerRead: remote ? cap : undefined,
  });
  const elements = randomLeaves(rng, leaves);
  const modes: Mode[] = ['serial', 'split', 'default'];
  const results = new Map<Mode, Measure[]>(modes.map((m) => [m, []]));
  // the order rotates from run to run, so no mode always follows the same one (the split
  // mode leaves more garbage and a busier store behind it than the others)
  for (let r = 0; r < runs; r++) {
    for (let i = 0; i < modes.length; i++) {
      const mode = modes[(r + i) % modes.length]!;
      results.get(mode)!.push(await measure(db, elements, mode));
    }
  }
  const copyMs = base.batchGetNodeBytes === undefined ? null : await copyTime(base, elements);
  await dispose();
  const ms = (mode: Mode) => median(results.get(mode)!.map((m) => m.ms));
  const first = (mode: Mode) => results.get(mode)![0]!;
  const best = (mode: Mode) => Math.min(...results.get(mode)!.map((m) => m.ms));
  const nodes = new Set(modes.map((m) => first(m).nodes));
  if (nodes.size !== 1) throw new Error('the modes loaded different nodes');
  const { levels } = first('serial');
  const floorMs = levels * delay;
  const packed = store.endsWith('packed') ? ', bytes' : '';
  const where =
    store === 'postgres'
      ? `PostgreSQL (${cap} keys/read)`
      : store === 'sqlite'
        ? `SQLite file (${cap} keys/read)`
        : remote
          ? `remote (${delay} ms, ${cap} keys/read${packed})`
          : `in-memory${packed}`;
  const round = (x: number) => Number(x.toFixed(1));
  return {
    case: `${leaves} + ${leaves}, ${where}`,
    leaves,
    store,
    delayMs: delay,
    maxKeysPerRead: cap,
    degree,
    levels,
    nodes: first('serial').nodes,
    reads: first('serial').reads,
    splitReads: first('split').reads,
    defaultReads: first('default').reads,
    defaultSplits: first('default').splits,
    serialMs: round(ms('serial')),
    splitMs: round(ms('split')),
    defaultMs: round(ms('default')),
    defaultOverSerial: Number((ms('default') / ms('serial')).toFixed(2)),
    serialBestMs: round(best('serial')),
    defaultBestMs: round(best('default')),
    // the store's own lookups, which a remote store does on its machine, and the rest
    defaultStoreMs: round(median(results.get('default')!.map((m) => m.storeMs))),
    defaultWalkMs: round(median(results.get('default')!.map((m) => m.ms - m.storeMs))),
    copyMs: copyMs === null ? null : round(copyMs),
    floorMs,
    defaultOverFloor: floorMs > 0 ? Number((ms('default') / floorMs).toFixed(2)) : null,
    upstreamMs: null,
  };
}

for (const leaves of sizes) {
  const stores: Store[] = ['memory', 'packed', 'remote', 'remote-packed', 'sqlite'];
  if (flag('postgres')) stores.push('postgres');
  for (const store of stores.filter((s) => onlyStores === undefined || onlyStores.includes(s))) {
    const row = await runCase(leaves, store);
    if (json) console.log(JSON.stringify(row));
    else {
      console.log(
        `${row.case}: serial ${row.serialMs} ms, split ${row.splitMs} ms, default ${row.defaultMs} ms ` +
          `(${row.defaultOverSerial}x serial, ${row.defaultSplits} splits); ${row.levels} levels, ` +
          `${row.nodes} nodes, ${row.reads} reads serial / ${row.splitReads} split; ` +
          `default: ${row.defaultStoreMs} ms in the store, ${row.defaultWalkMs} ms besides` +
          (row.copyMs === null ? '' : `; copying the records alone ${row.copyMs} ms`) +
          (row.floorMs > 0
            ? `; floor ${row.floorMs} ms, default/floor ${row.defaultOverFloor}`
            : ''),
      );
    }
  }
}
