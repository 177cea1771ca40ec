/**
 * The options of a PostgresDatabase, their defaults, and their checks (made before anything
 * connects).
 */

import type { NodeLayout } from '@akd-ts/storage';

export interface PostgresDatabaseOptions {
  /**
   * The PostgreSQL schema holding the tables (default `akd`): lower-case letters, digits and
   * `_`, at most 63 characters. Directories in different schemas share a database safely.
   */
  schema?: string;
  /** Connections in the pool the driver creates (default 10). Unused with an injected pool. */
  poolSize?: number;
  /** Rows per upsert statement in `batchSet` (default 5,000). */
  writeChunkSize?: number;
  /** Keys per read statement in `batchGet` and `getUserStateVersions` (default 10,000). */
  readChunkSize?: number;
  /**
   * Create the schema when absent and migrate an older one (default true). Readers on read
   * replicas pass false: they only check that the schema is there at this driver's version.
   */
  migrate?: boolean;
  /**
   * With `migrate`, whether a schema without the driver's tables may be created (default
   * true). A writer that must find an existing store (`akd publish`) passes false: a mistyped
   * schema name is then refused and nothing is created, while an older store still migrates.
   */
  create?: boolean;
  /**
   * How tree nodes are kept (`Database.nodeLayout`): a store created by this open takes it
   * (default `records`); an existing store keeps its own, and an open naming another layout
   * is refused (`STORAGE_SCHEMA`). Left out, the store's own is used. A store of records
   * changes to versions only by `migrateNodeLayout`.
   */
  nodeLayout?: NodeLayout;
  /** `application_name` of the driver's connections (default `akd-ts`). */
  applicationName?: string;
  /**
   * How a writer lock whose connection died is taken again: first retry after `retryMs`
   * (default 100, doubling up to 5 s), given up after `windowMs` (default 60,000).
   */
  lockRecovery?: { retryMs?: number; windowMs?: number };
  /**
   * While it holds the writer lock, how often the database reads the writer fence, ms
   * (default 5,000; 0: never). A store fenced (`akd fence`) or claimed by another writer then
   * makes the lock lost for good within that time, without waiting for a write to be refused.
   */
  fenceCheckMs?: number;
}

const DEFAULTS = {
  schema: 'akd',
  poolSize: 10,
  writeChunkSize: 5_000,
  readChunkSize: 10_000,
  migrate: true,
  create: true,
  applicationName: 'akd-ts',
  fenceCheckMs: 5_000,
};

export type Settings = typeof DEFAULTS &
  Pick<PostgresDatabaseOptions, 'lockRecovery' | 'nodeLayout'>;

/** The options with defaults filled in. @throws RangeError naming a bad option. */
export function checkOptions(options: PostgresDatabaseOptions): Settings {
  const s = { ...DEFAULTS, ...options };
  if (typeof s.schema !== 'string' || !/^[a-z_][a-z0-9_]{0,62}$/.test(s.schema)) {
    throw new RangeError(
      'options.schema must be 1 to 63 lower-case letters, digits or _, not starting with a digit',
    );
  }
  for (const name of ['poolSize', 'writeChunkSize', 'readChunkSize'] as const) {
    if (!Number.isSafeInteger(s[name]) || s[name] < 1) {
      throw new RangeError(`options.${name} must be a positive integer`);
    }
  }
  if (!Number.isSafeInteger(s.fenceCheckMs) || s.fenceCheckMs < 0) {
    throw new RangeError('options.fenceCheckMs must be a whole number of milliseconds (0: never)');
  }
  if (s.nodeLayout !== undefined && s.nodeLayout !== 'records' && s.nodeLayout !== 'versions') {
    throw new RangeError("options.nodeLayout must be 'records' or 'versions'");
  }
  return s;
}
