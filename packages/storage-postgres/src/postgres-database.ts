/**
 * PostgresDatabase: the `Database` seam over PostgreSQL (node-postgres). Batched reads are one
 * join of an `unnest`ed key array per chunk, writes are chunked `unnest` upserts in a
 * single transaction, and a pool lets concurrent reads run on different connections. One
 * publish is one commit, so a reader on any connection, process or streaming replica sees an
 * epoch entirely or not at all. See README.md for the schema, pool sizing and replicas.
 */

import pg from 'pg';
import { AkdError, assertU64, type NodeLabel } from '@akd-ts/core';
import {
  checkAuditBlob,
  checkDeletable,
  stateThenVrfProofs,
  checkVrfProofKey,
  checkVrfProofRecord,
  encodeVrfProofRows,
  VrfProofPicker,
  alignNodes,
  codecLabelCount,
  codecLabels,
  LABEL_BYTES,
  nodeAtEpoch,
  nodeRecordBytes,
  readNodeRecords,
  storableEpochs,
  type AuditBlobInfo,
  type AuditBlobRecord,
  type Database,
  type DbRecord,
  type DbSetState,
  type NodeLayout,
  type NodeRecordBytes,
  type RecordFor,
  type ReplicationAware,
  type ReplicationStatus,
  type StorageKey,
  type TreeNode,
  type TreeNodeRecord,
  type UserStateAndVrfProofs,
  type UserVersion,
  type ValueStateFlag,
  type ValueStateRecord,
  type VrfProofKey,
  type VrfProofRecord,
  type WriterLock,
  type WriterFencedError,
  isWriterFenced,
  nodeKey,
  userVersionsOf,
} from '@akd-ts/storage';
import {
  inTransaction,
  storageError,
  type PgConnections,
  type PgPool,
  type PgQuery,
  type PgQueryable,
  type PgRow,
} from './client.js';
import {
  MAX_STORED,
  azksValues,
  checkRecord,
  decodeAuditBlobHead,
  decodeAuditBlobPiece,
  decodeAuditBlobRow,
  decodeAzksRow,
  decodeNodeRow,
  decodeSettingRow,
  decodeUsernameRow,
  decodeValueStateRow,
  hex,
  labelKey,
  labelKeyHex,
  nodeColumns,
  valueStateColumns,
} from './codec.js';
import { ArrayLiteral, byteaArray } from './array-literal.js';
import { nodeBytesAnswer, nodeBytesQueries } from './node-bytes.js';
import {
  FENCE_SETTING,
  checkFence,
  claimGeneration,
  fenceCheckQuery,
  fenceRefusal,
  fenceStore,
  readFence,
  type WriterFence,
} from './fencing.js';
import { prepareSchema, readNodeLayout } from './migrate.js';
import {
  azksEpoch,
  copyChunk,
  estimatedNodes,
  switchLayout,
  type LayoutMigrationOptions,
  type LayoutMigrationResult,
} from './layout-migration.js';
import {
  isRootKey,
  versionBytesAnswer,
  versionKey,
  versionRows,
  versionValues,
  type VersionRow,
} from './version-codec.js';
import { VersionReads, refusedState, versionId, type VersionAsk } from './version-reads.js';
import { deleteVersions } from './version-delete.js';
import { VersionSubtrees } from './version-subtrees.js';
import { Coalescer } from './coalescer.js';
import { checkOptions, type PostgresDatabaseOptions, type Settings } from './options.js';
import { promoteStore, type PromoteOptions, type PromoteResult } from './promote.js';
import { buildStatements, type Statements } from './queries.js';
import { readReplicationStatus } from './replication.js';
import { AdvisoryWriterLock } from './writer-lock.js';
import {
  addVrfProofReadRows,
  vrfProofReadChunks,
  vrfProofReadValues,
  vrfProofRowValues,
  userStateProofsAnswer,
} from './vrf-proof-codec.js';
import {
  finishMove,
  moveChunk,
  startMove,
  type VrfProofMigrationOptions,
  type VrfProofMigrationResult,
} from './vrf-proof-move.js';

/** Several read statements see one snapshot; on a replica too (REPEATABLE READ is allowed). */
const SNAPSHOT = 'BEGIN ISOLATION LEVEL REPEATABLE READ, READ ONLY';

/** The bytes of an audit blob read per statement (see `getAuditBlob`). */
const AUDIT_BLOB_PIECE = 128 * 1024;

function chunks<T>(items: T[], size: number): T[][] {
  const out: T[][] = [];
  for (let i = 0; i < items.length; i += size) out.push(items.slice(i, i + size));
  return out;
}

/** One lookup's read of its state and stored VRF proofs (`getUserStateAndVrfProofs`). */
interface StateProofsCall {
  username: Uint8Array;
  flag: ValueStateFlag;
  /** The flag's statement parameter (`flagParam`). */
  param: unknown[];
}

/** The most lookups whose state reads one statement joins. */
const MAX_JOINED_STATES = 64;

/** A bytea[] array literal of labels' storage keys. */
function labelKeyArray(labels: NodeLabel[]): string {
  const literal = new ArrayLiteral(labels.length * 76);
  for (const l of labels) literal.labelKey(l);
  return literal.toString();
}

/**
 * Whether `e` is the server refusing a statement for the shape of the data or the schema (a
 * column of another type, a function a compatible database lacks: SQLSTATE classes 22 and 42),
 * which a read through the row decoder then explains or avoids.
 */
function unfitStatement(e: unknown): boolean {
  const state =
    e instanceof AkdError ? (e.cause as { code?: unknown } | undefined)?.code : undefined;
  return typeof state === 'string' && (state.startsWith('22') || state.startsWith('42'));
}

function notFound(what: string): AkdError {
  return new AkdError('STORAGE_NOT_FOUND', `${what} not found`);
}

/**
 * The value a flag compares with, or null when no stored state can match it (an epoch or
 * version above 2^63 - 1 cannot be stored). `leqEpoch` above the range means "any".
 */
function flagParam(flag: ValueStateFlag): unknown[] | null {
  switch (flag.kind) {
    case 'maxEpoch':
    case 'minEpoch':
      return [];
    case 'leqEpoch':
      assertU64(flag.epoch, 'flag.epoch');
      return [(flag.epoch > MAX_STORED ? MAX_STORED : flag.epoch).toString()];
    case 'specificEpoch':
      assertU64(flag.epoch, 'flag.epoch');
      return flag.epoch > MAX_STORED ? null : [flag.epoch.toString()];
    case 'specificVersion':
      assertU64(flag.version, 'flag.version');
      return flag.version > MAX_STORED ? null : [flag.version.toString()];
    default:
      throw new TypeError(`unknown flag ${String((flag as { kind: unknown }).kind)}`);
  }
}

/** A connected client of its own (the writer lock's session); ended again if connecting fails. */
export async function connectClient(config: pg.ClientConfig): Promise<pg.Client> {
  const client = new pg.Client(config);
  try {
    await client.connect();
  } catch (e) {
    await client.end().catch(() => undefined);
    throw e;
  }
  return client;
}

/**
 * What the driver's sessions start with (`open`; a pool given to `fromConnections` keeps its
 * own): no JIT compilation. Every statement of the driver is probes of keys and appends, which
 * PostgreSQL compiles only when it estimates them costly, as it does for tables without
 * statistics (autovacuum off, or not yet run after a load); the compilation then took 0.1-0.7
 * s of a statement that runs in 5 ms.
 */
export const SESSION_OPTIONS = '-c jit=off';

/** The startup options of the driver's sessions: its own, then the caller's, which win. */
export function sessionOptions(callers: string | undefined): string {
  return callers === undefined || callers === ''
    ? SESSION_OPTIONS
    : `${SESSION_OPTIONS} ${callers}`;
}

/**
 * A Database stored in PostgreSQL.
 *
 * @example
 * ```ts
 * const db = await PostgresDatabase.open('postgres://akd@db.internal/akd', { poolSize: 16 });
 * const dir = await Directory.open({ config, storage: new StorageManager(db), vrfKeys });
 * ```
 */
export class PostgresDatabase implements Database, ReplicationAware {
  readonly #pool: PgPool;
  readonly #connections: PgConnections;
  readonly #settings: Settings;
  readonly #sql: Statements;
  readonly #locks = new Set<AdvisoryWriterLock>();
  /** The writer generation claimed with the lock (fencing.ts); writes check it. */
  #generation: bigint | undefined;
  /** The timer of {@link PostgresDatabase.#watchFence}, while a writer lock is held. */
  #fenceWatch: NodeJS.Timeout | undefined;
  #closed = false;
  /** The server refused the subtree statement once (`batchGetSubtrees`): not asked again. */
  #subtreesUnfit = false;
  /** How the store keeps tree nodes, read at open (a layout migration changes it). */
  #layout: NodeLayout = 'records';
  readonly #versions: VersionReads;
  /** The server refused the walk statement for its SQL (class 42): walks are made here. */
  #walkUnfit = false;
  readonly #subtrees: VersionSubtrees;

  private constructor(connections: PgConnections, settings: Settings) {
    this.#connections = connections;
    this.#pool = connections.pool;
    this.#settings = settings;
    this.#sql = buildStatements(settings.schema);
    this.#versions = new VersionReads(this.#sql, settings.readChunkSize);
    this.#subtrees = new VersionSubtrees({
      statement: this.#sql.versionSubtrees,
      table: this.#sql.display.nodeVersions,
      query: (query, operation) => this.#query(query, operation),
      versions: (asks) => this.#readVersions(asks),
    });
    // An idle pooled connection that dies (server restart, terminated backend) is dropped by
    // the pool, which then emits 'error'; with no listener that would end the process.
    this.#pool.on('error', () => undefined);
  }

  /**
   * Connects to PostgreSQL with a pool of `poolSize` connections, and creates or migrates the
   * schema (unless `migrate` is false).
   * @param connection a `postgres://` URL or a pg PoolConfig
   * @throws AkdError `STORAGE_CONNECTION` when the server is unreachable, `STORAGE_SCHEMA`
   * when the schema is newer than this driver (or missing or older, without `migrate`).
   * @example
   * ```ts
   * const db = await PostgresDatabase.open(process.env.DATABASE_URL!, { schema: 'akd_prod' });
   * ```
   */
  static async open(
    connection: string | pg.PoolConfig,
    options: PostgresDatabaseOptions = {},
  ): Promise<PostgresDatabase> {
    const settings = checkOptions(options);
    const base: pg.PoolConfig =
      typeof connection === 'string' ? { connectionString: connection } : { ...connection };
    const config: pg.PoolConfig = {
      ...base,
      max: options.poolSize ?? base.max ?? settings.poolSize,
      application_name: base.application_name ?? settings.applicationName,
      connectionTimeoutMillis: base.connectionTimeoutMillis ?? 10_000,
      options: sessionOptions(base.options),
    };
    const connections = { pool: new pg.Pool(config), connectSession: () => connectClient(config) };
    return PostgresDatabase.fromConnections(connections, options);
  }

  /**
   * A database over connections the caller provides (a pool and, for the writer lock, a way
   * to open a dedicated session); creates or migrates the schema like `open`. It takes the
   * pool over: `close()`, or a failed open, ends it.
   * @example
   * ```ts
   * const pool = new pg.Pool({ connectionString: url, max: 20 });
   * const db = await PostgresDatabase.fromConnections({ pool }, { schema: 'akd' });
   * ```
   */
  static async fromConnections(
    connections: PgConnections,
    options: PostgresDatabaseOptions = {},
  ): Promise<PostgresDatabase> {
    const db = new PostgresDatabase(connections, checkOptions(options));
    try {
      await prepareSchema(connections.pool, db.schema, {
        migrate: db.#settings.migrate,
        create: db.#settings.create,
        layout: db.#settings.nodeLayout,
      });
      const { layout } = await readNodeLayout(connections.pool, db.schema);
      const asked = db.#settings.nodeLayout;
      if (asked !== undefined && asked !== layout) {
        throw new AkdError(
          'STORAGE_SCHEMA',
          `schema "${db.schema}" keeps tree nodes as ${layout}, not ${asked}: open it without ` +
            `nodeLayout` +
            (layout === 'records' ? ', or migrate it to versions (migrateNodeLayout)' : ''),
        );
      }
      db.#layout = layout;
    } catch (e) {
      await db.close();
      throw e;
    }
    return db;
  }

  /** How this store keeps tree nodes (`Database.nodeLayout`). */
  get nodeLayout(): NodeLayout {
    return this.#layout;
  }

  /** The PostgreSQL schema holding this store's tables. */
  get schema(): string {
    return this.#settings.schema;
  }

  #check(): void {
    if (this.#closed) throw new AkdError('STORAGE_CONNECTION', 'the PostgreSQL database is closed');
  }

  /**
   * A writer whose lock is not held must not write: another writer may hold it. While the
   * lock is being taken again that is a passing condition (retry); once lost for good, a
   * conflict.
   */
  #checkWriter(): void {
    for (const lock of this.#locks) {
      const status = lock.status();
      if (!status.held) {
        const reason = status.reason ?? 'the writer lock is not held';
        throw status.final
          ? new AkdError('STORAGE_LOCKED', `${reason}: this writer's writes are refused for good`)
          : new AkdError(
              'STORAGE_CONNECTION',
              `${reason}: writes are refused until this process holds it again`,
            );
      }
    }
  }

  async #query(query: PgQuery, operation: string): Promise<PgRow[]> {
    try {
      return (await this.#pool.query(query)).rows;
    } catch (e) {
      throw await this.#explained(storageError(e, operation));
    }
  }

  /**
   * `e`, or where it is a records reader finding no `nodes` table because a migration moved
   * the store's tree nodes to versions meanwhile, an error that says so.
   */
  async #explained(e: Error): Promise<Error> {
    const state = e instanceof AkdError ? (e.cause as { code?: unknown } | undefined)?.code : '';
    if (this.#layout !== 'records' || state !== '42P01') return e;
    const now = await readNodeLayout(this.#pool, this.schema).catch(() => undefined);
    if (now?.layout !== 'versions') return e;
    return new AkdError(
      'STORAGE_SCHEMA',
      `schema "${this.schema}" keeps tree nodes as versions since its layout was migrated: ` +
        `reopen the database to read them`,
      { cause: e },
    );
  }

  /** Runs `fn` on one connection in a read-only snapshot. */
  async #snapshot<T>(operation: string, fn: (q: PgQueryable) => Promise<T>): Promise<T> {
    try {
      return await inTransaction(this.#pool, SNAPSHOT, fn);
    } catch (e) {
      throw storageError(e, operation);
    }
  }

  /** Runs read statements: one alone, several in one snapshot so they agree on the epoch. */
  async #reads(queries: PgQuery[], operation: string): Promise<PgRow[][]> {
    if (queries.length === 1) return [await this.#query(queries[0]!, operation)];
    try {
      return await inTransaction(this.#pool, SNAPSHOT, async (client) => {
        const results: PgRow[][] = [];
        for (const q of queries) results.push((await client.query(q)).rows);
        return results;
      });
    } catch (e) {
      throw await this.#explained(storageError(e, operation));
    }
  }

  async set(record: DbRecord): Promise<void> {
    await this.batchSet([record]);
  }

  /**
   * The upserts of a batch: last write per key wins, sorted by key, chunked, AZKS last. Every
   * record is checked now; each statement is encoded only when asked for, so that the next
   * chunk is encoded while the server runs the previous one.
   */
  #writePlan(records: DbRecord[], roots?: Map<string, VersionRow>): (() => PgQuery)[] {
    const versions = this.#layout === 'versions';
    const nodes = new Map<string, TreeNodeRecord>();
    const states = new Map<string, ValueStateRecord>();
    let azks: DbRecord | undefined;
    for (const r of records) {
      // a label's `key` orders like its storage key be32(len) || val (len <= 256)
      if (r.kind === 'treeNode') {
        // a store of versions keeps each (write epoch, label): a label may come twice
        nodes.set(versions ? `${String(r.latest?.lastEpoch)}:${r.label.key}` : r.label.key, r);
      } else if (r.kind === 'valueState') {
        states.set(`${hex(r.username)}:${r.epoch.toString(16).padStart(16, '0')}`, r);
      } else if (r.kind === 'azks') azks = r;
      else throw new TypeError(`unknown record kind ${String((r as { kind: unknown }).kind)}`);
    }
    const sorted = <T extends TreeNodeRecord | ValueStateRecord>(m: Map<string, T>) => {
      const out = [...m.entries()].sort((a, b) => (a[0] < b[0] ? -1 : 1)).map((e) => e[1]);
      out.forEach(checkRecord);
      return out;
    };
    const size = this.#settings.writeChunkSize;
    const plan: (() => PgQuery)[] = [];
    if (versions) {
      const own = roots ?? new Map<string, VersionRow>();
      const rest: VersionRow[] = [];
      for (const row of versionRows(sorted(nodes))) {
        if (isRootKey(row.key)) own.set(versionId(row.epoch, row.key), row);
        else rest.push(row);
      }
      for (const chunk of chunks(rest, size)) {
        plan.push(() => ({ ...this.#sql.versionInsert, values: versionValues(chunk) }));
      }
      if (roots === undefined && own.size > 0) plan.push(this.#rootsStatement(own));
    } else {
      for (const chunk of chunks(sorted(nodes), size)) {
        plan.push(() => ({ ...this.#sql.nodeUpsert, values: nodeColumns(chunk) }));
      }
    }
    for (const chunk of chunks(sorted(states), size)) {
      plan.push(() => ({ ...this.#sql.stateUpsert, values: valueStateColumns(chunk) }));
    }
    if (azks?.kind === 'azks') {
      const values = azksValues(azks);
      plan.push(() => ({ ...this.#sql.azksUpsert, values }));
    }
    return plan;
  }

  /**
   * The statement writing root versions, which comes after every other version of its batch:
   * the store's epoch is the newest root's (rule 3), and each version statement compares
   * with the store's epoch before the batch (rule 1), so none may see a root of the batch.
   */
  #rootsStatement(roots: Map<string, VersionRow>): () => PgQuery {
    return () => ({ ...this.#sql.versionInsert, values: versionValues([...roots.values()]) });
  }

  /**
   * Upserts all `records` in one transaction (the AZKS row last), so readers on other
   * connections see all of them or none.
   * @throws RangeError naming the field when a number exceeds 2^63 - 1 (nothing is written);
   * AkdError `STORAGE_TRANSACTION` / `STORAGE_CONNECTION` (then nothing is visible, except
   * that a connection lost during COMMIT leaves the outcome unknown, as with any database).
   */
  async batchSet(records: DbRecord[], _state: DbSetState = 'general'): Promise<void> {
    this.#check();
    this.#checkWriter();
    if (records.length === 0) return;
    await this.#write(this.#writePlan(records), `writing ${records.length} records`);
  }

  /**
   * Upserts the records of every chunk in one transaction, planning each chunk's statements
   * when the last chunk's are sent: a chunk's records are checked when it is taken, and a
   * RangeError, or an error thrown by `chunks`, rolls back the whole batch and is thrown as is.
   */
  async batchSetChunks(
    chunks: Iterable<DbRecord[]>,
    _state: DbSetState = 'general',
  ): Promise<void> {
    this.#check();
    this.#checkWriter();
    let written = 0;
    let thrown: { error: unknown } | undefined;
    // the root versions of all chunks, written after all the rest (#rootsStatement)
    const roots = this.#layout === 'versions' ? new Map<string, VersionRow>() : undefined;
    const plan = (function* (db: PostgresDatabase) {
      const it = chunks[Symbol.iterator]();
      for (;;) {
        let chunk: IteratorResult<DbRecord[]>;
        try {
          chunk = it.next();
        } catch (e) {
          thrown = { error: e };
          throw e;
        }
        if (chunk.done === true) break;
        if (chunk.value.length > 0) yield* db.#writePlan(chunk.value, roots);
        written += chunk.value.length;
      }
      if (roots !== undefined && roots.size > 0) yield db.#rootsStatement(roots);
    })(this);
    try {
      await this.#write(plan, () => `writing a batch in chunks (after ${written} records)`);
    } catch (e) {
      throw thrown === undefined ? e : thrown.error;
    }
  }

  /**
   * Runs write statements in one transaction (a lone statement of an array by itself),
   * after checking the writer fence when this database holds the writer lock: a fenced writer
   * writes nothing.
   */
  async #write(
    statements: Iterable<() => PgQuery>,
    operation: string | (() => string),
  ): Promise<void> {
    const generation = this.#generation;
    const plan = statements[Symbol.iterator]();
    try {
      if (Array.isArray(statements) && statements.length === 1 && generation === undefined) {
        await this.#pool.query((statements[0] as () => PgQuery)());
        return;
      }
      await inTransaction(this.#pool, 'BEGIN', async (client) => {
        if (generation !== undefined) {
          const { rows } = await client.query(fenceCheckQuery(this.schema));
          checkFence(this.schema, rows, generation);
        }
        const encodeNext = () => {
          const item = plan.next();
          return item.done === true ? undefined : item.value();
        };
        let next = encodeNext();
        while (next !== undefined) {
          // pg sends the statement now; plan and encode the next one while the server works
          const running = client.query(next);
          try {
            next = encodeNext();
          } catch (e) {
            // the running statement's outcome no longer matters: the transaction rolls back
            await running.catch(() => undefined);
            throw e;
          }
          await running;
        }
      });
    } catch (e) {
      // the store refuses this writer for good: its lock is lost for good with it
      if (isWriterFenced(e)) this.#revoke(e);
      throw storageError(e, typeof operation === 'string' ? operation : operation(), true);
    }
  }

  /** Every held writer lock counts as lost for good, with the refusal's reason (fencing.ts). */
  #revoke(refusal: WriterFencedError): void {
    for (const lock of this.#locks) lock.revoke(refusal.message, refusal.storeFenced);
  }

  /**
   * While this database holds the writer lock, reads the fence every `fenceCheckMs`: a
   * store fenced (`akd fence`) or claimed by another writer revokes the lock at once, so an
   * idle writer learns it is no longer the writer without waiting for its next write. A
   * read that fails changes nothing (a lost connection is the lock's to notice).
   */
  #watchFence(): void {
    const every = this.#settings.fenceCheckMs;
    if (every === 0 || this.#fenceWatch !== undefined) return;
    let reading = false;
    this.#fenceWatch = setInterval(() => {
      const generation = this.#generation;
      const held = [...this.#locks].every((l) => l.status().held);
      if (reading || generation === undefined || !held) return;
      reading = true;
      void readFence(this.#pool, this.schema)
        .then((fence) => {
          // the lock taken again meanwhile claimed a newer generation: read again next time
          if (this.#generation !== generation) return;
          const refusal = fenceRefusal(this.schema, fence, generation);
          if (refusal !== undefined) this.#revoke(refusal);
        })
        .catch(() => undefined)
        .finally(() => (reading = false));
    }, every);
    // the watch alone keeps no process alive
    this.#fenceWatch.unref();
  }

  #stopFenceWatch(): void {
    clearInterval(this.#fenceWatch);
    this.#fenceWatch = undefined;
  }

  async get<K extends StorageKey>(key: K): Promise<RecordFor<K>> {
    this.#check();
    const { display } = this.#sql;
    switch (key.kind) {
      case 'azks': {
        const rows = await this.#query(this.#sql.azksGet, 'reading the AZKS');
        if (rows.length === 0) throw notFound('the AZKS record');
        return decodeAzksRow(rows[0]!, display.azks) as RecordFor<K>;
      }
      case 'treeNode': {
        if (this.#layout === 'versions') {
          const [record] = await this.batchGetNodes([key.label]);
          if (record === undefined) throw notFound(`tree node ${labelKeyHex(key.label)}`);
          return record as RecordFor<K>;
        }
        const rows = await this.#query(
          { ...this.#sql.nodeGet, values: [labelKey(key.label)] },
          'reading a tree node',
        );
        if (rows.length === 0) throw notFound(`tree node ${labelKeyHex(key.label)}`);
        return decodeNodeRow(rows[0]!, display.nodes) as RecordFor<K>;
      }
      case 'valueState': {
        assertU64(key.epoch, 'key.epoch');
        const what = `value state of user ${hex(key.username)} at epoch ${key.epoch}`;
        if (key.epoch > MAX_STORED) throw notFound(what);
        const rows = await this.#query(
          { ...this.#sql.stateGet, values: [key.username, key.epoch.toString()] },
          'reading a value state',
        );
        if (rows.length === 0) throw notFound(what);
        return decodeValueStateRow(rows[0]!, display.valueStates) as RecordFor<K>;
      }
      default:
        throw new TypeError(`unknown key kind ${String((key as { kind: unknown }).kind)}`);
    }
  }

  /**
   * Many records in one statement per kind and chunk (a primary-key probe per key).
   * Missing keys are omitted, duplicates returned once.
   */
  async batchGet(keys: StorageKey[]): Promise<DbRecord[]> {
    this.#check();
    const nodes = new Map<string, NodeLabel>();
    const states = new Map<string, StorageKey & { kind: 'valueState' }>();
    let azks = false;
    for (const key of keys) {
      if (key.kind === 'treeNode') nodes.set(key.label.key, key.label);
      else if (key.kind === 'valueState') {
        assertU64(key.epoch, 'key.epoch');
        if (key.epoch > MAX_STORED) continue; // cannot be stored, so it is missing
        states.set(`${hex(key.username)}:${key.epoch}`, key);
      } else if (key.kind === 'azks') azks = true;
      else throw new TypeError(`unknown key kind ${String((key as { kind: unknown }).kind)}`);
    }
    const size = this.#settings.readChunkSize;
    const queries: PgQuery[] = [];
    const decoders: ((row: PgRow) => DbRecord)[] = [];
    const { display } = this.#sql;
    if (azks) {
      queries.push(this.#sql.azksGet);
      decoders.push((row) => decodeAzksRow(row, display.azks));
    }
    const versions = this.#layout === 'versions';
    if (!versions) {
      for (const chunk of chunks([...nodes.values()], size)) {
        queries.push({ ...this.#sql.nodeBatch, values: [labelKeyArray(chunk)] });
        decoders.push((row) => decodeNodeRow(row, display.nodes));
      }
    }
    for (const chunk of chunks([...states.values()], size)) {
      const users = byteaArray(chunk.map((k) => k.username));
      const epochs = new ArrayLiteral(chunk.length * 8);
      for (const k of chunk) epochs.int(k.epoch);
      queries.push({ ...this.#sql.stateBatch, values: [users, epochs.toString()] });
      decoders.push((row) => decodeValueStateRow(row, display.valueStates));
    }
    if (versions && nodes.size > 0) {
      // the other records in the snapshot of the walks (rule 4)
      const { found, rows } = await this.#readByLabel([...nodes.values()], queries);
      return [...rows.flatMap((r, i) => r.map(decoders[i]!)), ...found.values()];
    }
    if (queries.length === 0) return [];
    const results = await this.#reads(queries, `reading ${keys.length} records`);
    return results.flatMap((rows, i) => rows.map(decoders[i]!));
  }

  /**
   * The tree-node records of `labels`, aligned with them: on the versions layout found by
   * walks from the root (rule 4, `#readByLabel`), on records as `batchGet` reads them.
   */
  async batchGetNodes(labels: readonly NodeLabel[]): Promise<(TreeNodeRecord | undefined)[]> {
    this.#check();
    if (labels.length === 0) return [];
    if (this.#layout === 'records') {
      return alignNodes(labels, await this.batchGet(labels.map((label) => nodeKey(label))));
    }
    const { found } = await this.#readByLabel(labels);
    return labels.map((l) => found.get(l.key));
  }

  /**
   * Reads by label of the versions layout, and `extra` statements, in one snapshot: a walk
   * from the root at the store's epoch, then from the roots of the epochs before the versions
   * it found (their previous copies), each a recursive statement per chunk of labels, or
   * where the server cannot run them, a statement per tree level (version-reads.ts).
   */
  async #readByLabel(
    labels: readonly NodeLabel[],
    extra: PgQuery[] = [],
  ): Promise<{ found: Map<string, TreeNodeRecord>; rows: PgRow[][] }> {
    const attempt = (inSql: boolean) =>
      this.#snapshot(`reading ${labels.length} tree nodes by label`, async (q) => {
        const rows: PgRow[][] = [];
        for (const query of extra) rows.push((await q.query(query)).rows);
        return { found: await this.#versions.byLabel(q, labels, inSql), rows };
      });
    if (this.#walkUnfit) return attempt(false);
    try {
      return await attempt(true);
    } catch (e) {
      const state = refusedState(e);
      if (state === undefined) throw e;
      // a function or syntax the server lacks: never asked again (a blob that does not frame,
      // class 22, is the data's fault: the walk made here names it)
      if (state === '42') this.#walkUnfit = true;
      return attempt(false);
    }
  }

  /**
   * The versions `labels[i]` wrote in `epochs[i]` (`Database.batchGetNodeVersions`), one
   * primary-key probe each; on records, the latest or previous copy of that epoch.
   */
  async batchGetNodeVersions(
    labels: readonly NodeLabel[],
    epochs: readonly bigint[],
  ): Promise<(TreeNodeRecord | undefined)[]> {
    this.#check();
    if (labels.length !== epochs.length) {
      throw new RangeError(`${labels.length} labels but ${epochs.length} epochs`);
    }
    for (const e of epochs) assertU64(e, 'epoch');
    const version = (label: NodeLabel, n: TreeNode | undefined): TreeNodeRecord | undefined =>
      n && { kind: 'treeNode', label, latest: n, previous: undefined };
    if (this.#layout === 'records') {
      const records = await this.batchGetNodes(labels);
      return records.map((r, i) => {
        const e = epochs[i]!;
        if (r === undefined) return undefined;
        return version(
          labels[i]!,
          r.latest.lastEpoch === e
            ? r.latest
            : r.previous?.lastEpoch === e
              ? r.previous
              : undefined,
        );
      });
    }
    const asks = labels.map((label, i) => ({ label, key: versionKey(label), epoch: epochs[i]! }));
    const found = await this.#readVersions(asks);
    return asks.map((a) => version(a.label, found.get(versionId(a.epoch, a.key))));
  }

  /** The versions `asks` names, by `versionId`: in one snapshot when it takes statements. */
  async #readVersions(asks: readonly VersionAsk[]): Promise<Map<string, TreeNode>> {
    const operation = `reading ${asks.length} tree-node versions`;
    if (asks.length > this.#settings.readChunkSize) {
      return this.#snapshot(operation, (q) => this.#versions.versions(q, asks));
    }
    try {
      return await this.#versions.versions(this.#pool, asks);
    } catch (e) {
      throw storageError(e, operation);
    }
  }

  /**
   * `batchGetNodeVersions` in bytes. On the versions layout the server joins the rows of a
   * statement in one value (version-sql.ts) and the codec records are written from it here
   * without a node object (version-codec.ts); a statement the server refuses sends the batch
   * through the row decoder.
   */
  async batchGetNodeVersionBytes(
    labels: Uint8Array,
    epochs: BigUint64Array,
  ): Promise<NodeRecordBytes> {
    this.#check();
    const count = codecLabelCount(labels);
    if (epochs.length !== count)
      throw new RangeError(`${count} labels but ${epochs.length} epochs`);
    for (let i = 0; i < count; i++) {
      const len = (labels[LABEL_BYTES * i]! << 8) | labels[LABEL_BYTES * i + 1]!;
      if (len > 256) throw new RangeError(`label ${i} has length ${len}, above 256`);
    }
    if (this.#layout === 'versions') {
      const size = this.#settings.readChunkSize;
      const queries = nodeBytesQueries(
        this.#sql.versionBytesBatch,
        labels,
        count,
        size,
        (from, to) => {
          const list = new ArrayLiteral((to - from) * 4);
          // an epoch no row can have (above 2^63 - 1) as one no key holds
          for (let i = from; i < to; i++) list.int(epochs[i]! > MAX_STORED ? -1 : epochs[i]!);
          return [list.toString()];
        },
      );
      let answer: NodeRecordBytes | undefined;
      try {
        const results =
          queries.length === 0
            ? []
            : await this.#reads(queries, `reading ${count} tree-node versions in bytes`);
        answer = versionBytesAnswer(
          labels,
          count,
          size,
          results.map((rows) => rows[0]?.recs),
          this.#sql.display.nodeVersions,
        );
      } catch (e) {
        if (refusedState(e) === undefined) throw e;
      }
      if (answer !== undefined) return answer;
    }
    return nodeRecordBytes(await this.batchGetNodeVersions(codecLabels(labels), [...epochs]));
  }

  /**
   * Deletes the versions `labels[i]` wrote in `epochs[i]` (`Database.deleteNodeVersions`) in
   * one transaction of this writer, the fence checked first as every write does: a statement
   * per `writeChunkSize` versions in key order (version-delete.ts). A root version's row is
   * also the root epochs' (the partial index `node_versions_roots`): it goes with it.
   * @throws RangeError, deleting nothing, for a store of records, lists of different lengths,
   * an epoch outside u64, or one not below the store's epoch (read in the transaction);
   * AkdError as `batchSet` throws them (nothing deleted, except that a connection lost during
   * COMMIT leaves the outcome unknown)
   */
  async deleteNodeVersions(
    labels: readonly NodeLabel[],
    epochs: readonly bigint[],
  ): Promise<number> {
    this.#check();
    this.#checkWriter();
    for (const e of epochs) assertU64(e, 'epoch');
    // what needs no read (the layout, the lengths) is refused before a connection is taken:
    // no epoch of a store is above the largest it stores
    checkDeletable(this.#layout, MAX_STORED + 1n, labels.length, epochs);
    if (labels.length === 0) return 0;
    return this.#fenced(`deleting ${labels.length} tree-node versions`, (q) =>
      deleteVersions(q, this.#sql, labels, epochs, this.#settings.writeChunkSize),
    );
  }

  /**
   * The records of `labels` and of the nodes below them a walk toward `targets` at `epoch`
   * continues to, in one statement (subtree-sql.ts): a lookup's preload reads the rest of its
   * paths in one round trip instead of one per tree level.
   */
  async batchGetSubtrees(
    labels: readonly NodeLabel[],
    targets: readonly NodeLabel[],
    epoch: bigint,
    epochs?: readonly bigint[],
  ): Promise<TreeNodeRecord[]> {
    this.#check();
    assertU64(epoch, 'epoch');
    if (this.#layout === 'versions') return this.#versionSubtrees(labels, targets, epoch, epochs);
    const starts = [...new Map(labels.map((l) => [l.key, l])).values()];
    const full = targets.filter((t) => t.len === 256);
    if (starts.length === 0) return [];
    const values = [
      labelKeyArray(starts),
      byteaArray(full.map((t) => t.val)),
      (epoch > MAX_STORED ? MAX_STORED : epoch).toString(),
    ];
    if (this.#subtreesUnfit) return this.#startNodes(starts);
    let rows: PgRow[];
    try {
      rows = await this.#query(
        { ...this.#sql.subtreeBatch, values },
        `reading the subtrees below ${starts.length} tree nodes`,
      );
    } catch (e) {
      if (!unfitStatement(e)) throw e;
      // a server that cannot run the statement (a compatible database without one of its
      // functions) is asked for the start nodes alone from now on: a read per level, as before
      this.#subtreesUnfit = true;
      return this.#startNodes(starts);
    }
    const { display } = this.#sql;
    const out: TreeNodeRecord[] = [];
    const seen = new Set<string>();
    for (const row of rows) {
      const record = decodeNodeRow(row, display.nodes) as TreeNodeRecord;
      // the start labels of one walk are never above one another, but a damaged store's
      // links may reach a node twice: each is answered once
      if (seen.has(record.label.key)) continue;
      seen.add(record.label.key);
      out.push(record);
    }
    return out;
  }

  /**
   * `batchGetSubtrees` on the versions layout: from the versions `epochs` names, joined with
   * the walks of other lookups at `epoch` (version-subtrees.ts); without them, from the
   * versions visible at `epoch` of the records reads by label find, which are answered as
   * such.
   */
  async #versionSubtrees(
    labels: readonly NodeLabel[],
    targets: readonly NodeLabel[],
    epoch: bigint,
    epochs: readonly bigint[] | undefined,
  ): Promise<TreeNodeRecord[]> {
    const starts = new Map<string, VersionAsk>();
    const start = (label: NodeLabel, e: bigint) => {
      const key = versionKey(label);
      if (e <= MAX_STORED) starts.set(versionId(e, key), { label, key, epoch: e });
    };
    if (epochs !== undefined) {
      if (epochs.length !== labels.length) {
        throw new RangeError(`${labels.length} labels but ${epochs.length} epochs`);
      }
      labels.forEach((label, i) => {
        assertU64(epochs[i]!, 'epochs[i]');
        start(label, epochs[i]!);
      });
      return this.#subtrees.read([...starts.values()], targets, epoch);
    }
    const out: TreeNodeRecord[] = [];
    const { found } = await this.#readByLabel(labels);
    for (const record of found.values()) {
      out.push(record);
      const visible = nodeAtEpoch(record, epoch);
      if (visible !== undefined) start(record.label, visible.lastEpoch);
    }
    const below = await this.#subtrees.read([...starts.values()], targets, epoch, false);
    return [...out, ...below.filter((r) => !found.has(r.label.key))];
  }

  /** The records of `labels` alone, for `batchGetSubtrees` on a server that cannot walk. */
  async #startNodes(labels: NodeLabel[]): Promise<TreeNodeRecord[]> {
    return (await this.batchGet(labels.map((label) => ({ kind: 'treeNode', label })))).filter(
      (r): r is TreeNodeRecord => r.kind === 'treeNode',
    );
  }

  /**
   * Tree nodes in bytes, written by the server (node-bytes.ts): two values per node, where
   * `batchGet` parses and decodes nineteen columns per node on this thread (a preload of
   * 200,000 labels into 200,000 spent most of its 5 s there). A batch holding a row the server
   * does not write (one the row decoder would reject), or a server that cannot run the
   * statement, is read through the row decoder instead: its error names what is wrong.
   */
  async batchGetNodeBytes(labels: Uint8Array): Promise<NodeRecordBytes> {
    this.#check();
    if (this.#layout === 'versions') {
      return nodeRecordBytes(await this.batchGetNodes(codecLabels(labels)));
    }
    const count = codecLabelCount(labels);
    const size = this.#settings.readChunkSize;
    const queries = nodeBytesQueries(this.#sql.nodeBytesBatch, labels, count, size);
    let answer: NodeRecordBytes | undefined;
    try {
      const rows =
        queries.length === 0
          ? []
          : await this.#reads(queries, `reading ${count} tree nodes in bytes`);
      answer = nodeBytesAnswer(rows, count, size);
    } catch (e) {
      if (!unfitStatement(e)) throw e;
    }
    return answer ?? nodeRecordBytes(await readNodeRecords(this, codecLabels(labels)));
  }

  async getUserData(username: Uint8Array): Promise<ValueStateRecord[]> {
    this.#check();
    const rows = await this.#query(
      { ...this.#sql.userData, values: [username] },
      'reading user data',
    );
    if (rows.length === 0) throw notFound(`user ${hex(username)}`);
    return rows.map((row) => decodeValueStateRow(row, this.#sql.display.valueStates));
  }

  async getUserState(username: Uint8Array, flag: ValueStateFlag): Promise<ValueStateRecord> {
    this.#check();
    const param = flagParam(flag);
    const what = `value state (${flag.kind}) of user ${hex(username)}`;
    if (param === null) throw notFound(what);
    const rows = await this.#query(
      { ...this.#sql.userState[flag.kind], values: [username, ...param] },
      'reading a user state',
    );
    if (rows.length === 0) throw notFound(what);
    return decodeValueStateRow(rows[0]!, this.#sql.display.valueStates);
  }

  /**
   * One statement: the state, then every row of the label in `vrf_proof_rows`. A store that
   * still keeps proofs in the older layout's tables (`migrateVrfProofRows` not run or not
   * finished when first asked) is read as before, the state and then the proofs by key.
   */
  async getUserStateAndVrfProofs(
    username: Uint8Array,
    flag: ValueStateFlag,
    keys: (state: ValueStateRecord) => VrfProofKey[],
  ): Promise<UserStateAndVrfProofs> {
    this.#check();
    const param = flagParam(flag);
    const what = `value state (${flag.kind}) of user ${hex(username)}`;
    if (param === null) throw notFound(what);
    if (await this.#olderVrfProofs()) return stateThenVrfProofs(this, username, flag, keys);
    const group = `${flag.kind}:${param.join()}`;
    const rows = await this.#stateProofs.call(group, { username, flag, param });
    const answer = userStateProofsAnswer(rows, username, keys, this.#sql.display);
    if (answer === undefined) throw notFound(what);
    return answer;
  }

  /**
   * The rows of `userStateProofs` for each call, where the calls share a flag and its
   * parameter: concurrent lookups' reads in one statement (coalescer.ts).
   */
  async #stateProofsRows(calls: readonly StateProofsCall[]): Promise<PgRow[][]> {
    const operation = 'reading a user state and its VRF proofs';
    const [first] = calls;
    if (first === undefined) return [];
    const { flag, param } = first;
    if (calls.length === 1) {
      const query = { ...this.#sql.userStateProofs[flag.kind], values: [first.username, ...param] };
      return [await this.#query(query, operation)];
    }
    const values = [byteaArray(calls.map((c) => c.username)), ...param];
    const rows = await this.#query(
      { ...this.#sql.userStatesProofs[flag.kind], values },
      `${operation} (${calls.length} users)`,
    );
    const out = calls.map((): PgRow[] => []);
    for (const row of rows) out[Number(row.i) - 1]?.push(row);
    return out;
  }

  readonly #stateProofs = new Coalescer<StateProofsCall, PgRow[]>(
    (calls) => this.#stateProofsRows(calls),
    () => 1,
    MAX_JOINED_STATES,
  );

  /**
   * Whether the older layout's `vrf_proofs` had a row when first asked. No code writes it any
   * more (a move only empties it), so an answer of no stands; yes is kept too (a reader
   * opened before a move finished reads as before until reopened).
   */
  #olderVrfProofs(): Promise<boolean> {
    this.#older ??= this.#query(this.#sql.olderVrfProofs, 'checking for older VRF proofs').then(
      (rows) => rows[0]?.older === true,
      (e: unknown) => {
        this.#older = undefined; // asked again next time
        throw e;
      },
    );
    return this.#older;
  }

  #older: Promise<boolean> | undefined;

  async getUserStateVersions(
    usernames: Uint8Array[],
    flag: ValueStateFlag,
  ): Promise<UserVersion[]> {
    return userVersionsOf(await this.getUserStates(usernames, flag));
  }

  /** One statement per chunk of users: a LATERAL index probe per user. */
  async getUserStates(usernames: Uint8Array[], flag: ValueStateFlag): Promise<ValueStateRecord[]> {
    this.#check();
    const param = flagParam(flag);
    const users = [...new Map(usernames.map((u) => [hex(u), u])).values()];
    if (param === null || users.length === 0) return [];
    const queries = chunks(users, this.#settings.readChunkSize).map((chunk) => ({
      ...this.#sql.userStates[flag.kind],
      values: [byteaArray(chunk), ...param],
    }));
    const results = await this.#reads(queries, `reading states of ${users.length} users`);
    return results.flatMap((rows) =>
      rows.map((row) => decodeValueStateRow(row, this.#sql.display.valueStates)),
    );
  }

  async getSetting(name: string): Promise<string | undefined> {
    this.#check();
    if (typeof name !== 'string') throw new TypeError('setting name must be a string');
    const rows = await this.#query(
      { ...this.#sql.settingGet, values: [name] },
      'reading a setting',
    );
    return rows.length === 0 ? undefined : decodeSettingRow(rows[0]!, this.#sql.display.settings);
  }

  async setSetting(name: string, value: string): Promise<void> {
    this.#check();
    if (typeof name !== 'string' || typeof value !== 'string') {
      throw new TypeError('setting name and value must be strings');
    }
    if (name === FENCE_SETTING) {
      throw new RangeError(`setting ${FENCE_SETTING} is reserved for the writer fence`);
    }
    this.#checkWriter();
    await this.#write(
      [() => ({ ...this.#sql.settingSet, values: [name, value] })],
      `writing setting ${name}`,
    );
  }

  async setAuditBlob(blob: AuditBlobRecord): Promise<void> {
    this.#check();
    this.#checkWriter();
    checkAuditBlob(blob);
    const { epoch, previousHash, currentHash, data } = blob;
    // through the fenced write path: a replaced writer stores no artifact either
    await this.#write(
      [
        () => ({
          ...this.#sql.auditBlobSet,
          values: [epoch.toString(), previousHash, currentHash, data.length, data],
        }),
      ],
      `writing the audit blob of epoch ${epoch}`,
    );
  }

  async listUsernames(after: Uint8Array | undefined, limit: number): Promise<Uint8Array[]> {
    this.#check();
    if (!Number.isSafeInteger(limit) || limit < 1) throw new RangeError('limit must be >= 1');
    const query =
      after === undefined
        ? { ...this.#sql.usernamesFirst, values: [limit] }
        : { ...this.#sql.usernamesAfter, values: [after, limit] };
    const rows = await this.#query(query, 'listing usernames');
    return rows.map((row) => decodeUsernameRow(row, this.#sql.display.valueStates));
  }

  /**
   * Appends the batch as rows of its labels' entries to `vrf_proof_rows` (`encodeVrfProofRows`:
   * a row per label, more where its entries pass `VRF_PROOF_ROW_BYTES`), each under the next
   * seq, so that reads merge them after every row before: a nonce written now wins, and a
   * record without one erases none. A statement per `writeChunkSize` rows, in one transaction.
   */
  async setVrfProofs(records: VrfProofRecord[]): Promise<void> {
    this.#check();
    this.#checkWriter();
    for (const r of records) checkVrfProofRecord(r); // all checked before anything is written
    if (records.length === 0) return;
    const rows = encodeVrfProofRows(records);
    const plan = chunks(rows, this.#settings.writeChunkSize).map((chunk) => () => ({
      ...this.#sql.vrfProofInsert,
      values: vrfProofRowValues(chunk),
    }));
    await this.#write(plan, `writing ${records.length} VRF proofs`);
  }

  /**
   * Every row of the keys' labels in `vrf_proof_rows`, and the rows of the keys themselves in
   * `vrf_proofs` (with their `vrf_nonces` rows) that a store migrated from an older version
   * keeps until they are moved (`migrateVrfProofRows`), in one statement per chunk of labels
   * (vrf-proof-sql.ts): the older rows count as written before all of the others.
   */
  async getVrfProofs(keys: VrfProofKey[]): Promise<VrfProofRecord[]> {
    this.#check();
    for (const k of keys) checkVrfProofKey(k);
    const picker = new VrfProofPicker(keys);
    const plan = vrfProofReadChunks(picker, this.#settings.readChunkSize);
    if (plan.length === 0) return [];
    const queries = plan.map((chunk) => ({
      ...this.#sql.vrfProofRead,
      values: vrfProofReadValues(chunk),
    }));
    const results = await this.#reads(queries, `reading ${keys.length} VRF proofs`);
    for (const rows of results) addVrfProofReadRows(picker, rows, this.#sql.display);
    return picker.records();
  }

  async getAuditBlobInfos(epochs: bigint[]): Promise<AuditBlobInfo[]> {
    this.#check();
    const wanted = storableEpochs(epochs);
    if (wanted.length === 0) return [];
    const queries = chunks(wanted, this.#settings.readChunkSize).map((chunk) => {
      const list = new ArrayLiteral(chunk.length * 8);
      for (const e of chunk) list.int(e);
      return { ...this.#sql.auditBlobInfos, values: [list.toString()] };
    });
    const results = await this.#reads(queries, `reading ${wanted.length} audit blob infos`);
    // each chunk is ordered, and the chunks follow each other
    return results.flatMap((rows) =>
      rows.map((row) => decodeAuditBlobRow(row, this.#sql.display.auditBlobs)),
    );
  }

  /**
   * Reads the blob in pieces of `AUDIT_BLOB_PIECE` bytes, in one snapshot: a blob of megabytes
   * read whole arrives as one message that pg decodes in one go, holding the event loop for
   * as long (166-274 ms for eight 3.5 MB blobs at once on the test machine, against 32-52 ms
   * in 128 KiB pieces, which were also faster in all).
   */
  async getAuditBlob(epoch: bigint): Promise<AuditBlobRecord> {
    this.#check();
    const [wanted] = storableEpochs([epoch]);
    if (wanted === undefined) throw notFound(`audit blob of epoch ${epoch}`);
    const key = wanted.toString();
    const table = this.#sql.display.auditBlobs;
    try {
      return await inTransaction(this.#pool, SNAPSHOT, async (client) => {
        const head = (await client.query({ ...this.#sql.auditBlobHead, values: [key] })).rows;
        if (head.length === 0) throw notFound(`audit blob of epoch ${epoch}`);
        const info = decodeAuditBlobHead(head[0]!, table);
        const data = new Uint8Array(info.size);
        for (let at = 0; at < info.size; at += AUDIT_BLOB_PIECE) {
          const length = Math.min(AUDIT_BLOB_PIECE, info.size - at);
          const query = { ...this.#sql.auditBlobPiece, values: [key, at + 1, length] };
          const rows = (await client.query(query)).rows;
          data.set(decodeAuditBlobPiece(rows[0]!, table, epoch), at);
        }
        return {
          epoch: info.epoch,
          previousHash: info.previousHash,
          currentHash: info.currentHash,
          data,
        };
      });
    } catch (e) {
      throw storageError(e, 'reading an audit blob');
    }
  }

  /**
   * Takes the schema's writer lock: a session-level advisory lock on a connection of its own,
   * held until `release()`. It fails at once when another session (in this or another
   * process) holds it, and frees itself when this process dies.
   * @throws AkdError `STORAGE_LOCKED`, naming the holder's server process when visible.
   */
  async acquireWriterLock(): Promise<WriterLock> {
    this.#check();
    const lock = await AdvisoryWriterLock.acquire(
      this.#connections,
      this.schema,
      (l) => {
        this.#locks.delete(l);
        if (this.#locks.size > 0) return;
        this.#generation = undefined;
        this.#stopFenceWatch();
      },
      this.#settings.lockRecovery,
      // a lock taken again claims a new generation: a writer that took over meanwhile is
      // fenced in turn, and a fenced store makes the lock give up (fencing.ts)
      async () => {
        this.#generation = await claimGeneration(this.#pool, this.schema);
      },
    );
    this.#locks.add(lock);
    try {
      // the generation fences every earlier writer, on this server or another (fencing.ts)
      this.#generation = await claimGeneration(this.#pool, this.schema);
    } catch (e) {
      await lock.release();
      throw e;
    }
    this.#watchFence();
    return lock;
  }

  /**
   * Moves a store of records to the versions layout (layout-migration.ts): takes the writer
   * lock (`STORAGE_LOCKED` while a writer holds it), copies every `nodes` row's versions in
   * label order, `chunkSize` rows a transaction, each recording how far it got, and switches
   * the layout in a last transaction, which drops `nodes`. A run that stops (an error, a throw
   * from `onProgress`, a kill) resumes where its last chunk ended; readers read `nodes` until
   * the switch, and a reader opened before it must be opened again after it. A store of
   * versions already is left as it is.
   * @throws RangeError for a bad `chunkSize`; AkdError `STORAGE_LOCKED` while a writer holds
   * the lock, `STORAGE_CORRUPT` for a row that does not decode
   * @example
   * ```ts
   * await db.migrateNodeLayout({ onProgress: (p) => console.log(p.labels, p.estimatedLabels) });
   * ```
   */
  async migrateNodeLayout(options: LayoutMigrationOptions = {}): Promise<LayoutMigrationResult> {
    this.#check();
    const size = options.chunkSize ?? 10_000;
    if (!Number.isSafeInteger(size) || size < 1) {
      throw new RangeError('chunkSize must be a positive integer');
    }
    const result = { labels: 0, versions: 0, resumed: false, restarted: false, already: false };
    if (this.#layout === 'versions') return { ...result, already: true };
    const lock = await this.acquireWriterLock();
    try {
      const state = await readNodeLayout(this.#pool, this.schema);
      if (state.layout === 'versions') {
        this.#layout = 'versions';
        return { ...result, already: true };
      }
      const epoch = await this.#fenced('reading the epoch', (q) => azksEpoch(q, this.#sql));
      let after: Uint8Array | undefined;
      if (state.copied !== undefined) {
        if (state.copiedEpoch === epoch) {
          after = state.copied;
          result.resumed = true;
        } else result.restarted = true;
      }
      const estimatedLabels = await estimatedNodes(this.#pool, this.#sql);
      for (;;) {
        this.#checkWriter();
        const chunk = await this.#fenced('copying tree nodes to versions', (q) =>
          copyChunk(q, this.#sql, after, epoch, size),
        );
        after = chunk.last;
        result.labels += chunk.labels;
        result.versions += chunk.versions;
        if (chunk.labels > 0) {
          options.onProgress?.({
            labels: result.labels,
            versions: result.versions,
            estimatedLabels,
            resumed: result.resumed,
          });
        }
        if (chunk.labels < size) {
          this.#checkWriter();
          const done = await this.#fenced('switching the node layout', (q) =>
            switchLayout(q, this.#sql, after, epoch),
          );
          if (done) break;
        }
      }
      this.#layout = 'versions';
      return result;
    } finally {
      await lock.release();
    }
  }

  /**
   * Moves the VRF proofs a store kept before schema version 7 (`vrf_proofs`, `vrf_nonces`) to
   * `vrf_proof_rows` (vrf-proof-move.ts): takes the writer lock (`STORAGE_LOCKED` while a
   * writer holds it), moves `chunkLabels` labels a transaction, smallest first, and when none
   * is left deletes the nonces of no proof and the indexes the move made. Readers read both
   * layouts meanwhile. A run that stops (an error, a throw from `onProgress`, a kill) resumes
   * by running again, as the rows it moved are gone from `vrf_proofs`. A store with nothing
   * to move (a total of 0) is only rid of any stray nonces.
   * @throws RangeError for a bad `chunkLabels`; AkdError `STORAGE_LOCKED` while a writer holds
   * the lock, `STORAGE_CORRUPT` for a row that does not decode (its chunk is not moved)
   * @example
   * ```ts
   * await db.migrateVrfProofRows({ onProgress: (p) => console.log(`${p.moved} / ${p.total}`) });
   * ```
   */
  async migrateVrfProofRows(
    options: VrfProofMigrationOptions = {},
  ): Promise<VrfProofMigrationResult> {
    this.#check();
    const size = options.chunkLabels ?? 10_000;
    if (!Number.isSafeInteger(size) || size < 1) {
      throw new RangeError('chunkLabels must be a positive integer');
    }
    const lock = await this.acquireWriterLock();
    try {
      const start = await this.#fenced('preparing to move stored VRF proofs', (q) =>
        startMove(q, this.#sql),
      );
      const result = { moved: 0, labels: 0, rows: 0, strayNonces: 0, ...start };
      options.onProgress?.({ moved: 0, total: result.total, labels: 0 });
      let after: Uint8Array | undefined;
      for (;;) {
        this.#checkWriter();
        const chunk = await this.#fenced('moving stored VRF proofs', (q) =>
          moveChunk(q, this.#sql, after, size),
        );
        if (chunk.labels > 0) {
          after = chunk.last;
          result.moved += chunk.moved;
          result.labels += chunk.labels;
          result.rows += chunk.rows;
          result.strayNonces += chunk.stray;
          options.onProgress?.({ moved: result.moved, total: result.total, labels: result.labels });
          continue;
        }
        this.#checkWriter();
        const stray = await this.#fenced('ending the move of stored VRF proofs', (q) =>
          finishMove(q, this.#sql),
        );
        if (stray !== undefined) {
          result.strayNonces += stray;
          return result;
        }
        // rows left below where this run went, written by something that takes no writer
        // lock: from the first label again
        after = undefined;
      }
    } finally {
      await lock.release();
    }
  }

  /**
   * Runs `fn` in a write transaction of this writer, which starts by checking the fence as
   * every write does (a fenced writer writes nothing).
   */
  async #fenced<T>(operation: string, fn: (q: PgQueryable) => Promise<T>): Promise<T> {
    const generation = this.#generation;
    try {
      return await inTransaction(this.#pool, 'BEGIN', async (client) => {
        if (generation !== undefined) {
          const { rows } = await client.query(fenceCheckQuery(this.schema));
          checkFence(this.schema, rows, generation);
        }
        return fn(client);
      });
    } catch (e) {
      if (isWriterFenced(e)) this.#revoke(e);
      throw storageError(e, operation, true);
    }
  }

  /**
   * Whether this server is a hot standby and how far it is behind its primary.
   * @example
   * ```ts
   * const { replica, lagSeconds } = await db.replicationStatus();
   * ```
   */
  async replicationStatus(): Promise<ReplicationStatus> {
    this.#check();
    return readReplicationStatus(this.#pool);
  }

  /** The store's writer fence (generation and whether it is fenced). Works on a standby. */
  async writerFence(): Promise<WriterFence> {
    this.#check();
    return readFence(this.#pool, this.schema);
  }

  /**
   * Fences the store, the first step of a fail-over (on the old primary): from now on no
   * writer may publish to it, neither its current writer (its next write is refused with
   * `STORAGE_LOCKED`) nor one that opens it later. A publish in flight commits first.
   * @returns the fence, whose generation `promote` waits for on the standby
   * @example
   * ```ts
   * const { generation } = await oldPrimary.fence();
   * ```
   */
  async fence(): Promise<WriterFence> {
    this.#check();
    return fenceStore(this.#pool, this.schema);
  }

  /**
   * Makes this store the directory's writable copy after a fail-over: waits until it has
   * applied the old primary's fence (`fencedGeneration`), promotes the server if it is a
   * standby, and lifts the fence. See docs/operating.md for the whole runbook.
   * @example
   * ```ts
   * await standby.promote({ fencedGeneration: generation });
   * ```
   */
  async promote(options: PromoteOptions = {}): Promise<PromoteResult> {
    this.#check();
    return promoteStore(this.#pool, this.schema, options);
  }

  /** Releases held writer locks and ends the pool. Idempotent. */
  async close(): Promise<void> {
    if (this.#closed) return;
    this.#closed = true;
    this.#stopFenceWatch();
    await Promise.all([...this.#locks].map((l) => l.release()));
    await this.#pool.end().catch(() => undefined);
  }
}
