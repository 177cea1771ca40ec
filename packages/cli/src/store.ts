/**
 * Opening a directory's store from the command line: the store URL (`memory:`,
 * `sqlite:<path>`, `postgres://...`), the directory settings kept in the store (configuration,
 * domain label, VRF public key), and the VRF secret key, which lives apart from the data in a
 * key file (mode 0600) or the AKD_VRF_KEY environment variable, so a copy of the database
 * never carries it.
 */

import { existsSync } from 'node:fs';
import { readFile } from 'node:fs/promises';
import {
  AkdError,
  VrfSecretKey,
  configurationByName,
  fromHex,
  toHex,
  type Configuration,
} from '@akd-ts/core';
import { VRF_PUBLIC_KEY_SETTING } from '@akd-ts/directory';
import { MemoryDatabase, type Database, type NodeLayout } from '@akd-ts/storage';
import { UsageError } from './errors.js';
import type { CliIo } from './io.js';
import { loadPostgresDriver, loadSqliteDriver } from '@akd-ts/server/drivers';

/** The store used when neither --db nor AKD_DB names one. */
export const DEFAULT_DB = 'sqlite:./akd.db';
/** The key file used when neither --key-file nor AKD_VRF_KEY_FILE names one. */
export const DEFAULT_KEY_FILE = './akd.key';

/** The options every command on a store takes. */
export interface StoreOptions {
  db?: string;
  keyFile?: string;
}

/** The store URL of a command: --db, else AKD_DB, else the default. */
export function storeUrl(opts: StoreOptions, io: CliIo): string {
  return opts.db ?? io.env?.['AKD_DB'] ?? DEFAULT_DB;
}

/** An in-memory store kept for the life of the process: closing it leaves it open. */
class KeptMemoryDatabase extends MemoryDatabase {
  override async close(): Promise<void> {}
}

/** `memory:<name>` stores of this process, so commands run in one process can share one. */
const NAMED_MEMORY = new Map<string, MemoryDatabase>();

/** How a command uses its store. */
export interface OpenMode {
  /**
   * Whether a missing store may be created (`akd init`, the writer of `akd serve`). Readers
   * pass false: a missing SQLite file or PostgreSQL schema is then an error, and nothing is
   * created, so a mistyped --db leaves nothing behind.
   */
  create?: boolean;
  /**
   * Whether an existing store of an older schema may be migrated (default: `create`). A writer
   * of an existing store (`akd publish`) passes true with `create: false`.
   */
  migrate?: boolean;
  /**
   * How a store this open creates keeps its tree nodes (`NodeLayout`; the driver's default
   * when absent). An existing store keeps its own: `akd layout migrate` changes it.
   */
  nodeLayout?: NodeLayout;
}

/** The node layouts `akd init --node-layout` takes. */
export const NODE_LAYOUTS: readonly NodeLayout[] = ['records', 'versions'];

/**
 * The layout of the SQLite and PostgreSQL stores `akd init` and `akd serve` create: versions,
 * in which an epoch appends its own node versions (bench/RESULTS.md: 2.1-2.9x fewer bytes
 * written per label at 500,000 labels). A `memory:` store keeps the driver's default.
 */
export const DEFAULT_NODE_LAYOUT: NodeLayout = 'versions';

/**
 * A postgres:// store URL's connection string and schema: `?schema=<name>` picks the
 * PostgreSQL schema, so that several directories can share a database.
 */
export function postgresTarget(url: string): { connection: string; schema?: string } {
  const parsed = new URL(url);
  const schema = parsed.searchParams.get('schema') ?? undefined;
  parsed.searchParams.delete('schema');
  return schema === undefined
    ? { connection: parsed.toString() }
    : { connection: parsed.toString(), schema };
}

/**
 * Opens the database a store URL names: `memory:` (a new, empty store), `memory:<name>` (a
 * store shared by every command of this process), `sqlite:<path>`, or `postgres://...`
 * (`?schema=<name>` selects a PostgreSQL schema).
 * Drivers are loaded on demand, so a store that is not used never needs its driver.
 *
 * @throws UsageError for an unknown URL, or (with `create: false`) a SQLite file that does not exist
 * @example const db = await openDatabase('sqlite:./akd.db', { create: false });
 */
export async function openDatabase(url: string, mode: OpenMode = {}): Promise<Database> {
  const create = mode.create ?? true;
  const layout = mode.nodeLayout === undefined ? {} : { nodeLayout: mode.nodeLayout };
  if (url === 'memory:') return new MemoryDatabase(layout);
  if (url.startsWith('memory:')) {
    let db = NAMED_MEMORY.get(url);
    if (db === undefined) NAMED_MEMORY.set(url, (db = new KeptMemoryDatabase(layout)));
    return db;
  }
  if (url.startsWith('sqlite:')) {
    const path = url.slice('sqlite:'.length);
    if (path === '') throw new UsageError('--db: sqlite: needs a path, as in sqlite:./akd.db');
    if (!create && !existsSync(path)) {
      throw new UsageError(
        `--db: no store at ${JSON.stringify(path)} (akd init creates one; check the path)`,
      );
    }
    const { SqliteDatabase } = await loadSqliteDriver();
    // a layout is the one of a store this open creates: an existing store keeps its own
    const created =
      create && !existsSync(path) ? { nodeLayout: mode.nodeLayout ?? DEFAULT_NODE_LAYOUT } : {};
    return SqliteDatabase.open(path, { create, ...created });
  }
  if (url.startsWith('postgres://') || url.startsWith('postgresql://')) {
    const { PostgresDatabase } = await loadPostgresDriver();
    const { connection, schema } = postgresTarget(url);
    return PostgresDatabase.open(connection, {
      ...(schema === undefined ? {} : { schema }),
      migrate: mode.migrate ?? create,
      create,
      ...layout,
    });
  }
  throw new UsageError(
    `--db: unknown store ${JSON.stringify(url)} (use memory:, sqlite:<path> or postgres://...)`,
  );
}

/** What `akd init` records in the store (spec 3: the configuration fixes every byte layout). */
export interface DirectorySettings {
  configuration: string;
  /** For the experimental configuration. */
  domainLabel: string | undefined;
  /** Hex of the VRF public key, to catch a key file that belongs to another directory. */
  publicKey: string;
}

const SETTING = {
  configuration: 'configuration',
  domainLabel: 'domain_label',
  publicKey: VRF_PUBLIC_KEY_SETTING,
} as const;

/** Records the directory's settings in its store. */
export async function writeSettings(db: Database, settings: DirectorySettings): Promise<void> {
  await db.setSetting(SETTING.configuration, settings.configuration);
  if (settings.domainLabel !== undefined) {
    await db.setSetting(SETTING.domainLabel, settings.domainLabel);
  }
  await db.setSetting(SETTING.publicKey, settings.publicKey);
}

/** The directory's settings, or undefined in a store `akd init` has not set up. */
export async function readSettings(db: Database): Promise<DirectorySettings | undefined> {
  const configuration = await db.getSetting(SETTING.configuration);
  const publicKey = await db.getSetting(SETTING.publicKey);
  if (configuration === undefined || publicKey === undefined) return undefined;
  return { configuration, domainLabel: await db.getSetting(SETTING.domainLabel), publicKey };
}

/** The configuration the settings name. */
export function settingsConfiguration(settings: DirectorySettings): Configuration {
  return configurationByName(settings.configuration, settings.domainLabel);
}

/**
 * Parses a 32-byte secret key given as hex (a key file's content or AKD_VRF_KEY).
 * @throws UsageError naming `source` when it is not 64 hex digits
 */
export function parseSecretKey(text: string, source: string): Uint8Array {
  const hex = text.trim();
  if (!/^[0-9a-fA-F]{64}$/.test(hex)) {
    // never echo the text: it is meant to be a secret
    throw new UsageError(`${source}: expected a 32-byte VRF secret key as 64 hex digits`);
  }
  return fromHex(hex);
}

/** The key file path of a command: --key-file, else AKD_VRF_KEY_FILE, else the default. */
export function keyFilePath(opts: StoreOptions, io: CliIo): string {
  return opts.keyFile ?? io.env?.['AKD_VRF_KEY_FILE'] ?? DEFAULT_KEY_FILE;
}

/**
 * The key in the file at `path`.
 * @throws UsageError when it cannot be read or does not hold a key
 */
export async function readKeyFile(path: string): Promise<Uint8Array> {
  let text: string;
  try {
    text = await readFile(path, 'utf8');
  } catch (e) {
    const missing = (e as NodeJS.ErrnoException).code === 'ENOENT';
    const reason = missing
      ? 'no such file (run akd init, or set AKD_VRF_KEY)'
      : (e as Error).message;
    throw new UsageError(`--key-file: cannot read ${JSON.stringify(path)}: ${reason}`, {
      cause: e,
    });
  }
  return parseSecretKey(text, `--key-file ${JSON.stringify(path)}`);
}

/**
 * The VRF secret key: AKD_VRF_KEY when set (and no --key-file), else the key file.
 * @param why what needs the key, said when it cannot be found
 */
export async function loadSecretKey(
  opts: StoreOptions,
  io: CliIo,
  why?: string,
): Promise<Uint8Array> {
  const fromEnv = io.env?.['AKD_VRF_KEY'];
  if (fromEnv !== undefined && opts.keyFile === undefined) {
    return parseSecretKey(fromEnv, 'AKD_VRF_KEY');
  }
  try {
    return await readKeyFile(keyFilePath(opts, io));
  } catch (e) {
    if (why === undefined || !(e instanceof UsageError)) throw e;
    throw new UsageError(`${e.message}; the VRF secret key is needed: ${why}`, { cause: e });
  }
}

/** An opened directory store without its secret: what commands on public data get. */
export interface PublicStore {
  url: string;
  db: Database;
  settings: DirectorySettings;
  config: Configuration;
}

/** An opened directory store with its VRF secret key, checked against each other. */
export interface OpenedStore extends PublicStore {
  secretKey: Uint8Array;
}

/** Why a command needs the VRF secret key, said when the key cannot be found. */
export const SECRET_FOR = {
  publish: "publishing computes each new label's VRF with it",
  backfill: 'the proofs are computed with it',
} as const;

/** Opens the store at `url` and reads the settings `akd init` left there. */
async function openSettings(url: string, mode: OpenMode): Promise<PublicStore> {
  const db = await openDatabase(url, mode);
  try {
    const settings = await readSettings(db);
    if (settings === undefined) {
      throw new AkdError('DIRECTORY_READ_ONLY', `${url} holds no directory: run akd init first`);
    }
    return { url, db, settings, config: settingsConfiguration(settings) };
  } catch (e) {
    await db.close();
    throw e;
  }
}

/**
 * Opens an initialised store for a command on public data only (epochs, root hashes, audit
 * proofs): the VRF secret key is never loaded, and a store that does not exist is never created.
 * @throws UsageError for a SQLite path with no file; AkdError `DIRECTORY_READ_ONLY` when the
 * store was never initialised.
 */
export async function openPublicStore(opts: StoreOptions, io: CliIo): Promise<PublicStore> {
  return openSettings(storeUrl(opts, io), { create: false });
}

/**
 * Opens an initialised store and its key, and checks that the key is the directory's.
 * @param needs `why` the key is needed (said when it is missing), and whether a missing store
 * may be created (default true, for writers)
 * @throws AkdError `DIRECTORY_READ_ONLY` when the store was never initialised, or
 * `VRF_INVALID_SECRET_KEY` when the key belongs to another directory.
 */
export async function openStore(
  opts: StoreOptions,
  io: CliIo,
  needs: OpenMode & { why?: string } = {},
): Promise<OpenedStore> {
  const secretKey = await loadSecretKey(opts, io, needs.why);
  const publicKey = toHex(VrfSecretKey.fromBytes(secretKey).publicKeyBytes);
  const store = await openSettings(storeUrl(opts, io), needs);
  if (publicKey !== store.settings.publicKey.toLowerCase()) {
    await store.db.close();
    throw new AkdError(
      'VRF_INVALID_SECRET_KEY',
      `the VRF key's public key ${publicKey} is not this directory's (${store.settings.publicKey})`,
    );
  }
  return { ...store, secretKey };
}
