import { test } from 'node:test';
import assert from 'node:assert/strict';
import {
  ERROR_CODES,
  NodeLabel,
  decodeHistoryProof,
  decodeLookupProof,
  encodeHistoryProof,
  encodeLookupProof,
  fromUtf8,
  keyHistoryVerify,
  lookupVerify,
  type MembershipProof,
} from '@akd-ts/core';
import { loadVectors } from '../../../test/support/vectors.js';
import { configFor, runMutations, verifyVectors } from '../../../test/support/mutations.js';
import { domainError } from '../../../test/support/domain-errors.js';

const summary = (r: { epoch: bigint; version: bigint; value: Uint8Array }) => [
  r.epoch,
  r.version,
  fromUtf8(r.value),
];

for (const name of ['whatsapp_v1', 'experimental'] as const) {
  const vectors = loadVectors(name);

  test(`${name}: upstream's lookup and history proofs verify with the expected results`, () => {
    const { lookup, complete, mostRecent1 } = verifyVectors(vectors);
    assert.deepEqual(summary(lookup), [48n, 3n, '16,48']);
    assert.deepEqual(complete.map(summary), [
      [48n, 3n, '16,48'],
      [32n, 2n, '16,32'],
      [16n, 1n, '16,16'],
    ]);
    assert.deepEqual(mostRecent1.map(summary), [[48n, 3n, '16,48']]);
  });

  test(`${name}: any label in the outermost sibling proof verifies, as upstream's does; one level down it does not`, () => {
    const config = configFor(name);
    const { publicKey, epochHash, epoch, label } = vectors;
    const lookup = decodeLookupProof(vectors.lookupProof);
    const history = decodeHistoryProof(vectors.historyComplete);
    const paths: MembershipProof[] = [
      lookup.existenceProof,
      lookup.markerProof,
      lookup.freshnessProof.longestPrefixMembershipProof,
      ...history.updateProofs
        .flatMap((u) => [u.existenceProof, u.previousVersionProof ?? []])
        .flat(),
      ...history.nonExistenceOfFutureMarkerProofs.map((f) => f.longestPrefixMembershipProof),
    ];
    // the root's label in honest proofs; never hashed (spec 11.1)
    const junk = new NodeLabel(new Uint8Array(32).fill(0xab), 9);
    for (const path of paths) path.siblingProofs[0]!.label = junk;
    // through the wire and back, as a client would receive it
    const verifyLookup = () =>
      lookupVerify(
        config,
        publicKey,
        epochHash,
        epoch,
        label,
        decodeLookupProof(encodeLookupProof(lookup)),
      );
    const verifyHistory = () =>
      keyHistoryVerify(
        config,
        publicKey,
        epochHash,
        epoch,
        label,
        decodeHistoryProof(encodeHistoryProof(history)),
      );
    const { lookup: want, complete } = verifyVectors(vectors);
    assert.deepEqual(verifyLookup(), want);
    assert.deepEqual(verifyHistory(), complete);

    lookup.markerProof.siblingProofs[1]!.label = junk;
    assert.equal(domainError(verifyLookup).code, 'VERIFY_ROOT_MISMATCH');
    history.updateProofs[0]!.existenceProof.siblingProofs[1]!.label = junk;
    assert.equal(domainError(verifyHistory).code, 'VERIFY_ROOT_MISMATCH');
  });

  const outcomes = runMutations(vectors);
  for (const [proof, list] of Object.entries(outcomes)) {
    test(`${name}: ${list.length} named mutations of the ${proof} proof are rejected by the check that must catch each`, async (t) => {
      assert.ok(list.length >= 12, `at least twelve mutations, got ${list.length}`);
      for (const { name: mutation, code, expected } of list) {
        await t.test(mutation, () => {
          assert.ok(expected.length > 0, `${mutation}: an expected code is named`);
          for (const e of expected) assert.ok((ERROR_CODES as readonly string[]).includes(e), e);
          assert.ok(
            expected.includes(code),
            `${mutation}: ${code}, expected ${expected.join(' or ')}`,
          );
        });
      }
    });
  }
}
