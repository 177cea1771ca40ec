/**
 * Child processes for the driver's cross-process tests:
 *
 *   hold-lock <path>          takes the writer lock, prints "locked", then waits to be killed
 *   reader <path> <per-epoch> <epochs>
 *                             prints "ready", then reads the whole store in one batchGet
 *                             again and again until stdin closes, checking that the AZKS
 *                             record and the nodes it sees belong to the same epoch; prints
 *                             "read <epoch>" after each read and a JSON summary at the end
 */

import { AZKS_KEY, nodeKey, type AzksRecord, type TreeNodeRecord } from '@akd-ts/storage';
import { SqliteDatabase } from '../../src/index.js';
import { leafLabel } from './helpers.js';

const [mode, path, ...rest] = process.argv.slice(2);
const db = await SqliteDatabase.open(path!);

if (mode === 'hold-lock') {
  await db.acquireWriterLock();
  console.log('locked');
  setInterval(() => undefined, 60_000);
} else if (mode === 'reader') {
  const perEpoch = Number(rest[0]);
  const epochs = Number(rest[1]);
  const keys = [
    AZKS_KEY,
    ...Array.from({ length: perEpoch * epochs }, (_, i) => nodeKey(leafLabel(i))),
  ];
  let stop = false;
  process.stdin.on('end', () => (stop = true));
  process.stdin.resume();
  console.log('ready');
  let reads = 0;
  const seen = new Set<string>();
  const violations: string[] = [];
  while (!stop) {
    const records = await db.batchGet(keys);
    reads++;
    const azks = records.find((r): r is AzksRecord => r.kind === 'azks');
    const nodes = records.filter((r): r is TreeNodeRecord => r.kind === 'treeNode');
    const epoch = azks?.latestEpoch ?? 0n;
    seen.add(String(epoch));
    const expected = Number(epoch) * perEpoch;
    const tooNew = nodes.filter((n) => n.latest.lastEpoch > epoch).length;
    if (nodes.length !== expected || (azks && azks.numNodes !== BigInt(expected)) || tooNew > 0) {
      violations.push(
        `epoch ${epoch}: ${nodes.length} nodes (${tooNew} newer), expected ${expected}`,
      );
    }
    console.log(`read ${epoch}`);
    await new Promise((resolve) => setImmediate(resolve));
  }
  console.log(JSON.stringify({ reads, epochs: [...seen], violations: violations.slice(0, 5) }));
  await db.close();
} else {
  throw new Error(`unknown mode ${mode}`);
}
