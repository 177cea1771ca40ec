/**
 * Schema versions and migrations. A store records its layout in the SQLite header:
 * `PRAGMA application_id` marks the file as an akd-ts store and `PRAGMA user_version` holds
 * the schema version, both written in the same transaction as the tables they describe.
 *
 * Opening a store: a new, empty file gets schema.sql (the current layout) whole; a store at
 * an older version is migrated step by step in one transaction; a store at a newer version
 * than this driver knows, a file some other program owns, or tables with no version are
 * refused with `STORAGE_SCHEMA`, and nothing is written to them.
 */

import { AkdError } from '@akd-ts/core';
import type { NodeLayout } from '@akd-ts/storage';
import type { SqliteClient } from './client.js';
import { SCHEMA_SQL } from './schema-sql.js';

/** The layout this driver reads and writes. */
export const SCHEMA_VERSION = 10;

/** `PRAGMA application_id` of an akd-ts store: "akdt". */
export const APPLICATION_ID = 0x616b6474;

/** One step: the SQL that takes a store from version `from` to `from + 1`. */
export interface Migration {
  from: number;
  sql: string;
}

/** The node_layout table of version 7 (schema.sql), as a store of records. */
const NODE_LAYOUT_SQL = `CREATE TABLE node_layout (
  id INTEGER NOT NULL PRIMARY KEY CHECK (id = 1),
  layout TEXT NOT NULL CHECK (layout IN ('records', 'versions'))
) STRICT;
INSERT INTO node_layout (id, layout) VALUES (1, 'records');`;

/**
 * The tables of the `versions` layout (database.ts `NodeLayout`), which a store of versions
 * has instead of `nodes`:
 *
 * - node_versions: one row per node version, keyed by its write epoch (its last_epoch) and its
 *   label, so that an epoch's versions follow every older epoch's in the b-tree and a commit
 *   appends them to pages of their own. `label` is the label's compact form and `data` the
 *   rest of the version, in the layout version-codec.ts documents: node type, children flags,
 *   min descendant epoch, parent, each child's label and write epoch, hash. No version is ever
 *   rewritten once its epoch is published, and no index by label exists: a read by label
 *   walks from the root, each child by the write epoch its parent records.
 * - node_roots: the write epoch of every root version, written with it. The store's epoch
 *   (rule 3) is their greatest, found at the end of a small b-tree instead of by reading an
 *   epoch's rows.
 */
export const VERSIONS_TABLES_SQL = `CREATE TABLE node_versions (
  epoch INTEGER NOT NULL,
  label BLOB NOT NULL,
  data BLOB NOT NULL,
  PRIMARY KEY (epoch, label)
) STRICT, WITHOUT ROWID;
CREATE TABLE node_roots (
  epoch INTEGER NOT NULL PRIMARY KEY
) STRICT;`;

/** Makes a store of records with no nodes a store of versions. */
const TO_VERSIONS_SQL = `DROP TABLE nodes;
${VERSIONS_TABLES_SQL}
UPDATE node_layout SET layout = 'versions';`;

const VALUE_STATE_COLUMNS_SQL = 'username, epoch, version, node_label, value';

/**
 * Version 9: value_states rebuilt keyed by (epoch, username), as schema.sql has it, and its
 * index by user. The old table is renamed out of the way first, so that the new one is created
 * under its own name and its stored CREATE statement is schema.sql's text (a table renamed
 * into place would keep a quoted name). The rows are copied in the new key's order, so that
 * each page is filled once and in sequence, and the index is built after them, by one sort.
 */
const VALUE_STATES_BY_EPOCH_SQL = `ALTER TABLE value_states RENAME TO value_states_v8;
CREATE TABLE value_states (
  username BLOB NOT NULL,
  epoch INTEGER NOT NULL,
  version INTEGER NOT NULL,
  node_label BLOB NOT NULL,
  value BLOB NOT NULL,
  PRIMARY KEY (epoch, username)
) STRICT, WITHOUT ROWID;
INSERT INTO value_states (${VALUE_STATE_COLUMNS_SQL})
  SELECT ${VALUE_STATE_COLUMNS_SQL} FROM value_states_v8 ORDER BY epoch, username;
DROP TABLE value_states_v8;
CREATE INDEX value_states_by_user ON value_states (username, epoch);`;

/**
 * Every step from version 1 up. Version 1 had nodes, value_states and azks; version 2 added
 * the settings table when the Database interface gained named settings; version 3 the
 * audit_blobs table (stored audit blobs; the epochs published before it have none until the
 * writer server fills them in); version 4 the vrf_proofs table (VRF proofs stored at publish;
 * versions published before it have none until `akd vrf backfill` computes them); version 5
 * the audit_blob_parts table (a blob stored in parts of 1 MiB; those written before are one);
 * version 6 the nodes' child write epochs (left_epoch, right_epoch and their p_ copies,
 * filled in for the stored nodes from their children's rows: `childEpochsSql`); version 7 the
 * node_layout table, which says how the store keeps tree nodes: a store migrated to it keeps
 * records, as it did; version 8 the vrf_nonces table (a published version's nonce beside its
 * proof instead of appended to it; the proofs stored before keep theirs, and are read as
 * they are); version 9 value_states keyed by (epoch, username), with the index
 * value_states_by_user (username, epoch) (`VALUE_STATES_BY_EPOCH_SQL`), so that an epoch
 * appends its value states instead of writing a row into almost every page of the table;
 * version 10 the vrf_proof_rows table (a label's proofs of one write in one row; the tables
 * of version 4 and 8 are still read, as older rows, until `akd vrf migrate` empties them).
 */
export const MIGRATIONS: readonly Migration[] = [
  {
    from: 1,
    sql: `CREATE TABLE settings (
  name TEXT NOT NULL PRIMARY KEY,
  value TEXT NOT NULL
) STRICT, WITHOUT ROWID;`,
  },
  {
    from: 2,
    sql: `CREATE TABLE audit_blobs (
  epoch INTEGER NOT NULL PRIMARY KEY,
  previous_hash BLOB NOT NULL,
  current_hash BLOB NOT NULL,
  size INTEGER NOT NULL,
  data BLOB NOT NULL
) STRICT;`,
  },
  {
    from: 3,
    sql: `CREATE TABLE vrf_proofs (
  key BLOB NOT NULL PRIMARY KEY,
  value BLOB NOT NULL
) STRICT, WITHOUT ROWID;`,
  },
  {
    from: 4,
    sql: `CREATE TABLE audit_blob_parts (
  epoch INTEGER NOT NULL,
  part INTEGER NOT NULL,
  data BLOB NOT NULL,
  PRIMARY KEY (epoch, part)
) STRICT;`,
  },
  { from: 5, sql: childEpochsSql() },
  { from: 6, sql: NODE_LAYOUT_SQL },
  {
    from: 7,
    sql: `CREATE TABLE vrf_nonces (
  key BLOB NOT NULL PRIMARY KEY,
  nonce BLOB NOT NULL
) STRICT, WITHOUT ROWID;`,
  },
  { from: 8, sql: VALUE_STATES_BY_EPOCH_SQL },
  {
    from: 9,
    sql: `CREATE TABLE vrf_proof_rows (
  label BLOB NOT NULL,
  seq INTEGER NOT NULL,
  entries BLOB NOT NULL,
  PRIMARY KEY (label, seq)
) STRICT, WITHOUT ROWID;`,
  },
];

/**
 * The child write epoch columns (version 6), added at the end of `nodes` and filled in:
 * a version of a node written at `t` was hashed with each child's version visible at `t`
 * (spec 9.2, `nodeAtEpoch`), whose own last_epoch is the epoch to store; NULL for a child
 * with no row, or none of whose versions is that old. One pass over the table, each child
 * found by a probe of the primary key; leaves, which have no children, are not rewritten.
 */
function childEpochsSql(): string {
  const children = [
    { prefix: '', written: 'n.last_epoch' },
    { prefix: 'p_', written: 'n.p_last_epoch' },
  ].flatMap(({ prefix, written }) =>
    ['left', 'right'].map((side) => ({
      child: `n.${prefix}${side}_child`,
      epoch: `${prefix}${side}_epoch`,
      written,
    })),
  );
  /** The last_epoch of the version of the child in column `child` visible at `t`. */
  const visible = (child: string, t: string) =>
    `(SELECT CASE WHEN c.last_epoch <= ${t} THEN c.last_epoch ` +
    `WHEN c.p_last_epoch <= ${t} THEN c.p_last_epoch END ` +
    `FROM nodes AS c WHERE c.label = ${child})`;
  return [
    ...children.map(({ epoch }) => `ALTER TABLE nodes ADD COLUMN ${epoch} INTEGER;`),
    'UPDATE nodes AS n SET ' +
      children
        .map(({ child, epoch, written }) => `${epoch} = ${visible(child, written)}`)
        .join(', ') +
      ` WHERE ${children.map(({ child }) => `${child} IS NOT NULL`).join(' OR ')};`,
  ].join('\n');
}

/** The store's `(application_id, user_version)`. */
function readHeader(client: SqliteClient): { app: number; version: number } {
  return {
    app: Number(client.pragma('application_id', { simple: true })),
    version: Number(client.pragma('user_version', { simple: true })),
  };
}

/**
 * Throws unless `(app, version)` is something this driver may open or upgrade. `hasTables` is
 * only asked under the write lock: outside it, another process may be creating the schema.
 */
function checkHeader(app: number, version: number, path: string, hasTables?: () => boolean): void {
  if (app !== APPLICATION_ID && app !== 0) {
    throw new AkdError(
      'STORAGE_SCHEMA',
      `${path} is not an akd-ts store (application_id 0x${(app >>> 0).toString(16)})`,
    );
  }
  if (version > SCHEMA_VERSION) {
    throw new AkdError(
      'STORAGE_SCHEMA',
      `${path} has schema version ${version}, newer than version ${SCHEMA_VERSION} that this ` +
        'driver knows: open it with a newer akd-ts',
    );
  }
  if (version === 0 && hasTables?.()) {
    throw new AkdError(
      'STORAGE_SCHEMA',
      `${path} holds tables but no akd-ts schema version: not an akd-ts store`,
    );
  }
}

/**
 * Throws unless the file already holds an akd-ts store, reading its header only (so nothing is
 * written to a file that is not one, not even the WAL mode).
 * @throws AkdError `STORAGE_SCHEMA`
 */
export function assertStore(client: SqliteClient, path: string): void {
  const { app, version } = readHeader(client);
  checkHeader(app, version, path);
  if (version === 0) throw new AkdError('STORAGE_SCHEMA', `${path} holds no akd-ts store`);
}

/**
 * How the store on `client` keeps tree nodes, as its node_layout table says.
 * @throws AkdError `STORAGE_SCHEMA` when the table or its row is missing or unknown
 */
export function readNodeLayout(client: SqliteClient, path: string): NodeLayout {
  let row: unknown;
  try {
    row = client.prepare('SELECT layout FROM node_layout WHERE id = 1').raw(true).get();
  } catch (e) {
    throw new AkdError('STORAGE_SCHEMA', `${path} has no readable node_layout table`, {
      cause: e,
    });
  }
  const layout = Array.isArray(row) ? (row[0] as unknown) : undefined;
  if (layout !== 'records' && layout !== 'versions') {
    throw new AkdError(
      'STORAGE_SCHEMA',
      `${path} names no known node layout (node_layout holds ${JSON.stringify(layout ?? null)})`,
    );
  }
  return layout;
}

/**
 * Creates the schema in an empty store, or migrates an older one, in one transaction. A new
 * store keeps tree nodes as `layout` says (`records` when undefined); an existing store keeps
 * its own layout.
 * @returns the version the store had before (0 for a new store).
 * @throws AkdError `STORAGE_SCHEMA` for a newer, foreign or unversioned store.
 *
 * @example
 * ```ts
 * const before = prepareSchema(client, './akd.db'); // 0 the first time, then 2
 * ```
 */
export function prepareSchema(
  client: SqliteClient,
  path: string,
  layout: NodeLayout = 'records',
): number {
  const hasTables = () =>
    client.prepare("SELECT 1 FROM sqlite_schema WHERE type = 'table' LIMIT 1").get() !== undefined;
  const first = readHeader(client);
  checkHeader(first.app, first.version, path);
  if (first.version === SCHEMA_VERSION && first.app === APPLICATION_ID) return first.version;

  // another process may be creating or migrating the same file: decide under the write lock
  client.exec('BEGIN IMMEDIATE');
  try {
    const { app, version } = readHeader(client);
    checkHeader(app, version, path, hasTables);
    if (version === 0) {
      client.exec(SCHEMA_SQL);
      if (layout === 'versions') client.exec(TO_VERSIONS_SQL);
    } else {
      for (const step of MIGRATIONS) if (step.from >= version) client.exec(step.sql);
    }
    client.pragma(`user_version = ${SCHEMA_VERSION}`);
    client.pragma(`application_id = ${APPLICATION_ID}`);
    client.exec('COMMIT');
    return version;
  } catch (e) {
    if (client.inTransaction) client.exec('ROLLBACK');
    throw e;
  }
}
