/**
 * Moving a store of records to the versions layout (database.ts `NodeLayout`), in place: each
 * row of `nodes` becomes its latest and previous copies as versions, copied in label order a
 * chunk of rows per transaction, then one last transaction drops `nodes` and switches the
 * layout. Readers keep reading the records until that switch, and what has been copied is
 * never visible to them before it.
 *
 * The copy's position (the last label copied) and row count are kept in the table
 * node_layout_migration, written in each chunk's transaction, so a run stopped anywhere (an
 * error, a kill, a power cut) resumes after the last chunk that committed. The run holds the
 * store's writer lock; should a writer publish between two runs, triggers on `nodes` (present
 * while a copy is pending) mark the copy stale, and the next run starts it over, since rows
 * already copied may have changed.
 *
 * What the copy gives: a version's parent is its record's (the newest: a record's copies are
 * rewritten when a node gets a new parent, which no proof reads, rule 2); and a store of
 * records keeps at most two versions of a node, so the store of versions holds no older ones.
 */

import { AkdError } from '@akd-ts/core';
import {
  LABEL_BYTES,
  NODE_FIELD,
  RECORD_KIND,
  nodeBytesLength,
  treeNodeBodyLength,
} from '@akd-ts/storage';
import { StatementCache, type SqliteClient, type SqliteStatement } from './client.js';
import { NODE_COLUMNS, decodeNodeRow, type Row } from './codec.js';
import {
  chunkSize,
  jobTransaction,
  openStoreForJob,
  vacuumStore,
  type StoreJobOptions,
} from './store-job.js';
import { NodeVersions, type VersionRow } from './node-versions.js';
import { VERSIONS_TABLES_SQL } from './schema.js';
import { nodeRangeBytesSql } from './node-bytes-sql.js';
import {
  VERSION_DATA_MAX,
  compactLabel,
  dataFromCodecNode,
  encodeVersionData,
  putCompactFromCodec,
} from './version-codec.js';

/** How far a migration has come. */
export interface NodeLayoutMigrationProgress {
  /** Rows of `nodes` copied so far, by this run and the runs before it. */
  done: number;
  /** Rows of `nodes` when the copy began. */
  total: number;
}

export interface MigrateNodeLayoutOptions extends StoreJobOptions {
  /**
   * Called after each chunk commits, and once before the first. An error it throws stops
   * the run there (what committed stays; the next run resumes after it).
   */
  onProgress?: (progress: NodeLayoutMigrationProgress) => void;
  /** Rows of `nodes` a transaction copies, 1-1,000,000 (default 20,000). */
  chunkRows?: number;
  /**
   * Whether to `VACUUM` the store once it is switched (default true). The records leave their
   * pages free in the file, and SQLite's reuse of those free pages made each of the next
   * epochs write 3x what it writes in a store without them (100,000 new labels into a
   * migrated 500,000-label store: 8,170 against 2,540 bytes per label). The VACUUM rewrites the
   * file (a 713 MB store in about 20 s, needing room for a copy of it) under the writer lock.
   */
  vacuum?: boolean;
}

/** What a run did. */
export interface NodeLayoutMigrationResult {
  /** The store kept versions already: nothing was done. */
  already: boolean;
  /** A run before this one had copied rows, and this one went on after them. */
  resumed: boolean;
  /** A run before this one had copied rows that a writer changed since: copied again. */
  restarted: boolean;
  /** Rows of `nodes` copied, by every run. */
  rows: number;
  /** Versions written by this run. */
  versions: number;
  /** Whether the store was vacuumed once switched (`MigrateNodeLayoutOptions.vacuum`). */
  vacuumed: boolean;
}

/** The copy's position: one row, present while a copy is pending. */
const STATE_SQL = `CREATE TABLE node_layout_migration (
  id INTEGER NOT NULL PRIMARY KEY CHECK (id = 1),
  after BLOB,
  done INTEGER NOT NULL,
  total INTEGER NOT NULL,
  stale INTEGER NOT NULL
) STRICT;`;

/** The triggers that mark a pending copy stale when `nodes` changes. */
const TRIGGERS = ['INSERT', 'UPDATE', 'DELETE'].map((event) => ({
  name: `node_layout_migration_${event.toLowerCase()}`,
  sql:
    `CREATE TRIGGER node_layout_migration_${event.toLowerCase()} AFTER ${event} ON nodes ` +
    'WHEN (SELECT stale FROM node_layout_migration) = 0 ' +
    'BEGIN UPDATE node_layout_migration SET stale = 1; END;',
}));

const RANGE_SQL = nodeRangeBytesSql(NODE_COLUMNS);
const SELECT_AFTER_SQL = `SELECT ${NODE_COLUMNS.join(', ')} FROM nodes WHERE label > ? ORDER BY label LIMIT ?`;

/**
 * Moves the store at `path` from the records layout to versions (see the module doc); a store
 * of versions is left as it is. Takes the writer lock for the whole run: stop the writer
 * first (readers may stay; they must reopen the store after the switch, whose reads of
 * `nodes` then fail with `STORAGE_SCHEMA`, as does a writer that opened it before).
 *
 * Costs: every row of `nodes` is read once and written as one or two rows of node_versions,
 * all through the WAL; `nodes` is dropped at the end, its pages left free in the file for
 * the versions to come (`VACUUM` gives them back to the file system).
 * @throws AkdError `STORAGE_LOCKED` while a writer holds the store, `STORAGE_CONNECTION` for a
 * missing file, `STORAGE_CORRUPT` naming a row that does not decode (the rows before it stay
 * copied), `STORAGE_SCHEMA` as opening the store does
 *
 * @example
 * ```ts
 * await migrateNodeLayout('./akd.db', {
 *   onProgress: ({ done, total }) => console.log(`${done} / ${total}`),
 * });
 * ```
 */
export async function migrateNodeLayout(
  path: string,
  options: MigrateNodeLayoutOptions = {},
): Promise<NodeLayoutMigrationResult> {
  const chunkRows = chunkSize('chunkRows', options.chunkRows, 20_000);
  const { client, db } = openStoreForJob(path, options);
  try {
    if (db.nodeLayout === 'versions') {
      return {
        already: true,
        resumed: false,
        restarted: false,
        rows: 0,
        versions: 0,
        vacuumed: false,
      };
    }
    const lock = await db.acquireWriterLock();
    try {
      const result = new Migration(client, path, chunkRows, options.onProgress).run();
      const vacuumed = options.vacuum ?? true;
      if (vacuumed) vacuumStore(client, path, 'vacuum the store once switched to versions');
      return { ...result, vacuumed };
    } finally {
      await lock.release();
    }
  } finally {
    await db.close();
  }
}

class Migration {
  private readonly statements: StatementCache;
  private readonly versions: NodeVersions;

  constructor(
    private readonly client: SqliteClient,
    private readonly path: string,
    private readonly chunkRows: number,
    private readonly onProgress: ((progress: NodeLayoutMigrationProgress) => void) | undefined,
  ) {
    this.statements = new StatementCache(client);
    this.versions = new NodeVersions((text) => this.stmt(text), 1000, 2000);
  }

  private stmt(text: string): SqliteStatement {
    return this.statements.get(text);
  }

  /** Runs `fn` in one write transaction, rolled back if it throws. */
  private transaction<T>(doing: string, fn: () => T): T {
    return jobTransaction(this.client, this.path, doing, fn);
  }

  run(): Omit<NodeLayoutMigrationResult, 'vacuumed'> {
    const start = this.transaction('begin moving tree nodes to versions', () => this.begin());
    let { done } = start;
    const { total } = start;
    let versions = 0;
    this.onProgress?.({ done, total });
    for (;;) {
      const chunk = this.transaction(`copy tree nodes after row ${done}`, () => this.copyChunk());
      if (chunk.rows === 0) break;
      done += chunk.rows;
      versions += chunk.versions;
      this.onProgress?.({ done, total });
    }
    this.transaction('switch the store to versions', () => this.finish());
    return {
      already: false,
      resumed: start.resumed,
      restarted: start.restarted,
      rows: done,
      versions,
    };
  }

  /** Starts a copy, or takes up a pending one (again from the start if it is stale). */
  private begin(): { done: number; total: number; resumed: boolean; restarted: boolean } {
    const pending =
      this.stmt("SELECT 1 FROM sqlite_schema WHERE name = 'node_layout_migration'").get() !==
      undefined;
    if (pending) {
      const [done, total, stale] = this.stmt(
        'SELECT done, total, stale FROM node_layout_migration',
      ).get() as [bigint, bigint, bigint];
      if (stale === 0n) {
        return { done: Number(done), total: Number(total), resumed: done > 0n, restarted: false };
      }
      this.client.exec('DELETE FROM node_versions; DELETE FROM node_roots;');
      const count = this.countRows();
      this.stmt(
        'UPDATE node_layout_migration SET after = NULL, done = 0, total = ?, stale = 0',
      ).run(count);
      return { done: 0, total: count, resumed: false, restarted: true };
    }
    this.client.exec(VERSIONS_TABLES_SQL);
    this.client.exec(STATE_SQL);
    for (const trigger of TRIGGERS) this.client.exec(trigger.sql);
    const count = this.countRows();
    this.stmt(
      'INSERT INTO node_layout_migration (id, after, done, total, stale) VALUES (1, NULL, 0, ?, 0)',
    ).run(count);
    return { done: 0, total: count, resumed: false, restarted: false };
  }

  private countRows(): number {
    return Number((this.stmt('SELECT count(*) FROM nodes').get() as [bigint])[0]);
  }

  /**
   * Copies the next chunk of rows after the position, and moves the position past them. SQLite
   * writes the chunk's rows as records in the codec's form, joined into one byte string
   * (node-bytes-sql.ts), which are rewritten into versions without an object per row: decoding
   * each row instead made a dozen buffers of it, and collecting them was most of the copy's
   * time. A chunk with a row SQLite cannot write so is read as rows, whose decoding names it.
   */
  private copyChunk(): { rows: number; versions: number } {
    const [after] = this.stmt('SELECT after FROM node_layout_migration').get() as [
      Uint8Array | null,
    ];
    const [joined, unwritten, count, last] = this.stmt(RANGE_SQL).get(
      after ?? new Uint8Array(0),
      this.chunkRows,
    ) as [Uint8Array | null, bigint | null, bigint, Uint8Array | null];
    if (count === 0n) return { rows: 0, versions: 0 };
    const out = unwritten === 0n && joined !== null ? versionsOf(joined, Number(count)) : undefined;
    if (out !== undefined) {
      this.versions.append(out);
      this.stmt('UPDATE node_layout_migration SET after = ?, done = done + ?').run(last, count);
      return { rows: Number(count), versions: out.length };
    }
    return this.copyRows(after);
  }

  /** `copyChunk` through the row decoder. */
  private copyRows(after: Uint8Array | null): { rows: number; versions: number } {
    const rows = this.stmt(SELECT_AFTER_SQL).all(
      after ?? new Uint8Array(0),
      this.chunkRows,
    ) as Row[];
    const out: VersionRow[] = [];
    for (const row of rows) {
      const record = decodeNodeRow(row);
      const label = compactLabel(record.label);
      // the previous copy first: were both of one epoch, the latest would stay
      const { latest, previous } = record;
      if (previous !== undefined) {
        out.push([previous.lastEpoch, label, encodeVersionData(previous, 'nodes.previous')]);
      }
      out.push([latest.lastEpoch, label, encodeVersionData(latest, 'nodes.latest')]);
    }
    this.versions.append(out);
    this.stmt('UPDATE node_layout_migration SET after = ?, done = done + ?').run(
      rows[rows.length - 1]![0],
      rows.length,
    );
    return { rows: rows.length, versions: out.length };
  }

  /** The switch: drops `nodes` and what the copy kept, and names the layout versions. */
  private finish(): void {
    const [after, stale] = this.stmt('SELECT after, stale FROM node_layout_migration').get() as [
      Uint8Array | null,
      bigint,
    ];
    const left =
      after === null
        ? this.stmt('SELECT 1 FROM nodes LIMIT 1').get()
        : this.stmt('SELECT 1 FROM nodes WHERE label > ? LIMIT 1').get(after);
    if (stale !== 0n || left !== undefined) {
      // the lock keeps writers out: only a connection that ignores it gets here
      throw new AkdError(
        'STORAGE_TRANSACTION',
        `${this.path}: tree nodes changed while they were copied; run the migration again`,
      );
    }
    for (const trigger of TRIGGERS) this.client.exec(`DROP TRIGGER ${trigger.name}`);
    this.client.exec('DROP TABLE nodes; DROP TABLE node_layout_migration;');
    this.client.exec("UPDATE node_layout SET layout = 'versions'");
  }
}

/**
 * The versions of `count` tree-node records in the codec's form, one after another in
 * `joined`: each record's latest and previous copies, their labels and data views of one
 * buffer. Undefined where the bytes are not exactly `count` such records (the caller then
 * reads the rows through the row decoder).
 */
function versionsOf(joined: Uint8Array, count: number): VersionRow[] | undefined {
  const out: VersionRow[] = [];
  const room = Buffer.allocUnsafe(2 * count * (34 + VERSION_DATA_MAX));
  const view = new DataView(joined.buffer, joined.byteOffset, joined.byteLength);
  let o = 0;
  let at = 0;
  let records = 0;
  /** Adds the version of the node at `node`, labelled by the record's label at `label`. */
  const add = (label: number, node: number) => {
    const labelAt = o;
    o = putCompactFromCodec(room, o, joined, label);
    const dataAt = o;
    o = dataFromCodecNode(joined, node, room, o);
    out.push([
      view.getBigUint64(node + NODE_FIELD.lastEpoch),
      room.subarray(labelAt, dataAt),
      room.subarray(dataAt, o),
    ]);
  };
  try {
    while (at < joined.length) {
      if (joined[at] !== RECORD_KIND.treeNode) throw new RangeError('not a tree-node record');
      const length = treeNodeBodyLength(joined, at + 1);
      const latest = at + 1 + LABEL_BYTES;
      const previousFlag = latest + nodeBytesLength(joined, latest);
      // the previous copy first: were both of one epoch, the latest would stay
      if (joined[previousFlag] === 1) add(at + 1, previousFlag + 1);
      add(at + 1, latest);
      at += 1 + length;
      records++;
    }
  } catch (e) {
    if (e instanceof RangeError) return undefined;
    throw e;
  }
  return records === count ? out : undefined;
}
