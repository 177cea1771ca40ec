/**
 * Opening a store's schema: create it when absent, migrate it when older, refuse it when newer
 * than this driver. The schema version lives in the one-row `schema_version` table. All of it
 * runs in one transaction, so a failed migration leaves the store as it was; concurrent
 * openers of a fresh schema race on the catalog, and the losers retry and find it created.
 */

import { AkdError } from '@akd-ts/core';
import type { NodeLayout } from '@akd-ts/storage';
import { inTransaction, storageError, type PgPool, type PgQueryable } from './client.js';
import { quoteIdent } from './queries.js';
import { MIGRATIONS, SCHEMA_SQL, SCHEMA_VERSION, type Migration } from './schema.js';

export interface SchemaPlan {
  /** Create or migrate (true), or only check the version (false: readers on replicas). */
  migrate: boolean;
  /** With `migrate`: create the tables when absent (default true), else refuse the schema. */
  create?: boolean;
  /**
   * How a store created now keeps tree nodes (default `records`). An existing store keeps
   * its own: `readNodeLayout` tells which.
   */
  layout?: NodeLayout;
  /** The version to reach and the steps there (tests pass their own). */
  version?: number;
  migrations?: readonly Migration[];
  schemaSql?: string;
}

/** Errors a concurrent creator of the same schema can cause; the open is simply retried. */
const RACE_STATES = new Set(['23505', '42P06', '42P07', '40001', '40P01']);
const ATTEMPTS = 4;
/** SQLSTATE read_only_sql_transaction: a write on a hot standby. */
const READ_ONLY_STATE = '25006';

function schemaError(message: string): AkdError {
  return new AkdError('STORAGE_SCHEMA', message);
}

async function readVersion(
  q: PgQueryable,
  schema: string,
  forUpdate = false,
): Promise<number | undefined> {
  const { rows } = await q.query({
    text:
      `SELECT version FROM ${quoteIdent(schema)}.schema_version WHERE id = 1` +
      (forUpdate ? ' FOR UPDATE' : ''),
  });
  if (rows.length === 0) return undefined;
  const v = rows[0]!.version;
  if (typeof v !== 'number' || !Number.isInteger(v)) {
    throw schemaError(`${schema}.schema_version holds ${String(v)}, not a schema version`);
  }
  return v;
}

function checkNotNewer(schema: string, found: number, known: number): void {
  if (found > known) {
    throw schemaError(
      `schema "${schema}" is at version ${found}, newer than version ${known} that this ` +
        `driver knows: upgrade @akd-ts/storage-postgres`,
    );
  }
}

/** Creates or migrates inside the caller's transaction; returns the version reached. */
async function createOrMigrate(
  client: PgQueryable,
  schema: string,
  target: number,
  migrations: readonly Migration[],
  schemaSql: string,
  create: boolean,
  layout: NodeLayout,
): Promise<number> {
  await client.query({ text: `CREATE SCHEMA IF NOT EXISTS ${quoteIdent(schema)}` });
  await client.query({ text: `SET LOCAL search_path TO ${quoteIdent(schema)}` });
  const { rows } = await client.query({
    text:
      `SELECT 1 FROM information_schema.tables ` +
      `WHERE table_schema = $1 AND table_name = 'schema_version'`,
    values: [schema],
  });
  if (rows.length === 0) {
    // thrown inside the transaction: the CREATE SCHEMA above is rolled back with it
    if (!create)
      throw schemaError(
        `schema "${schema}" has no akd tables (a store is created only on request)`,
      );
    await client.query({ text: schemaSql });
    if (layout === 'versions') {
      // a store of versions keeps no records, and a driver that reads them finds no table
      await client.query({ text: `UPDATE schema_version SET node_layout = 'versions'` });
      await client.query({ text: 'DROP TABLE nodes' });
    }
    return target;
  }
  // FOR UPDATE: a concurrent migrator waits here for this transaction, then sees its result
  let version = await readVersion(client, schema, true);
  if (version === undefined) throw schemaError(`${schema}.schema_version has no row`);
  checkNotNewer(schema, version, target);
  while (version < target) {
    const next: number = version + 1;
    const step = migrations.find((m) => m.version === next);
    if (step === undefined) {
      throw schemaError(
        `schema "${schema}" is at version ${version}, and this driver has no migration ` +
          `to version ${next}`,
      );
    }
    await client.query({ text: step.sql });
    await client.query({
      text: `UPDATE schema_version SET version = $1 WHERE id = 1`,
      values: [step.version],
    });
    version = step.version;
  }
  return version;
}

/**
 * Checks, without writing, that `schema` holds the driver's tables at version `target`: the
 * open of a reader, and of any store on a hot standby (which refuses every write).
 */
async function checkSchema(pool: PgPool, schema: string, target: number): Promise<number> {
  let found: number | undefined;
  try {
    found = await readVersion(pool, schema);
  } catch (e) {
    const mapped = storageError(e, 'reading the schema version');
    if (mapped instanceof AkdError && mapped.code === 'STORAGE_SCHEMA') {
      throw schemaError(
        `schema "${schema}" has no akd tables: open it once with migration enabled, on the ` +
          `primary (${mapped.message})`,
      );
    }
    throw mapped;
  }
  if (found === undefined) throw schemaError(`${schema}.schema_version has no row`);
  checkNotNewer(schema, found, target);
  if (found < target) {
    throw schemaError(
      `schema "${schema}" is at version ${found} and this driver needs ${target}: open it ` +
        `with migration enabled (a writer, on the primary) to migrate it`,
    );
  }
  return found;
}

/**
 * Makes sure `schema` holds this driver's tables at its version and returns that version.
 * @throws AkdError `STORAGE_SCHEMA` when the store is newer than the driver, has no migration
 * path, or (without `migrate`) is missing or older, or (without `create`) is missing; `STORAGE_CONNECTION` when unreachable.
 */
export async function prepareSchema(
  pool: PgPool,
  schema: string,
  plan: SchemaPlan,
): Promise<number> {
  const target = plan.version ?? SCHEMA_VERSION;
  if (!plan.migrate) return checkSchema(pool, schema, target);
  const migrations = plan.migrations ?? MIGRATIONS;
  const schemaSql = plan.schemaSql ?? SCHEMA_SQL;
  for (let attempt = 1; ; attempt++) {
    try {
      return await inTransaction(pool, 'BEGIN', (client) =>
        createOrMigrate(
          client,
          schema,
          target,
          migrations,
          schemaSql,
          plan.create ?? true,
          plan.layout ?? 'records',
        ),
      );
    } catch (e) {
      const state = (e as { code?: unknown }).code;
      // a hot standby refuses writes (read_only_sql_transaction): its schema comes from the
      // primary by replication, so check it as a reader does
      if (state === READ_ONLY_STATE) return checkSchema(pool, schema, target);
      if (attempt < ATTEMPTS && typeof state === 'string' && RACE_STATES.has(state)) continue;
      throw storageError(e, `preparing schema "${schema}"`, true);
    }
  }
}

/** How a store keeps tree nodes, and the position of a migration of its layout under way. */
export interface LayoutState {
  layout: NodeLayout;
  /** The last `nodes` label a migration to versions copied; undefined when none is under way. */
  copied: Uint8Array | undefined;
  /** The store's epoch when it copied that far. */
  copiedEpoch: bigint | undefined;
}

/**
 * The layout of the store in `schema` (at this driver's version).
 * @throws AkdError `STORAGE_SCHEMA` when the row names no layout this driver knows
 */
export async function readNodeLayout(q: PgQueryable, schema: string): Promise<LayoutState> {
  let rows;
  try {
    ({ rows } = await q.query({
      text:
        `SELECT node_layout, layout_copied, layout_copied_epoch::text AS copied_epoch ` +
        `FROM ${quoteIdent(schema)}.schema_version WHERE id = 1`,
    }));
  } catch (e) {
    throw storageError(e, 'reading the node layout');
  }
  const row = rows[0];
  if (row === undefined) throw schemaError(`${schema}.schema_version has no row`);
  const layout = row.node_layout;
  if (layout !== 'records' && layout !== 'versions') {
    throw schemaError(`${schema}.schema_version names node layout ${String(layout)}`);
  }
  const copied = row.layout_copied;
  const epoch = row.copied_epoch;
  return {
    layout,
    copied: copied instanceof Uint8Array ? copied : undefined,
    copiedEpoch: typeof epoch === 'string' ? BigInt(epoch) : undefined,
  };
}
