/**
 * The schema the driver creates and the migrations that bring older stores up to date.
 * `SCHEMA_SQL` mirrors `schema.sql` character for character (a test checks it), so the driver
 * needs no file lookup at run time and works the same from src/ (tsx), dist/ or a bundle.
 *
 * To change the schema: bump `SCHEMA_VERSION`, make schema.sql (and this copy) the complete new
 * schema with the new version in its last line, and add the migration from the previous
 * version to `MIGRATIONS`. Fresh stores run the schema; older stores run the migrations.
 */

/** The schema version this driver writes and reads. */
export const SCHEMA_VERSION = 7;

/** One step of the schema: statements taking version `version - 1` to `version`. */
export interface Migration {
  version: number;
  /** Runs with search_path set to the directory's schema, in the migration transaction. */
  sql: string;
}

/**
 * The write epoch of the version of the child in column `child` of row `n` visible at epoch
 * `at` (a column of `n`): spec 9.2's rule, the child row's latest version when written at or
 * before it, else its previous version when that one was, else (or without such a row) NULL.
 * One primary-key probe per child, so that the update scans the table in order and rewrites
 * each row where it reads it. An UPDATE ... FROM joining the table with itself was slower: its
 * hash joins, in batches once the table outgrows work_mem, return the rows out of order, and
 * the update then reads and writes the table at random (2,000,000 rows on the test machine:
 * 38-42 s probing, 52-80 s joined). A migration's text is its own, not built from the
 * driver's queries: a later change to those must not change what a step did.
 */
function childEpochAt(child: string, at: string): string {
  return (
    `(SELECT CASE WHEN c.last_epoch <= n.${at} THEN c.last_epoch ` +
    `WHEN c.p_last_epoch <= n.${at} THEN c.p_last_epoch END ` +
    `FROM nodes c WHERE c.label = n.${child})`
  );
}

/**
 * Version 4: the child epochs of each node version (schema.sql), filled in for the rows there
 * are. Only rows with a child are rewritten: a leaf's epochs stay NULL, as adding the columns
 * left them, without a new row version.
 */
const CHILD_EPOCHS_SQL = `ALTER TABLE nodes ADD COLUMN left_epoch bigint, ADD COLUMN right_epoch bigint,
  ADD COLUMN p_left_epoch bigint, ADD COLUMN p_right_epoch bigint;
UPDATE nodes n SET
  left_epoch = ${childEpochAt('left_child', 'last_epoch')},
  right_epoch = ${childEpochAt('right_child', 'last_epoch')},
  p_left_epoch = ${childEpochAt('p_left_child', 'p_last_epoch')},
  p_right_epoch = ${childEpochAt('p_right_child', 'p_last_epoch')}
WHERE n.left_child IS NOT NULL OR n.right_child IS NOT NULL
  OR n.p_left_child IS NOT NULL OR n.p_right_child IS NOT NULL;`;

/**
 * Version 5: the layout of node versions (schema.sql), which a store takes only when created
 * with it or migrated to it (layout-migration.ts): every store migrated here stays on records.
 */
const NODE_VERSIONS_SQL = `ALTER TABLE schema_version
  ADD COLUMN node_layout text NOT NULL DEFAULT 'records' CHECK (node_layout IN ('records', 'versions')),
  ADD COLUMN layout_copied bytea,
  ADD COLUMN layout_copied_epoch bigint;
CREATE TABLE node_versions (
  epoch bigint NOT NULL,
  label bytea NOT NULL,
  data bytea NOT NULL,
  PRIMARY KEY (epoch, label) WITH (fillfactor = 100)
) WITH (fillfactor = 100);
CREATE INDEX node_versions_roots ON node_versions (epoch) WHERE label = decode('0000', 'hex');`;

/**
 * Steps from older versions, in order (version 1 is the first published schema). Version 2
 * adds the audit_blobs table; epochs published before it have no stored blob until the
 * writer server fills them in. Version 3 adds vrf_proofs (VRF proofs stored at publish; versions
 * published before it have none until `akd vrf backfill` computes them). Version 4 adds the
 * child epochs of tree nodes, computed from the stored rows. Version 5 adds the versions layout's
 * table, empty, and the column naming a store's layout. Version 6 adds vrf_nonces, empty: the
 * nonces already stored stay inline in their vrf_proofs rows, which reads still take. Version 7
 * adds vrf_proof_rows, empty, and its sequence: the proofs already stored stay in vrf_proofs
 * and vrf_nonces, which reads still take, until `migrateVrfProofRows` moves them a chunk at a
 * time (moved here, a large store's proofs would all be rewritten in the one transaction of
 * the writer's open, with nothing kept of it if it stopped).
 */
export const MIGRATIONS: readonly Migration[] = [
  {
    version: 2,
    sql: `CREATE TABLE audit_blobs (
  epoch bigint PRIMARY KEY,
  previous_hash bytea NOT NULL,
  current_hash bytea NOT NULL,
  size integer NOT NULL,
  data bytea NOT NULL
);`,
  },
  {
    version: 3,
    sql: `CREATE TABLE vrf_proofs (
  key bytea PRIMARY KEY,
  value bytea NOT NULL
);`,
  },
  { version: 4, sql: CHILD_EPOCHS_SQL },
  { version: 5, sql: NODE_VERSIONS_SQL },
  {
    version: 6,
    sql: `CREATE TABLE vrf_nonces (
  key bytea PRIMARY KEY,
  nonce bytea NOT NULL
);`,
  },
  {
    version: 7,
    sql: `CREATE TABLE vrf_proof_rows (
  label bytea NOT NULL,
  seq bigint NOT NULL,
  entries bytea NOT NULL,
  PRIMARY KEY (label, seq)
);
CREATE SEQUENCE vrf_proof_rows_seq;`,
  },
];

/** The contents of schema.sql. */
export const SCHEMA_SQL = `-- akd-ts PostgreSQL schema, version 7 (@akd-ts/storage-postgres).
--
-- The driver runs this file in one transaction after CREATE SCHEMA IF NOT EXISTS <schema>
-- and SET LOCAL search_path TO <schema>, so every directory gets its own PostgreSQL schema.
-- By hand: psql -c 'CREATE SCHEMA akd' && PGOPTIONS='-c search_path=akd' psql -f schema.sql
--
-- Plain tables, standard types and INSERT ... ON CONFLICT upserts only: no functions,
-- triggers or extensions, so PostgreSQL-compatible distributed databases (YugabyteDB,
-- CockroachDB) accept it too. Integers that are u64 in the API are bigint here: the driver
-- stores 0 .. 2^63 - 1 and refuses larger values.

-- The schema version: the driver migrates older versions and refuses newer ones.
--
-- node_layout (version 5) is how the store keeps tree nodes: 'records' in the nodes table,
-- or 'versions' in node_versions, chosen when the store is created and changed only by a
-- migration of the layout, which keeps its position in layout_copied (the last nodes label
-- copied) and layout_copied_epoch (the store's epoch then), both NULL when none is under way.
CREATE TABLE IF NOT EXISTS schema_version (
  id smallint PRIMARY KEY CHECK (id = 1),
  version integer NOT NULL,
  node_layout text NOT NULL DEFAULT 'records' CHECK (node_layout IN ('records', 'versions')),
  layout_copied bytea,
  layout_copied_epoch bigint
);

-- The AZKS record (spec 7.4): a single row. Readers poll it for new epochs.
CREATE TABLE IF NOT EXISTS azks (
  id smallint PRIMARY KEY CHECK (id = 1),
  latest_epoch bigint NOT NULL,
  num_nodes bigint NOT NULL
);

-- Tree nodes (spec 9.2): the latest version and at most one previous version side by side,
-- as in upstream's MySQL schema (spec 14.8). Every label is stored as its 36-byte key
-- be32(label_len) || label_val, so one bytea column is the primary key and a batch read is
-- one join of the key array with it. The p_* columns are all NULL when there is no previous version; a
-- child column is NULL when the child is absent.
--
-- left_epoch and right_epoch (version 4; p_left_epoch and p_right_epoch for the previous
-- version) are the last_epoch of the child's version that the node version was hashed with:
-- the child's version visible at the node version's last_epoch (spec 9.2), NULL without the
-- child or when none of its versions is visible then. A node version's last_epoch is the
-- epoch that wrote it, so a walk from the root can name every node version it reads by label
-- and write epoch: the groundwork for storing node versions by epoch. A child epoch set while
-- its child is NULL is corrupt.
CREATE TABLE IF NOT EXISTS nodes (
  label bytea PRIMARY KEY,
  last_epoch bigint NOT NULL,
  min_descendant_epoch bigint NOT NULL,
  parent bytea NOT NULL,
  node_type smallint NOT NULL, -- 1 Leaf, 2 Root, 3 Interior
  left_child bytea,
  right_child bytea,
  hash bytea NOT NULL,
  p_last_epoch bigint,
  p_min_descendant_epoch bigint,
  p_parent bytea,
  p_node_type smallint,
  p_left_child bytea,
  p_right_child bytea,
  p_hash bytea,
  left_epoch bigint,
  right_epoch bigint,
  p_left_epoch bigint,
  p_right_epoch bigint
);

-- Tree nodes of the 'versions' layout (version 5): every version of a node under its write
-- epoch (its last_epoch) and label, so that an epoch appends its own versions to the end of
-- the table and its index instead of rewriting rows spread over the whole of nodes. A walk
-- from the root reads each child by the write epoch its parent records; no read is by label
-- alone, so there is no other index but the roots' (the store's epoch is its newest root).
-- label is u8 hi || u8 lo || bytes (length (hi & 1) << 8 | lo, the first ceil(len / 8) of
-- its 32 bytes, all 32 with bit 0x80 of hi where the rest are not zero); data is the rest of
-- the version: u8 node_type << 2 | 1 (left child) | 2 (right child), each child present as
-- its label and write epoch, the least descendant epoch, the parent's label, the 32-byte
-- hash, where an epoch is u8 n || n bytes big-endian (eight 0xff: a child none of whose
-- versions is visible). Rows are never updated (fill factor 100). A store of this layout has
-- no nodes table.
CREATE TABLE IF NOT EXISTS node_versions (
  epoch bigint NOT NULL,
  label bytea NOT NULL,
  data bytea NOT NULL,
  PRIMARY KEY (epoch, label) WITH (fillfactor = 100)
) WITH (fillfactor = 100);
CREATE INDEX IF NOT EXISTS node_versions_roots ON node_versions (epoch)
  WHERE label = decode('0000', 'hex');

-- Value states (spec 9.1): one row per user and epoch. Every read is by the primary key or
-- its username prefix (all states, latest at <= e, a version), so no other index is needed.
CREATE TABLE IF NOT EXISTS value_states (
  username bytea NOT NULL,
  epoch bigint NOT NULL,
  version bigint NOT NULL,
  node_label_len integer NOT NULL,
  node_label_val bytea NOT NULL,
  value bytea NOT NULL, -- empty once tombstoned (spec 14.6)
  PRIMARY KEY (username, epoch)
);

-- Named settings of the store, such as the directory's configuration.
CREATE TABLE IF NOT EXISTS settings (
  name text PRIMARY KEY,
  value text NOT NULL
);

-- Audit blobs (spec 16), one per published epoch step: the protobuf SingleAppendOnlyProof of
-- the step epoch - 1 -> epoch and the root hashes naming it, written by the publish of that
-- epoch (version 2). size repeats length(data) so that a listing never reads the blobs.
CREATE TABLE IF NOT EXISTS audit_blobs (
  epoch bigint PRIMARY KEY,
  previous_hash bytea NOT NULL,
  current_hash bytea NOT NULL,
  size integer NOT NULL,
  data bytea NOT NULL
);

-- Stored VRF proofs as a store of version 3 to 6 kept them, one row per proof: key is
-- freshness u8 || be64(version) || label, value the 80-byte ECVRF proof (spec 5.3), see
-- @akd-ts/storage vrf-proofs.ts. Rows written before version 6 may hold the version's 32-byte
-- commitment nonce (spec 6) after the proof; since then nonces went to vrf_nonces, whose nonce
-- for a key is read in place of an inline one. Since version 7 nothing is written here: the
-- rows of a store migrated from an older version stay, read as older than every row of
-- vrf_proof_rows, until migrateVrfProofRows moves them there; a store created since has none.
CREATE TABLE IF NOT EXISTS vrf_proofs (
  key bytea PRIMARY KEY,
  value bytea NOT NULL
);

-- Commitment nonces of the VRF proofs of vrf_proofs (version 6 alone wrote here): the 32-byte
-- nonce (spec 6) of the fresh proof of a published version, under the key of that proof in
-- vrf_proofs, kept until migrateVrfProofRows moves them with their proofs.
CREATE TABLE IF NOT EXISTS vrf_nonces (
  key bytea PRIMARY KEY,
  nonce bytea NOT NULL
);

-- Stored VRF proofs (version 7): a row per label and write, whose entries are what that write
-- stored for the label, in the layout of @akd-ts/storage vrf-proof-rows.ts (each entry its
-- freshness, version, 80-byte proof and, for a published version's fresh proof, its 32-byte
-- commitment nonce). A publish stores a new label's proofs together, so the label, the tuple
-- header and the index entry are paid once per label and write, not once per proof. Rows are
-- only inserted: a read takes every row of its labels in seq order, a later row's nonce
-- winning over an earlier one's (a record without a nonce erases none). seq is the next value
-- of vrf_proof_rows_seq, growing with every write; the rows migrateVrfProofRows moves here
-- from vrf_proofs take seqs below zero, older than every row written since.
CREATE TABLE IF NOT EXISTS vrf_proof_rows (
  label bytea NOT NULL,
  seq bigint NOT NULL,
  entries bytea NOT NULL,
  PRIMARY KEY (label, seq)
);
CREATE SEQUENCE IF NOT EXISTS vrf_proof_rows_seq;

INSERT INTO schema_version (id, version) VALUES (1, 7) ON CONFLICT (id) DO NOTHING;
`;
