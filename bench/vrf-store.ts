/**
 * The cost of storing VRF proofs at publish, side by side with not storing them, in one run:
 * publish of new labels then of an update of each (with all VRF worker threads), the bytes
 * stored per published version, and lookups per second served from stored proofs (no key)
 * against lookups that compute their VRF proofs with the key.
 *
 *   npm run bench -- vrf-store [--labels 100000] [--lookups 2000] [--rounds 2] [--epochs 0] [--json]
 *
 * `--epochs N` first takes the directory to epoch N with one small publish per epoch, so the
 * measured publishes run where a directory spends its life: past epoch 2N their new versions
 * store more markers up front (spec 10.4: 2, 4, 16 and 256 for a new label past epoch 128).
 *
 * Each round runs both setups, alternating which goes first, on a fresh in-memory store; the
 * figures are the best of the rounds. Stored bytes are the proof records' own bytes (key and
 * value), before any store's per-row overhead.
 */

import { randomBytes } from 'node:crypto';
import { WhatsAppV1Configuration, utf8 } from '@akd-ts/core';
import {
  MemoryDatabase,
  StorageManager,
  vrfProofKeyBytes,
  vrfProofValueBytes,
} from '@akd-ts/storage';
import {
  Directory,
  InMemoryVrfKeyStore,
  ReadOnlyDirectory,
  availableThreads,
} from '@akd-ts/directory';

const args = process.argv.slice(2);
const value = (name: string) => {
  const i = args.indexOf(`--${name}`);
  return i >= 0 ? args[i + 1] : undefined;
};
const LABELS = Number(value('labels') ?? 100_000);
const LOOKUPS = Number(value('lookups') ?? 2_000);
const ROUNDS = Number(value('rounds') ?? 2);
const EPOCHS = Number(value('epochs') ?? 0);
const config = new WhatsAppV1Configuration();
const secret = randomBytes(32);
const labels = Array.from({ length: LABELS }, (_, i) => utf8(`user-${i}@example.com`));

interface Row {
  newLabels: number;
  updates: number;
  bytesPerVersion: number;
  lookupsPerSecond: number;
}

async function timed(fn: () => Promise<unknown>): Promise<number> {
  const start = performance.now();
  await fn();
  return (performance.now() - start) / 1000;
}

/** Lookups per second of `reader` over a fixed pseudo-random sample of the labels. */
async function lookupRate(reader: ReadOnlyDirectory): Promise<number> {
  const sample = Array.from({ length: LOOKUPS }, (_, i) => labels[(i * 7919) % LABELS]!);
  for (const l of sample.slice(0, 50)) await reader.lookup(l); // warm the cache
  const seconds = await timed(async () => {
    for (const l of sample) await reader.lookup(l);
  });
  return LOOKUPS / seconds;
}

async function run(store: boolean): Promise<Row> {
  const db = new MemoryDatabase();
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
  const newLabels = await timed(() =>
    dir.publish(labels.map((label) => ({ label, value: utf8('key-1') }))),
  );
  const updates = await timed(() =>
    dir.publish(labels.map((label) => ({ label, value: utf8('key-2') }))),
  );
  const proofs = db.allVrfProofs();
  const bytes = proofs.reduce(
    (n, p) => n + vrfProofKeyBytes(p).length + vrfProofValueBytes(p).length,
    0,
  );
  const reader = store
    ? await ReadOnlyDirectory.open({
        config,
        storage: new StorageManager(db),
        publicKey: dir.getPublicKey(),
      })
    : await ReadOnlyDirectory.open({
        config,
        storage: new StorageManager(db),
        vrfKeys: new InMemoryVrfKeyStore(secret),
      });
  const lookupsPerSecond = await lookupRate(reader);
  await reader.close();
  await dir.close();
  return { newLabels, updates, bytesPerVersion: bytes / (2 * LABELS + EPOCHS), lookupsPerSecond };
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
            updates: Math.min(was.updates, row.updates),
            bytesPerVersion: row.bytesPerVersion,
            lookupsPerSecond: Math.max(was.lookupsPerSecond, row.lookupsPerSecond),
          };
  }
}
const a = best.computed!;
const b = best.stored!;
if (args.includes('--json')) {
  console.log(
    JSON.stringify({ labels: LABELS, epochs: EPOCHS, lookups: LOOKUPS, computed: a, stored: b }),
  );
} else {
  const f = (x: number) => x.toFixed(2);
  console.log(
    `${LABELS} labels from epoch ${EPOCHS + 1}, ${availableThreads()} VRF threads, best of ${ROUNDS} rounds`,
  );
  console.log('                       without stored proofs   with stored proofs   ratio');
  console.log(
    `publish new labels     ${f(a.newLabels).padStart(8)} s              ${f(b.newLabels).padStart(8)} s         ${f(b.newLabels / a.newLabels)}x`,
  );
  console.log(
    `publish updates        ${f(a.updates).padStart(8)} s              ${f(b.updates).padStart(8)} s         ${f(b.updates / a.updates)}x`,
  );
  console.log(
    `stored bytes/version   ${'0'.padStart(8)}                ${f(b.bytesPerVersion).padStart(8)}`,
  );
  console.log(
    `lookups per second     ${f(a.lookupsPerSecond).padStart(8)} (computed)     ${f(b.lookupsPerSecond).padStart(8)} (stored) ${f(b.lookupsPerSecond / a.lookupsPerSecond)}x`,
  );
}
