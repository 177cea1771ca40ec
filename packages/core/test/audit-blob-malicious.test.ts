/**
 * A malicious publisher against the auditor: each case builds the blobs a dishonest server
 * would serve to hide a change to history, shows where a naive verifier (upstream 0.12: one
 * blob at a time, duplicate labels resolved by the last one) would accept them, and checks
 * that ours refuses each with its documented code (docs/auditor.md, "What the auditor rejects").
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import {
  AuditChain,
  ExperimentalConfiguration,
  WhatsAppV1Configuration,
  bytesEqual,
  formatAuditBlobName,
  rootHashOfElements,
  verifyAuditBlob,
  walkAuditBlobs,
  type AuditBlob,
  type AzksElement,
  type Configuration,
} from '@akd-ts/core';
import { LeafHistory, forgedBlob, memorySource } from './support/audit-blob-history.js';
import { domainCode as codeOf } from '../../../test/support/domain-errors.js';

const CONFIGS: Configuration[] = [new WhatsAppV1Configuration(), new ExperimentalConfiguration()];

/** Upstream 0.12's rebuild: a repeated label silently replaces the earlier one. */
function naiveRoot(config: Configuration, elements: AzksElement[]): Uint8Array {
  const byLabel = new Map<string, AzksElement>();
  for (const e of elements) byLabel.set(e.label.toString(), e);
  return rootHashOfElements(config, [...byLabel.values()]);
}

for (const config of CONFIGS) {
  /** Four honest epochs; the server misbehaves in the step 4 -> 5. */
  function setup() {
    const h = new LeafHistory(config, 42).publishMany(4, 8);
    const fresh = [h.randomLabel(), h.randomLabel()].map((label, i) => ({
      label,
      value: new Uint8Array(32).fill(0x50 + i),
    }));
    const bound = (e: AzksElement, epoch = 5n) => ({
      label: e.label,
      value: config.hashLeafWithCommitment(e.value, epoch),
    });
    const old = h.step(4n).unchangedNodes; // every leaf at epoch 4, as the tree holds them
    const chain = () => {
      const c = new AuditChain(config, { naming: 'end' });
      for (const b of h.blobs('end')) c.verify(b);
      return c;
    };
    return { h, fresh, bound, old, chain, root4: h.roots[4]! };
  }

  test(`${config.name}: an existing leaf's value replaced is AUDIT_MALFORMED_PROOF (a naive verifier accepts it)`, () => {
    const { h, fresh, bound, old, chain, root4 } = setup();
    const victim = h.leaves[3]!;
    const evil = { label: victim.label, value: new Uint8Array(32).fill(0xee) };
    // the root the server publishes: the victim's leaf now holds the evil value
    const forgedRoot = rootHashOfElements(config, [
      ...old.filter((e) => !e.label.equals(victim.label)),
      bound(evil),
      ...fresh.map((e) => bound(e)),
    ]);
    // the proof: the old leaf as unchanged, and the evil value "inserted" under the same label
    const proof = { unchangedNodes: old, inserted: [...fresh, evil] };
    const naiveEnd = naiveRoot(config, [...old, ...proof.inserted.map((e) => bound(e))]);
    assert.ok(bytesEqual(naiveEnd, forgedRoot), 'upstream 0.12 would rebuild the forged root');
    assert.ok(bytesEqual(rootHashOfElements(config, old), root4), 'and the old one');
    const blob = forgedBlob(proof, 5n, root4, forgedRoot);
    assert.equal(
      codeOf(() => verifyAuditBlob(config, blob)),
      'AUDIT_MALFORMED_PROOF',
    );
    assert.equal(
      codeOf(() => chain().verify(blob)),
      'AUDIT_MALFORMED_PROOF',
    );
    // the proof the forged tree itself gives (the leaf rewritten in place) fails at the old root
    const inPlace = {
      unchangedNodes: old.map((e) =>
        e.label.equals(victim.label) ? bound(evil, victim.epoch) : e,
      ),
      inserted: fresh,
    };
    const rewritten = forgedBlob(inPlace, 5n, root4, forgedRoot);
    assert.equal(
      codeOf(() => chain().verify(rewritten)),
      'AUDIT_START_HASH_MISMATCH',
    );
  });

  test(`${config.name}: a leaf removed is AUDIT_START_HASH_MISMATCH, or AUDIT_END_HASH_MISMATCH, whichever root the proof keeps`, () => {
    const { h, fresh, bound, old, chain, root4 } = setup();
    const gone = h.leaves[5]!.label;
    const kept = old.filter((e) => !e.label.equals(gone));
    const forgedRoot = rootHashOfElements(config, [...kept, ...fresh.map((e) => bound(e))]);
    const withoutLeaf = forgedBlob(
      { unchangedNodes: kept, inserted: fresh },
      5n,
      root4,
      forgedRoot,
    );
    assert.equal(
      codeOf(() => chain().verify(withoutLeaf)),
      'AUDIT_START_HASH_MISMATCH',
    );
    const withLeaf = forgedBlob({ unchangedNodes: old, inserted: fresh }, 5n, root4, forgedRoot);
    assert.equal(
      codeOf(() => chain().verify(withLeaf)),
      'AUDIT_END_HASH_MISMATCH',
    );
  });

  test(`${config.name}: a duplicate label or a nested label is AUDIT_MALFORMED_PROOF`, () => {
    const { fresh, bound, old, chain, root4 } = setup();
    const honestEnd = rootHashOfElements(config, [...old, ...fresh.map((e) => bound(e))]);
    const duplicate = forgedBlob(
      { unchangedNodes: old, inserted: [...fresh, { ...fresh[0]!, value: new Uint8Array(32) }] },
      5n,
      root4,
      honestEnd,
    );
    assert.equal(
      codeOf(() => chain().verify(duplicate)),
      'AUDIT_MALFORMED_PROOF',
    );
    // a subtree root claimed unchanged above a leaf listed on its own
    const nested = forgedBlob(
      {
        unchangedNodes: [...old, { label: old[0]!.label.getPrefix(6), value: new Uint8Array(32) }],
        inserted: fresh,
      },
      5n,
      root4,
      honestEnd,
    );
    assert.equal(
      codeOf(() => chain().verify(nested)),
      'AUDIT_MALFORMED_PROOF',
    );
  });

  test(`${config.name}: a skipped epoch is AUDIT_EPOCH_GAP, though every blob verifies on its own`, async () => {
    const { h } = setup();
    h.publishMany(3, 4); // epochs 5-7
    const blobs = h.blobs('end');
    const served = blobs.filter((b) => b.name.epoch !== 6n);
    for (const b of served) verifyAuditBlob(config, b); // a one-blob-at-a-time verifier is happy
    const chain = new AuditChain(config, { naming: 'end' });
    for (const b of served.slice(0, 5)) chain.verify(b);
    assert.equal(
      codeOf(() => chain.verify(served[5]!)),
      'AUDIT_EPOCH_GAP',
    );
    // the same history walked from a source: the missing epoch is found, not mistaken for the end
    const source = memorySource(
      served.map((b) => ({ key: formatAuditBlobName(b.name), data: b.data })),
    );
    await assert.rejects(walkAuditBlobs(new AuditChain(config), source), {
      code: 'AUDIT_EPOCH_GAP',
    });
    // two epochs' leaves passed off as one step: bound to the wrong epoch, they rebuild nothing
    const merged = forgedBlob(
      {
        unchangedNodes: h.step(4n).unchangedNodes,
        inserted: [...h.step(4n).inserted, ...h.step(5n).inserted],
      },
      6n,
      h.roots[4]!,
      h.roots[6]!,
    );
    assert.equal(
      codeOf(() => verifyAuditBlob(config, merged)),
      'AUDIT_END_HASH_MISMATCH',
    );
  });

  test(`${config.name}: a forked history (two roots for one epoch) is AUDIT_CHAIN_BROKEN`, () => {
    const { h, fresh, bound, root4 } = setup();
    // blob 5 starts from a root of epoch 4 that the chain never verified (another tree)
    const other = new LeafHistory(config, 4242).publishMany(4, 8);
    const forkEnd = rootHashOfElements(config, [
      ...other.step(4n).unchangedNodes,
      ...fresh.map((e) => bound(e)),
    ]);
    const fork: AuditBlob = forgedBlob(
      { unchangedNodes: other.step(4n).unchangedNodes, inserted: fresh },
      5n,
      other.roots[4]!,
      forkEnd,
    );
    verifyAuditBlob(config, fork); // valid on its own
    const chain = new AuditChain(config, { naming: 'end' });
    for (const b of h.blobs('end')) chain.verify(b);
    assert.equal(
      codeOf(() => chain.verify(fork)),
      'AUDIT_CHAIN_BROKEN',
    );
    assert.ok(!bytesEqual(root4, other.roots[4]!));
  });

  test(`${config.name}: a backdated insertion (a new leaf bound to an older epoch) is AUDIT_END_HASH_MISMATCH`, () => {
    const { fresh, bound, old, chain, root4 } = setup();
    const backdated = rootHashOfElements(config, [...old, ...fresh.map((e) => bound(e, 3n))]);
    const blob = forgedBlob({ unchangedNodes: old, inserted: fresh }, 5n, root4, backdated);
    assert.equal(
      codeOf(() => chain().verify(blob)),
      'AUDIT_END_HASH_MISMATCH',
    );
  });
}
