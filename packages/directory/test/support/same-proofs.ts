/**
 * Test helper: a reader's proofs compared byte for byte with the ones a writer computes.
 */

import assert from 'node:assert/strict';
import { encodeHistoryProof, encodeLookupProof, toHex, type AkdLabel } from '@akd-ts/core';
import type { Directory, ReadOnlyDirectory } from '@akd-ts/directory';

/** Asserts that `reader` serves the lookups and histories of `labels` as `dir` computes them. */
export async function assertSameProofs(
  dir: Directory,
  reader: ReadOnlyDirectory,
  labels: AkdLabel[],
  where: string,
): Promise<void> {
  await reader.refresh();
  const mine = await dir.batchLookup(labels);
  const theirs = await reader.batchLookup(labels);
  assert.deepEqual(theirs.epochHash, mine.epochHash, where);
  for (let i = 0; i < labels.length; i++) {
    const a = encodeLookupProof(mine.proofs[i]!);
    assert.equal(toHex(encodeLookupProof(theirs.proofs[i]!)), toHex(a), `${where}: lookup ${i}`);
  }
  for (const label of labels) {
    for (const params of [
      { kind: 'complete' } as const,
      { kind: 'mostRecent', count: 1 } as const,
    ]) {
      const a = await dir.keyHistory(label, params);
      const b = await reader.keyHistory(label, params);
      assert.equal(
        toHex(encodeHistoryProof(b.proof)),
        toHex(encodeHistoryProof(a.proof)),
        `${where}: history of ${toHex(label)} (${params.kind})`,
      );
    }
  }
}
