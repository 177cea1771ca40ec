/**
 * The driver's SQL, built once per schema. Hot statements are named, so each connection
 * parses and plans them once; names carry a hash of the schema, so databases over different
 * schemas can share one pool without their prepared statements colliding. Everything here is
 * plain SQL that PostgreSQL-compatible distributed databases accept too: joins with
 * multi-array `unnest`, `LATERAL`, `INSERT ... ON CONFLICT DO UPDATE`.
 */

import { createHash } from 'node:crypto';
import type { ValueStateFlag } from '@akd-ts/storage';
import type { PgQuery } from './client.js';
import { nodeBytesBatchSql } from './node-bytes-sql.js';
import { subtreeBatchSql } from './subtree-sql.js';
import {
  labelWalkSql,
  storeEpochSql,
  versionBatchSql,
  versionBytesSql,
  versionDeleteSql,
  versionInsertSql,
  versionSubtreesSql,
} from './version-sql.js';
import { vrfProofInsertSql, vrfProofReadSql } from './vrf-proof-sql.js';

const NODE_COLUMNS = [
  'label',
  'last_epoch',
  'min_descendant_epoch',
  'parent',
  'node_type',
  'left_child',
  'right_child',
  'hash',
  'p_last_epoch',
  'p_min_descendant_epoch',
  'p_parent',
  'p_node_type',
  'p_left_child',
  'p_right_child',
  'p_hash',
  // schema version 4 appended these to the table (codec.ts `nodeColumns` writes them last)
  'left_epoch',
  'right_epoch',
  'p_left_epoch',
  'p_right_epoch',
];
const NODE_TYPES = [
  'bytea',
  'int8',
  'int8',
  'bytea',
  'int2',
  'bytea',
  'bytea',
  'bytea',
  'int8',
  'int8',
  'bytea',
  'int2',
  'bytea',
  'bytea',
  'bytea',
  'int8',
  'int8',
  'int8',
  'int8',
];
const STATE_COLUMNS = ['username', 'epoch', 'version', 'node_label_len', 'node_label_val', 'value'];
const STATE_TYPES = ['bytea', 'int8', 'int8', 'int4', 'bytea', 'bytea'];

export type FlagKind = ValueStateFlag['kind'];
const FLAGS: FlagKind[] = ['maxEpoch', 'minEpoch', 'leqEpoch', 'specificEpoch', 'specificVersion'];

/** The filter and order that pick one state per flag (spec 14.1); `$2` is the flag's number. */
function flagFilter(kind: FlagKind, alias: string): { where: string; order: string } {
  switch (kind) {
    case 'maxEpoch':
      return { where: '', order: `${alias}epoch DESC` };
    case 'minEpoch':
      return { where: '', order: `${alias}epoch ASC` };
    case 'leqEpoch':
      return { where: ` AND ${alias}epoch <= $2`, order: `${alias}epoch DESC` };
    case 'specificEpoch':
      return { where: ` AND ${alias}epoch = $2`, order: `${alias}epoch DESC` };
    case 'specificVersion':
      // the earliest state with that version, as the in-memory store picks
      return { where: ` AND ${alias}version = $2`, order: `${alias}epoch ASC` };
  }
}

/** `INSERT ... SELECT * FROM unnest($1::t1[], ...) ON CONFLICT (key) DO UPDATE SET ...` */
function unnestUpsert(table: string, columns: string[], types: string[], key: string[]): string {
  const params = types.map((t, i) => `$${i + 1}::${t}[]`).join(', ');
  const updates = columns
    .filter((c) => !key.includes(c))
    .map((c) => `${c} = EXCLUDED.${c}`)
    .join(', ');
  return (
    `INSERT INTO ${table} (${columns.join(', ')}) SELECT * FROM unnest(${params}) ` +
    `ON CONFLICT (${key.join(', ')}) DO UPDATE SET ${updates}`
  );
}

/** Quotes a validated schema name. */
export function quoteIdent(name: string): string {
  return `"${name.replace(/"/g, '""')}"`;
}

export interface TableNames {
  nodes: string;
  nodeVersions: string;
  valueStates: string;
  azks: string;
  settings: string;
  auditBlobs: string;
  /** Where the older layout's VRF proofs stay until they are moved (vrf-proof-move.ts). */
  vrfProofs: string;
  vrfNonces: string;
  vrfProofRows: string;
  /** The sequence of `vrf_proof_rows.seq`. */
  vrfProofRowsSeq: string;
  /** The indexes by label that a move of `vrf_proofs` creates while it runs. */
  vrfProofsByLabel: string;
  vrfNoncesByLabel: string;
  version: string;
}

export interface Statements {
  /** Qualified, quoted table names for SQL. */
  tables: TableNames;
  /** `schema.table` names for messages. */
  display: TableNames;
  nodeGet: PgQuery;
  nodeBatch: PgQuery;
  nodeBytesBatch: PgQuery;
  subtreeBatch: PgQuery;
  nodeUpsert: PgQuery;
  /** `nodes` rows after `$1` in label order, at most `$2` (a layout migration's chunk). */
  nodesAfter: PgQuery;
  /** The versions layout (version-sql.ts). */
  versionInsert: PgQuery;
  versionCopy: PgQuery;
  storeEpoch: PgQuery;
  versionBatch: PgQuery;
  versionDelete: PgQuery;
  versionBytesBatch: PgQuery;
  versionSubtrees: PgQuery;
  labelWalk: PgQuery;
  stateGet: PgQuery;
  stateBatch: PgQuery;
  stateUpsert: PgQuery;
  azksGet: PgQuery;
  azksUpsert: PgQuery;
  userData: PgQuery;
  userState: Record<FlagKind, PgQuery>;
  userStates: Record<FlagKind, PgQuery>;
  /** A state with its label's rows of stored VRF proofs (`getUserStateAndVrfProofs`). */
  userStateProofs: Record<FlagKind, PgQuery>;
  /** `userStateProofs` of several labels in one statement, rows tagged by label (`i`). */
  userStatesProofs: Record<FlagKind, PgQuery>;
  /** Whether the older layout's table of stored VRF proofs has a row. */
  olderVrfProofs: PgQuery;
  settingGet: PgQuery;
  settingSet: PgQuery;
  auditBlobHead: PgQuery;
  auditBlobPiece: PgQuery;
  auditBlobInfos: PgQuery;
  auditBlobSet: PgQuery;
  usernamesFirst: PgQuery;
  usernamesAfter: PgQuery;
  /** Stored VRF proofs (vrf-proof-sql.ts). */
  vrfProofRead: PgQuery;
  vrfProofInsert: PgQuery;
}

/**
 * The next `limit` distinct usernames of `table` in order, after `$1` (`after`; the limit is
 * `$2`) or from the first (`first`; the limit is `$1`): one probe of the primary key per name
 * (a recursive walk, each step the least name above the last), so a page costs its names
 * whatever the table's size. `SELECT DISTINCT ... LIMIT` leaves the plan to the statistics:
 * without them (autovacuum off, or not yet run after a load) PostgreSQL estimates 200 names
 * and hashes the whole table for each page, 4 s a page at 2,000,000 rows against 10 ms.
 */
function usernamesSql(table: string, from: 'first' | 'after'): string {
  const [start, limit] = from === 'first' ? ['', '$1'] : ['WHERE username > $1 ', '$2'];
  return (
    `WITH RECURSIVE u(username) AS (` +
    `(SELECT username FROM ${table} ${start}ORDER BY username LIMIT 1) ` +
    `UNION ALL SELECT (SELECT v.username FROM ${table} v WHERE v.username > u.username ` +
    `ORDER BY v.username LIMIT 1) FROM u WHERE u.username IS NOT NULL) ` +
    `SELECT username FROM u WHERE username IS NOT NULL LIMIT ${limit}`
  );
}

/** Every statement of the driver for tables in `schema`. */
export function buildStatements(schema: string): Statements {
  const s = quoteIdent(schema);
  const tag = createHash('sha256').update(schema).digest('hex').slice(0, 10);
  const name = (what: string) => `akd_${tag}_${what}`;
  const names = (prefix: string): TableNames => ({
    nodes: `${prefix}.nodes`,
    nodeVersions: `${prefix}.node_versions`,
    valueStates: `${prefix}.value_states`,
    azks: `${prefix}.azks`,
    settings: `${prefix}.settings`,
    auditBlobs: `${prefix}.audit_blobs`,
    vrfProofs: `${prefix}.vrf_proofs`,
    vrfNonces: `${prefix}.vrf_nonces`,
    vrfProofRows: `${prefix}.vrf_proof_rows`,
    vrfProofRowsSeq: `${prefix}.vrf_proof_rows_seq`,
    vrfProofsByLabel: `${prefix}.vrf_proofs_by_label`,
    vrfNoncesByLabel: `${prefix}.vrf_nonces_by_label`,
    version: `${prefix}.schema_version`,
  });
  const tables = names(s);
  const nodeCols = NODE_COLUMNS.join(', ');
  const stateCols = STATE_COLUMNS.join(', ');
  const nNodeCols = NODE_COLUMNS.map((c) => `n.${c}`).join(', ');
  const vStateCols = STATE_COLUMNS.map((c) => `v.${c}`).join(', ');
  const per = (make: (kind: FlagKind) => PgQuery) =>
    Object.fromEntries(FLAGS.map((k) => [k, make(k)])) as Record<FlagKind, PgQuery>;

  return {
    tables,
    display: names(schema),
    nodeGet: {
      name: name('node_get'),
      text: `SELECT ${nodeCols} FROM ${tables.nodes} WHERE label = $1`,
    },
    // A join with the unnested keys rather than `label = ANY($1)`: the planner then probes
    // the primary key once per key (a nested loop), where for ANY it estimates from the
    // table's size and turns to a sequential scan once the keys are a few percent of the rows
    // (10,000 keys of 500,000 rows: 100 ms scanning against 30 ms probing, measured).
    // Keys are distinct (the driver removes duplicates), so each row comes back once.
    nodeBatch: {
      name: name('node_batch'),
      text:
        `SELECT ${nNodeCols} FROM unnest($1::bytea[]) AS k(label) ` +
        `JOIN ${tables.nodes} n ON n.label = k.label`,
    },
    // the same join, each row written by the server as codec bytes (node-bytes-sql.ts)
    nodeBytesBatch: {
      name: name('node_bytes_batch'),
      text: nodeBytesBatchSql(tables.nodes, NODE_COLUMNS),
    },
    // the rest of a lookup's paths below some nodes, in one statement (subtree-sql.ts)
    subtreeBatch: {
      name: name('subtree_batch'),
      text: subtreeBatchSql(tables.nodes, NODE_COLUMNS),
    },
    nodeUpsert: {
      name: name('node_upsert'),
      text: unnestUpsert(tables.nodes, NODE_COLUMNS, NODE_TYPES, ['label']),
    },
    nodesAfter: {
      name: name('nodes_after'),
      text: `SELECT ${nodeCols} FROM ${tables.nodes} WHERE label > $1 ORDER BY label LIMIT $2`,
    },
    versionInsert: { name: name('version_insert'), text: versionInsertSql(tables.nodeVersions) },
    // a migration's copy: versions at or below the store's epoch too, none replaced
    versionCopy: {
      name: name('version_copy'),
      text:
        `INSERT INTO ${tables.nodeVersions} (epoch, label, data) ` +
        `SELECT * FROM unnest($1::int8[], $2::bytea[], $3::bytea[]) ON CONFLICT DO NOTHING`,
    },
    storeEpoch: { name: name('store_epoch'), text: storeEpochSql(tables.nodeVersions) },
    versionBatch: { name: name('version_batch'), text: versionBatchSql(tables.nodeVersions) },
    versionDelete: { name: name('version_delete'), text: versionDeleteSql(tables.nodeVersions) },
    versionBytesBatch: {
      name: name('version_bytes_batch'),
      text: versionBytesSql(tables.nodeVersions),
    },
    versionSubtrees: {
      name: name('version_subtrees'),
      text: versionSubtreesSql(tables.nodeVersions),
    },
    labelWalk: { name: name('label_walk'), text: labelWalkSql(tables.nodeVersions) },
    stateGet: {
      name: name('state_get'),
      text: `SELECT ${stateCols} FROM ${tables.valueStates} WHERE username = $1 AND epoch = $2`,
    },
    stateBatch: {
      name: name('state_batch'),
      text:
        `SELECT ${vStateCols} FROM unnest($1::bytea[], $2::int8[]) AS k(username, epoch) ` +
        `JOIN ${tables.valueStates} v ON v.username = k.username AND v.epoch = k.epoch`,
    },
    stateUpsert: {
      name: name('state_upsert'),
      text: unnestUpsert(tables.valueStates, STATE_COLUMNS, STATE_TYPES, ['username', 'epoch']),
    },
    azksGet: {
      name: name('azks_get'),
      text: `SELECT id, latest_epoch, num_nodes FROM ${tables.azks} WHERE id = 1`,
    },
    azksUpsert: {
      name: name('azks_upsert'),
      text:
        `INSERT INTO ${tables.azks} (id, latest_epoch, num_nodes) VALUES (1, $1, $2) ` +
        `ON CONFLICT (id) DO UPDATE SET latest_epoch = EXCLUDED.latest_epoch, ` +
        `num_nodes = EXCLUDED.num_nodes`,
    },
    userData: {
      name: name('user_data'),
      text: `SELECT ${stateCols} FROM ${tables.valueStates} WHERE username = $1 ORDER BY epoch`,
    },
    userState: per((kind) => {
      const { where, order } = flagFilter(kind, '');
      return {
        name: name(`user_state_${kind}`),
        text:
          `SELECT ${stateCols} FROM ${tables.valueStates} WHERE username = $1${where} ` +
          `ORDER BY ${order} LIMIT 1`,
      };
    }),
    // one index probe per user, all users in one statement
    userStates: per((kind) => {
      const { where, order } = flagFilter(kind, 'v.');
      return {
        name: name(`user_states_${kind}`),
        text:
          `SELECT s.* FROM unnest($1::bytea[]) AS u(username) ` +
          `CROSS JOIN LATERAL (SELECT ${vStateCols} FROM ${tables.valueStates} v ` +
          `WHERE v.username = u.username${where} ORDER BY ${order} LIMIT 1) s`,
      };
    }),
    // the state as `src` 0, then the label's rows of vrf_proof_rows in seq order (the order
    // they are merged in): a lookup served without the key, in one round trip instead of two
    userStateProofs: per((kind) => {
      const { where, order } = flagFilter(kind, '');
      return {
        name: name(`user_state_proofs_${kind}`),
        text:
          `SELECT 0 AS src, ${stateCols}, NULL::int8 AS seq, NULL::bytea AS entries ` +
          `FROM (SELECT ${stateCols} FROM ${tables.valueStates} WHERE username = $1${where} ` +
          `ORDER BY ${order} LIMIT 1) s UNION ALL ` +
          `SELECT 1, label, NULL, NULL, NULL, NULL, NULL, seq, entries ` +
          `FROM ${tables.vrfProofRows} WHERE label = $1 ORDER BY src, seq`,
      };
    }),
    // `userStateProofs` of several labels `$1` at once (concurrent lookups' reads joined,
    // coalescer.ts), each label's rows tagged with its place `i` in `$1`, from 1
    userStatesProofs: per((kind) => {
      const { where, order } = flagFilter(kind, 'v.');
      const labels = `unnest($1::bytea[]) WITH ORDINALITY AS u(label, i)`;
      return {
        name: name(`user_states_proofs_${kind}`),
        text:
          `SELECT u.i, 0 AS src, s.*, NULL::int8 AS seq, NULL::bytea AS entries FROM ${labels} ` +
          `CROSS JOIN LATERAL (SELECT ${vStateCols} FROM ${tables.valueStates} v ` +
          `WHERE v.username = u.label${where} ORDER BY ${order} LIMIT 1) s UNION ALL ` +
          `SELECT u.i, 1, r.label, NULL, NULL, NULL, NULL, NULL, r.seq, r.entries FROM ${labels} ` +
          `CROSS JOIN LATERAL (SELECT r.label, r.seq, r.entries FROM ${tables.vrfProofRows} r ` +
          `WHERE r.label = u.label ORDER BY r.seq OFFSET 0) r ORDER BY 1, 2, seq`,
      };
    }),
    olderVrfProofs: {
      name: name('older_vrf_proofs'),
      text: `SELECT EXISTS (SELECT 1 FROM ${tables.vrfProofs}) AS older`,
    },
    settingGet: {
      name: name('setting_get'),
      text: `SELECT name, value FROM ${tables.settings} WHERE name = $1`,
    },
    settingSet: {
      name: name('setting_set'),
      text:
        `INSERT INTO ${tables.settings} (name, value) VALUES ($1, $2) ` +
        `ON CONFLICT (name) DO UPDATE SET value = EXCLUDED.value`,
    },
    auditBlobHead: {
      name: name('audit_blob_head'),
      text:
        `SELECT epoch, previous_hash, current_hash, size, octet_length(data) AS stored ` +
        `FROM ${tables.auditBlobs} WHERE epoch = $1`,
    },
    auditBlobPiece: {
      name: name('audit_blob_piece'),
      text: `SELECT substring(data from $2 for $3) AS data FROM ${tables.auditBlobs} WHERE epoch = $1`,
    },
    auditBlobInfos: {
      name: name('audit_blob_infos'),
      text:
        `SELECT b.epoch, b.previous_hash, b.current_hash, b.size FROM unnest($1::int8[]) AS k(epoch) ` +
        `JOIN ${tables.auditBlobs} b ON b.epoch = k.epoch ORDER BY b.epoch`,
    },
    auditBlobSet: {
      name: name('audit_blob_set'),
      text:
        `INSERT INTO ${tables.auditBlobs} (epoch, previous_hash, current_hash, size, data) ` +
        `VALUES ($1, $2, $3, $4, $5) ON CONFLICT (epoch) DO UPDATE SET ` +
        `previous_hash = EXCLUDED.previous_hash, current_hash = EXCLUDED.current_hash, ` +
        `size = EXCLUDED.size, data = EXCLUDED.data`,
    },
    usernamesFirst: {
      name: name('usernames_first'),
      text: usernamesSql(tables.valueStates, 'first'),
    },
    usernamesAfter: {
      name: name('usernames_after'),
      text: usernamesSql(tables.valueStates, 'after'),
    },
    vrfProofRead: { name: name('vrf_proof_read'), text: vrfProofReadSql(tables) },
    vrfProofInsert: { name: name('vrf_proof_insert'), text: vrfProofInsertSql(tables) },
  };
}
