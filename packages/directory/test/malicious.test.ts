import { after, test } from 'node:test';
import assert from 'node:assert/strict';
import { VersionFreshness, auditVerify, keyHistoryVerify, lookupVerify, utf8 } from '@akd-ts/core';
import { CONFIG_NAMES, openDirectory } from './support/build.js';
import { testStores } from '../../../test/support/stores.js';
import { Forger } from './support/forge.js';
import { domainError } from '../../../test/support/domain-errors.js';

const u = utf8;
const rejects = (f: () => unknown) => domainError(f, 'the forged proof verified').code;

const STORES = testStores();
after(() => Promise.all(STORES.map((s) => s.cleanup())));

for (const store of STORES)
  for (const name of CONFIG_NAMES) {
    async function setup() {
      const t = await openDirectory(name, { store });
      const forger = new Forger(t.config, t.storage);
      await t.dir.publish([
        { label: u('alice'), value: u('a1') },
        { label: u('bob'), value: u('b1') },
      ]);
      return { ...t, forger, pk: t.dir.getPublicKey() };
    }

    test(
      `${store.name}/${name}: an update without the stale leaf of the old version fails history verification`,
      { skip: store.skip },
      async () => {
        const { dir, forger, config, pk } = await setup();
        await forger.publish(
          [forger.fresh(u('alice'), 2n, u('a2'))],
          [forger.state(u('alice'), 0n, 2n, u('a2'))],
        );
        const { proof, epochHash } = await dir.keyHistory(u('alice'));
        const code = rejects(() =>
          keyHistoryVerify(config, pk, epochHash.hash, epochHash.epoch, u('alice'), proof),
        );
        assert.match(code, /^(VERIFY_|VRF_)/);
        await dir.close();
      },
    );

    test(
      `${store.name}/${name}: a stale leaf added one epoch late fails history verification`,
      { skip: store.skip },
      async () => {
        const { dir, forger, config, pk } = await setup();
        await forger.publish(
          [forger.fresh(u('alice'), 2n, u('a2'))],
          [forger.state(u('alice'), 0n, 2n, u('a2'))],
        );
        await forger.publish(
          [forger.stale(u('alice'), 1n), forger.fresh(u('carol'), 1n, u('c1'))],
          [forger.state(u('carol'), 0n, 1n, u('c1'))],
        );
        const { proof, epochHash } = await dir.keyHistory(u('alice'));
        assert.equal(
          rejects(() =>
            keyHistoryVerify(config, pk, epochHash.hash, epochHash.epoch, u('alice'), proof),
          ),
          'VERIFY_STALE_MISMATCH',
        );
        await dir.close();
      },
    );

    test(
      `${store.name}/${name}: a skipped version fails both lookup and history verification`,
      { skip: store.skip },
      async () => {
        const { dir, forger, config, pk } = await setup();
        await forger.publish(
          [forger.stale(u('alice'), 1n), forger.fresh(u('alice'), 3n, u('a3'))],
          [forger.state(u('alice'), 0n, 3n, u('a3'))],
        );
        const lookup = await dir.lookup(u('alice'));
        rejects(() =>
          lookupVerify(
            config,
            pk,
            lookup.epochHash.hash,
            lookup.epochHash.epoch,
            u('alice'),
            lookup.proof,
          ),
        );
        const history = await dir.keyHistory(u('alice'));
        assert.equal(
          rejects(() =>
            keyHistoryVerify(
              config,
              pk,
              history.epochHash.hash,
              history.epochHash.epoch,
              u('alice'),
              history.proof,
            ),
          ),
          'VERIFY_HISTORY',
        );
        await dir.close();
      },
    );

    test(
      `${store.name}/${name}: rewriting an existing leaf's value fails the audit, whatever proof the server builds`,
      { skip: store.skip },
      async () => {
        const { dir, forger, config } = await setup();
        const e1 = await dir.getEpochHash();
        await dir.publish([{ label: u('carol'), value: u('c1') }]);
        const aliceLeaf = forger.nodeLabel(u('alice'), VersionFreshness.Fresh, 1n);
        const forgedRoot = await forger.rewriteLeaf(
          aliceLeaf,
          config.computeFreshAzksValue(forger.ck, aliceLeaf, 1n, u('evil')),
        );
        const proof = await dir.audit(1n, 2n);
        assert.equal(
          rejects(() => auditVerify(config, [e1.hash, forgedRoot], proof)),
          'AUDIT_START_HASH_MISMATCH',
        );
        // claiming the rewritten leaf as inserted instead drops it from the old tree
        const step = proof.proofs[0]!;
        const index = step.unchangedNodes.findIndex((e) => e.label.equals(aliceLeaf));
        assert.ok(index >= 0, "alice's leaf is one of the unchanged subtree roots");
        const [moved] = step.unchangedNodes.splice(index, 1);
        step.inserted.push({
          label: moved!.label,
          value: config.computeFreshAzksValue(forger.ck, aliceLeaf, 1n, u('evil')),
        });
        assert.equal(
          rejects(() => auditVerify(config, [e1.hash, forgedRoot], proof)),
          'AUDIT_START_HASH_MISMATCH',
        );
        // and listing it both ways is a duplicate label
        step.unchangedNodes.push(moved!);
        assert.equal(
          rejects(() => auditVerify(config, [e1.hash, forgedRoot], proof)),
          'AUDIT_MALFORMED_PROOF',
        );
        await dir.close();
      },
    );
  }
