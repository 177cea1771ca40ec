// The SQL drivers are optional: a store whose driver is not installed fails with a message
// naming the package to install; any other failure of the import passes through unchanged.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import {
  MissingDriverError,
  loadDriver,
  loadSqliteDriver,
  loadPostgresDriver,
} from '../src/drivers.js';

function notFound(name: string): Error {
  return Object.assign(new Error(`Cannot find package '${name}' imported from /x/store.js`), {
    code: 'ERR_MODULE_NOT_FOUND',
  });
}

test('a missing driver package is named with the command that installs it', async () => {
  await assert.rejects(
    loadDriver('sqlite', () => Promise.reject(notFound('@akd-ts/storage-sqlite'))),
    (error: Error) => {
      assert.ok(error instanceof MissingDriverError);
      assert.equal(error.name, 'MissingDriverError');
      assert.equal(error.kind, 'sqlite');
      assert.match(error.message, /^a sqlite: store needs @akd-ts\/storage-sqlite/);
      assert.match(error.message, /npm install @akd-ts\/storage-sqlite/);
      assert.equal((error.cause as { code: string }).code, 'ERR_MODULE_NOT_FOUND');
      return true;
    },
  );
  await assert.rejects(
    loadDriver('postgres', () => Promise.reject(notFound('pg'))),
    /^MissingDriverError: a postgres:\/\/ store needs @akd-ts\/storage-postgres \(with pg\).*npm install @akd-ts\/storage-postgres/,
  );
});

test('better-sqlite3 installed but not built is a missing driver too', async () => {
  const unbuilt = new Error('Could not locate the bindings file. Tried: ...better_sqlite3.node');
  await assert.rejects(
    loadDriver('sqlite', () => Promise.reject(unbuilt)),
    /sqlite: store needs @akd-ts\/storage-sqlite.*C compiler/,
  );
});

test('other failures, and another missing package, pass through as they are', async () => {
  const other = notFound('left-pad');
  await assert.rejects(
    loadDriver('sqlite', () => Promise.reject(other)),
    (e) => e === other,
  );
  const syntax = new SyntaxError('Unexpected token');
  await assert.rejects(
    loadDriver('postgres', () => Promise.reject(syntax)),
    (e) => e === syntax,
  );
  await assert.rejects(
    loadDriver('postgres', () => Promise.reject('a string')),
    (e) => e === 'a string',
  );
});

test('installed drivers load (this workspace has both)', async () => {
  assert.equal(typeof (await loadSqliteDriver()).SqliteDatabase.open, 'function');
  assert.equal(typeof (await loadPostgresDriver()).PostgresDatabase.open, 'function');
});
