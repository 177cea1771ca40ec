// What the processes of `akd serve` hold: a proof server's record cache is bounded (or off),
// the writer gives back its cache and heap once no publish is left, and the children's
// allocator maps large blocks on their own unless the environment says otherwise.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import pino from 'pino';
import {
  DEFAULT_MEMORY_PROOF_CACHE_BYTES,
  DEFAULT_PROOF_CACHE_BYTES,
  buildWriterApp,
} from '@akd-ts/server';
import { DEFAULT_PROOF_HEAP_MB, proofHeapArgs } from '../src/cluster/proof-heap.js';
import { proofCache } from '../src/cluster/proof-role.js';
import { openStoreUrl } from '../src/cluster/store-url.js';
import { releaseMemory } from '../src/cluster/writer-role.js';
import { demoDirectory } from './support.js';
import { spawnSync } from 'node:child_process';
import { WRITER_NODE_FLAGS } from '../src/cluster/cluster-child.js';

test('a proof server caches records up to the default bound, the one asked for, or not at all', () => {
  // over a SQL store, tree nodes as bytes; over a memory store, objects
  assert.deepEqual(proofCache(undefined), {
    memoryLimitBytes: DEFAULT_PROOF_CACHE_BYTES,
    compactNodes: true,
  });
  assert.equal(DEFAULT_PROOF_CACHE_BYTES, 44 * 1024 * 1024);
  assert.deepEqual(proofCache(undefined, true), {
    memoryLimitBytes: DEFAULT_MEMORY_PROOF_CACHE_BYTES,
  });
  assert.equal(DEFAULT_MEMORY_PROOF_CACHE_BYTES, 4 * 1024 * 1024);
  assert.deepEqual(proofCache(32, true), { memoryLimitBytes: 32 });
  assert.deepEqual(proofCache(1024), { memoryLimitBytes: 1024, compactNodes: true });
  assert.equal(proofCache(0), false);
});

test("a proof server's heap limit: the default, the one asked for, none, or the operator's own", () => {
  assert.deepEqual(proofHeapArgs(undefined, {}), [`--max-old-space-size=${DEFAULT_PROOF_HEAP_MB}`]);
  assert.deepEqual(proofHeapArgs(256, {}), ['--max-old-space-size=256']);
  assert.deepEqual(proofHeapArgs(0, {}), []);
  // a limit in NODE_OPTIONS reaches the children, and stays theirs
  assert.deepEqual(proofHeapArgs(256, { NODE_OPTIONS: '--trace-gc --max-old-space-size=900' }), []);
  assert.deepEqual(proofHeapArgs(256, { NODE_OPTIONS: '--max_old_space_size=900' }), []);
  assert.deepEqual(proofHeapArgs(256, { NODE_OPTIONS: '--max-semi-space-size=8' }), [
    '--max-old-space-size=256',
  ]);
  for (const wrong of [32, 63, 100.5, -1, Number.NaN]) {
    assert.throws(() => proofHeapArgs(wrong, {}), RangeError, String(wrong));
  }
});

test('a SQLite store opened for a proof server takes the page cache and map it is given', async () => {
  const dir = mkdtempSync(join(tmpdir(), 'akd-memory-test-'));
  try {
    const db = await openStoreUrl(`sqlite:${join(dir, 'store.db')}`, {
      sqliteCacheKiB: 1024,
      sqliteMmapBytes: 1 << 24,
    });
    const client = (db as unknown as { client: { pragma(s: string, o: object): unknown } }).client;
    assert.equal(Number(client.pragma('cache_size', { simple: true })), -1024);
    assert.equal(Number(client.pragma('mmap_size', { simple: true })), 1 << 24);
    await db.close();
    const plain = await openStoreUrl(`sqlite:${join(dir, 'store.db')}`);
    const other = (plain as unknown as { client: { pragma(s: string, o: object): unknown } })
      .client;
    assert.equal(
      Number(other.pragma('cache_size', { simple: true })),
      -65536,
      "the driver's default",
    );
    assert.equal(Number(other.pragma('mmap_size', { simple: true })), 0, 'no map by default');
    await plain.close();
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});

test('the writer drops its cache and collects its heap, but never under a publish', async () => {
  const fixture = await demoDirectory();
  const logger = pino({ level: 'silent' });
  const { storage } = fixture.dir;
  const global = globalThis as { gc?: () => void };
  const saved = global.gc;
  let collections = 0;
  try {
    await fixture.dir.lookup(new TextEncoder().encode('alice'));
    assert.ok(storage.cacheSize > 0);
    const tx = storage.beginTransaction();
    global.gc = () => collections++;
    releaseMemory(fixture.dir, logger);
    assert.ok(storage.cacheSize > 0, 'a publish in progress keeps what it preloaded');
    assert.equal(collections, 0);
    await tx.rollback();
    releaseMemory(fixture.dir, logger);
    assert.equal(storage.cacheSize, 0);
    assert.equal(collections, 1);
    // without --expose-gc, the cache still goes
    delete global.gc;
    await fixture.dir.lookup(new TextEncoder().encode('alice'));
    releaseMemory(fixture.dir, logger);
    assert.equal(storage.cacheSize, 0);
  } finally {
    if (saved === undefined) delete global.gc;
    else global.gc = saved;
    await fixture.close();
  }
});

test('the writer app reports idle once no publish is left, whatever their outcome', async () => {
  const fixture = await demoDirectory();
  let idle = 0;
  let release: () => void = () => {};
  const held = new Promise<void>((resolve) => (release = resolve));
  let hold = true;
  // both publishes are held once each has published its epoch and waits to be answered
  let entered = 0;
  let bothHeld!: () => void;
  const holding = new Promise<void>((resolve) => (bothHeld = resolve));
  const app = await buildWriterApp({
    directory: fixture.dir,
    limits: { maxPublishUpdates: 2 },
    onIdle: () => idle++,
    onPublished: async () => {
      if (!hold) return;
      if (++entered === 2) bothHeld();
      await held;
    },
  });
  try {
    const publish = (body: string, type = 'application/json') =>
      app.inject({ method: 'POST', url: '/publish', headers: { 'content-type': type }, body });
    // two publishes at once: idle once, after the second is answered
    const first = publish('{"updates":[{"label":"dan","value":"k1"}]}');
    const second = publish('{"updates":[{"label":"erin","value":"k1"}]}');
    await holding;
    assert.equal(idle, 0, 'nothing is released while publishes run');
    hold = false;
    release();
    assert.equal((await first).statusCode, 200);
    assert.equal((await second).statusCode, 200);
    assert.equal(idle, 1);
    // a refused publish (too many updates) was read, so it counts
    const refused = await publish(
      '{"updates":[{"label":"a","value":"1"},{"label":"b","value":"1"},{"label":"c","value":"1"}]}',
    );
    assert.equal(refused.statusCode, 400);
    assert.equal(idle, 2);
    // a body refused before it is read never started a publish
    assert.equal((await publish('updates', 'text/plain')).statusCode, 415);
    assert.equal((await publish('{"updates":', 'application/json')).statusCode, 400);
    assert.equal(idle, 2);
  } finally {
    await app.close();
    await fixture.close();
  }
});

test("the writer process starts with the akd command's node flags, which node accepts", () => {
  const shim = readFileSync(new URL('../../cli/bin/akd.js', import.meta.url), 'utf8');
  const shebang = shim.split('\n')[0]!.split(' ');
  assert.deepEqual(shebang.slice(shebang.indexOf('node') + 1), WRITER_NODE_FLAGS);
  const run = spawnSync(process.execPath, [
    ...WRITER_NODE_FLAGS,
    '-e',
    'process.stdout.write(typeof gc)',
  ]);
  assert.equal(run.status, 0, String(run.stderr));
  assert.equal(String(run.stdout), 'function');
});
