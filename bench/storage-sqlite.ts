/**
 * SQLite driver throughput: batchSet of 10k and 100k tree-node records (new, and 10k
 * overwrites), batchGet of 10k keys (one call; 10 calls of 1,000), a walk's reads of 13 nodes
 * (as rows decoded into records, and in bytes as the walk reads them), getUserStateVersions of
 * 10k users, and sequential point gets, in rows per second.
 *
 *   npm run bench -- storage-sqlite [--runs 3] [--synchronous FULL|NORMAL|OFF] [--memory]
 *                    [--write-chunk 500] [--read-chunk 1000] [--cache-kib 65536] [--json]
 *
 * The store is a fresh file in a temporary directory (or ':memory:' with --memory), removed
 * afterwards; the record shapes are those of bench/storage-postgres.ts, so the two compare.
 * Each figure is the median of the runs.
 */

import { randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { cpus, loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import { nodeKey, readNodeRecords, readWalkNodes, type ValueStateRecord } from '@akd-ts/storage';
import { median, nodeRecord, nodeRecords, optionValue, randomLabel } from './support/common.js';
import { SqliteDatabase, type SynchronousMode } from '@akd-ts/storage-sqlite';

const args = process.argv.slice(2);
const value = (name: string) => optionValue(args, name);
const num = (name: string, fallback: number) => Number(value(name) ?? fallback);
const json = args.includes('--json');
const memory = args.includes('--memory');
const runs = num('runs', 3);
const synchronous = (value('synchronous') ?? 'FULL') as SynchronousMode;
const writeChunkRows = num('write-chunk', 500);
const readChunkKeys = num('read-chunk', 1000);
const cacheSizeKiB = num('cache-kib', 65536);

/** Times `fn` `runs` times and prints the median. */
async function measure(
  name: string,
  rows: number,
  fn: (run: number) => Promise<unknown>,
): Promise<void> {
  const times: number[] = [];
  for (let r = 0; r < runs; r++) {
    const t0 = performance.now();
    await fn(r);
    times.push(performance.now() - t0);
  }
  const ms = median(times);
  const row = { case: name, rows, ms, rowsPerSec: (rows * 1000) / ms };
  if (json) console.log(JSON.stringify(row));
  else {
    console.log(
      `${name.padEnd(52)} ${ms.toFixed(1).padStart(9)} ms ${Math.round(row.rowsPerSec).toLocaleString('en-US').padStart(10)} rows/s`,
    );
  }
}

const dir = mkdtempSync(join(tmpdir(), 'akd-bench-sqlite-'));
const db = await SqliteDatabase.open(memory ? ':memory:' : join(dir, 'bench.db'), {
  synchronous,
  writeChunkRows,
  readChunkKeys,
  cacheSizeKiB,
});
try {
  if (!json) {
    console.log(
      `SQLite driver (${memory ? ':memory:' : 'file, WAL'}), ${cpus().length} cores, load ` +
        `${loadavg()[0]!.toFixed(2)}, synchronous ${synchronous}, write chunks ${writeChunkRows}, ` +
        `read chunks ${readChunkKeys}, cache ${cacheSizeKiB} KiB, median of ${runs}`,
    );
  }
  // writes: new keys each run
  const batches10k = Array.from({ length: runs }, () => nodeRecords(10_000));
  await measure('batchSet 10k new node records', 10_000, (r) => db.batchSet(batches10k[r]!));
  const batches100k = Array.from({ length: runs }, () => nodeRecords(100_000));
  await measure('batchSet 100k new node records', 100_000, (r) => db.batchSet(batches100k[r]!));
  const overwrite = batches10k[0]!.map((rec, i) => nodeRecord(rec.label, i + 1));
  await measure('batchSet 10k existing node records (upsert)', 10_000, () =>
    db.batchSet(overwrite),
  );

  // reads: 10k keys of the 100k batch
  const keys = batches100k[0]!.slice(0, 10_000).map((r) => nodeKey(r.label));
  const check = (got: unknown[], n: number) => {
    if (got.length !== n) throw new Error(`expected ${n} records, got ${got.length}`);
  };
  await measure('batchGet 10k keys, one call', 10_000, async () =>
    check(await db.batchGet(keys), 10_000),
  );
  const slices = Array.from({ length: 10 }, (_, i) => keys.slice(i * 1000, (i + 1) * 1000));
  await measure('batchGet 10k keys, 10 calls of 1,000', 10_000, async () => {
    for (const s of slices) check(await db.batchGet(s), 1000);
  });
  await measure('get 1,000 keys one by one (point reads)', 1_000, async () => {
    for (const k of keys.slice(0, 1000)) await db.get(k);
  });
  // a lookup's walk: a few nodes a read (13 in 5 reads on a 100,000-label store), as records
  // decoded from rows, and as the walk reads them (in bytes SQLite writes, then decoded)
  const pick = () => batches100k[0]![Math.floor(Math.random() * 100_000)]!.label;
  const walks = Array.from({ length: 2000 }, () => Array.from({ length: 13 }, pick));
  await measure('walk reads of 13 nodes, 2,000 calls: rows', 26_000, async () => {
    for (const w of walks) check(await readNodeRecords(db, w), 13);
  });
  await measure('walk reads of 13 nodes, 2,000 calls: bytes', 26_000, async () => {
    for (const w of walks) check(await readWalkNodes(db, w, undefined), 13);
  });

  // users: 10k users with 3 states each
  const users = Array.from({ length: 10_000 }, () => randomBytes(16));
  const states: ValueStateRecord[] = users.flatMap((username, u) =>
    [1n, 2n, 3n].map((epoch) => ({
      kind: 'valueState' as const,
      username,
      epoch: epoch * 10n + BigInt(u % 7),
      version: epoch,
      label: randomLabel(),
      value: randomBytes(32),
    })),
  );
  await measure('batchSet 30k value states (10k users x 3)', 30_000, () => db.batchSet(states));
  await measure('getUserStateVersions 10k users, maxEpoch', 10_000, async () =>
    check(await db.getUserStateVersions(users, { kind: 'maxEpoch' }), 10_000),
  );
  await measure('getUserStateVersions 10k users, leqEpoch', 10_000, async () =>
    check(await db.getUserStateVersions(users, { kind: 'leqEpoch', epoch: 25n }), 10_000),
  );
} finally {
  await db.close();
  rmSync(dir, { recursive: true, force: true });
}
