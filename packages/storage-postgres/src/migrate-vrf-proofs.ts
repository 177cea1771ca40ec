/**
 * `migrateVrfProofRows`: the move of a store's VRF proofs to `vrf_proof_rows` as one call (a
 * command's body): opens the store without creating it (migrating its schema to this
 * driver's), moves them (`PostgresDatabase.migrateVrfProofRows`) and closes it.
 */

import type pg from 'pg';
import type { PostgresDatabaseOptions } from './options.js';
import { PostgresDatabase } from './postgres-database.js';
import type { VrfProofMigrationOptions, VrfProofMigrationResult } from './vrf-proof-move.js';

/**
 * Moves the VRF proofs that the store in `options.schema` kept before schema version 7 to
 * `vrf_proof_rows`, going on from a run that stopped. Stop the writer first: the move takes
 * the writer lock. Readers may go on reading.
 * @throws AkdError `STORAGE_SCHEMA` when the schema holds no store, `STORAGE_LOCKED` while a
 * writer holds the lock, `STORAGE_CORRUPT` for a row that does not decode
 * @example
 * ```ts
 * await migrateVrfProofRows(process.env.DATABASE_URL!, {
 *   schema: 'akd',
 *   onProgress: ({ moved, total }) => console.log(`${moved} / ${total}`),
 * });
 * ```
 */
export async function migrateVrfProofRows(
  connection: string | pg.PoolConfig,
  options: Omit<PostgresDatabaseOptions, 'create' | 'nodeLayout'> & VrfProofMigrationOptions = {},
): Promise<VrfProofMigrationResult> {
  const { chunkLabels, onProgress, ...open } = options;
  const db = await PostgresDatabase.open(connection, { ...open, create: false });
  try {
    return await db.migrateVrfProofRows({ chunkLabels, onProgress });
  } finally {
    await db.close();
  }
}
