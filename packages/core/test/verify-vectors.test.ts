import { test } from 'node:test';
import assert from 'node:assert/strict';
import { ERROR_CODES, fromUtf8 } from '@akd-ts/core';
import { loadVectors } from '../../../test/support/vectors.js';
import { runMutations, verifyVectors } from '../../../test/support/mutations.js';

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
