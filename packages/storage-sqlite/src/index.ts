/**
 * @akd-ts/storage-sqlite: the embedded default store of akd-ts, a `Database` in one SQLite
 * file (better-sqlite3, WAL mode, durable commits, a cross-process writer lock). See README.md.
 */

export { SqliteDatabase, DEFAULT_SQLITE_PATH } from './sqlite-database.js';
export type { SqliteDatabaseOptions, SynchronousMode } from './options.js';
export { openBetterSqlite } from './client.js';
export type { SqliteClient, SqliteClientFactory, SqliteStatement } from './client.js';
export { SCHEMA_VERSION, APPLICATION_ID } from './schema.js';
export { writerLockPath } from './writer-lock.js';
export { migrateNodeLayout } from './layout-migration.js';
export type {
  MigrateNodeLayoutOptions,
  NodeLayoutMigrationProgress,
  NodeLayoutMigrationResult,
} from './layout-migration.js';
export { migrateVrfProofRows } from './vrf-proof-move.js';
export type {
  VrfProofMigrationOptions,
  VrfProofMigrationProgress,
  VrfProofMigrationResult,
} from './vrf-proof-move.js';
