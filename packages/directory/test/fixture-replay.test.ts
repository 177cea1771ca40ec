import { after, test } from 'node:test';
import assert from 'node:assert/strict';
import { encodeHistoryProof, encodeLookupProof, toHex } from '@akd-ts/core';
import { MemoryDatabase, StorageManager, type ValueStateRecord } from '@akd-ts/storage';
import { ReadOnlyDirectory } from '@akd-ts/directory';
import { asStored, assertStoresRecords, loadFixture } from '../../../test/support/fixtures.js';
import { CONFIG_NAMES, DEGREES, openDirectory } from './support/build.js';
import { testStores } from '../../../test/support/stores.js';

const EXPECTED_ROOT = {
  whatsapp_v1: 'f076e47b7f910ceab406ea1637bf575d9cfb4e5bbadd498f7c7d084c706a7e9f',
  experimental: '4da1df2c3b1540ec2c9f2435ef5ce56bd1b365d3f2c7f0519acb481d2a6820e8',
};

const STORES = testStores();
after(() => Promise.all(STORES.map((s) => s.cleanup())));

for (const store of STORES)
  for (const name of CONFIG_NAMES)
    for (const degree of DEGREES) {
      test(
        `${store.name}/${name}/${degree.name}: loading fixture state 9 and publishing delta 10 yields exactly state 10`,
        { skip: store.skip },
        async () => {
          const fixture = loadFixture(name);
          assert.equal(fixture.state9.length, 48);
          assert.equal(fixture.state10.length, 51);
          const db = await store.open();
          await db.batchSet(asStored(db, fixture.state9));
          const { dir } = await openDirectory(name, {
            db,
            directory: { parallelism: degree.parallelism },
          });
          const { epoch, hash } = await dir.publish(fixture.delta10);
          assert.equal(epoch, 9n);
          assert.equal(toHex(hash), EXPECTED_ROOT[name]);
          // upstream's state holds no stored VRF proofs: once backfilled, a reader without the
          // key serves every label's lookup and history as the keyed directory computes them
          const labels = fixture.state10
            .filter((r): r is ValueStateRecord => r.kind === 'valueState')
            .map((r) => r.username);
          assert.deepEqual(await dir.backfillVrfProofs(), {
            labels: labels.length,
            complete: true,
          });
          const reader = await ReadOnlyDirectory.open({
            config: dir.config,
            storage: new StorageManager(db),
            publicKey: dir.getPublicKey(),
          });
          for (const label of labels) {
            const where = `${toHex(label)} without the key`;
            assert.equal(
              toHex(encodeLookupProof((await reader.lookup(label)).proof)),
              toHex(encodeLookupProof((await dir.lookup(label)).proof)),
              where,
            );
            assert.equal(
              toHex(encodeHistoryProof((await reader.keyHistory(label)).proof)),
              toHex(encodeHistoryProof((await dir.keyHistory(label)).proof)),
              where,
            );
          }
          await reader.close();
          await dir.close();

          // every record of state 10 is stored, equal field by field
          await assertStoresRecords(db, fixture.state10);
          // and nothing else: the in-memory store lists its records; elsewhere the AZKS node count
          // and each user's states pin the totals
          if (db instanceof MemoryDatabase)
            assert.equal(db.allRecords().length, fixture.state10.length);
          const nodes = fixture.state10.filter((r) => r.kind === 'treeNode').length;
          assert.equal((await db.get({ kind: 'azks' })).numNodes, BigInt(nodes));
          for (const state of fixture.state10.filter((r) => r.kind === 'valueState')) {
            const states: ValueStateRecord[] = await db.getUserData(state.username);
            assert.equal(states.length, 1, 'one state per user in this fixture');
          }
        },
      );
    }
