import { test } from 'node:test';
import assert from 'node:assert/strict';
import {
  AuditChain,
  ExperimentalConfiguration,
  WhatsAppV1Configuration,
  formatAuditBlobName,
  verifyAuditChain,
  walkAuditBlobs,
  type AuditBlob,
  type Configuration,
} from '@akd-ts/core';
import { LeafHistory, forgedBlob, memorySource } from './support/audit-blob-history.js';
import {
  domainError as failure,
  domainRejection as rejection,
} from '../../../test/support/domain-errors.js';

const CONFIGS: Configuration[] = [new WhatsAppV1Configuration(), new ExperimentalConfiguration()];

const keyed = (blobs: AuditBlob[]) =>
  blobs.map((b) => ({ key: formatAuditBlobName(b.name), data: b.data }));

for (const config of CONFIGS) {
  const history = new LeafHistory(config, 7).publishMany(12, 6);
  const latest = history.latest;

  test(`${config.name}: a whole history verifies as a chain under either naming, from the empty tree`, () => {
    for (const naming of ['end', 'start'] as const) {
      const r = verifyAuditChain(config, history.blobs(naming).reverse());
      assert.equal(r.naming, naming);
      assert.equal(r.verified, 12);
      assert.deepEqual(r.first, { epoch: 0n, rootHash: history.roots[0] });
      assert.deepEqual(r.last, { epoch: latest, rootHash: history.roots[12] });
    }
    assert.equal(failure(() => verifyAuditChain(config, [])).code, 'AUDIT_LENGTH_MISMATCH');
  });

  test(`${config.name}: anchors, trust on first use, and the empty tree at epoch 0`, () => {
    const anchored = new AuditChain(config, { anchor: { epoch: 5n, rootHash: history.roots[5]! } });
    assert.deepEqual(anchored.nextBlobEpochs(), [6n, 5n]);
    for (const blob of history.blobs('end', 5n)) anchored.verify(blob);
    assert.equal(anchored.head!.epoch, latest);
    assert.equal(anchored.naming, 'end');
    assert.equal(anchored.trustedOnFirstUse, false);
    assert.deepEqual(anchored.nextBlobEpochs(), [latest + 1n]);

    // with the naming still open, a blob from another history is refused after its proof checks
    const open = new AuditChain(config, { anchor: { epoch: 5n, rootHash: history.roots[5]! } });
    const stranger = new LeafHistory(config, 31337).publishMany(6, 2).blob(5n);
    const broken = failure(() => open.verify(stranger));
    assert.equal(broken.code, 'AUDIT_CHAIN_BROKEN');
    assert.equal(open.head!.epoch, 5n);

    const tofu = new AuditChain(config);
    assert.equal(tofu.nextBlobEpochs(), undefined);
    assert.equal(tofu.head, undefined);
    tofu.verify(history.blob(4n, 'start'));
    assert.equal(tofu.trustedOnFirstUse, true);
    assert.deepEqual(tofu.nextBlobEpochs(), [5n]);

    // a blob of the step 0 -> 1 must start at the empty tree even without an anchor
    const h2 = new LeafHistory(config, 99).publishMany(2, 3);
    const forkedGenesis = forgedBlob(h2.step(0n), 1n, history.roots[1]!, h2.roots[1]!);
    const e = failure(() => new AuditChain(config).verify(forkedGenesis));
    assert.ok(['AUDIT_CHAIN_BROKEN', 'AUDIT_START_HASH_MISMATCH'].includes(e.code));
    // a proof that does rebuild a fake "epoch 0" root is still refused: epoch 0 is empty
    const fakeZero = forgedBlob(history.step(1n), 0n, history.roots[1]!, history.roots[2]!);
    const z = failure(() => new AuditChain(config, { naming: 'start' }).verify(fakeZero));
    assert.equal(z.code, 'AUDIT_CHAIN_BROKEN');
    assert.match(z.message, /epoch 0 is the empty tree/);
    assert.throws(
      () => new AuditChain(config, { anchor: { epoch: 0n, rootHash: history.roots[3]! } }),
      RangeError,
    );
    assert.throws(
      () => new AuditChain(config, { anchor: { epoch: 2n, rootHash: new Uint8Array(31) } }),
      RangeError,
    );
    assert.throws(() => new AuditChain(config, { naming: 'middle' as 'end' }), RangeError);
    const genesis = new AuditChain(config, { anchor: { epoch: 0n, rootHash: history.roots[0]! } });
    genesis.verify(history.blob(0n));
    assert.equal(genesis.head!.epoch, 1n);
  });

  test(`${config.name}: a skipped epoch is AUDIT_EPOCH_GAP, a forked root AUDIT_CHAIN_BROKEN, and the chain stays put`, () => {
    for (const naming of ['end', 'start'] as const) {
      const chain = new AuditChain(config, { naming });
      chain.verify(history.blob(0n, naming));
      chain.verify(history.blob(1n, naming));
      const gap = failure(() => chain.verify(history.blob(3n, naming)));
      assert.equal(gap.code, 'AUDIT_EPOCH_GAP');
      assert.match(gap.message, /verified up to epoch 2: the steps from epoch 2 to 3 are missing/);
      const rewind = failure(() => chain.verify(history.blob(0n, naming)));
      assert.equal(rewind.code, 'AUDIT_EPOCH_GAP');
      assert.match(rewind.message, /already verified up to epoch 2/);
      // another history's blob for the right epoch: its previous root is not ours
      const other = new LeafHistory(config, 1234).publishMany(4, 6);
      const fork = failure(() => chain.verify(other.blob(2n, naming)));
      assert.equal(fork.code, 'AUDIT_CHAIN_BROKEN');
      assert.match(fork.message, /the verified chain has root/);
      assert.equal(chain.head!.epoch, 2n);
      assert.equal(chain.verified, 2);
      chain.verify(history.blob(2n, naming));
    }
  });

  test(`${config.name}: with auto naming the first decisive blob fixes it; a later blob of the other naming is refused`, () => {
    const chain = new AuditChain(config);
    chain.verify(history.blob(0n, 'end'));
    assert.equal(chain.naming, 'end');
    const e = failure(() => chain.verify(history.blob(2n, 'start')));
    assert.equal(
      e.code,
      'AUDIT_CHAIN_BROKEN',
      'blob 2 (start) starts from the root of epoch 2, not 1',
    );
    // the right step under the wrong naming: named 1 by its start epoch
    const s = failure(() => chain.verify(history.blob(1n, 'start')));
    assert.equal(s.code, 'AUDIT_EPOCH_GAP');
  });

  test(`${config.name}: an ambiguous first blob (inserting nothing) takes its naming from the anchor`, () => {
    const proof = history.step(latest); // the step latest -> latest + 1 inserts nothing
    const asStart = forgedBlob(proof, latest, history.roots[12]!, history.roots[12]!);
    const chain = new AuditChain(config, {
      anchor: { epoch: latest, rootHash: history.roots[12]! },
    });
    const v = chain.verify(asStart);
    assert.deepEqual([v.naming, v.ambiguous, v.endEpoch], ['start', true, latest + 1n]);
    const asEnd = forgedBlob(proof, latest + 1n, history.roots[12]!, history.roots[12]!);
    const chain2 = new AuditChain(config, {
      anchor: { epoch: latest, rootHash: history.roots[12]! },
    });
    assert.equal(chain2.verify(asEnd).naming, 'end');
  });

  test(`${config.name}: walking a source verifies every blob in order, with or without read-ahead`, async () => {
    for (const prefetch of [0, 3]) {
      const source = memorySource(keyed(history.blobs('end')));
      const chain = new AuditChain(config);
      const seen: bigint[] = [];
      const r = await walkAuditBlobs(chain, source, {
        prefetch,
        onVerified: (v, key) => {
          seen.push(v.endEpoch);
          assert.ok(key.startsWith(`${v.name.epoch}/`));
        },
      });
      assert.deepEqual(r, { verified: 12, ended: 'end' });
      assert.deepEqual(
        seen,
        [...Array(12).keys()].map((i) => BigInt(i + 1)),
      );
      assert.equal(chain.head!.epoch, latest);
      // a second walk resumes where the chain is: nothing new
      assert.deepEqual(await walkAuditBlobs(chain, source, { prefetch }), {
        verified: 0,
        ended: 'end',
      });
      // new epochs arrive and the same chain goes on
      const more = new LeafHistory(config, 7).publishMany(14, 6);
      source.blobs.push(...keyed(more.blobs('end', 12n)));
      assert.deepEqual(await walkAuditBlobs(chain, source, { prefetch }), {
        verified: 2,
        ended: 'end',
      });
    }
  });

  test(`${config.name}: the walk stops on limits and aborts, and starts from an anchor with open naming`, async () => {
    const source = memorySource(keyed(history.blobs('start')));
    const chain = new AuditChain(config, { anchor: { epoch: 4n, rootHash: history.roots[4]! } });
    assert.deepEqual(await walkAuditBlobs(chain, source, { limit: 3 }), {
      verified: 3,
      ended: 'limit',
    });
    assert.equal(chain.naming, 'start');
    assert.equal(chain.head!.epoch, 7n);
    const controller = new AbortController();
    const r = await walkAuditBlobs(chain, source, {
      signal: controller.signal,
      onVerified: () => controller.abort(),
    });
    assert.deepEqual(r, { verified: 1, ended: 'aborted' });
    assert.deepEqual(await walkAuditBlobs(new AuditChain(config), memorySource([])), {
      verified: 0,
      ended: 'empty',
    });
  });

  test(`${config.name}: a source with a missing epoch, two blobs for one epoch, or a bad key fails the walk`, async () => {
    const blobs = keyed(history.blobs('end'));
    const missing = memorySource(blobs.filter((b) => !b.key.startsWith('6/')));
    const chain = new AuditChain(config);
    const gap = await rejection(walkAuditBlobs(chain, missing));
    assert.equal(gap.code, 'AUDIT_EPOCH_GAP');
    assert.match(gap.message, /no blob for epoch 6, but the source holds one for epoch 7/);
    assert.equal(chain.head!.epoch, 5n, 'everything before the gap was verified');

    const other = new LeafHistory(config, 555).publishMany(8, 2);
    const forked = memorySource([...blobs, ...keyed([other.blob(7n)])]);
    const fork = await rejection(walkAuditBlobs(new AuditChain(config), forked, { prefetch: 2 }));
    assert.equal(fork.code, 'AUDIT_CHAIN_BROKEN');
    assert.match(fork.message, /2 blobs named with epoch 8/);

    const bad = memorySource([
      ...blobs.slice(0, 3),
      { key: '4/nothex/nothex', data: blobs[3]!.data },
    ]);
    assert.equal(
      (await rejection(walkAuditBlobs(new AuditChain(config), bad))).code,
      'AUDIT_BLOB_NAME',
    );

    const stray = memorySource(blobs.slice(0, 2));
    stray.keysAt = async (epoch) => (epoch === 2n ? [blobs[0]!.key] : []);
    const s = await rejection(
      walkAuditBlobs(
        new AuditChain(config, {
          naming: 'end',
          anchor: { epoch: 1n, rootHash: history.roots[1]! },
        }),
        stray,
      ),
    );
    assert.equal(s.code, 'AUDIT_BLOB_NAME');
    assert.match(s.message, /as a blob of epoch 2/);
  });

  test(`${config.name}: a failed read-ahead is retried when its epoch comes`, async () => {
    const source = memorySource(keyed(history.blobs('end')));
    const read = source.read;
    let failures = 0;
    source.read = async (key) => {
      if (key.startsWith('3/') && failures++ === 0) throw new Error('transient');
      return read(key);
    };
    const r = await walkAuditBlobs(new AuditChain(config), source, { prefetch: 4 });
    assert.deepEqual(r, { verified: 12, ended: 'end' });
    assert.equal(failures, 2);
  });
}
