/**
 * Bytes SQLite writes per published label under today's `nodes` layout and under candidate
 * layouts in which an epoch appends its own node versions, replaying the same epochs into each.
 *
 *   npm run bench -- layout-writes [--labels 100000] [--epochs 5] [--postgres URL] [--json]
 *
 * A directory on the memory store publishes `--epochs` epochs of `--labels` new labels (random
 * ids, spread over the key space as phone numbers are), then one epoch updating each of the
 * last epoch's labels. Every commit's records are replayed, as they were committed, into
 * three SQLite files (the driver's settings: synchronous FULL, WAL, SQLite's automatic
 * checkpoints):
 *
 * - today: the real driver (`SqliteDatabase.batchSet`): one `nodes` row per label holding its
 *   latest and previous version (schema.sql), upserted where the label sorts;
 * - by epoch: `node_versions`, one row per node version keyed (write epoch, label), with
 *   today's columns and the write epoch of each child's version as the version records it
 *   (`TreeNode.leftEpoch`). A walk from the root at any epoch then reads each child by its
 *   full key, with no index by label and no row ever rewritten; the node's own fields are the
 *   protocol's (spec 7.2), its write epoch storage's. A node a commit rewrites only for a new
 *   parent keeps its write epoch and gets no new row (a walk knows the parent);
 * - packed: the same keys, the label cut to the bytes its length covers, and one blob of
 *   what a walk from the root needs: the hash, the node type, both epochs and each child's
 *   label and write epoch (no parent, varints).
 *
 * Value states go into every file as today's driver writes them (the same rows), and their
 * share of the packed file's bytes is shown. Stored VRF proofs and audit blobs are not written
 * (the publish stores none). Each replay's bytes are the process's own I/O counters (Linux
 * `/proc/self/io`) around it: `write_bytes`, the file pages it dirtied (what reaches the disk,
 * as `time -v`'s file-system outputs count it), and `wchar`, what it passed to write calls
 * (a page written again while still dirty counts again).
 *
 * Then the design is checked on what was written: 2,000 random paths of the tree at the last
 * epoch and at the one before, walked in the memory store (records read at the epoch, spec
 * 9.2) and in the packed file (from the root written at the epoch, each child by the write
 * epoch its parent recorded), compare every node on them and both children of each (label,
 * hash, type, last epoch). A difference fails the run: the epochs the directory records are
 * all such a walk needs.
 *
 * With `--postgres URL`, every commit is also written to PostgreSQL in two schemas made for
 * the run and dropped after it: by today's driver, and as the packed rows (with the driver's
 * value states), with the WAL each wrote (`PostgresReplay`) beside the commit's own record
 * bytes.
 */

import { randomBytes } from 'node:crypto';
import { mkdtempSync, readFileSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import Sqlite from 'better-sqlite3';
import pg from 'pg';
import { NodeLabel, WhatsAppV1Configuration, bytesEqual, toHex, utf8 } from '@akd-ts/core';
import {
  ByteWriter,
  MemoryDatabase,
  writeRecord,
  NodeType,
  nodeAtEpoch,
  nodeKey,
  StorageManager,
  type DbRecord,
  type DbSetState,
  type TreeNode,
  type TreeNodeRecord,
} from '@akd-ts/storage';
import { SqliteDatabase } from '@akd-ts/storage-sqlite';
import { PostgresDatabase } from '@akd-ts/storage-postgres';
import { Directory, InMemoryVrfKeyStore, availableThreads } from '@akd-ts/directory';
import { optionValue } from './support/common.js';

const args = process.argv.slice(2);
const value = (name: string) => optionValue(args, name);
const LABELS = Number(value('labels') ?? 100_000);
const EPOCHS = Number(value('epochs') ?? 5);
const json = args.includes('--json');
const POSTGRES = value('postgres');

const WIDE_SCHEMA = `
CREATE TABLE node_versions (
  epoch INTEGER NOT NULL,
  label BLOB NOT NULL,
  last_epoch INTEGER NOT NULL,
  min_descendant_epoch INTEGER NOT NULL,
  parent BLOB NOT NULL,
  node_type INTEGER NOT NULL,
  left_child BLOB,
  left_epoch INTEGER,
  right_child BLOB,
  right_epoch INTEGER,
  hash BLOB NOT NULL,
  PRIMARY KEY (epoch, label)
) STRICT, WITHOUT ROWID;`;

/**
 * `data`: hash (32) || node type (1) || children present (1: 1 left, 2 right) || varint last
 * epoch || varint least descendant epoch || per child present, its `compactLabel` || varint
 * write epoch (decodePacked).
 */
const PACKED_SCHEMA = `
CREATE TABLE node_versions (
  epoch INTEGER NOT NULL,
  label BLOB NOT NULL,
  data BLOB NOT NULL,
  PRIMARY KEY (epoch, label)
) STRICT, WITHOUT ROWID;`;

/** The process's I/O counters (Linux `/proc/self/io`). */
function io(): Written {
  const fields = new Map(
    readFileSync('/proc/self/io', 'utf8')
      .trim()
      .split('\n')
      .map((line) => line.split(': ') as [string, string]),
  );
  return { wchar: Number(fields.get('wchar')), writeBytes: Number(fields.get('write_bytes')) };
}

/** What `write` wrote, by the I/O counters. */
async function measured(write: () => Promise<void>): Promise<Written> {
  const before = io();
  await write();
  const after = io();
  return { wchar: after.wchar - before.wchar, writeBytes: after.writeBytes - before.writeBytes };
}

/** A label as `u16 len || the bytes its length covers` (2-34 bytes; the rest are zeros). */
function compactLabel(l: NodeLabel): Uint8Array {
  const out = new Uint8Array(2 + Math.ceil(l.len / 8));
  out[0] = l.len >> 8;
  out[1] = l.len & 0xff;
  out.set(l.val.subarray(0, out.length - 2), 2);
  return out;
}

/** Appends `v` as a LEB128 varint. */
function varint(out: number[], v: bigint): void {
  let n = v;
  while (n >= 0x80n) {
    out.push(Number(n & 0x7fn) | 0x80);
    n >>= 7n;
  }
  out.push(Number(n));
}

/**
 * A candidate layout's file: node versions appended by epoch, value states as today. `wide`
 * keeps today's columns (parent included, labels whole) and adds the children's write
 * epochs; `packed` keeps what a walk from the root needs, in one blob: the hash, the node
 * type, both epochs and each child's label (cut to its length) and write epoch as varints.
 */
class ByEpoch {
  readonly client: Sqlite.Database;
  readonly states: SqliteDatabase;
  /** What the last commit's value states wrote (part of what it wrote). */
  statesWritten: Written = { wchar: 0, writeBytes: 0 };
  /** The last commit's packed rows, in key order (the PostgreSQL replay writes them too). */
  lastPacked: PackedRow[] = [];

  private constructor(
    readonly file: string,
    readonly packed: boolean,
    states: SqliteDatabase,
  ) {
    this.states = states;
    this.client = new Sqlite(file);
    this.client.pragma('journal_mode = WAL');
    this.client.pragma('synchronous = FULL');
    this.client.pragma('cache_size = -65536');
    this.client.pragma('temp_store = MEMORY');
    this.client.exec(packed ? PACKED_SCHEMA : WIDE_SCHEMA);
  }

  static async open(dir: string, packed: boolean): Promise<ByEpoch> {
    const file = join(dir, packed ? 'by-epoch-packed.db' : 'by-epoch.db');
    const states = await SqliteDatabase.open(file, { create: true });
    return new ByEpoch(file, packed, states);
  }

  async commit(epoch: bigint, records: DbRecord[]): Promise<void> {
    // the versions this epoch wrote; a node rewritten only for a new parent keeps its write
    // epoch, and no layout by epoch rewrites it (a walk from the root knows its parent)
    const nodes = records.filter(
      (r): r is TreeNodeRecord => r.kind === 'treeNode' && r.latest.lastEpoch === epoch,
    );
    // each child by the write epoch its parent records (TreeNode.leftEpoch, rightEpoch)
    const childEpoch = (n: TreeNode, side: 'left' | 'right') =>
      (side === 'left' ? n.leftEpoch : n.rightEpoch) ?? null;
    const rows = nodes.map(({ label, latest: n }) => {
      if (!this.packed) {
        return [
          epoch,
          label.toBytes(),
          n.lastEpoch,
          n.minDescendantEpoch,
          n.parent.toBytes(),
          n.nodeType,
          n.leftChild?.toBytes() ?? null,
          childEpoch(n, 'left'),
          n.rightChild?.toBytes() ?? null,
          childEpoch(n, 'right'),
          n.hash,
        ] as const;
      }
      const data: number[] = [...n.hash, n.nodeType];
      data.push((n.leftChild ? 1 : 0) | (n.rightChild ? 2 : 0));
      varint(data, n.lastEpoch);
      varint(data, n.minDescendantEpoch);
      for (const [child, side] of [
        [n.leftChild, 'left'],
        [n.rightChild, 'right'],
      ] as const) {
        if (child === undefined) continue;
        data.push(...compactLabel(child));
        varint(data, childEpoch(n, side)!);
      }
      return [epoch, compactLabel(label), Uint8Array.from(data)] as const;
    });
    // in key order within the epoch: its rows fill new pages one after another
    rows.sort((a, b) => Buffer.compare(a[1], b[1]));
    if (this.packed) this.lastPacked = rows as unknown as PackedRow[];
    if (rows.length > 0) {
      const insert = this.client.prepare(
        `INSERT INTO node_versions VALUES (${rows[0]!.map(() => '?').join(', ')})`,
      );
      this.client.transaction(() => {
        for (const row of rows) insert.run(...row);
      })();
    }
    const states = records.filter((r) => r.kind !== 'treeNode');
    this.statesWritten = await measured(() => this.states.batchSet(states));
  }
}

/** A packed row's fields (`ByEpoch.commit`, packed). */
interface PackedNode {
  hash: Uint8Array;
  nodeType: number;
  lastEpoch: bigint;
  children: { label: NodeLabel; epoch: bigint }[];
}

function readVarint(bytes: Uint8Array, at: { i: number }): bigint {
  let v = 0n;
  for (let shift = 0n; ; shift += 7n) {
    const b = bytes[at.i++]!;
    v |= BigInt(b & 0x7f) << shift;
    if (b < 0x80) return v;
  }
}

function decodePacked(data: Uint8Array): PackedNode {
  const at = { i: 34 };
  const hash = data.subarray(0, 32);
  const nodeType = data[32]!;
  const flags = data[33]!;
  const lastEpoch = readVarint(data, at);
  readVarint(data, at); // the least descendant epoch
  const children: PackedNode['children'] = [];
  for (const bit of [1, 2]) {
    if ((flags & bit) === 0) continue;
    const len = (data[at.i]! << 8) | data[at.i + 1]!;
    const val = new Uint8Array(32);
    val.set(data.subarray(at.i + 2, at.i + 2 + Math.ceil(len / 8)));
    at.i += 2 + Math.ceil(len / 8);
    children.push({ label: new NodeLabel(val, len), epoch: readVarint(data, at) });
  }
  return { hash, nodeType, lastEpoch, children };
}

/**
 * Walks `paths` random paths of the tree at `epoch` in both the memory store (its records
 * read at the epoch, spec 9.2) and the packed layout (from the root written at the epoch, each
 * child by its recorded write epoch), comparing every node on them and both children of each:
 * label, hash, type, last epoch. Returns how many nodes were compared, and the mismatches.
 */
async function compareWalks(
  memory: MemoryDatabase,
  packed: Sqlite.Database,
  epoch: bigint,
  paths: number,
): Promise<{ nodes: number; mismatches: string[] }> {
  const select = packed.prepare('SELECT data FROM node_versions WHERE epoch = ? AND label = ?');
  const readPacked = (label: NodeLabel, at: bigint) => {
    const row = select.get(at, compactLabel(label)) as { data: Uint8Array } | undefined;
    return row && decodePacked(row.data);
  };
  const readMemory = async (label: NodeLabel) =>
    nodeAtEpoch(await memory.get(nodeKey(label)), epoch);
  const mismatches: string[] = [];
  let nodes = 0;
  const same = (label: NodeLabel, a?: TreeNode, b?: PackedNode) => {
    nodes++;
    const kids = [a?.leftChild, a?.rightChild].filter((c) => c !== undefined);
    const ok =
      a !== undefined &&
      b !== undefined &&
      bytesEqual(a.hash, b.hash) &&
      a.nodeType === b.nodeType &&
      a.lastEpoch === b.lastEpoch &&
      kids.length === b.children.length &&
      kids.every((c, i) => c.equals(b.children[i]!.label));
    if (!ok) mismatches.push(`${label.len}:${toHex(label.val)} at epoch ${epoch}`);
    return ok;
  };
  for (let p = 0; p < paths; p++) {
    const target = new NodeLabel(randomBytes(32), 256);
    const root = NodeLabel.root();
    let mem = await readMemory(root);
    let pack = readPacked(root, epoch);
    if (!same(root, mem, pack)) continue;
    // both nodes agree from here on; each child is read once, and the walk goes on below the
    // one that prefixes the target
    while (mem!.nodeType !== NodeType.Leaf) {
      let next: [TreeNode, PackedNode] | undefined;
      for (const child of pack!.children) {
        const m = await readMemory(child.label);
        const c = readPacked(child.label, child.epoch);
        if (!same(child.label, m, c)) break;
        if (child.label.isPrefixOf(target)) next = [m!, c!];
      }
      if (next === undefined) break;
      [mem, pack] = next;
    }
  }
  return { nodes, mismatches };
}

type PackedRow = readonly [bigint, Uint8Array, Uint8Array];

/**
 * The PostgreSQL replay (`--postgres URL`): today's driver in one schema, and in another the
 * packed node versions (one `INSERT ... SELECT FROM unnest` per 5,000 rows, in one
 * transaction) with the value states written by the driver. Its bytes are the WAL each writes,
 * from a `CHECKPOINT` just before it (so that every page's first change in the epoch logs a
 * full page, as it does when checkpoints come every few minutes at the defaults).
 */
class PostgresReplay {
  private constructor(
    readonly client: pg.Client,
    readonly today: PostgresDatabase,
    readonly packedStates: PostgresDatabase,
    readonly schemas: string[],
  ) {}

  static async open(url: string): Promise<PostgresReplay> {
    const schemas = [`akd_layout_today_${process.pid}`, `akd_layout_packed_${process.pid}`];
    const client = new pg.Client(url);
    await client.connect();
    const today = await PostgresDatabase.open(url, { schema: schemas[0]! });
    const packedStates = await PostgresDatabase.open(url, { schema: schemas[1]! });
    await client.query(
      `CREATE TABLE ${schemas[1]}.node_versions (epoch bigint NOT NULL, label bytea NOT NULL, ` +
        'data bytea NOT NULL, PRIMARY KEY (epoch, label))',
    );
    return new PostgresReplay(client, today, packedStates, schemas);
  }

  /** WAL bytes `write` caused, from a checkpoint just before it. */
  async wal(write: () => Promise<void>): Promise<number> {
    await this.client.query('CHECKPOINT');
    const lsn = async () =>
      (await this.client.query<{ l: string }>('SELECT pg_current_wal_insert_lsn()::text AS l'))
        .rows[0]!.l;
    const before = await lsn();
    await write();
    const after = await lsn();
    const { rows } = await this.client.query<{ d: string }>(
      'SELECT pg_wal_lsn_diff($1, $2)::text AS d',
      [after, before],
    );
    return Number(rows[0]!.d);
  }

  async packed(rows: readonly PackedRow[], states: DbRecord[]): Promise<void> {
    await this.client.query('BEGIN');
    for (let i = 0; i < rows.length; i += 5000) {
      const part = rows.slice(i, i + 5000);
      await this.client.query(
        `INSERT INTO ${this.schemas[1]}.node_versions (epoch, label, data) ` +
          'SELECT * FROM unnest($1::int8[], $2::bytea[], $3::bytea[])',
        [
          part.map((r) => r[0].toString()),
          part.map((r) => Buffer.from(r[1])),
          part.map((r) => Buffer.from(r[2])),
        ],
      );
    }
    await this.client.query('COMMIT');
    await this.packedStates.batchSet(states);
  }

  async close(): Promise<void> {
    await this.today.close();
    await this.packedStates.close();
    for (const schema of this.schemas) await this.client.query(`DROP SCHEMA ${schema} CASCADE`);
    await this.client.end();
  }
}

/** The commit's records in the record codec's form (storage's record-codec.ts), in bytes. */
function recordBytes(records: readonly DbRecord[]): number {
  const w = new ByteWriter(1 << 16);
  let total = 0;
  for (const r of records) {
    w.reset();
    writeRecord(w, r);
    total += w.at;
  }
  return total;
}

interface Written {
  wchar: number;
  writeBytes: number;
}

interface EpochRow {
  epoch: number;
  kind: 'new labels' | 'updates';
  records: number;
  today: Written;
  byEpoch: Written;
  packed: Written;
  /** The value states' part of `packed` (today's rows and writes). */
  packedStates: Written;
  /** With `--postgres`: the WAL bytes of today's driver and of the packed layout, and the
   * commit's records in the codec's form. */
  postgres?: { today: number; packed: number; recordBytes: number };
}

const rows: EpochRow[] = [];
const tmp = mkdtempSync(join(tmpdir(), 'akd-bench-layout-'));
/** The PostgreSQL replay, closed (its schemas dropped) however the run ends. */
let postgres: PostgresReplay | undefined;
try {
  const todayFile = join(tmp, 'today.db');
  const today = await SqliteDatabase.open(todayFile, { create: true });
  const byEpoch = await ByEpoch.open(tmp, false);
  const packed = await ByEpoch.open(tmp, true);
  postgres = POSTGRES === undefined ? undefined : await PostgresReplay.open(POSTGRES);
  const pgReplay = postgres;

  /** The memory store, replaying each commit into both files once it is written. */
  class Replaying extends MemoryDatabase {
    kind: EpochRow['kind'] = 'new labels';
    override async batchSet(records: DbRecord[], state?: DbSetState): Promise<void> {
      await super.batchSet(records, state);
      await this.replay(records);
    }
    private async replay(records: DbRecord[]): Promise<void> {
      const azks = records.find((r) => r.kind === 'azks');
      if (azks === undefined || azks.kind !== 'azks') {
        // a write outside an epoch's commit (settings, the first empty tree)
        await today.batchSet(records);
        await byEpoch.commit(0n, records);
        await packed.commit(0n, records);
        await pgReplay?.today.batchSet(records);
        await pgReplay?.packed(
          packed.lastPacked,
          records.filter((r) => r.kind !== 'treeNode'),
        );
        return;
      }
      const todayWritten = await measured(() => today.batchSet(records));
      const byEpochWritten = await measured(() => byEpoch.commit(azks.latestEpoch, records));
      const packedWritten = await measured(() => packed.commit(azks.latestEpoch, records));
      let onPostgres: EpochRow['postgres'];
      if (pgReplay !== undefined) {
        const states = records.filter((r) => r.kind !== 'treeNode');
        onPostgres = {
          today: await pgReplay.wal(() => pgReplay.today.batchSet(records)),
          packed: await pgReplay.wal(() => pgReplay.packed(packed.lastPacked, states)),
          recordBytes: recordBytes(records),
        };
      }
      if (azks.latestEpoch === 0n) return;
      rows.push({
        epoch: Number(azks.latestEpoch),
        kind: this.kind,
        records: records.length,
        today: todayWritten,
        byEpoch: byEpochWritten,
        packed: packedWritten,
        packedStates: packed.statesWritten,
        ...(onPostgres === undefined ? {} : { postgres: onPostgres }),
      });
      if (!json) {
        const per = (w: Written) =>
          `${(w.writeBytes / LABELS).toFixed(0).padStart(6)} (${(w.wchar / LABELS).toFixed(0).padStart(6)})`;
        console.log(
          `epoch ${String(azks.latestEpoch).padStart(2)} ${this.kind.padEnd(10)} ` +
            `${String(records.length).padStart(8)} records   bytes per label, disk (write calls): ` +
            `today ${per(todayWritten)}   by epoch ${per(byEpochWritten)}   packed ${per(packedWritten)}` +
            ` of which value states ${per(packed.statesWritten)}`,
        );
        if (onPostgres !== undefined) {
          const mb = (b: number) => `${(b / 1e6).toFixed(0)} MB`;
          console.log(
            `         PostgreSQL WAL: today ${mb(onPostgres.today)}, packed ${mb(onPostgres.packed)}; ` +
              `the commit's records ${mb(onPostgres.recordBytes)} ` +
              `(${(onPostgres.today / onPostgres.recordBytes).toFixed(1)}x, ` +
              `${(onPostgres.packed / onPostgres.recordBytes).toFixed(1)}x)`,
          );
        }
      }
    }
  }

  const db = new Replaying();
  const dir = await Directory.open({
    config: new WhatsAppV1Configuration(),
    storage: new StorageManager(db),
    vrfKeys: new InMemoryVrfKeyStore(randomBytes(32)),
    vrf: { threads: availableThreads() },
    storeVrfProofs: false,
  });
  // user ids as a service has them: spread over the key space in every epoch, as phone
  // numbers are (names numbered by epoch would sort together, and their states append)
  const labels = () => Array.from({ length: LABELS }, () => randomBytes(8).toString('hex'));
  let last: string[] = [];
  for (let e = 1; e <= EPOCHS; e++) {
    last = labels();
    await dir.publish(last.map((l) => ({ label: utf8(l), value: utf8('key-1') })));
  }
  db.kind = 'updates';
  await dir.publish(last.map((l) => ({ label: utf8(l), value: utf8('key-2') })));
  await dir.close();
  // the design's claim: a walk by write epochs finds the tree as the store has it, at the
  // latest epoch and at the one before (read there through the records' previous copies)
  const checks = [];
  for (const epoch of [BigInt(EPOCHS + 1), BigInt(EPOCHS)]) {
    checks.push({ epoch: Number(epoch), ...(await compareWalks(db, packed.client, epoch, 2000)) });
  }
  // the files' sizes with everything in them: the last pages may still be in the WAL
  const todayClient = (today as unknown as { client: Sqlite.Database }).client;
  for (const client of [todayClient, byEpoch.client, packed.client]) {
    client.pragma('wal_checkpoint(TRUNCATE)');
  }
  const sizes = {
    today: statSync(todayFile).size,
    byEpoch: statSync(byEpoch.file).size,
    packed: statSync(packed.file).size,
  };
  await today.close();
  for (const file of [byEpoch, packed]) {
    await file.states.close();
    file.client.close();
  }
  if (json) console.log(JSON.stringify({ labels: LABELS, epochs: EPOCHS, rows, sizes, checks }));
  else {
    for (const c of checks) {
      console.log(
        `walks at epoch ${c.epoch}: 2,000 random paths, ${c.nodes} nodes compared, ` +
          `${c.mismatches.length} differ${c.mismatches.length > 0 ? `: ${c.mismatches.slice(0, 3).join(', ')}` : ''}`,
      );
    }
    console.log(
      `file size: today ${(sizes.today / 1e6).toFixed(0)} MB, by epoch ` +
        `${(sizes.byEpoch / 1e6).toFixed(0)} MB, packed ${(sizes.packed / 1e6).toFixed(0)} MB`,
    );
  }
  if (checks.some((c) => c.mismatches.length > 0)) process.exitCode = 1;
} finally {
  await postgres?.close();
  rmSync(tmp, { recursive: true, force: true });
}
