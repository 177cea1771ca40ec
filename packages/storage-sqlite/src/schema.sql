-- akd-ts SQLite store, schema version 10 (PRAGMA user_version = 10,
-- PRAGMA application_id = 0x616b6474, "akdt").
--
-- The driver runs this file (mirrored in schema-sql.ts) in one transaction to create a
-- fresh store, and the MIGRATIONS of schema.ts to bring an older one up to date. Tables are
-- STRICT (SQLite enforces the column types) and WITHOUT ROWID (the primary key is the table's
-- b-tree key).
--
-- Node labels are 36-byte BLOBs: be32(label_len) || label_val (32 bytes), the NodeLabel
-- to_bytes() layout of spec 3.1. All 32 bytes are kept, since two labels that differ only in
-- bits beyond their length are still different labels (spec 4.1).
-- Epochs, versions and counts are u64 in the protocol and INTEGER (signed 64-bit) here: the
-- driver stores 0 ..= 2^63 - 1 and refuses anything larger.

-- How the store keeps tree nodes (schema version 7; database.ts NodeLayout): 'records' in
-- the nodes table below, or 'versions' in node_versions and node_roots instead (schema.ts
-- VERSIONS_TABLES_SQL, with nodes dropped). A store keeps the layout it was created with;
-- migrateNodeLayout (layout-migration.ts) moves a store of records to versions.
CREATE TABLE node_layout (
  id INTEGER NOT NULL PRIMARY KEY CHECK (id = 1),
  layout TEXT NOT NULL CHECK (layout IN ('records', 'versions'))
) STRICT;
INSERT INTO node_layout (id, layout) VALUES (1, 'records');

-- One row per tree node: its latest version and at most one previous version (spec 9.2),
-- after the MySQL example of spec 14.8. The previous version exists iff p_last_epoch is not
-- NULL (then every p_ column but the children and their epochs must be set); its label is the
-- row's label.
--
-- left_epoch and right_epoch (schema version 6, hence last) are the write epochs of the
-- children this version was hashed with: the last_epoch of each child's version visible at
-- this version's last_epoch (the child's latest version if not newer, else its previous one if
-- not newer). NULL without the child or when none of its versions is visible then; set while
-- the child is NULL is corrupt. A node's last_epoch is the epoch that wrote it, so with them a
-- walk from the root can name every node version it reads by label and write epoch: the
-- groundwork for storing node versions by epoch instead of by label.
CREATE TABLE nodes (
  label BLOB NOT NULL PRIMARY KEY,
  last_epoch INTEGER NOT NULL,
  min_descendant_epoch INTEGER NOT NULL,
  parent BLOB NOT NULL,
  node_type INTEGER NOT NULL, -- 1 Leaf, 2 Root, 3 Interior
  left_child BLOB,
  right_child BLOB,
  hash BLOB NOT NULL,
  p_last_epoch INTEGER,
  p_min_descendant_epoch INTEGER,
  p_parent BLOB,
  p_node_type INTEGER,
  p_left_child BLOB,
  p_right_child BLOB,
  p_hash BLOB,
  left_epoch INTEGER,
  right_epoch INTEGER,
  p_left_epoch INTEGER,
  p_right_epoch INTEGER
) STRICT, WITHOUT ROWID;

-- One row per published version of a user's value (spec 9.1 ValueState), clustered by the
-- epoch that wrote it (schema version 9): an epoch's rows follow every older epoch's in the
-- b-tree and a publish appends them to pages of their own, where a key by user put one row
-- in almost every page of the table. value_states_by_user orders them by user: every
-- per-user query (all states, the latest at or before an epoch, a given version) is a range
-- of it, then a probe of the primary key for the row. Its entries hold the username and the
-- epoch only, so it is the one structure an epoch writes all over, a quarter of the pages.
CREATE TABLE value_states (
  username BLOB NOT NULL,
  epoch INTEGER NOT NULL,
  version INTEGER NOT NULL,
  node_label BLOB NOT NULL,
  value BLOB NOT NULL,
  PRIMARY KEY (epoch, username)
) STRICT, WITHOUT ROWID;
CREATE INDEX value_states_by_user ON value_states (username, epoch);

-- The single AZKS record (spec 7.4).
CREATE TABLE azks (
  id INTEGER NOT NULL PRIMARY KEY CHECK (id = 1),
  latest_epoch INTEGER NOT NULL,
  num_nodes INTEGER NOT NULL
) STRICT;

-- Named settings of the store, such as the directory's configuration (schema version 2).
CREATE TABLE settings (
  name TEXT NOT NULL PRIMARY KEY,
  value TEXT NOT NULL
) STRICT, WITHOUT ROWID;

-- Audit blobs (spec 16), one per published epoch step: the protobuf SingleAppendOnlyProof of
-- the step epoch - 1 -> epoch and the two root hashes naming it, written by the publish of
-- that epoch (schema version 3). size is the blob's length, so that a listing never reads
-- the blobs themselves. data holds its first part; since schema version 5 a blob of more than
-- one part (1 MiB each) has the others in audit_blob_parts, numbered from 1, each full but
-- the last: binding a whole blob of tens of megabytes to one statement would have SQLite copy
-- it twice over (the parameter, then the record). A blob written before is one part.
CREATE TABLE audit_blobs (
  epoch INTEGER NOT NULL PRIMARY KEY,
  previous_hash BLOB NOT NULL,
  current_hash BLOB NOT NULL,
  size INTEGER NOT NULL,
  data BLOB NOT NULL
) STRICT;

CREATE TABLE audit_blob_parts (
  epoch INTEGER NOT NULL,
  part INTEGER NOT NULL,
  data BLOB NOT NULL,
  PRIMARY KEY (epoch, part)
) STRICT;

-- Stored VRF proofs before schema version 10 (added in version 4): key is freshness u8 || be64(version) || label, value
-- the 80-byte ECVRF proof (spec 5.3). See @akd-ts/storage vrf-proofs.ts. Before schema
-- version 8 the fresh proof of a published version was followed by the version's 32-byte
-- commitment nonce (spec 6) in value (112 bytes); such rows stay valid and are never
-- rewritten to move it.
CREATE TABLE vrf_proofs (
  key BLOB NOT NULL PRIMARY KEY,
  value BLOB NOT NULL
) STRICT, WITHOUT ROWID;

-- The commitment nonce of a published version (schema version 8), under its fresh proof's
-- key; it wins over a nonce in the proof's value. A version's proof is stored as a marker
-- long before the version is published, and the nonce arrives then: kept apart, it is one
-- new row here instead of a rewrite of the proof's row, whose pages (one proof per label,
-- spread over the whole key range) an epoch would otherwise dirty by the thousand.
CREATE TABLE vrf_nonces (
  key BLOB NOT NULL PRIMARY KEY,
  nonce BLOB NOT NULL
) STRICT, WITHOUT ROWID;

-- Stored VRF proofs (schema version 10): one row per label and write, the value the entries
-- that write stored for the label (@akd-ts/storage vrf-proof-rows.ts: tag, version, the
-- 80-byte proof of spec 5.3, the 32-byte nonce of spec 6 when there is one). seq grows with
-- time for a label: a later row's nonce wins. Rows a store held in vrf_proofs and vrf_nonces
-- count as older than every row here, until `akd vrf migrate` moves them here (with seq
-- below 0). A label's proofs, spread over the whole key range of vrf_proofs, are together
-- here: one key and one row's costs per label and epoch instead of one per proof.
CREATE TABLE vrf_proof_rows (
  label BLOB NOT NULL,
  seq INTEGER NOT NULL,
  entries BLOB NOT NULL,
  PRIMARY KEY (label, seq)
) STRICT, WITHOUT ROWID;
