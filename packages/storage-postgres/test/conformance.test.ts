// The shared Database conformance suite against PostgreSQL, each test in a schema of its own
// that is dropped afterwards, on both node layouts; the versions layout also runs its own
// suite. Skips (visibly) when AKD_TEST_POSTGRES_URL is not set.
import { after, test } from 'node:test';
import { runDatabaseConformance, runVersionedNodeConformance } from '@akd-ts/storage/conformance';
import { SKIP, SchemaJanitor, openDb } from './support/postgres.js';

if (SKIP) {
  test('Database conformance: postgres', { skip: SKIP }, () => {});
} else {
  const schemas = new SchemaJanitor();
  after(() => schemas.dropAll());
  runDatabaseConformance('postgres', () => openDb(schemas.fresh('conf')));
  // the same suite with tiny chunks, so every multi-statement path (snapshot reads, chunked
  // upserts in one transaction) runs too
  runDatabaseConformance('postgres, chunks of 7', () =>
    openDb(schemas.fresh('conf7'), { readChunkSize: 7, writeChunkSize: 7 }),
  );
  for (const [name, options] of [
    ['postgres versions', {}],
    ['postgres versions, chunks of 2', { readChunkSize: 2, writeChunkSize: 2 }],
  ] as const) {
    const fresh = () => openDb(schemas.fresh('confv'), { ...options, nodeLayout: 'versions' });
    runDatabaseConformance(name, fresh);
    runVersionedNodeConformance(name, fresh);
  }
}
