/**
 * SqliteDatabase: the `Database` of spec 14.1 in one SQLite file (better-sqlite3, WAL), the
 * embedded default store of akd-ts.
 *
 * Consistency (spec 14.4): `batchSet` writes a whole batch in one SQLite transaction, so a
 * publish's nodes, value states and AZKS record become visible together, and a reader in any
 * process sees epoch N or N+1, never a mixture. Reads that take several statements run in one
 * read transaction (one WAL snapshot). better-sqlite3 is synchronous: every method does its
 * work before returning its promise, so calls on one connection never interleave.
 */

import { existsSync } from 'node:fs';
import { open as openFile, rm } from 'node:fs/promises';
import { AkdError, appendAll, toHex, type NodeLabel } from '@akd-ts/core';
import {
  alignNodes,
  checkAuditBlob,
  checkDeletable,
  checkVrfProofKey,
  checkVrfProofRecord,
  codecLabelCount,
  codecLabels,
  joinedRecordsAnswer,
  fullKey,
  nodeKey,
  nodeRecordBytes,
  readNodeRecords,
  storableEpochs,
  vrfProofKeyBytes,
  type AuditBlobInfo,
  type AuditBlobRecord,
  type Database,
  type DbRecord,
  type DbSetState,
  type NodeLayout,
  type NodeRecordBytes,
  type RecordFor,
  type StorageKey,
  type StoredRecordTotals,
  type TreeNodeRecord,
  type UserVersion,
  type ValueStateFlag,
  type ValueStateRecord,
  type VrfProofKey,
  type VrfProofRecord,
  type WriterLock,
  encodeVrfProofRows,
  VrfProofPicker,
  userVersionsOf,
} from '@akd-ts/storage';
import { blobParts, readAuditBlobRow } from './audit-blob-parts.js';
import { BlobThread } from './blob-thread.js';
import {
  StatementCache,
  openBetterSqlite,
  type SqliteClient,
  type SqliteStatement,
} from './client.js';
import {
  MAX_STORED_INTEGER,
  NODE_COLUMNS,
  VALUE_STATE_COLUMNS,
  azksRow,
  decodeAuditBlobRow,
  decodeAzksRow,
  decodeNodeRow,
  decodeValueStateRow,
  decodeVrfProofRow,
  addVrfProofRowsRow,
  labelBytes,
  setNodeRow,
  setValueStateRow,
  type Row,
} from './codec.js';
import { corruptRow, toAkdError } from './errors.js';
import { integrityPragma, integrityProblems, recordTotals } from './integrity.js';
import { resolveOptions, type ResolvedOptions, type SqliteDatabaseOptions } from './options.js';
import { NodeVersions, checkAligned } from './node-versions.js';
import { assertStore, prepareSchema, readNodeLayout } from './schema.js';
import { selectNodeBytesSql } from './node-bytes-sql.js';
import { ParamArrays, TableRows } from './row-writer.js';
import * as sql from './sql.js';
import { acquireFileLock, acquireMemoryLock } from './writer-lock.js';

/** Pages per online-backup step: all of them, so a backup is one snapshot. */
const ALL_PAGES = 0x7fffffff;

/** Where `akd` keeps its store unless told otherwise (`--db sqlite:./akd.db`). */
export const DEFAULT_SQLITE_PATH = './akd.db';

function notFound(what: string): AkdError {
  return new AkdError('STORAGE_NOT_FOUND', `${what} not found`);
}

/**
 * The page cache of the audit blob thread, KiB: a blob is read once per request and spans
 * overflow pages that no other read needs, so caching them would only hold memory.
 */
const BLOB_THREAD_CACHE_KIB = 1024;

/** A key for messages: the node label as (0x…, len), the username in hex. */
function describeKey(key: StorageKey): string {
  switch (key.kind) {
    case 'azks':
      return 'the AZKS record';
    case 'treeNode':
      return `tree node ${key.label}`;
    case 'valueState':
      return `value state of user ${toHex(key.username)} at epoch ${key.epoch}`;
  }
}

/**
 * A Database in an SQLite file.
 *
 * @example
 * ```ts
 * const db = await SqliteDatabase.open('./akd.db');
 * const dir = await Directory.open({ config, storage: new StorageManager(db), vrfKeys });
 * // ...
 * await dir.close();
 * await db.close();
 * ```
 */
export class SqliteDatabase implements Database {
  /** The file this store lives in, or ':memory:'. */
  readonly path: string;
  /** The schema version the store had when opened (0: it was created now). */
  readonly openedAtVersion: number;
  /** How the store keeps tree nodes (database.ts `NodeLayout`): as it was created. */
  readonly nodeLayout: NodeLayout;
  /** Reads are answered in this process (database.ts `readLatency`). */
  readonly readLatency = 'local';
  private readonly client: SqliteClient;
  private readonly options: ResolvedOptions;
  private readonly openLockClient: (path: string) => SqliteClient;
  private readonly statements: StatementCache;
  /** The node and value-state upserts' parameter arrays, reused statement by statement. */
  private readonly nodeParams = new ParamArrays();
  private readonly stateParams = new ParamArrays();
  private readonly locks = new Set<WriterLock>();
  private readonly memoryLock = { held: false };
  private closed = false;
  /** Reads audit blobs off the calling thread (options.auditBlobThread). */
  private readonly blobThread: BlobThread | undefined;
  /** The store's tree nodes when it keeps versions (node-versions.ts). */
  private readonly versions: NodeVersions | undefined;

  /**
   * Wraps an open connection: sets WAL mode (for a file), `synchronous`, the busy timeout and
   * the cache size, makes INTEGER columns read as bigint, and creates or migrates the schema.
   * @throws AkdError `STORAGE_SCHEMA` for a store this driver cannot use, `STORAGE_CORRUPT`
   * for a file that is not SQLite, `STORAGE_LOCKED` or `STORAGE_CONNECTION` otherwise.
   *
   * @example
   * ```ts
   * const db = new SqliteDatabase(new BetterSqlite3('./akd.db'), { synchronous: 'NORMAL' });
   * ```
   */
  constructor(client: SqliteClient, options: SqliteDatabaseOptions = {}) {
    this.options = resolveOptions(options);
    this.client = client;
    this.statements = new StatementCache(client);
    this.path = client.name;
    this.openLockClient = options.openClient ?? openBetterSqlite;
    try {
      const o = this.options;
      if (!o.create && !client.memory) assertStore(client, this.path);
      client.pragma(`busy_timeout = ${o.busyTimeoutMs}`);
      if (!client.memory) client.pragma('journal_mode = WAL');
      client.pragma(`synchronous = ${o.synchronous}`);
      client.pragma(`cache_size = -${o.cacheSizeKiB}`);
      if (o.mmapSizeBytes > 0) client.pragma(`mmap_size = ${o.mmapSizeBytes}`);
      // A multi-row upsert inside a transaction keeps a statement journal (the pages it
      // changes, to undo it alone); in a file, a commit of 100,000 updates wrote 1.6 GB to it
      // in 780,000 write calls. In memory it holds one statement's pages at a time, a few MB.
      // Nothing here sorts or builds temporary tables of any size.
      client.pragma('temp_store = MEMORY');
      client.defaultSafeIntegers(true);
      this.openedAtVersion = prepareSchema(client, this.path, o.nodeLayout);
      this.nodeLayout = readNodeLayout(client, this.path);
      if (o.nodeLayout !== undefined && o.nodeLayout !== this.nodeLayout) {
        throw new AkdError(
          'STORAGE_SCHEMA',
          `${this.path} keeps tree nodes as ${this.nodeLayout}, not as the ${o.nodeLayout} ` +
            'asked for' +
            (this.nodeLayout === 'records' ? ': migrateNodeLayout moves it to versions' : ''),
        );
      }
    } catch (e) {
      throw toAkdError(e, 'open the store', this.path);
    }
    this.versions =
      this.nodeLayout === 'versions'
        ? new NodeVersions(
            (text) => this.stmt(text),
            this.options.readChunkKeys,
            this.options.writeChunkRows,
          )
        : undefined;
    // after the schema is there: the thread opens the file read-only
    this.blobThread =
      this.options.auditBlobThread && !client.memory
        ? new BlobThread(this.path, {
            cacheSizeKiB: BLOB_THREAD_CACHE_KIB,
            busyTimeoutMs: this.options.busyTimeoutMs,
          })
        : undefined;
  }

  /**
   * Opens (creating if needed, unless `create` is false) the store at `path`; ':memory:' makes a private in-memory store.
   * @throws AkdError as the constructor, or `STORAGE_CONNECTION` when the file cannot be opened.
   *
   * @example
   * ```ts
   * const db = await SqliteDatabase.open('./akd.db', { synchronous: 'FULL' });
   * ```
   */
  static async open(
    path: string = DEFAULT_SQLITE_PATH,
    options: SqliteDatabaseOptions = {},
  ): Promise<SqliteDatabase> {
    const { create } = resolveOptions(options);
    let client: SqliteClient;
    try {
      const mustExist = !create && path !== ':memory:';
      // checked here too, for client factories that ignore mustExist
      if (mustExist && !existsSync(path)) throw new Error('no such file');
      client = (options.openClient ?? openBetterSqlite)(path, { mustExist });
    } catch (e) {
      const detail = e instanceof Error ? e.message : String(e);
      throw new AkdError('STORAGE_CONNECTION', `cannot open SQLite store ${path}: ${detail}`, {
        cause: e,
      });
    }
    try {
      return new SqliteDatabase(client, options);
    } catch (e) {
      client.close();
      throw e;
    }
  }

  // ---- plumbing -------------------------------------------------------------------------

  private check(): void {
    if (this.closed)
      throw new AkdError('STORAGE_CONNECTION', `SQLite store ${this.path} is closed`);
  }

  /** A cached prepared statement; SELECTs return rows as arrays. */
  private stmt(text: string): SqliteStatement {
    return this.statements.get(text);
  }

  /** Runs `fn` in one transaction (`BEGIN IMMEDIATE` for writes), rolled back if it throws. */
  private transaction<T>(begin: 'BEGIN' | 'BEGIN IMMEDIATE', fn: () => T): T {
    this.stmt(begin).run();
    try {
      const result = fn();
      this.stmt('COMMIT').run();
      return result;
    } catch (e) {
      // some errors (disk full, I/O) have already rolled the transaction back
      if (this.client.inTransaction) this.stmt('ROLLBACK').run();
      throw e;
    }
  }

  /**
   * Runs a read; with `snapshot`, all its statements see one committed state. `doing` names
   * the read in errors (a function when building the name costs something).
   */
  private read<T>(doing: string | (() => string), snapshot: boolean, fn: () => T): T {
    this.check();
    try {
      return snapshot ? this.transaction('BEGIN', fn) : fn();
    } catch (e) {
      throw toAkdError(e, typeof doing === 'string' ? doing : doing(), this.path);
    }
  }

  /** Runs a write in one transaction. */
  private write<T>(doing: string | (() => string), fn: () => T): T {
    this.check();
    try {
      return this.transaction('BEGIN IMMEDIATE', fn);
    } catch (e) {
      throw toAkdError(e, typeof doing === 'string' ? doing : doing(), this.path);
    }
  }

  /**
   * Runs a batched read over `keys` parameter groups of `width` values each, one statement a
   * chunk, padding the last with NULLs (which match nothing), and decodes the rows.
   */
  private selectChunks<T>(
    sqlFor: (keys: number) => string,
    width: number,
    params: unknown[],
    decode: (row: Row) => T,
    extra: unknown[] = [],
  ): T[] {
    const out: T[] = [];
    let at = 0;
    for (const keys of sql.chunks(params.length / width, this.options.readChunkKeys, false)) {
      const chunk = params.slice(at, (at += keys * width));
      while (chunk.length < keys * width) chunk.push(null);
      chunk.push(...extra);
      for (const row of this.stmt(sqlFor(keys)).all(chunk) as Row[]) {
        out.push(decode(row));
      }
    }
    return out;
  }

  // ---- writes ---------------------------------------------------------------------------

  async set(record: DbRecord): Promise<void> {
    return this.batchSet([record]);
  }

  /**
   * Upserts `records` in one transaction: readers see all of them or none. A value a column
   * cannot hold (an out-of-range integer: RangeError) rolls it back, so nothing is written.
   */
  async batchSet(records: DbRecord[], _state: DbSetState = 'general'): Promise<void> {
    this.check();
    if (records.length === 0) return;
    this.write(`write a batch of ${records.length} records`, () =>
      this.writeRecords(records, this.versions?.storeEpoch()),
    );
  }

  /**
   * Deletes versions of tree nodes (database.ts), all or none, in one write transaction as
   * `batchSet` writes. The store's epoch they must lie below is read inside it, so that a
   * publish another connection commits meanwhile is either seen or waits for the deletion.
   * @throws RangeError, deleting nothing, for a store of records, lists of different lengths
   * or a version not below the store's epoch
   */
  async deleteNodeVersions(
    labels: readonly NodeLabel[],
    epochs: readonly bigint[],
  ): Promise<number> {
    this.check();
    const versions = this.versions;
    if (versions === undefined || labels.length === 0 || labels.length !== epochs.length) {
      // what is refused whatever the store's epoch is refused before a transaction begins
      checkDeletable(this.nodeLayout, undefined, labels.length, epochs);
      return 0;
    }
    return this.write(`delete ${labels.length} tree node versions`, () => {
      checkDeletable(this.nodeLayout, versions.storeEpoch(), labels.length, epochs);
      return versions.delete(labels, epochs);
    });
  }

  /**
   * Upserts the chunks' records in one transaction, encoding and writing one chunk at a time:
   * an out-of-range integer (RangeError) or an error thrown by `chunks` rolls back what was
   * written, and is thrown as it is.
   */
  async batchSetChunks(
    chunks: Iterable<DbRecord[]>,
    _state: DbSetState = 'general',
  ): Promise<void> {
    this.check();
    const it = chunks[Symbol.iterator]();
    let written = 0;
    let thrown: { error: unknown } | undefined;
    const next = () => {
      try {
        return it.next();
      } catch (e) {
        thrown = { error: e };
        throw e;
      }
    };
    try {
      this.write(
        () => `write a batch in chunks (after ${written} records)`,
        () => {
          // the store's epoch before the write, whatever its chunks write (rule 1)
          const epoch = this.versions?.storeEpoch();
          for (let chunk = next(); chunk.done !== true; chunk = next()) {
            this.writeRecords(chunk.value, epoch);
            written += chunk.value.length;
          }
        },
      );
    } catch (e) {
      throw thrown === undefined ? e : thrown.error;
    }
  }

  /**
   * Upserts `records`, inside a write transaction: multi-row statements of each table, their
   * parameters filled in place (row-writer.ts), then the AZKS row (the last one given). A store
   * of versions writes its tree nodes' versions as rule 1 says, given `storeEpoch`, its epoch
   * before the transaction began.
   */
  private writeRecords(records: readonly DbRecord[], storeEpoch: bigint | undefined): void {
    const versions = this.versions;
    if (versions !== undefined) {
      const nodes: TreeNodeRecord[] = [];
      const rest: DbRecord[] = [];
      for (const r of records) (r.kind === 'treeNode' ? nodes : rest).push(r);
      versions.write(nodes, storeEpoch);
      records = rest;
    }
    let nodes = 0;
    let states = 0;
    let azks: unknown[] | undefined;
    for (const r of records) {
      if (r.kind === 'treeNode') nodes++;
      else if (r.kind === 'valueState') states++;
      else azks = azksRow(r); // every one checked, the last one written
    }
    const max = this.options.writeChunkRows;
    const nodeRows = new TableRows(
      NODE_COLUMNS.length,
      setNodeRow,
      this.nodeParams,
      (rows, params) => this.stmt(sql.upsertNodesSql(rows)).run(params),
      sql.chunks(nodes, Math.min(max, sql.MAX_NODE_ROWS), true),
    );
    const stateRows = new TableRows(
      VALUE_STATE_COLUMNS.length,
      setValueStateRow,
      this.stateParams,
      (rows, params) => this.stmt(sql.upsertValueStatesSql(rows)).run(params),
      sql.chunks(states, max, true),
    );
    for (const r of records) {
      if (r.kind === 'treeNode') nodeRows.add(r);
      else if (r.kind === 'valueState') stateRows.add(r);
    }
    if (azks !== undefined) this.stmt(sql.UPSERT_AZKS_SQL).run(azks);
  }

  // ---- reads ----------------------------------------------------------------------------

  async get<K extends StorageKey>(key: K): Promise<RecordFor<K>> {
    const versions = this.versions;
    const found = this.read(
      () => `read ${describeKey(key)}`,
      // a walk takes a statement a level
      versions !== undefined && key.kind === 'treeNode',
      () => {
        switch (key.kind) {
          case 'azks': {
            const row = this.stmt(sql.SELECT_AZKS_SQL).get() as Row | undefined;
            return row && decodeAzksRow(row);
          }
          case 'treeNode': {
            if (versions !== undefined) return versions.readByLabel([key.label])[0];
            const row = this.stmt(sql.SELECT_NODE_SQL).get(labelBytes(key.label)) as
              Row | undefined;
            return row && decodeNodeRow(row);
          }
          case 'valueState': {
            const epoch = key.epoch;
            if (epoch < 0n || epoch > MAX_STORED_INTEGER) return undefined;
            const row = this.stmt(sql.SELECT_STATE_SQL).get(key.username, epoch) as Row | undefined;
            return row && decodeValueStateRow(row);
          }
        }
      },
    );
    if (found === undefined) throw notFound(describeKey(key));
    return found as RecordFor<K>;
  }

  async batchGet(keys: StorageKey[]): Promise<DbRecord[]> {
    let azks = false;
    const versions = this.versions;
    const nodes = new Map<string, Uint8Array>();
    const nodeLabels = new Map<string, NodeLabel>();
    const states = new Map<string, [Uint8Array, bigint]>();
    for (const key of keys) {
      if (key.kind === 'azks') azks = true;
      else if (key.kind === 'treeNode') {
        if (versions !== undefined) nodeLabels.set(key.label.key, key.label);
        else nodes.set(key.label.key, labelBytes(key.label));
      } else if (key.epoch >= 0n && key.epoch <= MAX_STORED_INTEGER) {
        states.set(fullKey(key), [key.username, key.epoch]);
      }
    }
    const statements =
      Number(azks) +
      // a walk takes a statement a level
      (nodeLabels.size > 0 ? 2 : 0) +
      Math.ceil(nodes.size / this.options.readChunkKeys) +
      Math.ceil(states.size / this.options.readChunkKeys);
    return this.read(`read a batch of ${keys.length} keys`, statements > 1, () => {
      const out: DbRecord[] = [];
      if (azks) {
        const row = this.stmt(sql.SELECT_AZKS_SQL).get() as Row | undefined;
        if (row !== undefined) out.push(decodeAzksRow(row));
      }
      if (versions !== undefined && nodeLabels.size > 0) {
        for (const r of versions.readByLabel([...nodeLabels.values()])) {
          if (r !== undefined) out.push(r);
        }
      }
      appendAll(out, this.selectChunks(sql.selectNodesSql, 1, [...nodes.values()], decodeNodeRow));
      appendAll(
        out,
        this.selectChunks(sql.selectStatesSql, 2, [...states.values()].flat(), decodeValueStateRow),
      );
      return out;
    });
  }

  /**
   * The records of `labels`, aligned with them: by label in a store of records, by a walk
   * from the root in a store of versions (rule 4), in one snapshot.
   */
  async batchGetNodes(labels: readonly NodeLabel[]): Promise<(TreeNodeRecord | undefined)[]> {
    const versions = this.versions;
    if (versions === undefined) {
      return alignNodes(labels, await this.batchGet(labels.map(nodeKey)));
    }
    return this.read(`read ${labels.length} tree nodes`, labels.length > 0, () =>
      versions.readByLabel(labels),
    );
  }

  /**
   * The versions of `labels[i]` written in `epochs[i]`, each as a record with no previous copy:
   * probes of node_versions' primary key in a store of versions, the latest or previous copy
   * of each label's record in a store of records.
   * @throws RangeError where the two lists differ in length
   */
  async batchGetNodeVersions(
    labels: readonly NodeLabel[],
    epochs: readonly bigint[],
  ): Promise<(TreeNodeRecord | undefined)[]> {
    checkAligned(labels.length, epochs.length);
    const versions = this.versions;
    if (versions === undefined) {
      return (await this.batchGetNodes(labels)).map((r, i) => {
        const epoch = epochs[i]!;
        const n =
          r?.latest.lastEpoch === epoch
            ? r.latest
            : r?.previous?.lastEpoch === epoch
              ? r.previous
              : undefined;
        return n && { kind: 'treeNode', label: labels[i]!, latest: n, previous: undefined };
      });
    }
    const nodes = this.read(
      `read ${labels.length} tree node versions`,
      versions.statements(labels.length) > 1,
      () => versions.readVersions(labels, epochs),
    );
    return nodes.map(
      (n, i) => n && { kind: 'treeNode', label: labels[i]!, latest: n, previous: undefined },
    );
  }

  /**
   * `batchGetNodeVersions` in the record codec's form, for labels in the codec's form: in a
   * store of versions, each version's data rewritten straight into one buffer (node-versions.ts).
   * @throws RangeError where `labels` is not 34 bytes a label or the lengths differ
   */
  async batchGetNodeVersionBytes(
    labels: Uint8Array,
    epochs: BigUint64Array,
  ): Promise<NodeRecordBytes> {
    const count = codecLabelCount(labels);
    checkAligned(count, epochs.length);
    const versions = this.versions;
    if (versions === undefined) {
      return nodeRecordBytes(await this.batchGetNodeVersions(codecLabels(labels), [...epochs]));
    }
    return this.read(
      `read ${count} tree node versions in bytes`,
      versions.statements(count) > 1,
      () => versions.readVersionBytes(labels, epochs),
    );
  }

  /**
   * Tree nodes in bytes, written by SQLite as codec records (node-bytes-sql.ts): no row is
   * decoded into objects here. A batch with a row SQLite cannot write that way (one the row
   * decoder would reject) is read through the row decoder instead, whose error names it. A
   * store of versions answers by walks (rule 4), written in bytes.
   */
  async batchGetNodeBytes(labels: Uint8Array): Promise<NodeRecordBytes> {
    const count = codecLabelCount(labels);
    if (this.versions !== undefined) {
      return nodeRecordBytes(await this.batchGetNodes(codecLabels(labels)));
    }
    const size = this.options.readChunkKeys;
    const sizes = sql.chunks(count, size, false);
    const answer = this.read(`read ${count} tree nodes in bytes`, sizes.length > 1, () => {
      let from = 0;
      const statements = sizes.map((keys) => {
        // (position in the chunk from 1, stored label); padding matches nothing. The keys are
        // views of one buffer: one allocation a statement, not one a key
        const params: unknown[] = [];
        const stored = Buffer.alloc(36 * keys);
        for (let i = 0; i < keys; i++) {
          if (from + i >= count) {
            params.push(null, null);
            continue;
          }
          stored.set(labels.subarray(34 * (from + i), 34 * (from + i) + 34), 36 * i + 2);
          params.push(i + 1, stored.subarray(36 * i, 36 * i + 36));
        }
        from += keys;
        const [joined, unwritten] = this.stmt(selectNodeBytesSql(keys, NODE_COLUMNS)).get(
          params,
        ) as Row;
        if (unwritten !== null && Number(unwritten) > 0) return null;
        return (joined ?? undefined) as Uint8Array | undefined;
      });
      return statements.includes(null)
        ? undefined
        : joinedRecordsAnswer(count, size, statements as (Uint8Array | undefined)[]);
    });
    return answer ?? nodeRecordBytes(await readNodeRecords(this, codecLabels(labels)));
  }

  async getUserData(username: Uint8Array): Promise<ValueStateRecord[]> {
    const rows = this.read('read user data', false, () =>
      (this.stmt(sql.SELECT_USER_SQL).all(username) as Row[]).map(decodeValueStateRow),
    );
    if (rows.length === 0) throw notFound(`user ${toHex(username)}`);
    return rows;
  }

  async getUserState(username: Uint8Array, flag: ValueStateFlag): Promise<ValueStateRecord> {
    const q = sql.flagQuery(flag);
    const found = this.read('read a user state', false, () => {
      if (q === undefined) return undefined;
      const params = q.param === undefined ? [username] : [username, q.param];
      const row = this.stmt(sql.selectUserStateSql(q)).get(...params) as Row | undefined;
      return row && decodeValueStateRow(row);
    });
    if (found === undefined) throw notFound(`value state of user ${toHex(username)}`);
    return found;
  }

  async getUserStateVersions(
    usernames: Uint8Array[],
    flag: ValueStateFlag,
  ): Promise<UserVersion[]> {
    return userVersionsOf(await this.getUserStates(usernames, flag));
  }

  async getUserStates(usernames: Uint8Array[], flag: ValueStateFlag): Promise<ValueStateRecord[]> {
    const q = sql.flagQuery(flag);
    const unique = new Map(usernames.map((u) => [toHex(u), u]));
    const statements = Math.ceil(unique.size / this.options.readChunkKeys);
    return this.read(`read states of ${unique.size} users`, statements > 1, () => {
      if (q === undefined) return [];
      const extra = q.param === undefined ? [] : [q.param];
      return this.selectChunks(
        (n) => sql.selectUserStatesSql(q, n),
        1,
        [...unique.values()],
        decodeValueStateRow,
        extra,
      );
    });
  }

  // ---- settings, lock, lifecycle --------------------------------------------------------

  async getSetting(name: string): Promise<string | undefined> {
    if (typeof name !== 'string') throw new TypeError('setting name must be a string');
    const row = this.read(
      () => `read setting ${name}`,
      false,
      () => this.stmt(sql.SELECT_SETTING_SQL).get(name),
    ) as Row | undefined;
    if (row === undefined) return undefined;
    if (typeof row[0] !== 'string')
      throw corruptRow('settings', `name=${name}`, 'value is not text');
    return row[0];
  }

  async setSetting(name: string, value: string): Promise<void> {
    if (typeof name !== 'string' || typeof value !== 'string') {
      throw new TypeError('setting name and value must be strings');
    }
    this.write(`write setting ${name}`, () => this.stmt(sql.UPSERT_SETTING_SQL).run(name, value));
  }

  async listUsernames(after: Uint8Array | undefined, limit: number): Promise<Uint8Array[]> {
    if (!Number.isSafeInteger(limit) || limit < 1) throw new RangeError('limit must be >= 1');
    const rows = this.read('list usernames', false, () =>
      after === undefined
        ? this.stmt(sql.LIST_USERNAMES_FIRST_SQL).all(limit)
        : this.stmt(sql.LIST_USERNAMES_AFTER_SQL).all(after, limit),
    ) as Row[];
    return rows.map((row) => {
      if (!(row[0] instanceof Uint8Array)) {
        throw corruptRow('value_states', 'username', 'username is not a blob');
      }
      return new Uint8Array(row[0]);
    });
  }

  // ---- stored VRF proofs ----------------------------------------------------------------

  /**
   * Appends a row per label of the batch to vrf_proof_rows (schema.sql, @akd-ts/storage
   * vrf-proof-rows.ts), more for a label whose entries pass a row's budget: a label's proofs
   * of one write share a key and a row. Nothing is rewritten: a later row's nonce wins, and an
   * entry without one leaves the earlier nonce standing.
   */
  async setVrfProofs(records: VrfProofRecord[]): Promise<void> {
    this.check();
    for (const r of records) checkVrfProofRecord(r); // all checked before anything is written
    if (records.length === 0) return;
    const rows = encodeVrfProofRows(records);
    this.write(`write ${records.length} VRF proofs`, () => {
      const insert = this.stmt(sql.INSERT_VRF_PROOF_ROW_SQL);
      for (const row of rows) insert.run(row.label, row.entries, row.label);
    });
  }

  /**
   * One read of every row of the keys' labels, and of the keys in the tables an older schema
   * kept them in, which are older than every row (schema.sql). No snapshot is needed across
   * the statements: a write only adds rows, a label's rows come in one statement, and the
   * older tables are read first, so a move of their proofs between two statements (`akd vrf
   * migrate`) shows some twice, never none.
   */
  async getVrfProofs(keys: VrfProofKey[]): Promise<VrfProofRecord[]> {
    for (const k of keys) checkVrfProofKey(k);
    if (keys.length === 0) return [];
    const picker = new VrfProofPicker(keys);
    const groups = picker.groups();
    const labels = groups.map((g) => g.label);
    return this.read(`read ${keys.length} VRF proofs`, false, () => {
      if (this.olderVrfProofs()) {
        const wanted = groups.flatMap((g) => g.keys.map(vrfProofKeyBytes));
        for (const r of this.selectChunks(sql.selectVrfProofsSql, 1, wanted, decodeVrfProofRow)) {
          picker.addRecord(r);
        }
      }
      this.selectChunks(sql.selectVrfProofRowsSql, 1, labels, (row) =>
        addVrfProofRowsRow(picker, row),
      );
      return picker.records();
    });
  }

  /**
   * Whether the tables before schema version 10 had a stored proof when first asked. No code
   * writes them any more (a move only empties them), so an answer of no stands, and a read
   * then skips their statement; yes is kept (read as before until the store is reopened).
   */
  private olderVrfProofs(): boolean {
    this.#older ??= Number((this.stmt(sql.OLDER_VRF_PROOFS_SQL).get() as Row)[0]) === 1;
    return this.#older;
  }

  #older: boolean | undefined;

  // ---- audit blobs ----------------------------------------------------------------------

  async setAuditBlob(blob: AuditBlobRecord): Promise<void> {
    checkAuditBlob(blob);
    const { epoch, previousHash, currentHash, data } = blob;
    const [first, ...rest] = blobParts(data);
    this.write(`write the audit blob of epoch ${epoch}`, () => {
      // a blob written again (a retried publish) may have had more parts
      this.stmt(sql.DELETE_AUDIT_BLOB_PARTS_SQL).run(epoch);
      this.stmt(sql.UPSERT_AUDIT_BLOB_SQL).run(
        epoch,
        previousHash,
        currentHash,
        data.length,
        first,
      );
      const part = this.stmt(sql.INSERT_AUDIT_BLOB_PART_SQL);
      rest.forEach((bytes, i) => part.run(epoch, i + 1, bytes));
    });
  }

  async getAuditBlobInfos(epochs: bigint[]): Promise<AuditBlobInfo[]> {
    const wanted = storableEpochs(epochs);
    const statements = Math.ceil(wanted.length / this.options.readChunkKeys);
    const infos = this.read(`read ${wanted.length} audit blob infos`, statements > 1, () =>
      this.selectChunks(sql.selectAuditBlobInfosSql, 1, wanted, decodeAuditBlobRow),
    );
    // chunks are each in order and follow each other
    return infos.map(({ epoch, previousHash, currentHash, last }) => ({
      epoch,
      previousHash,
      currentHash,
      size: Number(last),
    }));
  }

  async getAuditBlob(epoch: bigint): Promise<AuditBlobRecord> {
    const [wanted] = storableEpochs([epoch]);
    const doing = `read the audit blob of epoch ${epoch}`;
    // one snapshot for the row and its parts: a retried publish may write the blob again
    const here = () =>
      this.read(doing, true, () =>
        wanted === undefined
          ? undefined
          : readAuditBlobRow(
              {
                row: this.stmt(sql.SELECT_AUDIT_BLOB_SQL),
                parts: this.stmt(sql.SELECT_AUDIT_BLOB_PARTS_SQL),
              },
              wanted,
            ),
      ) as Row | undefined;
    let row: Row | undefined;
    const thread = this.blobThread;
    if (thread === undefined || thread.gone !== undefined || wanted === undefined) row = here();
    else {
      this.check();
      try {
        row = await thread.read(wanted);
      } catch (e) {
        // the thread stopped: this connection reads instead
        if (thread.gone === undefined) throw toAkdError(e, doing, this.path);
        row = here();
      }
    }
    if (row === undefined) throw notFound(`audit blob of epoch ${epoch}`);
    const { previousHash, currentHash, last } = decodeAuditBlobRow(row);
    return { epoch, previousHash, currentHash, data: last as Uint8Array };
  }

  /**
   * Takes the writer lock: a lock file beside the store (`<path>-writer.lock`, see
   * writer-lock.ts) that the operating system releases if this process dies.
   * @throws AkdError `STORAGE_LOCKED` "another writer holds <path>".
   */
  async acquireWriterLock(): Promise<WriterLock> {
    this.check();
    const lock = this.client.memory
      ? acquireMemoryLock(this.memoryLock, this.path)
      : acquireFileLock(this.path, this.openLockClient);
    // a migration may have moved the store to versions since it was opened (it held the lock)
    let now: NodeLayout | undefined;
    try {
      now = this.read('read the node layout', false, () => readNodeLayout(this.client, this.path));
    } catch (e) {
      await lock.release();
      throw e;
    }
    if (now !== this.nodeLayout) {
      await lock.release();
      throw new AkdError(
        'STORAGE_SCHEMA',
        `${this.path} keeps tree nodes as ${now} since it was opened (as ${this.nodeLayout}): ` +
          'open it again to write',
      );
    }
    this.locks.add(lock);
    return {
      release: async () => {
        this.locks.delete(lock);
        await lock.release();
      },
    };
  }

  /**
   * Writes a consistent copy of the store to `destination`, a new file (an existing one is
   * refused and left alone), with SQLite's online backup: the pages of one committed state,
   * copied in a single step, so a writer in another process committing meanwhile cannot mix
   * two epochs into it (SQLite restarts a backup whose source changed between steps). Safe
   * while the writer publishes. A client without the backup API copies with `VACUUM INTO`.
   * @throws AkdError `STORAGE_CONNECTION` when the destination exists or cannot be written
   * (a partial copy is removed)
   *
   * @example
   * ```ts
   * await db.backup(`./akd-${Date.now()}.db`);
   * ```
   */
  async backup(destination: string): Promise<void> {
    if (typeof destination !== 'string') throw new TypeError('destination must be a path');
    this.check();
    const doing = `back up to ${destination}`;
    try {
      // created empty and exclusively: a backup never overwrites a file
      await (await openFile(destination, 'wx')).close();
    } catch (e) {
      throw toAkdError(e, doing, this.path);
    }
    try {
      if (this.client.backup !== undefined) {
        // the first step copies nothing (better-sqlite3 starts at 0), the next one every page
        await this.client.backup(destination, { progress: () => ALL_PAGES });
      } else {
        this.client.prepare('VACUUM INTO ?').run(destination);
      }
    } catch (e) {
      await rm(destination, { force: true });
      throw toAkdError(e, doing, this.path);
    }
  }

  // ---- whole-store checks (integrity.ts) ------------------------------------------------

  /**
   * Runs SQLite's integrity check over the whole file: every page, b-tree, free list and
   * STRICT, NOT NULL and CHECK constraint (`quick` runs `quick_check`, which skips the
   * UNIQUE constraints and the comparison of indexes with their tables). Reads every page.
   * @returns the problems SQLite reports, at most `maxProblems` (default 100); none for a
   * sound file. A file too damaged for the check to run reports that as its problem.
   * @throws AkdError for a failure that is not damage (`STORAGE_LOCKED`, `STORAGE_CONNECTION`)
   *
   * @example
   * ```ts
   * const problems = await db.checkIntegrity();
   * if (problems.length > 0) console.error(`damaged: ${problems[0]}`);
   * ```
   */
  async checkIntegrity(options: { quick?: boolean; maxProblems?: number } = {}): Promise<string[]> {
    const pragma = integrityPragma(options.quick === true, options.maxProblems ?? 100);
    this.check();
    return integrityProblems(this.client, this.path, pragma);
  }

  /**
   * What a scan of every table finds (tree nodes stored, the newest epoch of each kind of
   * record), in one read transaction, for the directory's consistency check. Reads the nodes
   * table whole (a store of records).
   *
   * @example
   * ```ts
   * const { treeNodes } = await db.recordTotals();
   * ```
   */
  async recordTotals(): Promise<StoredRecordTotals> {
    return this.read('count the stored records', true, () =>
      recordTotals(this.client, this.nodeLayout),
    );
  }

  /** Releases the writer lock if held and closes the connection. Idempotent. */
  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    await this.blobThread?.close();
    for (const lock of this.locks) await lock.release();
    this.locks.clear();
    this.statements.clear();
    this.client.close();
  }
}
