// A reader whose cache keeps tree nodes as bytes (`CacheOptions.compactNodes`, what proof
// servers over SQL stores use) serves the lookups and histories the writer computes, byte for
// byte, on every store: with a bound so small that every lookup evicts, and with none, epoch
// after epoch as the records it cached gain previous versions.
import assert from 'node:assert/strict';
import { after, describe, test } from 'node:test';
import { encodeHistoryProof, encodeLookupProof, toHex, utf8 } from '@akd-ts/core';
import { StorageManager } from '@akd-ts/storage';
import { ReadOnlyDirectory } from '@akd-ts/directory';
import { testStores } from '../../../test/support/stores.js';
import { openDirectory } from './support/build.js';

const stores = testStores();
after(async () => {
  for (const s of stores) await s.cleanup();
});

describe('a compact record cache serves the proofs the writer computes', () => {
  for (const store of stores) {
    test(store.name, { skip: store.skip }, async () => {
      const db = await store.open();
      const { dir } = await openDirectory('whatsapp_v1', { db });
      const readers = await Promise.all(
        [{ memoryLimitBytes: 16 * 1024 }, {}].map((bound) =>
          ReadOnlyDirectory.open({
            config: dir.config,
            storage: new StorageManager(db, { cache: { ...bound, compactNodes: true } }),
            publicKey: dir.getPublicKey(),
          }),
        ),
      );
      try {
        // enough leaves that many nodes have labels of 12 bits and more, which the cache keeps
        // as bytes (shorter ones, near the root, stay objects); a tenth of them looked up
        const labels = Array.from({ length: 600 }, (_, i) => utf8(`user-${i}`));
        const asked = labels.filter((_, i) => i % 10 === 0);
        for (let epoch = 1; epoch <= 4; epoch++) {
          // every label at epoch 1, then a third of them at each epoch
          const changed = labels.filter((_, i) => epoch === 1 || i % 3 === epoch % 3);
          await dir.publish(changed.map((label) => ({ label, value: utf8(`v${epoch}`) })));
          await dir.vrfProofsStored();
          const mine = await dir.batchLookup(asked);
          for (const reader of readers) {
            await reader.refresh();
            // twice: cold, then from what the first pass cached
            for (const pass of ['cold', 'cached']) {
              const theirs = await reader.batchLookup(asked);
              assert.deepEqual(theirs.epochHash, mine.epochHash);
              theirs.proofs.forEach((p, i) =>
                assert.equal(
                  toHex(encodeLookupProof(p)),
                  toHex(encodeLookupProof(mine.proofs[i]!)),
                  `epoch ${epoch}, ${pass}, lookup ${i}`,
                ),
              );
            }
            const history = await reader.keyHistory(labels[0]!);
            assert.equal(
              toHex(encodeHistoryProof(history.proof)),
              toHex(encodeHistoryProof((await dir.keyHistory(labels[0]!)).proof)),
              `epoch ${epoch}, history`,
            );
          }
        }
        const [bounded, unbounded] = readers.map((r) => r.storage);
        assert.ok(bounded!.cacheSize < unbounded!.cacheSize, 'the small bound evicted');
      } finally {
        for (const reader of readers) await reader.close();
        await dir.close();
      }
    });
  }
});
