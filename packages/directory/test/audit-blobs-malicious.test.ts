/**
 * A malicious blob server over a real directory: blobs built from the directory's own proofs
 * and altered the way a dishonest operator would, each refused by the auditor's chain with
 * its documented code (docs/auditor.md).
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { AuditChain, verifyAuditBlob, type AuditBlob } from '@akd-ts/core';
import { AuditBlobCatalog } from '@akd-ts/directory';
import { CONFIG_NAMES } from './support/build.js';
import { MaliciousBlobServer, allBlobs, recordedDirectory } from './support/audit-blob-forge.js';
import { domainCode as codeOf } from '../../../test/support/domain-errors.js';

for (const name of CONFIG_NAMES) {
  async function setup() {
    const t = await recordedDirectory(name, 8);
    const honest = await allBlobs(t);
    /** A chain that verified the honest blobs up to epoch `upTo`. */
    const chainAt = (upTo: number) => {
      const chain = new AuditChain(t.config, { anchor: { epoch: 0n, rootHash: t.roots[0]! } });
      for (const b of honest.slice(0, upTo)) chain.verify(b);
      return chain;
    };
    return { t, honest, chainAt, server: new MaliciousBlobServer(t) };
  }
  const verdict = (chain: AuditChain, blob: AuditBlob) => codeOf(() => chain.verify(blob));

  test(`${name}: forged steps served by a malicious server each fail with their own code`, async () => {
    const { t, chainAt, server } = await setup();
    assert.equal(verdict(chainAt(6), await server.replacedValue(6n)), 'AUDIT_MALFORMED_PROOF');
    assert.equal(
      verdict(chainAt(6), await server.removedLeaf(6n, false)),
      'AUDIT_START_HASH_MISMATCH',
    );
    assert.equal(
      verdict(chainAt(6), await server.removedLeaf(6n, true)),
      'AUDIT_END_HASH_MISMATCH',
    );
    assert.equal(verdict(chainAt(6), await server.duplicateLabel(6n)), 'AUDIT_MALFORMED_PROOF');
    assert.equal(verdict(chainAt(6), await server.nestedLabel(6n)), 'AUDIT_MALFORMED_PROOF');
    // the honest blob still verifies after all that
    assert.equal(chainAt(6).verify((await allBlobs(t))[6]!).endEpoch, 7n);
    await t.dir.close();
  });

  test(`${name}: a skipped epoch and a forked history are refused by the chain, not by the blob`, async () => {
    const { t, honest, chainAt } = await setup();
    verifyAuditBlob(t.config, honest[7]!);
    assert.equal(verdict(chainAt(6), honest[7]!), 'AUDIT_EPOCH_GAP');
    const other = await recordedDirectory(name, 8, 'other');
    const fork = (await allBlobs(other))[6]!;
    verifyAuditBlob(t.config, fork);
    assert.equal(verdict(chainAt(6), fork), 'AUDIT_CHAIN_BROKEN');
    await other.dir.close();
    await t.dir.close();
  });

  test(`${name}: a value rewritten in place in the tree is caught, whatever name the server gives the blob`, async () => {
    const { t, chainAt } = await setup();
    const proof = await t.dir.audit(7n, 8n);
    const leaf = proof.proofs[0]!.unchangedNodes.find((e) => e.label.len === 256)!;
    await t.forger.rewriteLeaf(leaf.label, new Uint8Array(32).fill(0xee));
    // the catalog names the last step from the rewritten tree's own proof: it starts from a
    // root of epoch 7 that the chain never verified
    const served = (await new AuditBlobCatalog(t.dir).blobAt(8n))!;
    verifyAuditBlob(t.config, served); // consistent on its own
    assert.equal(verdict(chainAt(7), served), 'AUDIT_CHAIN_BROKEN');
    // named with the true root of epoch 7 instead, its proof cannot rebuild that root
    const renamed = { ...served, name: { ...served.name, previousHash: t.roots[7]! } };
    assert.equal(verdict(chainAt(7), renamed), 'AUDIT_START_HASH_MISMATCH');
    await t.dir.close();
  });
}
