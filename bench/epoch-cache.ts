/**
 * A proof server's record cache across epochs: one keyless reader keeps its cache when a new
 * epoch comes (`ReadOnlyDirectory.refresh` drops the AZKS record and the root, and walks read
 * again the nodes a later epoch rewrote, found by the write epochs their parents record), the
 * other flushes it at every epoch, as refresh did before; side by side on one store.
 *
 *   npm run bench -- epoch-cache [--labels 100000] [--epochs 10] [--updates 1000]
 *                                [--lookups 2000] [--store sqlite|postgres] [--url URL] [--json]
 *
 * A directory of `--labels` labels with its VRF proofs stored, in a SQLite file or a
 * PostgreSQL schema of its own. Both readers open it as `akd serve`'s proof servers do (their
 * page cache and map, `proofCache`), and look up the same `--lookups` labels to warm. Then
 * `--epochs` times: the writer publishes `--updates` updates of labels spread over the
 * directory, both readers refresh (one then flushes its cache), and each looks up the same
 * `--lookups` labels, new ones each epoch, which reader goes first alternating. Reported per
 * reader: the median over epochs of the lookups per second, the batched node reads per lookup,
 * and the median of each epoch's ratio (kept / flushed).
 */

import { WhatsAppV1Configuration, utf8 } from '@akd-ts/core';
import type { CacheOptions } from '@akd-ts/storage';
import { DEFAULT_PROOF_CACHE_BYTES, proofCache } from '@akd-ts/server';
import { median, optionValue } from './support/common.js';
import {
  closeReader,
  placeWriter,
  proofServerReader,
  sqlStoreOption,
  storePlace,
} from './support/store-place.js';

const args = process.argv.slice(2);
const value = (name: string) => optionValue(args, name);
const LABELS = Number(value('labels') ?? 100_000);
const EPOCHS = Number(value('epochs') ?? 10);
const UPDATES = Number(value('updates') ?? 1_000);
const LOOKUPS = Number(value('lookups') ?? 2_000);
const { store: STORE, url: PG_URL } = sqlStoreOption(value);

const config = new WhatsAppV1Configuration();
const labels = Array.from({ length: LABELS }, (_, i) => utf8(`user-${i}@example.com`));
/** `n` labels spread over the directory, a different run of them for each `round`. */
const spread = (n: number, round: number, stride: number) =>
  Array.from({ length: n }, (_, i) => labels[(round * n * stride + i * stride + 1) % LABELS]!);

const at = await storePlace(STORE, 'epoch-cache', PG_URL);
const names = ['flushed', 'kept'] as const;
const rates: number[][] = [[], []];
const reads = [0, 0];
const ratios: number[] = [];
try {
  const dir = await placeWriter(at, config);
  await dir.publish(labels.map((label) => ({ label, value: utf8('key-1') })));
  await dir.vrfProofsStored();
  const cache = proofCache(DEFAULT_PROOF_CACHE_BYTES) as CacheOptions;
  const readers = await Promise.all(
    names.map(() => proofServerReader(at, config, dir.getPublicKey(), cache)),
  );
  for (const l of spread(LOOKUPS, 0, 104_729)) for (const r of readers) await r.lookup(l);
  for (let epoch = 1; epoch <= EPOCHS; epoch++) {
    const changed = spread(UPDATES, epoch, 7_919);
    await dir.publish(changed.map((label) => ({ label, value: utf8(`key-${epoch + 1}`) })));
    await dir.vrfProofsStored();
    for (const r of readers) await r.refresh();
    readers[0]!.storage.flushCache();
    const sample = spread(LOOKUPS, epoch, 104_729);
    const rate = [0, 0];
    for (const k of epoch % 2 === 0 ? [0, 1] : [1, 0]) {
      const reader = readers[k]!;
      const batches = reader.storage.metrics.dbBatchGets;
      const start = performance.now();
      for (const l of sample) await reader.lookup(l);
      rate[k] = sample.length / ((performance.now() - start) / 1000);
      rates[k]!.push(rate[k]!);
      reads[k] = reads[k]! + reader.storage.metrics.dbBatchGets - batches;
    }
    ratios.push(rate[1]! / rate[0]!);
  }
  for (const r of readers) await closeReader(r);
  await dir.close();
} finally {
  await at.remove();
}

const perLookup = reads.map((r) => r / (EPOCHS * LOOKUPS));
if (args.includes('--json')) {
  console.log(
    JSON.stringify({
      labels: LABELS,
      store: STORE,
      epochs: EPOCHS,
      updates: UPDATES,
      lookups: LOOKUPS,
      rates: rates.map(median),
      readsPerLookup: perLookup,
      ratio: median(ratios),
    }),
  );
} else {
  console.log(
    `${LABELS} labels, ${STORE}, keyless proof-server readers; ${EPOCHS} epochs of ` +
      `${UPDATES} updates, ${LOOKUPS} lookups after each`,
  );
  console.log('cache at a new epoch   lookups/s  node reads/lookup');
  names.forEach((name, k) =>
    console.log(
      `${name.padEnd(20)}${median(rates[k]!).toFixed(0).padStart(11)}${perLookup[k]!.toFixed(2).padStart(19)}`,
    ),
  );
  console.log(`kept / flushed, median of the epochs' ratios: ${median(ratios).toFixed(3)}x`);
}
