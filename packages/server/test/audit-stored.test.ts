// Audits after a start are reads of the stored blobs: a server that has just opened a store
// answers its first blob listing, blob and audit range without reading a single tree node (no
// proof is rebuilt), and eight audits at once stay within the heavy-route limit: the store
// sees at most the limit's running requests, the queue holds its bound, the rest are refused
// with 503 and Retry-After, and every queued one is answered once slots free.
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { configurationByName, parseListBucketResult } from '@akd-ts/core';
import { StorageManager, type Database, type StorageKey } from '@akd-ts/storage';
import { SqliteDatabase } from '@akd-ts/storage-sqlite';
import { Directory, InMemoryVrfKeyStore, ReadOnlyDirectory } from '@akd-ts/directory';
import { buildApp } from '@akd-ts/server';
import { EPOCHS, SECRET } from './support.js';

const PROTOBUF = { accept: 'application/x-protobuf' };
let folder: string;
let path: string;

/**
 * Calls to `db`'s methods, by name; tree nodes read through get and batchGet, and of those
 * the ones that are not the root (whose hash is the epoch's root hash, which the latest
 * step is checked against).
 */
interface Counts {
  calls: Map<string, number>;
  treeNodes: number;
  belowRoot: number;
}

/** Holds getAuditBlobInfos calls while `hold` is set, counting those inside at once. */
interface Gate {
  hold: boolean;
  waiting: number;
  inside: number;
  most: number;
  release: () => void;
}

/**
 * `db` with every call counted (a Proxy, so the driver's own fields stay its own), and its
 * getAuditBlobInfos behind a gate.
 */
function counted(db: Database): { db: Database; counts: Counts; gate: Gate } {
  const counts: Counts = { calls: new Map(), treeNodes: 0, belowRoot: 0 };
  let open!: () => void;
  let opened = new Promise<void>((resolve) => (open = resolve));
  const gate: Gate = {
    hold: false,
    waiting: 0,
    inside: 0,
    most: 0,
    release: () => {
      open();
      opened = new Promise<void>((resolve) => (open = resolve));
    },
  };
  const proxy = new Proxy(db, {
    get(target, name, receiver) {
      const value = Reflect.get(target, name, receiver) as unknown;
      if (typeof value !== 'function') return value;
      return (...args: unknown[]) => {
        const key = String(name);
        counts.calls.set(key, (counts.calls.get(key) ?? 0) + 1);
        if (key === 'get' || key === 'batchGet') {
          const keys = (key === 'get' ? [args[0]] : args[0]) as StorageKey[];
          for (const k of keys) {
            if (k.kind !== 'treeNode') continue;
            counts.treeNodes++;
            if (k.label.len !== 0) counts.belowRoot++;
          }
        }
        const call = () => (value as (...a: unknown[]) => unknown).apply(target, args);
        if (key !== 'getAuditBlobInfos') return call();
        return (async () => {
          gate.inside++;
          gate.most = Math.max(gate.most, gate.inside);
          try {
            if (gate.hold) {
              gate.waiting++;
              await opened;
            }
            return await call();
          } finally {
            gate.inside--;
          }
        })();
      };
    },
  });
  return { db: proxy, counts, gate };
}

before(async () => {
  folder = mkdtempSync(join(tmpdir(), 'akd-audit-stored-'));
  path = join(folder, 'akd.db');
  const db = await SqliteDatabase.open(path);
  const dir = await Directory.open({
    config: configurationByName('whatsapp_v1'),
    storage: new StorageManager(db),
    vrfKeys: new InMemoryVrfKeyStore(SECRET),
  });
  for (const updates of EPOCHS) await dir.publish(updates);
  await dir.close();
  await db.close();
});
after(() => rmSync(folder, { recursive: true, force: true }));

/** A server as a process starts one: the store opened anew, nothing cached. */
async function started(limits = {}, auditBlobCacheBytes?: number) {
  const { db, counts, gate } = counted(await SqliteDatabase.open(path, { create: false }));
  const directory = await ReadOnlyDirectory.open({
    config: configurationByName('whatsapp_v1'),
    storage: new StorageManager(db),
    vrfKeys: new InMemoryVrfKeyStore(SECRET),
  });
  const app = await buildApp({
    directory,
    processMetrics: false,
    limits,
    ...(auditBlobCacheBytes === undefined ? {} : { auditBlobCacheBytes }),
  });
  counts.calls.clear();
  counts.treeNodes = 0;
  counts.belowRoot = 0;
  return {
    app,
    counts,
    gate,
    close: async () => {
      await app.close();
      await directory.close();
      await db.close();
    },
  };
}

test('the first listing, blob and audit after a start read stored blobs, not the tree', async () => {
  const { app, counts, close } = await started();
  try {
    const listing = await app.inject({ url: '/v1/audit-blobs?list-type=2' });
    assert.equal(listing.statusCode, 200, listing.body);
    const keys = parseListBucketResult(listing.body).keys;
    assert.equal(keys.length, EPOCHS.length);
    assert.ok((counts.calls.get('getAuditBlobInfos') ?? 0) > 0, 'the listing reads the store');

    const blob = await app.inject({ url: `/v1/audit-blobs/${keys[0]!}` });
    assert.equal(blob.statusCode, 200, blob.body);
    assert.ok((counts.calls.get('getAuditBlob') ?? 0) > 0);

    const audit = await app.inject({
      url: `/v1/audit?from=0&to=${EPOCHS.length}`,
      headers: PROTOBUF,
    });
    assert.equal(audit.statusCode, 200, audit.body);
    assert.ok(audit.rawPayload.length > 0);

    assert.equal(counts.belowRoot, 0, 'no tree node below the root was read: nothing was rebuilt');
    assert.ok(counts.treeNodes <= 3, `the root, at most once a request (${counts.treeNodes})`);
    assert.equal(counts.calls.get('batchSet') ?? 0, 0, 'nothing was written');
    assert.equal(counts.calls.get('setAuditBlob') ?? 0, 0, 'no blob was stored anew');
  } finally {
    await close();
  }
});

test('eight audits at once: the store sees at most the limit, the queue its bound', async () => {
  // no audit blob cache: its background reads would pass the gate as well
  const { app, counts, gate, close } = await started({ maxHeavyRequests: 2, maxHeavyQueued: 4 }, 0);
  try {
    // each audit first reads its steps' infos: hold them there to see how many got in
    gate.hold = true;
    const requests = Array.from({ length: 8 }, () =>
      app.inject({ url: `/v1/audit?from=0&to=${EPOCHS.length}`, headers: PROTOBUF }),
    );
    // the two refused answer at once; give the others every chance to reach the store
    for (let i = 0; i < 50 && gate.waiting < 2; i++) await new Promise((r) => setTimeout(r, 10));
    await new Promise((r) => setTimeout(r, 50));
    assert.equal(gate.waiting, 2, 'only the limit reaches the store');
    gate.hold = false;
    gate.release();
    const answers = await Promise.all(requests);
    const ok = answers.filter((r) => r.statusCode === 200);
    const refused = answers.filter((r) => r.statusCode === 503);
    // two ran and four waited for a slot; the other two were refused at once
    assert.equal(ok.length, 6, answers.map((r) => r.statusCode).join(','));
    assert.equal(refused.length, 2);
    for (const r of refused) {
      assert.equal(r.json().error.code, 'HTTP_OVERLOADED');
      assert.equal(r.headers['retry-after'], '1');
    }
    assert.equal(gate.most, 2, 'never more than the limit in the store at once');
    // every answer served is the same full proof
    assert.ok(ok.every((r) => r.rawPayload.equals(ok[0]!.rawPayload)));
    assert.equal(counts.belowRoot, 0);
  } finally {
    await close();
  }
});
