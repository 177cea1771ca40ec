/**
 * Test helpers: where PostgreSQL is (test/support/postgres-url.ts), a random schema per test, and dropping it afterwards so runs never collide.
 */

import { randomBytes } from 'node:crypto';
import pg from 'pg';
import { PostgresDatabase, type PostgresDatabaseOptions } from '@akd-ts/storage-postgres';

import { POSTGRES_SKIP, POSTGRES_URL } from '../../../../test/support/postgres-url.js';

export { POSTGRES_URL };
/** node:test's `skip` option: a reason when PostgreSQL is not configured, else false. */
export const SKIP = POSTGRES_SKIP;

/** A fresh schema name, unique across parallel test files and runs. */
export function freshSchema(tag = 't'): string {
  return `akd_test_${tag}_${randomBytes(6).toString('hex')}`;
}

/** Runs one SQL statement on a short-lived connection of its own (test setup and inspection). */
export async function sql(text: string, values: unknown[] = []): Promise<pg.QueryResult> {
  const client = new pg.Client({ connectionString: POSTGRES_URL });
  await client.connect();
  try {
    return await client.query(text, values);
  } finally {
    await client.end();
  }
}

export async function dropSchema(schema: string): Promise<void> {
  await sql(`DROP SCHEMA IF EXISTS "${schema}" CASCADE`);
}

/** Opens a database in `schema` (fresh by default). */
export function openDb(
  schema = freshSchema(),
  options: PostgresDatabaseOptions = {},
): Promise<PostgresDatabase> {
  return PostgresDatabase.open(POSTGRES_URL!, { schema, poolSize: 4, ...options });
}

/**
 * Tracks schemas a test created, to drop them all afterwards:
 * `const schemas = new SchemaJanitor(); after(() => schemas.dropAll())`.
 */
export class SchemaJanitor {
  private readonly names = new Set<string>();

  fresh(tag?: string): string {
    const name = freshSchema(tag);
    this.names.add(name);
    return name;
  }

  async dropAll(): Promise<void> {
    for (const name of this.names) await dropSchema(name);
    this.names.clear();
  }
}
