/**
 * The SQL store drivers, loaded on demand: `@akd-ts/storage-sqlite` (better-sqlite3, compiled
 * or downloaded at install) and `@akd-ts/storage-postgres` (pg) are not required by the server
 * or the CLI (an optional dependency and an optional peer dependency), so an install can go
 * without either. A store whose driver is missing fails here, naming what to install.
 */

type SqliteDriver = typeof import('@akd-ts/storage-sqlite');
type PostgresDriver = typeof import('@akd-ts/storage-postgres');

/** The package of each store kind, and the driver under it. */
const DRIVERS = {
  sqlite: { pkg: '@akd-ts/storage-sqlite', driver: 'better-sqlite3' },
  postgres: { pkg: '@akd-ts/storage-postgres', driver: 'pg' },
} as const;

export type StoreKind = keyof typeof DRIVERS;

/** Whether `error` says the package or its driver is not installed (or was not built). */
function missing(error: unknown, kind: StoreKind): boolean {
  const { pkg, driver } = DRIVERS[kind];
  const { code, message } = (error ?? {}) as { code?: unknown; message?: unknown };
  if (typeof message !== 'string') return false;
  if (code === 'ERR_MODULE_NOT_FOUND' || code === 'MODULE_NOT_FOUND') {
    return message.includes(pkg) || message.includes(`'${driver}'`);
  }
  // better-sqlite3 installed but its native part not built (no compiler and no prebuilt binary)
  return kind === 'sqlite' && /bindings file|better_sqlite3\.node/.test(message);
}

/** What to tell a user whose store needs a driver that is not installed. */
export function missingDriverMessage(kind: StoreKind): string {
  const { pkg, driver } = DRIVERS[kind];
  return (
    `a ${kind === 'sqlite' ? 'sqlite:' : 'postgres://'} store needs ${pkg} (with ${driver}), ` +
    `which is not installed here: run npm install ${pkg}` +
    (kind === 'sqlite' ? ' (better-sqlite3 needs a C compiler where no prebuilt binary fits)' : '')
  );
}

/** A store's driver is not installed: the message says which package to install. */
export class MissingDriverError extends Error {
  readonly kind: StoreKind;

  constructor(kind: StoreKind, cause: unknown) {
    super(missingDriverMessage(kind), { cause });
    this.name = 'MissingDriverError';
    this.kind = kind;
  }
}

/**
 * Loads one driver package through `importer` (the real import by default; tests pass one
 * that fails).
 * @throws MissingDriverError (the import's error as `cause`) when it is missing
 */
export async function loadDriver<T>(kind: StoreKind, importer: () => Promise<T>): Promise<T> {
  try {
    return await importer();
  } catch (error) {
    if (missing(error, kind)) throw new MissingDriverError(kind, error);
    throw error;
  }
}

/** `@akd-ts/storage-sqlite`, or a clear error when it is not installed. */
export function loadSqliteDriver(): Promise<SqliteDriver> {
  return loadDriver('sqlite', () => import('@akd-ts/storage-sqlite'));
}

/** `@akd-ts/storage-postgres`, or a clear error when it is not installed. */
export function loadPostgresDriver(): Promise<PostgresDriver> {
  return loadDriver('postgres', () => import('@akd-ts/storage-postgres'));
}
