import { test } from 'node:test';
import assert from 'node:assert/strict';
import {
  AkdError,
  AuditChain,
  formatAuditBlobName,
  parseAuditBlobName,
  verifyAuditBlob,
  verifyAuditChain,
  type AppendOnlyProof,
} from '@akd-ts/core';
import {
  AuditBlobCatalog,
  exportAuditBlobs,
  stepRoots,
  type AuditBlobDirectory,
  type ExportedAuditBlob,
} from '@akd-ts/directory';
import { CONFIG_NAMES, openDirectory } from './support/build.js';
import { allBlobs, corruptLeaf, recordedDirectory } from './support/audit-blob-forge.js';

const isCode = (code: string) => (e: unknown) => e instanceof AkdError && e.code === code;

async function collect(it: AsyncIterable<ExportedAuditBlob>): Promise<ExportedAuditBlob[]> {
  const out: ExportedAuditBlob[] = [];
  for await (const b of it) out.push(b);
  return out;
}

for (const name of CONFIG_NAMES) {
  test(`${name}: blobs exported for 50 epochs carry the published roots and verify as one chain`, async () => {
    const t = await recordedDirectory(name, 50);
    for (const naming of ['end', 'start'] as const) {
      const blobs = await allBlobs(t, naming);
      assert.equal(blobs.length, 50);
      blobs.forEach((b, i) => {
        assert.equal(b.startEpoch, BigInt(i));
        assert.equal(b.name.epoch, naming === 'end' ? BigInt(i + 1) : BigInt(i));
        assert.deepEqual(b.name.previousHash, t.roots[i], `root of epoch ${i}`);
        assert.deepEqual(b.name.currentHash, t.roots[i + 1], `root of epoch ${i + 1}`);
        assert.equal(b.key, formatAuditBlobName(b.name));
        assert.deepEqual(parseAuditBlobName(b.key), b.name);
      });
      const r = verifyAuditChain(t.config, blobs, {
        anchor: { epoch: 0n, rootHash: t.roots[0]! },
      });
      assert.deepEqual([r.naming, r.verified, r.last.epoch], [naming, 50, 50n]);
      assert.deepEqual(r.last.rootHash, t.roots[50]);
    }
    // several steps per audit call give the same blobs
    const batched = await collect(exportAuditBlobs(t.dir, 10n, 20n, { stepsPerProof: 4 }));
    const single = await collect(exportAuditBlobs(t.dir, 10n, 20n));
    assert.deepEqual(
      batched.map((b) => b.key),
      single.map((b) => b.key),
    );
    await t.dir.close();
  });

  test(`${name}: stepRoots runs spec 11.5 backwards`, async () => {
    const t = await recordedDirectory(name, 3);
    const proof = await t.dir.audit(1n, 2n);
    const roots = stepRoots(t.config, proof.proofs[0]!, 2n);
    assert.deepEqual(roots, { previousHash: t.roots[1], currentHash: t.roots[2] });
    await t.dir.close();
  });

  test(`${name}: exports outside the history are DIRECTORY_INVALID_EPOCH`, async () => {
    const t = await recordedDirectory(name, 3);
    await assert.rejects(
      collect(exportAuditBlobs(t.dir, 2n, 2n)),
      isCode('DIRECTORY_INVALID_EPOCH'),
    );
    await assert.rejects(
      collect(exportAuditBlobs(t.dir, -1n, 2n)),
      isCode('DIRECTORY_INVALID_EPOCH'),
    );
    await assert.rejects(
      collect(exportAuditBlobs(t.dir, 1n, 4n)),
      isCode('DIRECTORY_INVALID_EPOCH'),
    );
    await assert.rejects(
      collect(exportAuditBlobs(t.dir, 0n, 1n, { naming: 'middle' as 'end' })),
      RangeError,
    );
    await t.dir.close();
  });

  test(`${name}: a corrupt tree (a leaf changed under unchanged ancestors) exports no broken chain`, async () => {
    const t = await recordedDirectory(name, 12);
    const proof = await t.dir.audit(11n, 12n);
    const leaf = proof.proofs[0]!.unchangedNodes.find((e) => e.label.len === 256);
    assert.ok(leaf !== undefined, 'the step keeps an old leaf unchanged');
    await corruptLeaf(t, leaf.label, new Uint8Array(32).fill(0xee));
    t.storage.flushCache();
    await assert.rejects(collect(exportAuditBlobs(t.dir, 0n, 12n)), (e: unknown) => {
      assert.ok(isCode('DIRECTORY_TREE')(e), String(e));
      assert.match(
        (e as Error).message,
        /disagree on the root at epoch|not at the directory's root/,
      );
      return true;
    });
    await t.dir.close();
  });

  test(`${name}: a tree rewritten consistently exports another history, which an auditor with state refuses`, async () => {
    const t = await recordedDirectory(name, 8);
    const chain = new AuditChain(t.config);
    for (const blob of await allBlobs(t)) chain.verify(blob); // the auditor's earlier run
    const proof = await t.dir.audit(7n, 8n);
    const leaf = proof.proofs[0]!.unchangedNodes.find((e) => e.label.len === 256)!;
    await t.forger.rewriteLeaf(leaf.label, new Uint8Array(32).fill(0xee));
    await t.dir.publish([{ label: new Uint8Array([9]), value: new Uint8Array([9]) }]);
    const next = await collect(exportAuditBlobs(t.dir, 8n, 9n));
    assert.throws(() => chain.verify(next[0]!), isCode('AUDIT_CHAIN_BROKEN'));
    await t.dir.close();
  });

  test(`${name}: the catalog lists blob names in S3 key order, page by page`, async () => {
    const t = await recordedDirectory(name, 23);
    const catalog = new AuditBlobCatalog(t.dir);
    const all = await catalog.list({ maxKeys: 1000 });
    assert.equal(all.isTruncated, false);
    const epochs = all.contents.map((c) => parseAuditBlobName(c.key).epoch);
    assert.deepEqual(
      epochs.map(String),
      Array.from({ length: 23 }, (_, i) => String(i + 1)).sort(),
    );
    // paging with start-after the last key gives the same list
    const paged: string[] = [];
    let after: string | undefined;
    for (;;) {
      const page = await catalog.list({ maxKeys: 5, startAfter: after });
      paged.push(...page.contents.map((c) => c.key));
      if (!page.isTruncated) break;
      after = page.contents[page.contents.length - 1]!.key;
    }
    assert.deepEqual(
      paged,
      all.contents.map((c) => c.key),
    );
    // a prefix of one epoch, a prefix with the hashes, and one that matches nothing
    const twelve = all.contents.find((c) => c.key.startsWith('12/'))!;
    assert.deepEqual((await catalog.list({ prefix: '12/', maxKeys: 10 })).contents, [twelve]);
    assert.deepEqual(
      (await catalog.list({ prefix: twelve.key.slice(0, 10), maxKeys: 10 })).contents,
      [twelve],
    );
    assert.deepEqual(
      (await catalog.list({ prefix: '12/ff', maxKeys: 10 })).contents.length,
      twelve.key.startsWith('12/ff') ? 1 : 0,
    );
    assert.deepEqual((await catalog.list({ prefix: '99/', maxKeys: 10 })).contents, []);
    assert.deepEqual((await catalog.list({ prefix: '1', maxKeys: 0 })).isTruncated, true);
    assert.equal(
      (await catalog.list({ prefix: twelve.key.slice(0, 10), maxKeys: 0 })).isTruncated,
      true,
    );
    // each listed blob verifies, its size is its length
    const blob = (await catalog.blobAt(12n))!;
    assert.equal(blob.key, twelve.key);
    assert.equal(blob.data.length, twelve.size);
    assert.equal(verifyAuditBlob(t.config, blob).endEpoch, 12n);
    assert.equal(await catalog.blobAt(0n), undefined);
    assert.equal(await catalog.blobAt(24n), undefined);
    // a new epoch appears in the listing
    await t.dir.publish([{ label: new Uint8Array([1]), value: new Uint8Array([2]) }]);
    assert.ok((await catalog.blobAt(24n)) !== undefined);
    await t.dir.close();
  });

  test(`${name}: a start-named catalog lists epochs 0 to latest - 1; an empty directory lists nothing`, async () => {
    const t = await recordedDirectory(name, 3);
    const catalog = new AuditBlobCatalog(t.dir, { naming: 'start' });
    const keys = (await catalog.list({ maxKeys: 10 })).contents.map((c) => c.key.split('/')[0]);
    assert.deepEqual(keys, ['0', '1', '2']);
    assert.equal(verifyAuditBlob(t.config, (await catalog.blobAt(0n))!).naming, 'start');
    assert.throws(() => new AuditBlobCatalog(t.dir, { naming: 'x' as 'end' }), RangeError);
    await t.dir.close();
    const empty = await openDirectory(name);
    const c2 = new AuditBlobCatalog(empty.dir);
    assert.deepEqual(await c2.list({ maxKeys: 10 }), { contents: [], isTruncated: false });
    assert.equal(await c2.blobAt(1n), undefined);
    await empty.dir.close();
  });
}

test('the catalog computes a blob once for concurrent requests, and remembers names beyond its blob cache', async () => {
  const t = await recordedDirectory('whatsapp_v1', 6);
  let audits = 0;
  const counting: AuditBlobDirectory = {
    config: t.dir.config,
    getEpochHash: () => t.dir.getEpochHash(),
    audit: (s, e) => {
      audits++;
      return t.dir.audit(s, e);
    },
  };
  const catalog = new AuditBlobCatalog(counting, { maxBlobs: 1, maxNames: 100 });
  const [a, b] = await Promise.all([catalog.blobAt(3n), catalog.blobAt(3n)]);
  assert.equal(a, b);
  assert.equal(audits, 1);
  await catalog.list({ maxKeys: 100 });
  assert.equal(audits, 6, 'one proof per listed epoch');
  await catalog.list({ maxKeys: 100 });
  assert.equal(audits, 6, 'names are remembered');
  await catalog.blobAt(1n); // evicted from the one-blob cache: computed again
  assert.equal(audits, 7);
  await t.dir.close();
});

test('a catalog over a directory whose latest step does not end at its root reports DIRECTORY_TREE', async () => {
  const t = await recordedDirectory('whatsapp_v1', 3);
  const lying: AuditBlobDirectory = {
    config: t.dir.config,
    audit: (s, e): Promise<AppendOnlyProof> => t.dir.audit(s, e),
    getEpochHash: async () => ({ epoch: 3n, hash: t.roots[2]! }),
  };
  await assert.rejects(new AuditBlobCatalog(lying).blobAt(3n), isCode('DIRECTORY_TREE'));
  await assert.rejects(collect(exportAuditBlobs(lying, 2n, 3n)), isCode('DIRECTORY_TREE'));
  // a step 0 -> 1 that does not start at the empty tree
  const shifted: AuditBlobDirectory = {
    ...lying,
    audit: async (s, e) => {
      const p = await t.dir.audit(s + 1n, e + 1n);
      return { ...p, epochs: p.epochs.map((x) => x - 1n) };
    },
  };
  await assert.rejects(collect(exportAuditBlobs(shifted, 0n, 1n)), (e: unknown) => {
    assert.ok(isCode('DIRECTORY_TREE')(e));
    assert.match((e as Error).message, /does not start at the empty tree/);
    return true;
  });
  // an epoch before the latest is not checked against it
  assert.ok((await new AuditBlobCatalog(lying).blobAt(2n)) !== undefined);
  await t.dir.close();
});

test('a chain resumed from an anchor verifies the directory from there on', async () => {
  const t = await recordedDirectory('experimental', 8);
  const chain = new AuditChain(t.config, { anchor: { epoch: 5n, rootHash: t.roots[5]! } });
  for await (const blob of exportAuditBlobs(t.dir, 5n, 8n)) chain.verify(blob);
  assert.deepEqual(chain.head, { epoch: 8n, rootHash: t.roots[8] });
  await t.dir.close();
});
