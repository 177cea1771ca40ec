/**
 * The cost curve: grows one directory epoch by epoch (100,000 new labels each, to 2,000,000 by
 * default) on SQLite or PostgreSQL, and records after every epoch what it cost: publish time,
 * store size per label version, lookup latency (p50/p99, cold and warm) and the writer's peak
 * memory; then how each cost grows with the directory, and a chart.
 *
 *   npm run bench -- cost-curve [--store sqlite|postgres] [--url postgres://...]
 *       [--labels 2000000] [--epoch-size 100000] [--epoch-sizes SCHEDULE] [--lookups 500]
 *       [--layout versions|records] [--json] [--out bench] [--state FILE [--max-minutes M]]
 *       [--keep] [--sqlite-cache-mib N] [--report FILE] [--pause-file FILE]
 *
 * Every epoch runs in processes of their own, as a deployment runs them:
 * - the writer: a fresh process that opens the store and publishes the epoch as `akd publish`
 *   does (`Directory` with the default VRF engine, native where built, on every core, and the
 *   default parallelism; node started with the flags `akd` gives itself, writer-flags.ts in
 *   the CLI, on this file bundled into JavaScript, without the TypeScript loader's thread,
 *   as the reader below), then waits until the epoch's VRF proofs are stored
 *   (`vrfProofsStored`: readers without the key serve it from then on), under
 *   /usr/bin/time -v for its peak resident memory (maxRSS);
 * - the store's size, measured here once the writer has exited: SQLite's file plus its WAL
 *   after a `wal_checkpoint(TRUNCATE)`; PostgreSQL's `pg_total_relation_size` (heap, indexes,
 *   TOAST) summed over the schema's tables;
 * - a reader: a fresh read-only process (as a proof server) that checks the store is at the
 *   epoch and root the writer published, warms its JIT with a few lookups, then times
 *   `--lookups` lookups of labels drawn from the whole directory, cold (the directory's record
 *   cache emptied before each lookup, so every record comes from the store; the operating
 *   system's page cache and PostgreSQL's buffers are left as they are), then the same labels
 *   warm (every record in the directory's cache: the cost is the proof's own CPU). Some of the
 *   proofs are verified against the writer's root, outside the timing.
 *
 * The store keeps its nodes in `--layout` (default `versions`, the layout `akd init` creates).
 * `--epoch-sizes` grows the directory in epochs of different sizes where the machine's time
 * demands it: `100000,1000000@2000000,100000@9000000` publishes epochs of 100,000 labels, of
 * 1,000,000 from 2,000,000 labels on, and of 100,000 again from 9,000,000 (an epoch never
 * passes the next stage's start). Each row records its epoch's size, and the growth fits of
 * the publish time and of the writer's memory take the rows of the first size only.
 *
 * PostgreSQL: AKD_TEST_POSTGRES_URL or --url; a fresh schema, dropped at the end (unless
 * --keep). SQLite: a file in a fresh temporary directory. `--state FILE` keeps the rows and
 * the store's location in FILE after every epoch, so a run can be split into stages (with
 * `--max-minutes`, it stops after the epoch that passes M minutes; run the same command again
 * to continue). The rows and the chart are written to `--out` as cost-curve-<store>.json and
 * cost-curve-<store>.svg; `--report FILE` prints such a file's table and growth again and
 * redraws its chart, without measuring. `--sqlite-cache-mib` gives the SQLite writer a page
 * cache of that size instead of the driver's default. While `--pause-file` names a file that
 * exists, no new epoch starts (the one running finishes): the machine can do other work
 * between epochs without that work being measured as theirs.
 */

import { execFileSync } from 'node:child_process';
import {
  existsSync,
  mkdirSync,
  mkdtempSync,
  readFileSync,
  rmSync,
  statSync,
  writeFileSync,
} from 'node:fs';
import { loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import { randomBytes } from 'node:crypto';
import { fileURLToPath } from 'node:url';
import pg from 'pg';
import BetterSqlite3 from 'better-sqlite3';
import { WhatsAppV1Configuration, carvedUtf8, fromHex, lookupVerify, toHex } from '@akd-ts/core';
import { StorageManager, type Database } from '@akd-ts/storage';
import { SqliteDatabase } from '@akd-ts/storage-sqlite';
import { PostgresDatabase } from '@akd-ts/storage-postgres';
import {
  Directory,
  InMemoryVrfKeyStore,
  ReadOnlyDirectory,
  availableThreads,
  type PublishProgress,
} from '@akd-ts/directory';
import { classifyGrowth } from './support/growth.js';
import { renderChart } from './support/svg-chart.js';
import { measureSelf } from './support/upstream.js';
import { optionValue } from './support/common.js';

const args = process.argv.slice(2);
const value = (name: string) => optionValue(args, name);
const ROLE = process.env['AKD_COST_CURVE_ROLE'];
const config = new WhatsAppV1Configuration();
const KEY = new Uint8Array(32).fill(7);
/**
 * Label `i`: carved from shared buffers, as `akd publish` parses its update file (the CLI's
 * updates.ts), so that the writer's peak memory is a publishing process's; a standalone array
 * per label and value would cost about 450 bytes more an update (about 45 MB for 100,000).
 */
const labelOf = (i: number) => carvedUtf8(`user-${i}@example.com`);
/** The node flags `akd` starts a publishing process with (the CLI's writer-flags.ts). */
const WRITER_FLAGS = ['--expose-gc', '--no-allocation-site-pretenuring'];

/** Where the grown store lives. */
interface Location {
  store: 'sqlite' | 'postgres';
  /** SQLite: the file; PostgreSQL: the connection URL. */
  path: string;
  /** PostgreSQL schema. */
  schema?: string;
  /** The node layout the store is created with (runs recorded before it: records). */
  layout?: 'versions' | 'records';
}

async function openStore(loc: Location, create: boolean): Promise<Database> {
  // the layout a store created now takes (an existing store keeps its own)
  const nodeLayout = loc.layout ?? 'records';
  if (loc.store === 'sqlite') {
    // --sqlite-cache-mib: the writer's page cache, instead of the driver's default (64 MiB)
    const mib = value('sqlite-cache-mib');
    return SqliteDatabase.open(loc.path, {
      create,
      nodeLayout,
      ...(mib === undefined ? {} : { cacheSizeKiB: Number(mib) * 1024 }),
    });
  }
  return PostgresDatabase.open(loc.path, { schema: loc.schema!, migrate: create, nodeLayout });
}

const pct = (sorted: number[], p: number) =>
  sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))]!;
const round = (x: number, digits = 2) => Number(x.toFixed(digits));

/** The process's read system calls so far (`syscr` of /proc/self/io), where Linux gives it. */
function readSyscalls(): number | undefined {
  try {
    const m = /^syscr: (\d+)$/m.exec(readFileSync('/proc/self/io', 'utf8'));
    return m === null ? undefined : Number(m[1]);
  } catch {
    return undefined;
  }
}

// ---------------------------------------------------------------------------------------------
// The writer: one epoch of `count` new labels from index `from`.
if (ROLE === 'writer') {
  const loc = JSON.parse(value('location')!) as Location;
  const from = Number(value('from'));
  const count = Number(value('count'));
  const db = await openStore(loc, true);
  // time inside the store's calls, summed (PostgreSQL's concurrent reads overlap): which part
  // of the preload and the commit phases is the database's own work. A commit in chunks counts
  // as batchSet (it includes building each chunk's records from the insertion's nodes).
  const storeSec: Record<string, number> = {};
  for (const name of ['batchGet', 'batchSet', 'batchSetChunks', 'setAuditBlob'] as const) {
    const key = name === 'batchSetChunks' ? 'batchSet' : name;
    const call = (db[name] as ((...a: unknown[]) => Promise<unknown>) | undefined)?.bind(db);
    if (call === undefined) continue;
    (db as unknown as Record<string, unknown>)[name] = async (...a: unknown[]) => {
      const t = performance.now();
      try {
        return await call(...a);
      } finally {
        storeSec[key] = round((storeSec[key] ?? 0) + (performance.now() - t) / 1000, 3);
      }
    };
  }
  const dir = await Directory.open({
    config,
    storage: new StorageManager(db),
    vrfKeys: new InMemoryVrfKeyStore(KEY),
    vrf: { threads: availableThreads() },
  });
  const updates = Array.from({ length: count }, (_, j) => ({
    label: labelOf(from + j),
    value: carvedUtf8(`key-${from + j}`),
  }));
  const phases: Record<string, number> = {};
  const phaseRssMb: Record<string, number> = {
    open: Math.round(process.resourceUsage().maxRSS / 1024),
  };
  // read system calls per phase (Linux): a SQLite page cache miss costs one whatever the
  // machine's load, so they show what the time of a read phase is made of
  const phaseReads: Record<string, number> = {};
  let readsSince = readSyscalls();
  let phase: string | undefined;
  let since = performance.now();
  let txRecords = 0;
  const memory: Record<string, Record<string, number>> = {};
  const onProgress = (p: PublishProgress) => {
    // the commit phase counts the records the epoch writes: every node it created or changed,
    // and the value states
    if (p.phase === 'commit') txRecords = p.total;
    if (p.phase === phase) return;
    if (p.phase === 'commit' || p.phase === 'done') {
      // what holds the memory: the JS heap, or buffers outside it (SQLite and pg rows' blobs)
      const m = process.memoryUsage();
      const mb = (x: number) => Math.round(x / 2 ** 20);
      memory[p.phase] = {
        rss: mb(m.rss),
        heapUsed: mb(m.heapUsed),
        arrayBuffers: mb(m.arrayBuffers),
      };
    }
    const now = performance.now();
    const reads = readSyscalls();
    if (phase !== undefined) {
      phases[phase] = round((phases[phase] ?? 0) + (now - since) / 1000, 3);
      if (reads !== undefined && readsSince !== undefined) {
        phaseReads[phase] = (phaseReads[phase] ?? 0) + reads - readsSince;
      }
    }
    readsSince = reads;
    // the peak resident memory so far as each phase starts: which phase raised it
    phaseRssMb[p.phase] = Math.round(process.resourceUsage().maxRSS / 1024);
    phase = p.phase;
    since = now;
  };
  const start = performance.now();
  const { epoch, hash } = await dir.publish(updates, { onProgress });
  const publishSec = (performance.now() - start) / 1000;
  // then the epoch's VRF proofs, which readers without the key wait for
  const proofsStart = performance.now();
  await dir.vrfProofsStored();
  const proofsSec = (performance.now() - proofsStart) / 1000;
  await dir.close();
  await db.close();
  console.log(
    JSON.stringify({
      epoch: String(epoch),
      rootHash: toHex(hash),
      publishSec,
      proofsSec,
      phases,
      phaseReads,
      phaseRssMb,
      storeSec,
      txRecords,
      memory,
      vrf: dir.vrfEngineName,
    }),
  );
  process.exit(0);
}

// ---------------------------------------------------------------------------------------------
// The reader: lookups over a directory of `labels` labels at `epoch`, cold then warm.
if (ROLE === 'reader') {
  const loc = JSON.parse(value('location')!) as Location;
  const labels = Number(value('labels'));
  const lookups = Number(value('lookups'));
  const epoch = BigInt(value('epoch')!);
  const root = fromHex(value('root')!);
  const db = await openStore(loc, false);
  const reader = await ReadOnlyDirectory.open({
    config,
    storage: new StorageManager(db),
    vrfKeys: new InMemoryVrfKeyStore(KEY),
  });
  const seen = await reader.getEpochHash();
  if (seen.epoch !== epoch || toHex(seen.hash) !== toHex(root)) {
    throw new Error(
      `the reader sees epoch ${seen.epoch} ${toHex(seen.hash)}, not ${epoch} ${toHex(root)}`,
    );
  }
  // labels spread over the whole directory, from a fixed-step walk (different every epoch)
  const step = 7_919 * 127;
  const pick = (i: number) => labelOf((i * step + Number(epoch) * 104_729) % labels);
  for (let i = 0; i < 20; i++) await reader.lookup(pick(lookups + i)); // JIT warm-up
  const proofs = [];
  const cold: number[] = [];
  for (let i = 0; i < lookups; i++) {
    reader.storage.flushCache();
    const t = performance.now();
    proofs.push(await reader.lookup(pick(i)));
    cold.push(performance.now() - t);
  }
  const warm: number[] = [];
  for (let i = 0; i < lookups; i++) {
    const t = performance.now();
    await reader.lookup(pick(i));
    warm.push(performance.now() - t);
  }
  for (let i = 0; i < Math.min(lookups, 20); i++) {
    const { proof, epochHash } = proofs[i]!;
    lookupVerify(config, reader.getPublicKey(), root, epochHash.epoch, pick(i), proof);
  }
  cold.sort((a, b) => a - b);
  warm.sort((a, b) => a - b);
  console.log(
    JSON.stringify({
      coldP50Ms: round(pct(cold, 50)),
      coldP99Ms: round(pct(cold, 99)),
      warmP50Ms: round(pct(warm, 50)),
      warmP99Ms: round(pct(warm, 99)),
      verified: Math.min(lookups, 20),
    }),
  );
  await db.close();
  process.exit(0);
}

// ---------------------------------------------------------------------------------------------
// The driver: grows the store epoch by epoch and measures.

const json = args.includes('--json');
const storeName = (value('store') ?? 'sqlite') as Location['store'];
if (storeName !== 'sqlite' && storeName !== 'postgres') {
  throw new Error(`--store: sqlite or postgres, not ${JSON.stringify(storeName)}`);
}
const total = Number(value('labels') ?? 2_000_000);
const reportPath = value('report');
const reported =
  reportPath === undefined ? undefined : (JSON.parse(readFileSync(reportPath, 'utf8')) as Report);
const epochSize = reported?.epochSize ?? Number(value('epoch-size') ?? 100_000);
/** Epoch sizes by stage: [first label count, size], ascending (`--epoch-sizes`). */
const stages: [number, number][] = parseStages(value('epoch-sizes') ?? String(epochSize));
const layout = (value('layout') ?? 'versions') as NonNullable<Location['layout']>;
if (layout !== 'versions' && layout !== 'records') {
  throw new Error(`--layout: versions or records, not ${JSON.stringify(layout)}`);
}

/** `SIZE[@FROM],...`: the first stage starts at 0. @throws Error for anything else */
function parseStages(text: string): [number, number][] {
  const parsed = text.split(',').map((part, i): [number, number] => {
    const m = /^(\d+)(?:@(\d+))?$/.exec(part.trim());
    const size = Number(m?.[1]);
    const from = m?.[2] === undefined ? (i === 0 ? 0 : NaN) : Number(m[2]);
    if (m === null || !(size > 0) || !Number.isSafeInteger(from)) {
      throw new Error(`--epoch-sizes: SIZE[@FROM],..., not ${JSON.stringify(text)}`);
    }
    return [from, size];
  });
  if (parsed[0]![0] !== 0 || parsed.some(([f], i) => i > 0 && f <= parsed[i - 1]![0])) {
    throw new Error(`--epoch-sizes: stages start at 0 and ascend, not ${JSON.stringify(text)}`);
  }
  return parsed;
}

/** The size of the epoch that starts at `from` labels: its stage's, cut at the next stage. */
function nextEpochSize(from: number): number {
  let i = 0;
  while (i + 1 < stages.length && stages[i + 1]![0] <= from) i++;
  const next = stages[i + 1]?.[0] ?? Infinity;
  return Math.min(stages[i]![1], next - from, total - from);
}
const lookups = reported?.lookups ?? Number(value('lookups') ?? 500);
const outDir = value('out') ?? fileURLToPath(new URL('.', import.meta.url));
const statePath = value('state');
const maxMinutes = value('max-minutes') === undefined ? Infinity : Number(value('max-minutes'));
if (maxMinutes !== Infinity && statePath === undefined) {
  throw new Error('--max-minutes needs --state FILE, to continue where the run stops');
}

interface Row {
  store: string;
  epoch: number;
  labels: number;
  /** New labels the epoch published (runs recorded before it: the run's epoch size). */
  count?: number;
  publishSec: number;
  /** Seconds after the publish until its VRF proofs were stored (runs before it: none). */
  proofsSec?: number;
  usPerLabel: number;
  /** The root hash the epoch published (hex; runs before it: none). */
  rootHash?: string;
  phases: Record<string, number>;
  /** Read system calls the writer made in each phase (Linux; runs before it: none). */
  phaseReads?: Record<string, number>;
  phaseRssMb: Record<string, number>;
  /** Seconds inside the store's batchGet, batchSet and setAuditBlob calls. */
  storeSec?: Record<string, number>;
  /** Records the epoch's transaction wrote (nodes created or changed, value states). */
  txRecords?: number;
  /** The writer's memory (MB) as the commit starts and once it is done: rss, heapUsed, arrayBuffers. */
  memory?: Record<string, Record<string, number>>;
  /**
   * PostgreSQL: WAL the server wrote during the publish (what replicas receive), from
   * pg_current_wal_lsn() before and after; the whole server's, so other databases' writes
   * meanwhile count too.
   */
  walBytes?: number | undefined;
  storeBytes: number;
  bytesPerLabelVersion: number;
  tables: Record<string, number>;
  coldP50Ms: number;
  coldP99Ms: number;
  warmP50Ms: number;
  warmP99Ms: number;
  writerMaxRssMb: number | null;
  readerMaxRssMb: number | null;
  load1: number;
}
interface State {
  location: Location;
  rows: Row[];
}

function newLocation(): Location {
  if (storeName === 'sqlite') {
    return {
      store: 'sqlite',
      path: join(mkdtempSync(join(tmpdir(), 'akd-cost-curve-')), 'akd.db'),
      layout,
    };
  }
  const url = value('url') ?? process.env['AKD_TEST_POSTGRES_URL'];
  if (url === undefined) throw new Error('--store postgres needs --url or AKD_TEST_POSTGRES_URL');
  return {
    store: 'postgres',
    path: url,
    schema: `akd_cost_${randomBytes(4).toString('hex')}`,
    layout,
  };
}

async function pgQuery<T extends pg.QueryResultRow>(
  loc: Location,
  text: string,
  values: unknown[] = [],
) {
  const client = new pg.Client({ connectionString: loc.path });
  await client.connect();
  try {
    return (await client.query<T>(text, values)).rows;
  } finally {
    await client.end();
  }
}

/** Bytes the store takes, in all and per table (where the engine tells). */
async function storeSize(
  loc: Location,
): Promise<{ bytes: number; tables: Record<string, number> }> {
  if (loc.store === 'sqlite') {
    const db = new BetterSqlite3(loc.path);
    const tables: Record<string, number> = {};
    try {
      db.pragma('wal_checkpoint(TRUNCATE)');
      try {
        // dbstat is compiled into better-sqlite3's SQLite; tables with their indexes
        const rows = db
          .prepare(
            `SELECT coalesce(m.tbl_name, s.name) AS t, sum(s.pgsize) AS b FROM dbstat s
             LEFT JOIN sqlite_schema m ON m.name = s.name GROUP BY t`,
          )
          .all() as { t: string; b: number }[];
        for (const r of rows) tables[r.t] = r.b;
      } catch {
        // no dbstat: the total alone
      }
    } finally {
      db.close();
    }
    const size = (p: string) => (existsSync(p) ? statSync(p).size : 0);
    return { bytes: size(loc.path) + size(`${loc.path}-wal`), tables };
  }
  const rows = await pgQuery<{ relname: string; bytes: string }>(
    loc,
    `SELECT c.relname, pg_total_relation_size(c.oid) AS bytes FROM pg_class c
     JOIN pg_namespace n ON n.oid = c.relnamespace WHERE n.nspname = $1 AND c.relkind = 'r'`,
    [loc.schema],
  );
  const tables = Object.fromEntries(rows.map((r) => [r.relname, Number(r.bytes)]));
  return { bytes: Object.values(tables).reduce((s, b) => s + b, 0), tables };
}

/** PostgreSQL's current WAL position in bytes (undefined for SQLite). */
async function walPosition(loc: Location): Promise<bigint | undefined> {
  if (loc.store !== 'postgres') return undefined;
  const rows = await pgQuery<{ lsn: string }>(
    loc,
    `SELECT pg_wal_lsn_diff(pg_current_wal_lsn(), '0/0')::text AS lsn`,
  );
  return BigInt(rows[0]!.lsn.split('.')[0]!);
}

async function dropStore(loc: Location): Promise<void> {
  if (loc.store === 'sqlite') rmSync(join(loc.path, '..'), { recursive: true, force: true });
  else await pgQuery(loc, `DROP SCHEMA IF EXISTS "${loc.schema!}" CASCADE`);
}

/** A finished run's JSON (`--report FILE`): its tables and chart again, without measuring. */
interface Report {
  command: string;
  commit: string;
  date: string;
  lookups: number;
  epochSize: number;
  rows: Row[];
}
const state: State =
  reported !== undefined
    ? { location: { store: storeName, path: '' }, rows: reported.rows }
    : statePath !== undefined && existsSync(statePath)
      ? (JSON.parse(readFileSync(statePath, 'utf8')) as State)
      : { location: newLocation(), rows: [] };
if (state.location.store !== storeName) {
  throw new Error(`${statePath}: holds a ${state.location.store} run, not ${storeName}`);
}
const loc = state.location;
const save = () => {
  if (statePath !== undefined) writeFileSync(statePath, `${JSON.stringify(state, null, 1)}\n`);
};
const began = performance.now();
const where = loc.store === 'sqlite' ? loc.path : `schema ${loc.schema}`;
if (!json && reported === undefined)
  console.log(`cost curve on ${storeName} (${where}), ${lookups} lookups an epoch`);

const pauseFile = value('pause-file');
while (reported === undefined && (state.rows.at(-1)?.labels ?? 0) < total) {
  if (pauseFile !== undefined && existsSync(pauseFile)) {
    if (!json) console.log(`paused while ${pauseFile} exists`);
    while (existsSync(pauseFile)) await new Promise((resolve) => setTimeout(resolve, 2000));
  }
  const from = state.rows.at(-1)?.labels ?? 0;
  const count = nextEpochSize(from);
  const locArg = ['--location', JSON.stringify(loc)];
  const cacheMib = value('sqlite-cache-mib');
  const cacheArg = cacheMib === undefined ? [] : ['--sqlite-cache-mib', cacheMib];
  const load1 = loadavg()[0]!;
  const walBefore = await walPosition(loc);
  const w = measureSelf(
    import.meta.url,
    [...locArg, '--from', String(from), '--count', String(count), ...cacheArg],
    { AKD_COST_CURVE_ROLE: 'writer' },
    WRITER_FLAGS,
    true,
  );
  const labels = from + count;
  const walAfter = await walPosition(loc);
  const size = await storeSize(loc);
  const r = measureSelf(
    import.meta.url,
    [...locArg, '--labels', String(labels), '--lookups', String(lookups)].concat([
      '--epoch',
      String(w.json['epoch']),
      '--root',
      String(w.json['rootHash']),
    ]),
    { AKD_COST_CURVE_ROLE: 'reader' },
    [],
    true,
  );
  const publishSec = Number(w.json['publishSec']);
  const row: Row = {
    store: storeName,
    epoch: Number(w.json['epoch']),
    labels,
    count,
    publishSec: round(publishSec),
    proofsSec: round(Number(w.json['proofsSec'])),
    usPerLabel: Math.round((publishSec * 1e6) / count),
    rootHash: String(w.json['rootHash']),
    phases: w.json['phases'] as Record<string, number>,
    phaseReads: w.json['phaseReads'] as Record<string, number>,
    phaseRssMb: w.json['phaseRssMb'] as Record<string, number>,
    storeSec: w.json['storeSec'] as Record<string, number>,
    txRecords: Number(w.json['txRecords']),
    memory: w.json['memory'] as Record<string, Record<string, number>>,
    walBytes:
      walBefore === undefined || walAfter === undefined ? undefined : Number(walAfter - walBefore),
    storeBytes: size.bytes,
    // every label is new, so each has one version: label versions = labels
    bytesPerLabelVersion: Math.round(size.bytes / labels),
    tables: size.tables,
    coldP50Ms: Number(r.json['coldP50Ms']),
    coldP99Ms: Number(r.json['coldP99Ms']),
    warmP50Ms: Number(r.json['warmP50Ms']),
    warmP99Ms: Number(r.json['warmP99Ms']),
    writerMaxRssMb: w.maxRssMb,
    readerMaxRssMb: r.maxRssMb,
    load1: round(load1),
  };
  state.rows.push(row);
  save();
  if (json) console.log(JSON.stringify(row));
  else {
    console.log(
      `epoch ${row.epoch}: ${row.labels} labels (+${count}), publish ${row.publishSec} s (${row.usPerLabel} us/label), ` +
        `proofs ${row.proofsSec} s, ` +
        `${row.bytesPerLabelVersion} B/label version, lookups cold p50 ${row.coldP50Ms} / p99 ${row.coldP99Ms} ms, ` +
        `warm p50 ${row.warmP50Ms} / p99 ${row.warmP99Ms} ms, writer maxRSS ${row.writerMaxRssMb} MB, load ${row.load1}`,
    );
  }
  if ((performance.now() - began) / 60_000 > maxMinutes && row.labels < total) {
    console.log(
      `stopped after ${row.labels} labels (--max-minutes); run again with --state ${statePath} to continue`,
    );
    process.exit(0);
  }
}

const rows = state.rows;
const countOf = (r: Row) => r.count ?? epochSize;
const costs: [string, string, (r: Row) => number][] = [
  ['publishSec', 'publish time per epoch (s)', (r) => r.publishSec],
  ['bytesPerLabelVersion', 'store bytes per label version', (r) => r.bytesPerLabelVersion],
  ['coldP50Ms', 'lookup p50 cold (ms)', (r) => r.coldP50Ms],
  ['coldP99Ms', 'lookup p99 cold (ms)', (r) => r.coldP99Ms],
  ['warmP50Ms', 'lookup p50 warm (ms)', (r) => r.warmP50Ms],
  ['warmP99Ms', 'lookup p99 warm (ms)', (r) => r.warmP99Ms],
  ['writerMaxRssMb', 'writer peak RSS (MB)', (r) => r.writerMaxRssMb ?? 0],
];
const growth: Record<string, unknown> = {};
if (rows.length >= 3) {
  // publish time and the writer's memory grow with the epoch too: their fits take the epochs
  // of the first stage's size
  const base = countOf(rows[0]!);
  const bySize = new Set(['publishSec', 'writerMaxRssMb']);
  for (const [key, title, get] of costs) {
    const fitted = bySize.has(key) ? rows.filter((r) => countOf(r) === base) : rows;
    if (fitted.length < 3) continue;
    const fit = classifyGrowth(
      fitted.map((r) => r.labels),
      fitted.map(get),
    );
    growth[key] = {
      ...fit,
      rangeRatio: round(fit.rangeRatio),
      measuredRatio: round(fit.measuredRatio),
      powerExponent: round(fit.powerExponent, 3),
    };
    if (!json) {
      console.log(
        `${title}: ${fit.growth} (measured ${round(fit.measuredRatio)}x, fitted ${round(fit.rangeRatio)}x from ${fitted[0]!.labels} to ${fitted.at(-1)!.labels} labels; ` +
          `n^${round(fit.powerExponent, 3)}; rms constant ${round(fit.rms.constant, 3)}, log ${round(fit.rms.log, 3)}, linear ${round(fit.rms.linear, 3)})`,
      );
    }
  }
  if (json) console.log(JSON.stringify({ growth }));
}

mkdirSync(outDir, { recursive: true });
const commit =
  reported?.commit ??
  (() => {
    try {
      return execFileSync('git', ['rev-parse', '--short', 'HEAD'], { encoding: 'utf8' }).trim();
    } catch {
      return 'unknown';
    }
  })();
const provenance = {
  command: reported?.command ?? `npm run bench -- cost-curve ${args.join(' ')}`,
  commit,
  date: reported?.date ?? new Date().toISOString().slice(0, 10),
};
writeFileSync(
  join(outDir, `cost-curve-${storeName}.json`),
  `${JSON.stringify({ ...provenance, lookups, epochSize, rows, growth }, null, 1)}\n`,
);
/** Seconds inside one kind of store call over the whole publish, when the run recorded them. */
function storePart(r: Row, call: string): string {
  const sec = r.storeSec?.[call];
  return sec === undefined ? '-' : sec.toFixed(1);
}
if (!json) {
  // the table bench/RESULTS.md shows
  const wal = rows.some((r) => r.walBytes !== undefined);
  const head =
    '| labels | epoch | publish s | proofs s | us/label | records/label | preload s | commit s | store reads s | store writes s |' +
    `${wal ? ' WAL MB |' : ''} B/label version | cold p50 ms | cold p99 ms | warm p50 ms | warm p99 ms | writer maxRSS MB | load |`;
  console.log(`\n${head}`);
  console.log(head.replace(/[^|]+/g, ' ---: '));
  for (const r of rows) {
    const cells = [
      r.labels.toLocaleString('en'),
      countOf(r).toLocaleString('en'),
      r.publishSec.toFixed(1),
      r.proofsSec === undefined ? '-' : r.proofsSec.toFixed(1),
      r.usPerLabel,
      r.txRecords === undefined ? '-' : (r.txRecords / countOf(r)).toFixed(2),
      (r.phases['preload'] ?? 0).toFixed(1),
      (r.phases['commit'] ?? 0).toFixed(1),
      storePart(r, 'batchGet'),
      storePart(r, 'batchSet'),
      ...(wal ? [r.walBytes === undefined ? '-' : Math.round(r.walBytes / 2 ** 20)] : []),
      r.bytesPerLabelVersion,
      r.coldP50Ms.toFixed(2),
      r.coldP99Ms.toFixed(1),
      r.warmP50Ms.toFixed(2),
      r.warmP99Ms.toFixed(1),
      r.writerMaxRssMb ?? '-',
      r.load1.toFixed(1),
    ];
    console.log(`| ${cells.join(' | ')} |`);
  }
}
const m = (r: Row) => r.labels / 1e6;
writeFileSync(
  join(outDir, `cost-curve-${storeName}.svg`),
  renderChart({
    title: `Cost curve, ${storeName === 'sqlite' ? 'SQLite' : 'PostgreSQL'}: epochs of ${[...new Set(rows.map(countOf))].map((n) => n.toLocaleString('en')).join(', ')} new labels, ${loc.layout ?? 'records'} (commit ${commit})`,
    xLabel: 'labels in the directory (millions)',
    panels: [
      {
        // per label, since epochs of several sizes may be drawn side by side
        title: 'Publish time per new label',
        yLabel: 'microseconds',
        series: [
          { name: 'publish', points: rows.map((r) => [m(r), r.usPerLabel]) },
          ...(rows.some((r) => r.proofsSec !== undefined)
            ? [
                {
                  name: 'until its VRF proofs are stored',
                  points: rows.map((r): [number, number] => [
                    m(r),
                    ((r.publishSec + (r.proofsSec ?? 0)) * 1e6) / countOf(r),
                  ]),
                },
              ]
            : []),
        ],
      },
      {
        title: 'Store size per label version',
        yLabel: 'bytes',
        series: [
          {
            name: 'bytes / label version',
            points: rows.map((r) => [m(r), r.bytesPerLabelVersion]),
          },
        ],
      },
      {
        title: `Lookup latency (${lookups} lookups an epoch)`,
        yLabel: 'ms',
        series: [
          { name: 'cold p99', points: rows.map((r) => [m(r), r.coldP99Ms]) },
          { name: 'cold p50', points: rows.map((r) => [m(r), r.coldP50Ms]) },
          { name: 'warm p99', points: rows.map((r) => [m(r), r.warmP99Ms]) },
          { name: 'warm p50', points: rows.map((r) => [m(r), r.warmP50Ms]) },
        ],
      },
      {
        title: 'Peak memory (maxRSS)',
        yLabel: 'MB',
        series: [
          { name: 'writer', points: rows.map((r) => [m(r), r.writerMaxRssMb ?? 0]) },
          { name: 'reader', points: rows.map((r) => [m(r), r.readerMaxRssMb ?? 0]) },
        ],
      },
    ],
  }),
);
if (!json) console.log(`wrote ${join(outDir, `cost-curve-${storeName}.svg`)} and .json`);
if (reported !== undefined) {
  // nothing was measured: the store is not ours to drop
} else if (!args.includes('--keep')) {
  await dropStore(loc);
  if (statePath !== undefined) rmSync(statePath, { force: true });
} else if (!json) console.log(`kept the store: ${where}`);
