/**
 * @akd-ts/storage-postgres: the PostgreSQL driver of akd-ts. `PostgresDatabase` implements the
 * storage seam over a pg pool, ships its schema (schema.sql) and migrates it by version.
 */

export { PostgresDatabase } from './postgres-database.js';
export type { PostgresDatabaseOptions } from './options.js';
export { migrateNodeLayout } from './migrate-layout.js';
export type {
  LayoutMigrationOptions,
  LayoutMigrationProgress,
  LayoutMigrationResult,
} from './layout-migration.js';
export { migrateVrfProofRows } from './migrate-vrf-proofs.js';
export type {
  VrfProofMigrationOptions,
  VrfProofMigrationProgress,
  VrfProofMigrationResult,
} from './vrf-proof-move.js';
export type { WriterFence } from './fencing.js';
export { FENCE_SETTING } from './fencing.js';
export type { PromoteOptions, PromoteResult } from './promote.js';
export type {
  PgConnections,
  PgPool,
  PgPoolClient,
  PgSessionClient,
  PgQuery,
  PgQueryable,
  PgResult,
  PgRow,
} from './client.js';
export { SCHEMA_VERSION, SCHEMA_SQL } from './schema.js';
export { writerLockKey } from './writer-lock.js';
