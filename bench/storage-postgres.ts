/**
 * PostgreSQL driver throughput: batchSet of 10k and 100k tree-node records (new, and 10k
 * overwrites), batchGet of 10k keys (one call; 10 calls of 1,000 at once; the same one after
 * another), getUserStateVersions of 10k users, and sequential point gets, in rows per second.
 *
 *   npm run bench -- storage-postgres [--url postgres://...] [--runs 5] [--pool 10]
 *                    [--write-chunk 5000] [--read-chunk 10000] [--json]
 *
 * The URL defaults to AKD_TEST_POSTGRES_URL. Everything happens in a fresh schema that is
 * dropped afterwards. Each figure is the median of the runs, and the best run beside it.
 */

import { randomBytes } from 'node:crypto';
import { cpus, loadavg } from 'node:os';
import pg from 'pg';
import { nodeKey, type TreeNodeRecord, type ValueStateRecord } from '@akd-ts/storage';
import { PostgresDatabase } from '@akd-ts/storage-postgres';
import { median, nodeRecord, nodeRecords, optionValue, randomLabel } from './support/common.js';

const args = process.argv.slice(2);
const value = (name: string) => optionValue(args, name);
const num = (name: string, fallback: number) => Number(value(name) ?? fallback);
const url = value('url') ?? process.env.AKD_TEST_POSTGRES_URL;
if (!url) {
  console.error('storage-postgres: pass --url postgres://... or set AKD_TEST_POSTGRES_URL');
  process.exit(2);
}
const json = args.includes('--json');
const runs = num('runs', 5);
const poolSize = num('pool', 10);
const writeChunkSize = num('write-chunk', 5_000);
const readChunkSize = num('read-chunk', 10_000);

interface Row {
  case: string;
  rows: number;
  /** Median over the runs. */
  ms: number;
  rowsPerSec: number;
  /** Fastest run: the least disturbed by other load on a shared machine. */
  bestMs: number;
  bestRowsPerSec: number;
}
const results: Row[] = [];

/** Times `fn` `runs` times, each on a fresh (untimed) `setup()`, and records the median. */
async function measure<T>(
  name: string,
  rows: number,
  fn: (input: T) => Promise<unknown>,
  setup: () => T = () => undefined as T,
): Promise<void> {
  const times: number[] = [];
  for (let r = 0; r < runs; r++) {
    const input = setup();
    const t0 = performance.now();
    await fn(input);
    times.push(performance.now() - t0);
  }
  const ms = median(times);
  const bestMs = Math.min(...times);
  const row = {
    case: name,
    rows,
    ms,
    rowsPerSec: (rows * 1000) / ms,
    bestMs,
    bestRowsPerSec: (rows * 1000) / bestMs,
  };
  results.push(row);
  if (json) console.log(JSON.stringify(row));
  else {
    const rate = (r: number) => Math.round(r).toLocaleString('en-US').padStart(9);
    console.log(
      `${name.padEnd(52)} ${ms.toFixed(1).padStart(8)} ms ${rate(row.rowsPerSec)} rows/s` +
        `   best ${bestMs.toFixed(1).padStart(8)} ms ${rate(row.bestRowsPerSec)} rows/s`,
    );
  }
}

const schema = `akd_bench_${randomBytes(4).toString('hex')}`;
const db = await PostgresDatabase.open(url, { schema, poolSize, writeChunkSize, readChunkSize });
try {
  if (!json) {
    console.log(
      `PostgreSQL driver, ${cpus().length} cores, load ${loadavg()[0]!.toFixed(2)}, pool ${poolSize}, ` +
        `write chunks ${writeChunkSize}, read chunks ${readChunkSize}, median of ${runs}`,
    );
  }
  // writes: new keys each run
  let last: TreeNodeRecord[] = [];
  const fresh = (n: number) => () => (last = nodeRecords(n));
  await measure('batchSet 10k new node records', 10_000, (b) => db.batchSet(b), fresh(10_000));
  const first10k = last;
  await measure('batchSet 100k new node records', 100_000, (b) => db.batchSet(b), fresh(100_000));
  await measure(
    'batchSet 10k existing node records (upsert)',
    10_000,
    (b) => db.batchSet(b),
    () => first10k.map((rec, i) => nodeRecord(rec.label, i + 1)),
  );

  // reads: 10k keys of the last 100k batch
  const keys = last.slice(0, 10_000).map((r) => nodeKey(r.label));
  const check = (got: unknown[], n: number) => {
    if (got.length !== n) throw new Error(`expected ${n} records, got ${got.length}`);
  };
  await measure('batchGet 10k keys, one call', 10_000, async () =>
    check(await db.batchGet(keys), 10_000),
  );
  const slices = Array.from({ length: 10 }, (_, i) => keys.slice(i * 1000, (i + 1) * 1000));
  await measure('batchGet 10k keys, 10 calls of 1,000 concurrently', 10_000, async () =>
    check((await Promise.all(slices.map((s) => db.batchGet(s)))).flat(), 10_000),
  );
  await measure('batchGet 10k keys, 10 calls of 1,000 one by one', 10_000, async () => {
    for (const s of slices) check(await db.batchGet(s), 1000);
  });
  await measure('get 1,000 keys one by one (point reads)', 1_000, async () => {
    for (const k of keys.slice(0, 1000)) await db.get(k);
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
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  await client.query(`DROP SCHEMA IF EXISTS "${schema}" CASCADE`);
  await client.end();
}
