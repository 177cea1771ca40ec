/**
 * Lookups per core of proof servers as they are deployed: each reader in a process of its own,
 * opened as `akd serve` opens its proof servers (their record cache, over SQLite their page
 * cache and the file mapped), one that holds the VRF key and computes its lookups' VRF proofs,
 * one without it that serves the proofs the writer stored. In `vrf-store` both readers share
 * the writer's process; here nothing else runs in a reader's process, so its CPU time
 * (`process.cpuUsage`, every thread counted) is the lookups' own.
 *
 *   npm run bench -- proof-servers [--store sqlite|postgres] [--url URL] [--labels 100000]
 *       [--lookups 10000] [--warm 5000] [--concurrency 8] [--rounds 2] [--cache-mb 44]
 *       [--batch 1] [--layout records|versions] [--json]
 *
 * The writer publishes `--labels` new labels, then an update of each (so that a lookup proves
 * a second version, as in `vrf-store`), and waits for their stored proofs. Then each round runs
 * a keyed and a keyless reader process one after the other (which goes first alternates), each
 * warming its caches with `--warm` lookups before timing `--lookups` others, `--concurrency` in
 * flight (with `--batch N`, each call a batch lookup of N labels, `--concurrency` calls in
 * flight); every reader looks up the same labels in the same order. The store keeps tree
 * nodes as `--layout` says (the drivers' default, records, or versions). Printed: lookups per
 * second and per CPU-second of each reader, per round, and the median of the rounds' ratios.
 */

import { randomBytes } from 'node:crypto';
import { WhatsAppV1Configuration, fromHex, toHex, utf8 } from '@akd-ts/core';
import { StorageManager, type Database } from '@akd-ts/storage';
import { SqliteDatabase } from '@akd-ts/storage-sqlite';
import { PostgresDatabase } from '@akd-ts/storage-postgres';
import {
  Directory,
  InMemoryVrfKeyStore,
  ReadOnlyDirectory,
  availableThreads,
} from '@akd-ts/directory';
import { PROOF_SQLITE_CACHE_KIB, PROOF_SQLITE_MMAP_BYTES, proofCache } from '@akd-ts/server';
import { median, optionValue } from './support/common.js';
import { sqlStoreOption, storePlace } from './support/store-place.js';
import { measureSelf } from './support/upstream.js';

const args = process.argv.slice(2);
const value = (name: string) => optionValue(args, name);
const ROLE = process.env['AKD_PROOF_SERVERS_ROLE'];
const config = new WhatsAppV1Configuration();
const LABELS = Number(value('labels') ?? 100_000);
const label = (i: number) => utf8(`user-${i}@example.com`);

/** Where the store is, as the reader processes are told. */
interface Place {
  store: 'sqlite' | 'postgres';
  /** The SQLite file, or PostgreSQL's address. */
  path: string;
  schema?: string;
}

/** The store opened as a proof server opens it (store-place.ts `reader`, in another process). */
function openReader(place: Place): Promise<Database> {
  return place.store === 'sqlite'
    ? SqliteDatabase.open(place.path, {
        create: false,
        cacheSizeKiB: PROOF_SQLITE_CACHE_KIB,
        mmapSizeBytes: PROOF_SQLITE_MMAP_BYTES,
      })
    : PostgresDatabase.open(place.path, { schema: place.schema!, migrate: false });
}

// ---------------------------------------------------------------------------------------------
// A reader: a proof server's lookups, with the key or without, timed after a warm-up.
if (ROLE === 'reader') {
  const place = JSON.parse(value('place')!) as Place;
  const key = value('key');
  const lookups = Number(value('lookups'));
  const warm = Number(value('warm'));
  const concurrency = Number(value('concurrency'));
  const cacheBytes = Number(value('cache-mb')) * 2 ** 20;
  const db = await openReader(place);
  const reader = await ReadOnlyDirectory.open({
    config,
    storage: new StorageManager(db, { cache: proofCache(cacheBytes, false) }),
    ...(key === undefined
      ? { publicKey: fromHex(value('public-key')!) }
      : { vrfKeys: new InMemoryVrfKeyStore(fromHex(key)) }),
  });
  const batch = Number(value('batch'));
  const run = async (count: number, at: (i: number) => number) => {
    let next = 0;
    const worker = async () => {
      while (next < count) {
        if (batch === 1) await reader.lookup(label(at(next++)));
        else {
          const labels: Uint8Array[] = [];
          while (labels.length < batch && next < count) labels.push(label(at(next++)));
          await reader.batchLookup(labels);
        }
      }
    };
    await Promise.all(Array.from({ length: Math.min(concurrency, count) }, worker));
  };
  await run(warm, (i) => (i * 104_729 + 1) % LABELS);
  const cpu = process.cpuUsage();
  const start = performance.now();
  await run(lookups, (i) => (i * 7919) % LABELS);
  const seconds = (performance.now() - start) / 1000;
  const used = process.cpuUsage(cpu);
  await reader.close();
  await db.close();
  console.log(
    JSON.stringify({
      perSecond: lookups / seconds,
      perCpuSecond: lookups / ((used.user + used.system) / 1e6),
    }),
  );
  process.exit(0);
}

// ---------------------------------------------------------------------------------------------
// The run: one store, then reader processes with and without the key, alternating.
const { store, url } = sqlStoreOption(value);
const LOOKUPS = Number(value('lookups') ?? 10_000);
const WARM = Number(value('warm') ?? 5_000);
const CONCURRENCY = Number(value('concurrency') ?? 8);
const ROUNDS = Number(value('rounds') ?? 2);
const CACHE_MB = Number(value('cache-mb') ?? 44);
const BATCH = Number(value('batch') ?? 1);
const LAYOUT = value('layout') ?? 'records';
if (LAYOUT !== 'records' && LAYOUT !== 'versions')
  throw new Error('--layout is records or versions');
const json = args.includes('--json');
for (const [name, n, min] of [
  ['labels', LABELS, 1],
  ['lookups', LOOKUPS, 1],
  ['warm', WARM, 0],
  ['concurrency', CONCURRENCY, 1],
  ['rounds', ROUNDS, 1],
  ['batch', BATCH, 1],
] as const) {
  if (!Number.isInteger(n) || n < min) throw new Error(`--${name} is an integer, at least ${min}`);
}
if (!(CACHE_MB > 0)) throw new Error('--cache-mb is a number of MiB above 0');

const at = await storePlace(store, 'proof-servers', url, LAYOUT);
const where = at.where!;
const place: Place =
  'file' in where ? { store, path: where.file } : { store, path: url!, schema: where.schema };
const secret = randomBytes(32);
try {
  const writer = await Directory.open({
    config,
    storage: new StorageManager(at.writer),
    vrfKeys: new InMemoryVrfKeyStore(secret),
    vrf: { threads: availableThreads() },
  });
  for (const v of ['key-1', 'key-2']) {
    await writer.publish(
      Array.from({ length: LABELS }, (_, i) => ({ label: label(i), value: utf8(v) })),
    );
    await writer.vrfProofsStored();
  }
  const publicKey = toHex(writer.getPublicKey());
  await writer.close();

  const read = (keyed: boolean) =>
    measureSelf(
      import.meta.url,
      [
        '--place',
        JSON.stringify(place),
        ...(keyed ? ['--key', toHex(secret)] : ['--public-key', publicKey]),
        ...['--labels', String(LABELS)],
        ...['--lookups', String(LOOKUPS), '--warm', String(WARM)],
        ...['--concurrency', String(CONCURRENCY), '--cache-mb', String(CACHE_MB)],
        ...['--batch', String(BATCH)],
      ],
      { AKD_PROOF_SERVERS_ROLE: 'reader' },
      [],
      true,
    ).json as { perSecond: number; perCpuSecond: number };
  const keyed: { perSecond: number; perCpuSecond: number }[] = [];
  const keyless: typeof keyed = [];
  for (let round = 0; round < ROUNDS; round++) {
    for (const withKey of round % 2 === 0 ? [true, false] : [false, true]) {
      (withKey ? keyed : keyless).push(read(withKey));
    }
    const [k, n] = [keyed[round]!, keyless[round]!];
    if (!json) {
      console.log(
        `round ${round + 1}: with the key ${k.perCpuSecond.toFixed(0)} lookups per CPU-second ` +
          `(${k.perSecond.toFixed(0)}/s), without ${n.perCpuSecond.toFixed(0)} ` +
          `(${n.perSecond.toFixed(0)}/s): ${(n.perCpuSecond / k.perCpuSecond).toFixed(2)}x per core`,
      );
    }
  }
  const row = {
    store,
    layout: LAYOUT,
    labels: LABELS,
    lookups: LOOKUPS,
    concurrency: CONCURRENCY,
    keyedPerCpuSecond: median(keyed.map((r) => r.perCpuSecond)),
    keylessPerCpuSecond: median(keyless.map((r) => r.perCpuSecond)),
    keyedPerSecond: median(keyed.map((r) => r.perSecond)),
    keylessPerSecond: median(keyless.map((r) => r.perSecond)),
  };
  // each round's own ratio, then their median: a round's two readers ran close in time
  const perCore = median(keyless.map((n, i) => n.perCpuSecond / keyed[i]!.perCpuSecond));
  const byClock = median(keyless.map((n, i) => n.perSecond / keyed[i]!.perSecond));
  if (json) console.log(JSON.stringify({ ...row, perCore, byClock }));
  else {
    console.log(
      `${store} (${LAYOUT}), ${LABELS} labels, median of ${ROUNDS} rounds: keyless / keyed ` +
        `${perCore.toFixed(2)}x per CPU-second, ${byClock.toFixed(2)}x per second`,
    );
  }
} finally {
  await at.remove();
}
