/**
 * Publish throughput, the figure users feel: new labels into an empty directory, then an
 * update of every one of them, with the VRF on the calling thread and on all worker threads
 * (the backend is named in the output), followed by lookup proofs per second served from the
 * same store.
 *
 *   npm run bench -- publish [--json] [--labels 100000] [--store memory|packed|sqlite|postgres]
 *                            [--threads 0,2] [--lookups 300] [--noble] [--no-upstream]
 *
 * Each row also has the phases of both publishes (seconds from one `onProgress` phase to the
 * next: checks and the AZKS read, versions, VRF and values, preload, tree insertion with the
 * step's audit proof and the blob's write, then the commit).
 *
 * `--store postgres` needs AKD_TEST_POSTGRES_URL (a fresh schema is created and dropped).
 * `--noble` adds the portable backend on the calling thread (about 1 ms per label here). Each
 * size and setup runs in a process of its own, on this file bundled into JavaScript (no
 * TypeScript loader, whose thread would count in its memory), under /usr/bin/time -v (peak
 * memory), after a run of upstream's on the same labels when `akd-rs` is present (in-memory
 * store).
 */

import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { randomBytes } from 'node:crypto';
import pg from 'pg';
import {
  WhatsAppV1Configuration,
  lookupVerify,
  utf8,
  type EpochHash,
  type LookupProof,
} from '@akd-ts/core';
import {
  MemoryDatabase,
  PackedMemoryDatabase,
  StorageManager,
  type Database,
} from '@akd-ts/storage';
import { SqliteDatabase } from '@akd-ts/storage-sqlite';
import { PostgresDatabase } from '@akd-ts/storage-postgres';
import {
  Directory,
  InMemoryVrfKeyStore,
  availableThreads,
  type VrfOptions,
} from '@akd-ts/directory';
import { measure, measureSelf, ratio, upstreamCommand } from './support/upstream.js';
import { optionValue } from './support/common.js';

const args = process.argv.slice(2);
const value = (name: string) => optionValue(args, name);
const json = args.includes('--json');
const sizes = value('labels') !== undefined ? [Number(value('labels'))] : [10_000, 100_000];
const storeName = (value('store') ?? 'memory') as 'memory' | 'packed' | 'sqlite' | 'postgres';
const lookups = Number(value('lookups') ?? 300);
const threadCounts = (value('threads') ?? `0,${availableThreads()}`).split(',').map(Number);

const setups: VrfOptions[] = threadCounts.map((threads) => ({ threads }));
if (args.includes('--noble')) setups.push({ threads: 0, backend: 'noble' });
if (args.includes('--noble-only'))
  setups.splice(0, setups.length, { threads: 0, backend: 'noble' });

/**
 * Upstream's figures for `n` labels on the same machine: 100,000 new labels from its own
 * benchmark (`bench-publish`, VRF and insertion on every core), and the updates from two runs
 * of its workload driver over our labels and values (`publish --input`: one epoch, then the
 * same two epochs), the second's process time less the first's.
 */
function upstreamPublish(
  upstream: string,
  n: number,
): { newSec: number; updatesSec: number; maxRssMb: number | null } {
  const dir = mkdtempSync(join(tmpdir(), 'akd-bench-publish-'));
  try {
    const hex = (text: string) => Buffer.from(text).toString('hex');
    const epoch = (value: string) =>
      Array.from({ length: n }, (_, i) => [hex(`user-${i}@example.com`), hex(value)]);
    const one = join(dir, 'one.json');
    const two = join(dir, 'two.json');
    writeFileSync(one, JSON.stringify({ epochs: [epoch('key-1')] }));
    writeFileSync(two, JSON.stringify({ epochs: [epoch('key-1'), epoch('key-2')] }));
    const fresh = measure(upstream, [
      'bench-publish',
      '--config',
      'whatsapp_v1',
      '--keys',
      String(n),
      '--runs',
      '1',
      '--parallel',
      'on',
    ]);
    const base = [
      'publish',
      '--config',
      'whatsapp_v1',
      '--proof-epochs',
      'none',
      '--parallel',
      'on',
    ];
    const first = measure(upstream, [...base, '--input', one]);
    const both = measure(upstream, [...base, '--input', two]);
    return {
      newSec: Number(fresh.json['median_ms']) / 1000,
      updatesSec: Math.max(0, both.processMs - first.processMs) / 1000,
      maxRssMb: both.maxRssMb,
    };
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

// Each (size, setup) runs in a fresh process: a run leaves a heap of a gigabyte or more behind,
// whose collection would otherwise be charged to the next run. Upstream's runs alternate with
// ours (memory store only: upstream's benchmark has no other).
if (process.env['AKD_BENCH_ONE_RUN'] === undefined) {
  const upstream = storeName === 'memory' ? upstreamCommand(args) : undefined;
  const passed = ['--store', storeName, '--lookups', String(lookups), '--json'];
  for (const n of sizes) {
    for (const vrf of setups) {
      const theirs = upstream === undefined ? undefined : upstreamPublish(upstream, n);
      const setup =
        vrf.backend === 'noble'
          ? ['--threads', '0', '--noble-only']
          : ['--threads', String(vrf.threads)];
      const ours = measureSelf(
        import.meta.url,
        ['--labels', String(n), ...setup, ...passed],
        { AKD_BENCH_ONE_RUN: '1' },
        [],
        true,
      );
      const row: Record<string, unknown> = {
        ...ours.json,
        maxRssMb: ours.maxRssMb,
        upstreamNewLabelsSec: theirs === undefined ? null : Number(theirs.newSec.toFixed(2)),
        upstreamUpdatesSec: theirs === undefined ? null : Number(theirs.updatesSec.toFixed(2)),
        upstreamMaxRssMb: theirs?.maxRssMb ?? null,
        newLabelsRatio: ratio(Number(ours.json['newLabelsSec']), theirs?.newSec),
        updatesRatio: ratio(Number(ours.json['updatesSec']), theirs?.updatesSec),
      };
      if (json) console.log(JSON.stringify(row));
      else {
        console.log(
          `${storeName}, ${n} labels, VRF ${String(row['vrf'])}: new ${String(row['newLabelsSec'])} s, ` +
            `updates ${String(row['updatesSec'])} s, lookups ${String(row['lookupsPerSec'])}/s cold, ` +
            `${String(row['warmLookupsPerSec'])}/s warm, maxRSS ${String(row['maxRssMb'])} MB` +
            (theirs === undefined
              ? ''
              : `; upstream new ${String(row['upstreamNewLabelsSec'])} s (x${String(row['newLabelsRatio'])}), updates ${String(row['upstreamUpdatesSec'])} s (x${String(row['updatesRatio'])}), maxRSS ${String(row['upstreamMaxRssMb'])} MB`),
        );
      }
    }
  }
  process.exit(0);
}

/** A fresh store of the chosen kind, and how to dispose of it. */
async function openStore(): Promise<{ db: Database; dispose: () => Promise<void> }> {
  if (storeName === 'memory') return { db: new MemoryDatabase(), dispose: async () => {} };
  // the store of `akd serve --store memory`: records as bytes, node reads answered in bytes
  if (storeName === 'packed') return { db: new PackedMemoryDatabase(), dispose: async () => {} };
  if (storeName === 'sqlite') {
    const dir = mkdtempSync(join(tmpdir(), 'akd-bench-'));
    const db = await SqliteDatabase.open(join(dir, 'bench.db'));
    return { db, dispose: async () => rmSync(dir, { recursive: true, force: true }) };
  }
  const url = process.env['AKD_TEST_POSTGRES_URL'];
  if (url === undefined) throw new Error('--store postgres needs AKD_TEST_POSTGRES_URL');
  const schema = `akd_bench_${randomBytes(4).toString('hex')}`;
  const db = await PostgresDatabase.open(url, { schema });
  return {
    db,
    dispose: async () => {
      const client = new pg.Client({ connectionString: url });
      await client.connect();
      await client.query(`DROP SCHEMA IF EXISTS "${schema}" CASCADE`);
      await client.end();
    },
  };
}

const config = new WhatsAppV1Configuration();
const key = new Uint8Array(32).fill(42);
for (const n of sizes) {
  for (const vrf of setups) {
    const { db, dispose } = await openStore();
    const dir = await Directory.open({
      config,
      storage: new StorageManager(db),
      vrfKeys: new InMemoryVrfKeyStore(key),
      vrf,
    });
    const labels = Array.from({ length: n }, (_, i) => utf8(`user-${i}@example.com`));
    /** One publish of every label with `value`: its seconds and those of its phases. */
    const timed = async (value: string) => {
      const marks: [string, number][] = [['checks', performance.now()]];
      await dir.publish(
        labels.map((label) => ({ label, value: utf8(value) })),
        {
          onProgress: ({ phase }) => {
            if (phase !== marks[marks.length - 1]![0]) marks.push([phase, performance.now()]);
          },
        },
      );
      const phases: Record<string, number> = {};
      for (let i = 0; i + 1 < marks.length; i++) {
        phases[marks[i]![0]] = Number(((marks[i + 1]![1] - marks[i]![1]) / 1000).toFixed(2));
      }
      return { sec: (marks[marks.length - 1]![1] - marks[0]![1]) / 1000, phases };
    };
    const inserted = await timed('key-1');
    const insertSec = inserted.sec;
    const updated = await timed('key-2');
    const updateSec = updated.sec;

    // lookups one after another, from a cold cache, then again with the cache the first
    // pass warmed (a serving process's usual state); proofs are checked outside the timing
    dir.storage.flushCache();
    const proofs: { label: Uint8Array; proof: LookupProof; epochHash: EpochHash }[] = [];
    const pass = async () => {
      const begin = performance.now();
      for (let i = 0; i < lookups; i++) {
        const label = labels[(i * 7919) % n]!;
        proofs.push({ label, ...(await dir.lookup(label)) });
      }
      return (performance.now() - begin) / 1000;
    };
    const lookupSec = await pass();
    const warmLookupSec = await pass();
    for (const p of proofs.slice(0, 5)) {
      lookupVerify(
        config,
        dir.getPublicKey(),
        p.epochHash.hash,
        p.epochHash.epoch,
        p.label,
        p.proof,
      );
    }
    const row = {
      store: storeName,
      labels: n,
      vrf: dir.vrfEngineName,
      newLabelsSec: Number(insertSec.toFixed(2)),
      newLabelsPerSec: Math.round(n / insertSec),
      updatesSec: Number(updateSec.toFixed(2)),
      updatesPerSec: Math.round(n / updateSec),
      lookupsPerSec: Math.round(lookups / lookupSec),
      warmLookupsPerSec: Math.round(lookups / warmLookupSec),
      newLabelsPhases: inserted.phases,
      updatesPhases: updated.phases,
    };
    if (json) console.log(JSON.stringify(row));
    else {
      console.log(
        `${storeName}, ${n} labels, VRF ${row.vrf}: new ${row.newLabelsSec} s (${row.newLabelsPerSec}/s), ` +
          `updates ${row.updatesSec} s (${row.updatesPerSec}/s), lookups ${row.lookupsPerSec}/s cold, ` +
          `${row.warmLookupsPerSec}/s warm`,
      );
    }
    await dir.close();
    await db.close();
    await dispose();
  }
}
