import { after, test } from 'node:test';
import assert from 'node:assert/strict';
import {
  auditVerify,
  encodeHistoryProof,
  encodeLookupProof,
  keyHistoryVerify,
  lookupVerify,
  toHex,
  utf8,
  type EpochHash,
} from '@akd-ts/core';
import { StorageManager } from '@akd-ts/storage';
import { ReadOnlyDirectory } from '@akd-ts/directory';
import { loadVectors } from '../../../test/support/vectors.js';
import { CONFIG_NAMES, DEGREES, openDirectory } from './support/build.js';
import { testStores } from '../../../test/support/stores.js';

/** Spec 17.1: in epoch e, label 2^i gets "2^i,e" when 2^i divides e (i = 0..4). */
function updatesFor(epoch: number) {
  const out = [];
  for (let i = 0; i < 5; i++) {
    const index = 2 ** i;
    if (epoch % index === 0)
      out.push({ label: utf8(String(index)), value: utf8(`${index},${epoch}`) });
  }
  return out;
}

const STORES = testStores();
after(() => Promise.all(STORES.map((s) => s.cleanup())));

for (const store of STORES)
  for (const name of CONFIG_NAMES)
    // every degree in memory; the drivers at the default and with the most threads
    for (const degree of store.name === 'memory' ? DEGREES : [DEGREES[0]!, DEGREES[4]!]) {
      // the drivers with the most threads also commit in chunks of 3 records (every epoch
      // then goes through batchSetChunks, and the arena's records are built chunk by chunk);
      // the stores in memory write no chunks
      const chunked = degree === DEGREES[4] && !store.name.startsWith('memory');
      test(
        `${store.name}/${name}/${degree.name}${chunked ? ' (commits in chunks)' : ''}: rebuilding upstream's 49-epoch directory reproduces its root and proofs byte for byte`,
        { skip: store.skip },
        async () => {
          const vectors = loadVectors(name);
          const { dir, db, config, storage } = await openDirectory(name, {
            store,
            storage: {
              cache: false,
              ...(chunked ? { largeCommitRecords: 3, commitChunkRecords: 3 } : {}),
            },
            directory: { parallelism: degree.parallelism },
          });
          let chunkedCommits = 0;
          if (chunked) {
            const write = db.batchSetChunks!.bind(db);
            db.batchSetChunks = (chunks, state) => {
              chunkedCommits++;
              return write(chunks, state);
            };
          }
          const roots: Uint8Array[] = [(await dir.getEpochHash()).hash];
          let last: EpochHash | undefined;
          for (let e = 1; e < 50; e++) {
            last = await dir.publish(updatesFor(e));
            assert.equal(last.epoch, BigInt(e));
            roots.push(last.hash);
            if (e > 1) {
              const proof = await dir.audit(BigInt(e - 1), BigInt(e));
              auditVerify(config, [roots[e - 1]!, roots[e]!], proof);
            }
          }
          assert.equal(toHex(last!.hash), toHex(vectors.epochHash));
          assert.equal(chunkedCommits, chunked ? 49 : 0, 'every epoch committed in chunks');
          assert.equal((await storage.get({ kind: 'azks' })).numNodes, 365n);
          assert.deepEqual(dir.getPublicKey(), vectors.publicKey);

          const label = utf8('16');
          const lookup = await dir.lookup(label);
          assert.equal(toHex(encodeLookupProof(lookup.proof)), toHex(vectors.lookupProof));
          const recent = await dir.keyHistory(label, { kind: 'mostRecent', count: 1 });
          assert.equal(toHex(encodeHistoryProof(recent.proof)), toHex(vectors.historyMostRecent1));
          const complete = await dir.keyHistory(label);
          assert.equal(toHex(encodeHistoryProof(complete.proof)), toHex(vectors.historyComplete));
          // a reader without the key serves the same bytes, from the proofs the publishes
          // stored (marker sweeps of 4 to 64 included)
          await dir.vrfProofsStored();
          const reader = await ReadOnlyDirectory.open({
            config,
            storage: new StorageManager(db, { cache: false }),
            publicKey: dir.getPublicKey(),
          });
          try {
            assert.equal(reader.servesStoredVrfProofs, true);
            const keyless = [
              encodeLookupProof((await reader.lookup(label)).proof),
              encodeHistoryProof(
                (await reader.keyHistory(label, { kind: 'mostRecent', count: 1 })).proof,
              ),
              encodeHistoryProof((await reader.keyHistory(label)).proof),
            ];
            assert.deepEqual(keyless.map(toHex), [
              toHex(vectors.lookupProof),
              toHex(vectors.historyMostRecent1),
              toHex(vectors.historyComplete),
            ]);
          } finally {
            await reader.close();
          }

          // every label verifies at the end, and audits over many epochs and from epoch 0 verify
          for (const l of ['1', '2', '4', '8', '16']) {
            const { proof, epochHash } = await dir.lookup(utf8(l));
            lookupVerify(
              config,
              dir.getPublicKey(),
              epochHash.hash,
              epochHash.epoch,
              utf8(l),
              proof,
            );
            const h = await dir.keyHistory(utf8(l));
            keyHistoryVerify(
              config,
              dir.getPublicKey(),
              h.epochHash.hash,
              h.epochHash.epoch,
              utf8(l),
              h.proof,
            );
          }
          const all = await dir.audit(1n, 49n);
          assert.deepEqual(auditVerify(config, roots.slice(1), all), {
            startEpoch: 1n,
            endEpoch: 49n,
          });
          const fromZero = await dir.audit(0n, 3n);
          assert.equal(fromZero.proofs[0]!.unchangedNodes.length, 0);
          auditVerify(config, roots.slice(0, 4), fromZero);
          await dir.close();
        },
      );
    }
