/**
 * The stores every directory test runs on, each with tree nodes kept as records and as
 * versions (`NodeLayout`): the in-memory database, SQLite (a file in a
 * temporary folder) and PostgreSQL (a fresh schema each time, on the server of
 * postgres-url.ts). Call `cleanup` after the tests.
 */

import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { randomBytes } from 'node:crypto';
import pg from 'pg';
import { MemoryDatabase, type Database, type NodeLayout } from '@akd-ts/storage';
import { SqliteDatabase } from '@akd-ts/storage-sqlite';
import { PostgresDatabase } from '@akd-ts/storage-postgres';
import { POSTGRES_SKIP, POSTGRES_URL } from './postgres-url.js';

/** Closes every database a store opened (each once), ignoring databases already closed. */
async function closeAll(dbs: Database[]): Promise<void> {
  for (const db of dbs.splice(0)) await db.close().catch(() => undefined);
}

export interface TestStore {
  name:
    'memory' | 'memory-versions' | 'sqlite' | 'sqlite-versions' | 'postgres' | 'postgres-versions';
  /** node:test's `skip` option. */
  skip: string | false;
  /** A new, empty store. */
  open(): Promise<Database>;
  /** Closes what `open` opened and removes what it created (files, schemas). */
  cleanup(): Promise<void>;
}

function memoryStore(): TestStore {
  return {
    name: 'memory',
    skip: false,
    open: async () => new MemoryDatabase(),
    cleanup: async () => {},
  };
}

/** The in-memory store of node versions (database.ts `NodeLayout`): no index by label. */
function memoryVersionsStore(): TestStore {
  return {
    name: 'memory-versions',
    skip: false,
    open: async () => new MemoryDatabase({ nodeLayout: 'versions' }),
    cleanup: async () => {},
  };
}

function sqliteStore(nodeLayout: NodeLayout = 'records'): TestStore {
  let dir: string | undefined;
  let n = 0;
  const opened: Database[] = [];
  return {
    name: nodeLayout === 'records' ? 'sqlite' : 'sqlite-versions',
    skip: false,
    open: async () => {
      dir ??= mkdtempSync(join(tmpdir(), 'akd-test-store-'));
      const db = await SqliteDatabase.open(join(dir, `store-${++n}.db`), { nodeLayout });
      opened.push(db);
      return db;
    },
    cleanup: async () => {
      await closeAll(opened);
      if (dir !== undefined) rmSync(dir, { recursive: true, force: true });
    },
  };
}

function postgresStore(nodeLayout: NodeLayout = 'records'): TestStore {
  const schemas: string[] = [];
  const opened: Database[] = [];
  return {
    name: nodeLayout === 'records' ? 'postgres' : 'postgres-versions',
    skip: POSTGRES_SKIP,
    open: async () => {
      const schema = `akd_test_dir_${randomBytes(6).toString('hex')}`;
      schemas.push(schema);
      const db = await PostgresDatabase.open(POSTGRES_URL!, { schema, poolSize: 4, nodeLayout });
      opened.push(db);
      return db;
    },
    cleanup: async () => {
      await closeAll(opened);
      if (schemas.length === 0) return;
      const client = new pg.Client({ connectionString: POSTGRES_URL });
      await client.connect();
      try {
        for (const schema of schemas.splice(0))
          await client.query(`DROP SCHEMA IF EXISTS "${schema}" CASCADE`);
      } finally {
        await client.end();
      }
    },
  };
}

/** One fresh set of store factories (give each test file its own). */
export function testStores(): TestStore[] {
  return [
    memoryStore(),
    memoryVersionsStore(),
    sqliteStore(),
    sqliteStore('versions'),
    postgresStore(),
    postgresStore('versions'),
  ];
}
