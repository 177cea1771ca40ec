/**
 * Where a benchmark's store lives: a fresh memory store, SQLite file (in a temporary
 * directory) or PostgreSQL schema (dropped at the end), the writer's database, and readers
 * opened as `akd serve`'s proof servers open theirs (over SQLite: their page cache, the file
 * mapped).
 */

import { randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import pg from 'pg';
import type { Configuration } from '@akd-ts/core';
import {
  MemoryDatabase,
  StorageManager,
  type CacheOptions,
  type Database,
  type NodeLayout,
} from '@akd-ts/storage';
import {
  Directory,
  InMemoryVrfKeyStore,
  ReadOnlyDirectory,
  availableThreads,
} from '@akd-ts/directory';
import { SqliteDatabase } from '@akd-ts/storage-sqlite';
import { PostgresDatabase } from '@akd-ts/storage-postgres';
import { PROOF_SQLITE_CACHE_KIB, PROOF_SQLITE_MMAP_BYTES } from '@akd-ts/server';

export interface StorePlace {
  /** Where the store is, for processes that open it themselves: the SQLite file, or the schema. */
  where?: { file: string } | { schema: string };
  writer: Database;
  /** A reader's own database, opened as a proof server opens it (the writer's, in memory). */
  reader(): Promise<Database>;
  /** Closes the writer's database and removes the store. */
  remove(): Promise<void>;
}

/**
 * The `--store` (sqlite, the default, or postgres) and `--url` options of a benchmark of a SQL
 * store, checked: PostgreSQL's address from `--url` or AKD_TEST_POSTGRES_URL.
 */
export function sqlStoreOption(value: (name: string) => string | undefined): {
  store: 'sqlite' | 'postgres';
  url: string | undefined;
} {
  const store = value('store') ?? 'sqlite';
  const url = value('url') ?? process.env.AKD_TEST_POSTGRES_URL;
  if (store !== 'sqlite' && store !== 'postgres') throw new Error('--store is sqlite or postgres');
  if (store === 'postgres' && url === undefined) {
    throw new Error('--store postgres needs --url or AKD_TEST_POSTGRES_URL');
  }
  return { store, url };
}

/**
 * A new store of kind `store`; `name` tags its file or schema, `url` is PostgreSQL's, and a SQL
 * store keeps tree nodes as `layout` says (the drivers' default, records, when undefined).
 */
export async function storePlace(
  store: 'memory' | 'sqlite' | 'postgres',
  name: string,
  url?: string,
  layout?: NodeLayout,
): Promise<StorePlace> {
  if (store === 'memory') {
    const db = new MemoryDatabase();
    return { writer: db, reader: async () => db, remove: async () => {} };
  }
  if (store === 'sqlite') {
    const dir = mkdtempSync(join(tmpdir(), `akd-bench-${name}-`));
    const file = join(dir, 'akd.db');
    const writer = await SqliteDatabase.open(file, { create: true, nodeLayout: layout });
    return {
      where: { file },
      writer,
      reader: () =>
        SqliteDatabase.open(file, {
          cacheSizeKiB: PROOF_SQLITE_CACHE_KIB,
          mmapSizeBytes: PROOF_SQLITE_MMAP_BYTES,
        }),
      remove: async () => {
        await writer.close();
        rmSync(dir, { recursive: true, force: true });
      },
    };
  }
  if (url === undefined) throw new Error('a PostgreSQL store needs --url or AKD_TEST_POSTGRES_URL');
  const schema = `akd_${name.replace(/-/g, '_')}_${randomBytes(4).toString('hex')}`;
  const writer = await PostgresDatabase.open(url, { schema, nodeLayout: layout });
  return {
    where: { schema },
    writer,
    reader: () => PostgresDatabase.open(url, { schema, migrate: false }),
    remove: async () => {
      await writer.close();
      const client = new pg.Client({ connectionString: url });
      await client.connect();
      try {
        await client.query(`DROP SCHEMA IF EXISTS "${schema}" CASCADE`);
      } finally {
        await client.end();
      }
    },
  };
}

/** A writer over the place's store with a new random VRF key, its VRF on every thread. */
export function placeWriter(at: StorePlace, config: Configuration): Promise<Directory> {
  return Directory.open({
    config,
    storage: new StorageManager(at.writer),
    vrfKeys: new InMemoryVrfKeyStore(randomBytes(32)),
    vrf: { threads: availableThreads() },
  });
}

/** A reader without the key on a database of its own, as a proof server opens it. */
export async function proofServerReader(
  at: StorePlace,
  config: Configuration,
  publicKey: Uint8Array,
  cache: CacheOptions,
): Promise<ReadOnlyDirectory> {
  return ReadOnlyDirectory.open({
    config,
    storage: new StorageManager(await at.reader(), { cache }),
    publicKey,
  });
}

/** Closes a `proofServerReader` and its database. */
export async function closeReader(reader: ReadOnlyDirectory): Promise<void> {
  await reader.close();
  await reader.storage.db.close();
}
