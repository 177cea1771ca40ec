/**
 * Tree-node reads in bytes: SQLite itself writes the records (the conformance suite checks
 * them byte for byte against the codec), joined into one blob per statement; a row it
 * cannot write sends the batch through the row decoder (corrupt.test.ts).
 */

import assert from 'node:assert/strict';
import { after, test } from 'node:test';
import { ByteWriter, LABEL_BYTES, readNodeRecords, readRecord, ByteReader } from '@akd-ts/storage';
import { SqliteDatabase } from '../src/index.js';
import { leafLabel, nodeRecord, tempDir } from './support/helpers.js';

const tmp = tempDir('node-bytes');
after(tmp.remove);

test('SQLite answers node reads in bytes itself, a buffer per statement', async () => {
  const db = await SqliteDatabase.open(tmp.path('a.db'), { readChunkKeys: 2 });
  try {
    const records = [1, 2, 3, 4, 5].map((i) => nodeRecord(leafLabel(i), BigInt(i)));
    await db.batchSet(records);
    const labels = [leafLabel(5), leafLabel(9), leafLabel(1), leafLabel(3), leafLabel(2)];
    const codec = new ByteWriter(LABEL_BYTES * labels.length);
    for (const l of labels) codec.label(l);
    const answer = await db.batchGetNodeBytes(codec.done());
    // the row decoder's answer would be one buffer: these are SQLite's, one per chunk of two
    assert.equal(answer.buffers.length, 3);
    const read = Array.from(answer.buffer, (b, i) =>
      b < 0 ? undefined : readRecord(new ByteReader(answer.buffers[b]!, answer.starts[i]!)),
    );
    assert.deepEqual(read, await readNodeRecords(db, labels));
  } finally {
    await db.close();
  }
});
