/**
 * The shared Database conformance suite against the SQLite driver, on both node layouts: on a
 * fresh temporary file each time, and on a private in-memory store. A store of versions also
 * runs the versions layout's own suite.
 */

import { after } from 'node:test';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { runDatabaseConformance, runVersionedNodeConformance } from '@akd-ts/storage/conformance';
import { SqliteDatabase } from '../src/index.js';

const dir = mkdtempSync(join(tmpdir(), 'akd-sqlite-conformance-'));
after(() => rmSync(dir, { recursive: true, force: true }));
let n = 0;

for (const nodeLayout of ['records', 'versions'] as const) {
  const fresh = (options: { readChunkKeys?: number; writeChunkRows?: number } = {}) =>
    SqliteDatabase.open(join(dir, `store-${n++}.db`), { ...options, nodeLayout });
  const small = { readChunkKeys: 7, writeChunkRows: 3 };
  runDatabaseConformance(`sqlite ${nodeLayout} (file)`, () => fresh());
  runDatabaseConformance(`sqlite ${nodeLayout} (file, small chunks)`, () => fresh(small));
  runDatabaseConformance(`sqlite ${nodeLayout} (:memory:)`, () =>
    SqliteDatabase.open(':memory:', { nodeLayout }),
  );
  if (nodeLayout === 'versions') {
    runVersionedNodeConformance('sqlite (file)', () => fresh());
    // a chunk of one key: every read by version and every level of a walk in many statements
    runVersionedNodeConformance('sqlite (file, one key a statement)', () =>
      fresh({ readChunkKeys: 1, writeChunkRows: 1 }),
    );
    runVersionedNodeConformance('sqlite (:memory:)', () =>
      SqliteDatabase.open(':memory:', { nodeLayout }),
    );
  }
}
