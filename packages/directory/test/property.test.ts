import { after, test } from 'node:test';
import assert from 'node:assert/strict';
import fc from 'fast-check';
import {
  auditVerify,
  bytesEqual,
  keyHistoryVerify,
  lookupVerify,
  rootHashOfElements,
  utf8,
} from '@akd-ts/core';
import { MemoryDatabase, NodeType, type TreeNodeRecord } from '@akd-ts/storage';
import { CONFIG_NAMES, DEGREES, openDirectory } from './support/build.js';
import { testStores } from '../../../test/support/stores.js';

/** Epochs of updates: each a list of (label index, value) over a small label pool. */
const epochsArb = fc.array(
  fc.array(fc.tuple(fc.nat({ max: 11 }), fc.constantFrom('a', 'b', 'c', 'd')), { maxLength: 7 }),
  { minLength: 1, maxLength: 5 },
);

const STORES = testStores();
after(() => Promise.all(STORES.map((s) => s.cleanup())));

for (const store of STORES)
  for (const name of CONFIG_NAMES) {
    test(
      `${store.name}/${name}: random publishes keep every lookup, history and audit verifiable`,
      { skip: store.skip },
      async () => {
        await fc.assert(
          fc.asyncProperty(
            epochsArb,
            fc.nat({ max: 4 }),
            fc.constantFrom(...DEGREES),
            async (epochs, recent, degree) => {
              const { dir, config, db } = await openDirectory(name, {
                store,
                directory: { parallelism: degree.parallelism },
              });
              const pk = dir.getPublicKey();
              const expected = new Map<number, string[]>(); // label -> values in publish order
              const roots = [(await dir.getEpochHash()).hash];
              for (const updates of epochs) {
                const batch = new Map(updates); // the last value per label wins: no duplicates
                const before = await dir.getEpochHash();
                const result = await dir.publish(
                  [...batch].map(([l, v]) => ({ label: utf8(`label${l}`), value: utf8(v) })),
                );
                let changed = false;
                for (const [l, v] of batch) {
                  const history = expected.get(l) ?? [];
                  if (history[history.length - 1] !== v) {
                    history.push(v);
                    changed = true;
                  }
                  expected.set(l, history);
                }
                assert.equal(result.epoch, before.epoch + (changed ? 1n : 0n));
                if (changed) roots.push(result.hash);
              }
              const epochHash = await dir.getEpochHash();

              // the tree equals core's independent construction over all leaves (records of the
              // in-memory store can be listed)
              if (db instanceof MemoryDatabase) {
                const leaves = db
                  .allRecords()
                  .filter(
                    (r): r is TreeNodeRecord =>
                      r.kind === 'treeNode' && r.latest.nodeType === NodeType.Leaf,
                  )
                  .map((r) => ({
                    label: r.label,
                    value: config.hashLeafWithCommitment(r.latest.hash, r.latest.lastEpoch),
                  }));
                assert.ok(
                  bytesEqual(rootHashOfElements(config, leaves), epochHash.hash),
                  'independent root',
                );
              }

              for (const [l, values] of expected) {
                if (values.length === 0) continue;
                const label = utf8(`label${l}`);
                const lookup = await dir.lookup(label);
                const r = lookupVerify(
                  config,
                  pk,
                  epochHash.hash,
                  epochHash.epoch,
                  label,
                  lookup.proof,
                );
                assert.equal(new TextDecoder().decode(r.value), values[values.length - 1]);
                assert.equal(r.version, BigInt(values.length));
                const complete = await dir.keyHistory(label);
                const all = keyHistoryVerify(
                  config,
                  pk,
                  epochHash.hash,
                  epochHash.epoch,
                  label,
                  complete.proof,
                );
                assert.deepEqual(
                  all.map((x) => new TextDecoder().decode(x.value)),
                  [...values].reverse(),
                );
                const n = recent + 1;
                const part = await dir.keyHistory(label, { kind: 'mostRecent', count: n });
                const some = keyHistoryVerify(
                  config,
                  pk,
                  epochHash.hash,
                  epochHash.epoch,
                  label,
                  part.proof,
                  {
                    historyParams: { kind: 'mostRecent', count: n },
                  },
                );
                assert.equal(some.length, Math.min(n, values.length));
              }
              for (let e = 1; e < roots.length; e++) {
                auditVerify(
                  config,
                  [roots[e - 1]!, roots[e]!],
                  await dir.audit(BigInt(e - 1), BigInt(e)),
                );
              }
              if (roots.length > 2)
                auditVerify(config, roots, await dir.audit(0n, BigInt(roots.length - 1)));
              await dir.close();
            },
          ),
          { numRuns: store.name === 'memory' ? 10 : 3 },
        );
      },
    );
  }
