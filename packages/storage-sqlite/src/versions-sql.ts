/**
 * The SQL of the `versions` layout (schema.ts `VERSIONS_TABLES_SQL`): appends of node
 * versions, the store's epoch, reads of versions by their primary key, and their deletion.
 */

import { byCount } from './sql.js';
import { VERSION_DATA_MAX } from './version-codec.js';

const list = (n: number, item: string) => Array(n).fill(item).join(', ');

/** Versions `(epoch, label, data)`; a version written again in its epoch replaces the first. */
export const upsertVersionsSql = byCount(
  (rows) =>
    `INSERT INTO node_versions (epoch, label, data) VALUES ${list(rows, '(?, ?, ?)')} ` +
    'ON CONFLICT (epoch, label) DO UPDATE SET data = excluded.data',
);

/** Notes the write epoch of a root version (rule 3). */
export const INSERT_ROOT_SQL = 'INSERT OR IGNORE INTO node_roots (epoch) VALUES (?)';

/**
 * Deletes the versions at `keys` (epoch, compact label) pairs; NULLs match none. SQLite
 * builds the list into an index of its own and probes the primary key with each entry.
 */
export const deleteVersionsSql = byCount(
  (keys) => `DELETE FROM node_versions WHERE (epoch, label) IN (VALUES ${list(keys, '(?, ?)')})`,
);

/** Drops the epoch of a root version deleted (rule 3). */
export const DELETE_ROOT_SQL = 'DELETE FROM node_roots WHERE epoch = ?';

/** The store's epoch (rule 3): the newest root version's; NULL when there is none. */
export const STORE_EPOCH_SQL = 'SELECT max(epoch) FROM node_roots';

/** The versions at `keys` (position from 1, epoch, compact label) triples; NULLs match none. */
const versionJoin = (keys: number) =>
  `FROM (VALUES ${list(keys, '(?, ?, ?)')}) AS q ` +
  'JOIN node_versions AS v ON v.epoch = q.column2 AND v.label = q.column3';

/**
 * The data of the versions at `keys` (position from 1, epoch, compact label) triples, joined
 * into one byte string: `be16(position) || u8 length || data` for each version found, and how
 * many found rows cannot be written so (data that is not a blob, or longer than any version's:
 * the driver then reads them as rows, and names what is wrong). A row a version instead cost
 * the driver a buffer and an array each, which for a walk of many thousands of nodes was most
 * of what it allocated (see node-bytes-sql.ts). SQLite's `||` joins blobs as text, which keeps
 * their bytes; the result is cast back to a blob.
 */
export const selectJoinedVersionsSql = byCount(
  (keys) =>
    "SELECT CAST(group_concat(unhex(printf('%04x%02x', q.column1, length(v.data))) || v.data, " +
    `'') AS BLOB), sum(typeof(v.data) <> 'blob' OR length(v.data) > ${VERSION_DATA_MAX}) ` +
    versionJoin(keys),
);

/** The versions at `keys` triples as rows `(position, data)`. */
export const selectVersionRowsSql = byCount(
  (keys) => `SELECT q.column1, v.data ${versionJoin(keys)}`,
);
