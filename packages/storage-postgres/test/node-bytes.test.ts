// Tree-node reads in bytes: the server itself writes the records (the conformance suite
// checks them byte for byte against the codec), one per node, joined per statement; a row it
// cannot write sends the batch through the row decoder (corrupt.test.ts), and so does a
// statement the server refuses.
import { after, test } from 'node:test';
import assert from 'node:assert/strict';
import { NodeLabel } from '@akd-ts/core';
import {
  ByteReader,
  ByteWriter,
  LABEL_BYTES,
  readNodeRecords,
  readRecord,
  type NodeRecordBytes,
} from '@akd-ts/storage';
import { leafRecord } from '@akd-ts/storage/conformance';
import type { PostgresDatabase } from '@akd-ts/storage-postgres';
import { SKIP, SchemaJanitor, openDb, sql } from './support/postgres.js';

const schemas = new SchemaJanitor();
after(() => schemas.dropAll());
const pgTest = { skip: SKIP };

const labelOf = (i: number) => new NodeLabel(new Uint8Array(32).fill(i), 256);

function codecOf(labels: NodeLabel[]): Uint8Array {
  const w = new ByteWriter(LABEL_BYTES * labels.length);
  for (const l of labels) w.label(l);
  return w.done();
}

/** What an answer holds, read back as records. */
const readBack = (answer: NodeRecordBytes) =>
  Array.from(answer.buffer, (b, i) =>
    b < 0 ? undefined : readRecord(new ByteReader(answer.buffers[b]!, answer.starts[i]!)),
  );

async function storeOf(schema: string, options = {}): Promise<PostgresDatabase> {
  const db = await openDb(schema, options);
  await db.batchSet([1, 2, 3, 4, 5].map((i) => leafRecord(labelOf(i), BigInt(i), i)));
  return db;
}

const asked = [labelOf(5), labelOf(9), labelOf(1), labelOf(3), labelOf(2)];

test('the server answers node reads in bytes itself, a buffer per statement', pgTest, async () => {
  const db = await storeOf(schemas.fresh('nb'), { readChunkSize: 2 });
  try {
    const answer = await db.batchGetNodeBytes(codecOf(asked));
    // the row decoder's answer would be one buffer: these are the server's, one per chunk
    assert.equal(answer.buffers.length, 3);
    assert.deepEqual(readBack(answer), await readNodeRecords(db, asked));
  } finally {
    await db.close();
  }
});

test('a statement the server cannot run is answered through the row decoder', pgTest, async () => {
  const schema = schemas.fresh('nbf');
  const db = await storeOf(schema);
  await db.close();
  // a column of another type: the statement's int8send(numeric) does not exist (42883)
  await sql(`ALTER TABLE "${schema}".nodes ALTER COLUMN last_epoch TYPE numeric`);
  const reader = await openDb(schema, { migrate: false });
  try {
    const answer = await reader.batchGetNodeBytes(codecOf(asked));
    assert.equal(answer.buffers.length, 1, 'encoded here from the decoded rows');
    assert.deepEqual(readBack(answer), await readNodeRecords(reader, asked));
  } finally {
    await reader.close();
  }
});
