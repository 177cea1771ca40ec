import { after, test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { randomBytes } from 'node:crypto';
import pg from 'pg';
import { keyHistoryVerify, lookupVerify, utf8, WhatsAppV1Configuration } from '@akd-ts/core';
import { StorageManager, type Database } from '@akd-ts/storage';
import { SqliteDatabase } from '@akd-ts/storage-sqlite';
import { PostgresDatabase } from '@akd-ts/storage-postgres';
import { Directory, ReadOnlyDirectory } from '@akd-ts/directory';
import { hardCodedKeys } from './support/build.js';
import { POSTGRES_SKIP, POSTGRES_URL } from '../../../test/support/postgres-url.js';

const tmp = mkdtempSync(join(tmpdir(), 'akd-reader-'));
const schemas: string[] = [];
after(async () => {
  rmSync(tmp, { recursive: true, force: true });
  if (schemas.length === 0) return;
  const client = new pg.Client({ connectionString: POSTGRES_URL });
  await client.connect();
  for (const s of schemas) await client.query(`DROP SCHEMA IF EXISTS "${s}" CASCADE`);
  await client.end();
});

/** Two independent handles (connections) on one new store. */
const stores: { name: string; skip: string | false; pair: () => Promise<[Database, Database]> }[] =
  [
    {
      name: 'sqlite',
      skip: false,
      pair: async () => {
        const path = join(tmp, 'store.db');
        return [await SqliteDatabase.open(path), await SqliteDatabase.open(path)];
      },
    },
    {
      name: 'postgres',
      skip: POSTGRES_SKIP,
      pair: async () => {
        const schema = `akd_test_reader_${randomBytes(6).toString('hex')}`;
        schemas.push(schema);
        const writer = await PostgresDatabase.open(POSTGRES_URL!, { schema });
        return [writer, await PostgresDatabase.open(POSTGRES_URL!, { schema })];
      },
    },
  ];

const config = new WhatsAppV1Configuration();
const labels = Array.from({ length: 40 }, (_, i) => utf8(`reader-test-${i}`));

for (const store of stores) {
  test(
    `${store.name}: a reader looking up in a loop while another connection publishes gets only verifiable proofs`,
    { skip: store.skip },
    async () => {
      const [writerDb, readerDb] = await store.pair();
      const writer = await Directory.open({
        config,
        storage: new StorageManager(writerDb),
        vrfKeys: hardCodedKeys(),
      });
      let reader: ReadOnlyDirectory | undefined;
      let publishing = true;
      let publisher: Promise<void> = Promise.resolve();
      try {
        await writer.publish(labels.map((label) => ({ label, value: utf8('v1') })));
        reader = await ReadOnlyDirectory.open({
          config,
          storage: new StorageManager(readerDb),
          vrfKeys: hardCodedKeys(),
        });
        const pk = reader.getPublicKey();
        publisher = (async () => {
          for (let e = 2; e <= 12 && publishing; e++) {
            await writer.publish(labels.map((label, i) => ({ label, value: utf8(`v${e}.${i}`) })));
          }
          publishing = false;
        })();
        const epochs = new Set<bigint>();
        let checked = 0;
        for (let i = 0; publishing || i < 3; i++) {
          // a macrotask turn per lookup, as separate requests to a server would get: SQLite
          // answers synchronously, and a loop of microtasks alone would starve the publisher
          await new Promise((resolve) => setImmediate(resolve));
          if (i % 2 === 0) await reader.refresh();
          const label = labels[i % labels.length]!;
          const { proof, epochHash } = await reader.lookup(label);
          lookupVerify(config, pk, epochHash.hash, epochHash.epoch, label, proof);
          if (i % 5 === 0) {
            const params = { kind: 'mostRecent', count: 2 } as const;
            const h = await reader.keyHistory(label, params);
            keyHistoryVerify(config, pk, h.epochHash.hash, h.epochHash.epoch, label, h.proof, {
              historyParams: params,
            });
          }
          epochs.add(epochHash.epoch);
          checked++;
        }
        await publisher;
        assert.ok(checked >= 3);
        assert.ok(epochs.size >= 2, `the reader followed the writer across ${epochs.size} epochs`);
      } finally {
        // stop and close everything even when an assertion failed: an open pool would keep
        // the test process alive
        publishing = false;
        await publisher.catch(() => undefined);
        await reader?.close();
        await writer.close();
        await readerDb.close();
        await writerDb.close();
      }
    },
  );
}
