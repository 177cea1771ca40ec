/**
 * The shared Database conformance suite against the SQLite driver: on a fresh temporary file
 * each time, and on a private in-memory store.
 */

import { after } from 'node:test';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { runDatabaseConformance } from '@akd-ts/storage/conformance';
import { SqliteDatabase } from '../src/index.js';

const dir = mkdtempSync(join(tmpdir(), 'akd-sqlite-conformance-'));
after(() => rmSync(dir, { recursive: true, force: true }));
let n = 0;

runDatabaseConformance('sqlite (file)', () => SqliteDatabase.open(join(dir, `store-${n++}.db`)));
runDatabaseConformance('sqlite (file, small chunks)', () =>
  SqliteDatabase.open(join(dir, `store-${n++}.db`), { readChunkKeys: 7, writeChunkRows: 3 }),
);
runDatabaseConformance('sqlite (:memory:)', () => SqliteDatabase.open(':memory:'));
