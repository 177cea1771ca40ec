/**
 * `migrateNodeLayout`: the migration of a store's node layout as one call (a command's
 * body): opens the store without creating it, migrates it (`PostgresDatabase.migrateNodeLayout`)
 * and closes it.
 */

import type pg from 'pg';
import type { LayoutMigrationOptions, LayoutMigrationResult } from './layout-migration.js';
import type { PostgresDatabaseOptions } from './options.js';
import { PostgresDatabase } from './postgres-database.js';

/**
 * Moves the store in `options.schema` from records to the versions layout, resuming a run
 * that stopped. Stop the writer first: the migration takes the writer lock.
 * @throws AkdError `STORAGE_SCHEMA` when the schema holds no store, `STORAGE_LOCKED` while a
 * writer holds the lock
 * @example
 * ```ts
 * await migrateNodeLayout(process.env.DATABASE_URL!, {
 *   schema: 'akd',
 *   onProgress: ({ labels, estimatedLabels }) => console.log(`${labels} / ~${estimatedLabels}`),
 * });
 * ```
 */
export async function migrateNodeLayout(
  connection: string | pg.PoolConfig,
  options: Omit<PostgresDatabaseOptions, 'create' | 'nodeLayout'> & LayoutMigrationOptions = {},
): Promise<LayoutMigrationResult> {
  const { chunkSize, onProgress, ...open } = options;
  const db = await PostgresDatabase.open(connection, { ...open, create: false });
  try {
    return await db.migrateNodeLayout({ chunkSize, onProgress });
  } finally {
    await db.close();
  }
}
