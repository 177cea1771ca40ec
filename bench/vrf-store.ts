/**
 * The cost of storing VRF proofs at publish, side by side with not storing them, in one run:
 * publish of new labels then of an update of each (with all VRF worker threads), the bytes
 * stored per published version, and lookups per second served from stored proofs (no key)
 * against lookups that compute their VRF proofs with the key. A publish resolves once its
 * epoch committed and the writer then stores the epoch's proofs: both times are given, the
 * call's and the call's plus the wait for its proofs (`vrfProofsStored`), after which readers
 * without the key serve the epoch. The next publish starts only after that wait.
 *
 *   npm run bench -- vrf-store [--labels 100000] [--lookups 2000] [--rounds 2] [--epochs 0]
 *                              [--store memory|sqlite|postgres] [--url URL] [--warm 50]
 *                              [--concurrency 1] [--reader-cache-mb unbounded] [--json]
 *
 * `--warm N` has both readers look up N labels before the lookups are measured, each label by
 * one reader then the other, so that their caches fill and age alike (a proof server that has
 * been answering for a while, where the default of 50 measures one that has just started).
 *
 * Lookups per second are given two ways: by the clock, and per core, from the process's CPU
 * time over the same block (`process.cpuUsage`, which counts every thread, VRF workers and
 * the collector's included): lookups per CPU-second. The readers of a block run alone, so its
 * CPU time is theirs. `--concurrency N` keeps N lookups in flight per reader, as a loaded
 * server does; where a lookup waits on round trips (PostgreSQL), the clock's figure then
 * measures the server's load rather than one lookup's latency. `--reader-cache-mb N` gives
 * the readers the record caches `akd serve --cache-mb N` gives its proof servers (`proofCache`:
 * nodes kept as bytes over SQL stores; 44 MiB by default there); without it the caches are
 * unbounded objects, which flatters storage-bound lookups.
 *
 * `--epochs N` first takes the directory to epoch N with one small publish per epoch, so the
 * measured publishes run where a directory spends its life: past epoch 2N their new versions
 * store more markers up front (spec 10.4: 2, 4, 16 and 256 for a new label past epoch 128).
 *
 * Each round runs both setups, alternating which goes first, on a fresh store (in memory, a
 * SQLite file in a temporary directory, or a PostgreSQL schema of its own, dropped at the end:
 * `--url` or AKD_TEST_POSTGRES_URL); the publish figures are the best of the rounds.
 * Stored bytes are the proof records' own bytes (key and value), before any store's per-row
 * overhead, counted on the memory store only (the records are the same on every store). Lookups are measured on the store
 * with proofs, by a reader with the key and one without, interleaved in blocks of about 200
 * (`pairedRates`); each round prints its own medians. On SQLite the readers open the file as
 * `akd serve`'s proof servers do (a 16 MiB page cache, the file mapped).
 */

import { randomBytes } from 'node:crypto';
import { WhatsAppV1Configuration, utf8 } from '@akd-ts/core';
import {
  MemoryDatabase,
  StorageManager,
  vrfProofKeyBytes,
  vrfProofValueBytes,
} from '@akd-ts/storage';
import { proofCache } from '@akd-ts/server';
import {
  Directory,
  InMemoryVrfKeyStore,
  ReadOnlyDirectory,
  availableThreads,
} from '@akd-ts/directory';
import { median, optionValue } from './support/common.js';
import { storePlace, type StorePlace } from './support/store-place.js';

const args = process.argv.slice(2);
const value = (name: string) => optionValue(args, name);
const LABELS = Number(value('labels') ?? 100_000);
const LOOKUPS = Number(value('lookups') ?? 2_000);
const ROUNDS = Number(value('rounds') ?? 2);
const EPOCHS = Number(value('epochs') ?? 0);
const STORE = value('store') ?? 'memory';
const WARM = Number(value('warm') ?? 50);
const CONCURRENCY = Number(value('concurrency') ?? 1);
const READER_CACHE_MB = value('reader-cache-mb');
if (!Number.isInteger(CONCURRENCY) || CONCURRENCY < 1)
  throw new Error('--concurrency is 1 or more');
if (READER_CACHE_MB !== undefined && !(Number(READER_CACHE_MB) > 0)) {
  throw new Error('--reader-cache-mb is a number of MiB above 0');
}
/** The readers' record cache (StorageManager `cache`): bounded as a proof server's, or not. */
const READER_CACHE =
  READER_CACHE_MB === undefined
    ? {}
    : { cache: proofCache(Number(READER_CACHE_MB) * 2 ** 20, STORE === 'memory') };
if (STORE !== 'memory' && STORE !== 'sqlite' && STORE !== 'postgres') {
  throw new Error('--store is memory, sqlite or postgres');
}
const PG_URL = value('url') ?? process.env.AKD_TEST_POSTGRES_URL;
if (STORE === 'postgres' && PG_URL === undefined) {
  throw new Error('--store postgres needs --url or AKD_TEST_POSTGRES_URL');
}
const config = new WhatsAppV1Configuration();
const secret = randomBytes(32);
const labels = Array.from({ length: LABELS }, (_, i) => utf8(`user-${i}@example.com`));

interface Row {
  /** Seconds of the publish call, and until its proofs were stored too. */
  newLabels: number;
  newLabelsServed: number;
  updates: number;
  updatesServed: number;
  bytesPerVersion: number;
}

/** Lookups per second of one store's readers with the key and without (`pairedRates`). */
interface Lookups {
  keyed: number;
  keyless: number;
  ratio: number;
  /** Lookups per CPU-second of the process (per core). */
  keyedPerCore: number;
  keylessPerCore: number;
  ratioPerCore: number;
}
const lookupRounds: Lookups[] = [];

async function timed(fn: () => Promise<unknown>): Promise<number> {
  const start = performance.now();
  await fn();
  return (performance.now() - start) / 1000;
}

/** Looks up every label of `block` with `reader`, `CONCURRENCY` lookups in flight. */
async function lookUpAll(reader: ReadOnlyDirectory, block: Uint8Array[]): Promise<void> {
  let next = 0;
  const worker = async () => {
    while (next < block.length) await reader.lookup(block[next++]!);
  };
  await Promise.all(Array.from({ length: Math.min(CONCURRENCY, block.length) }, worker));
}

/**
 * Lookups per second of two readers of one store, interleaved: the sample is cut into
 * blocks, each block is looked up by both readers (which goes first alternates), and the
 * figures are medians over blocks, the ratio the median of each block's own ratio. A busy
 * machine slows both sides of a block alike, so the paired ratio holds where one rate each
 * would not. Both readers see the same labels in the same order, so their caches match.
 */
async function pairedRates(keyed: ReadOnlyDirectory, keyless: ReadOnlyDirectory): Promise<Lookups> {
  const sample = Array.from({ length: LOOKUPS }, (_, i) => labels[(i * 7919) % LABELS]!);
  const warm = Array.from({ length: WARM }, (_, i) => labels[(i * 104_729 + 1) % LABELS]!);
  for (const l of warm) for (const reader of [keyed, keyless]) await reader.lookup(l);
  const blocks = Math.max(1, Math.floor(LOOKUPS / 200));
  const size = Math.ceil(LOOKUPS / blocks);
  const rates = { keyed: [] as number[], keyless: [] as number[], ratio: [] as number[] };
  const perCore = { keyed: [] as number[], keyless: [] as number[], ratio: [] as number[] };
  for (let b = 0; b < blocks; b++) {
    const block = sample.slice(b * size, (b + 1) * size);
    /** [lookups per second, lookups per CPU-second] */
    const rate = async (reader: ReadOnlyDirectory): Promise<[number, number]> => {
      const cpu = process.cpuUsage();
      const seconds = await timed(() => lookUpAll(reader, block));
      const used = process.cpuUsage(cpu);
      return [block.length / seconds, block.length / ((used.user + used.system) / 1e6)];
    };
    const first = b % 2 === 0 ? keyed : keyless;
    const one = await rate(first);
    const two = await rate(first === keyed ? keyless : keyed);
    const [k, n] = first === keyed ? [one, two] : [two, one];
    rates.keyed.push(k[0]);
    rates.keyless.push(n[0]);
    rates.ratio.push(n[0] / k[0]);
    perCore.keyed.push(k[1]);
    perCore.keyless.push(n[1]);
    perCore.ratio.push(n[1] / k[1]);
  }
  return {
    keyed: median(rates.keyed),
    keyless: median(rates.keyless),
    ratio: median(rates.ratio),
    keyedPerCore: median(perCore.keyed),
    keylessPerCore: median(perCore.keyless),
    ratioPerCore: median(perCore.ratio),
  };
}

async function run(store: boolean): Promise<Row> {
  const at = await storePlace(STORE as 'memory' | 'sqlite' | 'postgres', 'vrf-store', PG_URL);
  try {
    return await runOn(store, at);
  } finally {
    await at.remove();
  }
}

async function runOn(store: boolean, at: StorePlace): Promise<Row> {
  const db = at.writer;
  const storage = new StorageManager(db);
  const dir = await Directory.open({
    config,
    storage,
    vrfKeys: new InMemoryVrfKeyStore(secret),
    vrf: { threads: availableThreads() },
    storeVrfProofs: store,
  });
  for (let epoch = 1; epoch <= EPOCHS; epoch++) {
    await dir.publish([{ label: utf8(`filler-${epoch}`), value: utf8('x') }]);
  }
  await dir.vrfProofsStored();
  /** The publish call's seconds, and those until its proofs were stored as well. */
  const publish = async (value: string): Promise<[number, number]> => {
    const start = performance.now();
    await dir.publish(labels.map((label) => ({ label, value: utf8(value) })));
    const call = (performance.now() - start) / 1000;
    await dir.vrfProofsStored();
    return [call, (performance.now() - start) / 1000];
  };
  const [newLabels, newLabelsServed] = await publish('key-1');
  const [updates, updatesServed] = await publish('key-2');
  const proofs = db instanceof MemoryDatabase ? db.allVrfProofs() : [];
  const bytes = proofs.reduce(
    (n, p) => n + vrfProofKeyBytes(p).length + vrfProofValueBytes(p).length,
    0,
  );
  if (store) {
    // the same store read with the key (VRF proofs computed) and without (stored proofs)
    const open = async (keyed: boolean) =>
      ReadOnlyDirectory.open({
        config,
        storage: new StorageManager(await at.reader(), READER_CACHE),
        ...(keyed
          ? { vrfKeys: new InMemoryVrfKeyStore(secret) }
          : { publicKey: dir.getPublicKey() }),
      });
    const keyed = await open(true);
    const keyless = await open(false);
    lookupRounds.push(await pairedRates(keyed, keyless));
    await keyed.close();
    await keyless.close();
    if (STORE !== 'memory') {
      await keyed.storage.db.close();
      await keyless.storage.db.close();
    }
  }
  await dir.close();
  return {
    newLabels,
    newLabelsServed,
    updates,
    updatesServed,
    bytesPerVersion: bytes / (2 * LABELS + EPOCHS),
  };
}

const best: Record<'computed' | 'stored', Row | undefined> = {
  computed: undefined,
  stored: undefined,
};
for (let round = 0; round < ROUNDS; round++) {
  const order = round % 2 === 0 ? [false, true] : [true, false];
  for (const store of order) {
    const row = await run(store);
    const key = store ? 'stored' : 'computed';
    const was = best[key];
    best[key] =
      was === undefined
        ? row
        : {
            newLabels: Math.min(was.newLabels, row.newLabels),
            newLabelsServed: Math.min(was.newLabelsServed, row.newLabelsServed),
            updates: Math.min(was.updates, row.updates),
            updatesServed: Math.min(was.updatesServed, row.updatesServed),
            bytesPerVersion: row.bytesPerVersion,
          };
  }
}
const a = best.computed!;
const b = best.stored!;
if (args.includes('--json')) {
  console.log(
    JSON.stringify({
      labels: LABELS,
      store: STORE,
      epochs: EPOCHS,
      lookups: LOOKUPS,
      warm: WARM,
      concurrency: CONCURRENCY,
      readerCacheMb: READER_CACHE_MB ?? null,
      computed: a,
      stored: b,
      lookupRounds,
    }),
  );
} else {
  const f = (x: number) => x.toFixed(2);
  console.log(
    `${LABELS} labels from epoch ${EPOCHS + 1}, ${STORE} store, ${availableThreads()} VRF threads, best of ${ROUNDS} rounds`,
  );
  console.log('                              without stored proofs   with stored proofs   ratio');
  const line = (name: string, without: number, withProofs: number) =>
    console.log(
      `${name.padEnd(30)}${f(without).padStart(8)} s              ${f(withProofs).padStart(8)} s         ${f(withProofs / without)}x`,
    );
  line('publish new labels (call)', a.newLabels, b.newLabels);
  line('  until served without key', a.newLabelsServed, b.newLabelsServed);
  line('publish updates (call)', a.updates, b.updates);
  line('  until served without key', a.updatesServed, b.updatesServed);
  if (STORE === 'memory') {
    console.log(
      `stored bytes/version          ${'0'.padStart(8)}                ${f(b.bytesPerVersion).padStart(8)}`,
    );
  }
  const cache = READER_CACHE_MB === undefined ? 'unbounded' : `${READER_CACHE_MB} MiB`;
  console.log(
    `lookups: medians of paired blocks after ${WARM} warm-up lookups, ${CONCURRENCY} in flight, reader caches ${cache}`,
  );
  for (const [i, l] of lookupRounds.entries()) {
    console.log(
      `lookups per second            ${f(l.keyed).padStart(8)} (with the key)  ${f(l.keyless).padStart(8)} (no key)   ${f(l.ratio)}x  (round ${i + 1})`,
    );
    console.log(
      `lookups per CPU-second        ${f(l.keyedPerCore).padStart(8)} (with the key)  ${f(l.keylessPerCore).padStart(8)} (no key)   ${f(l.ratioPerCore)}x  (round ${i + 1}, per core)`,
    );
  }
}
