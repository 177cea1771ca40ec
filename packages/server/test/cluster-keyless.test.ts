// The VRF secret lives in the writer alone: `akd serve`'s proof servers get no key (not in
// their environment, even when the operator's has one, nor on their command line) and serve
// lookups and histories from the VRF proofs the writer stored, byte-identical to those
// computed with the key; a read-only cluster is started with no key at all.
import { after, test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { configurationByName, encodeLookupProof, toHex, utf8 } from '@akd-ts/core';
import { StorageManager } from '@akd-ts/storage';
import { SqliteDatabase } from '@akd-ts/storage-sqlite';
import { Directory, InMemoryVrfKeyStore } from '@akd-ts/directory';
import { KEY_VARIABLES, startCluster, type ServeConfig } from '@akd-ts/server';
import { childCommandLines, childPids } from '../../../test/support/processes.js';
import { PUBLIC_HEX, SECRET, SECRET_HEX, TOKEN } from './support.js';

const dir = mkdtempSync(join(tmpdir(), 'akd-cluster-keyless-'));
after(() => rmSync(dir, { recursive: true, force: true }));
const linuxOnly = { skip: process.platform !== 'linux' && 'reads /proc' };
const KEY_PATH = join(dir, 'operator.key');

/** A SQLite store with alice published twice; returns its URL and alice's lookup bytes. */
async function store(): Promise<{ url: string; lookup: string }> {
  const path = join(dir, 'store.db');
  const db = await SqliteDatabase.open(path);
  const directory = await Directory.open({
    config: configurationByName('whatsapp_v1'),
    storage: new StorageManager(db),
    vrfKeys: new InMemoryVrfKeyStore(SECRET),
  });
  await directory.publish([{ label: utf8('alice'), value: utf8('a1') }]);
  await directory.publish([{ label: utf8('alice'), value: utf8('a2') }]);
  const lookup = toHex(encodeLookupProof((await directory.lookup(utf8('alice'))).proof));
  await directory.close();
  await db.close();
  return { url: `sqlite:${path}`, lookup };
}

function config(storeUrl: string, publishToken?: string): ServeConfig {
  return {
    storeUrl,
    configuration: 'whatsapp_v1',
    publicKey: PUBLIC_HEX,
    port: 0,
    host: '127.0.0.1',
    ...(publishToken === undefined ? {} : { publishToken }),
    pollMs: 1_000,
    logLevel: 'warn',
    vrfThreads: 0,
  };
}

/** The environment of process `pid` as NAME=value entries. */
function environ(pid: number): string[] {
  return readFileSync(`/proc/${pid}/environ`, 'utf8').split('\0');
}

test('proof servers never see the key; the writer gets it over IPC alone', linuxOnly, async () => {
  const { url, lookup } = await store();
  // an operator who keeps the key in the environment of akd serve
  const saved = KEY_VARIABLES.map((name) => [name, process.env[name]] as const);
  process.env['AKD_VRF_KEY'] = SECRET_HEX;
  process.env['AKD_VRF_KEY_FILE'] = KEY_PATH;
  const running = await startCluster({
    config: config(url, TOKEN),
    secretKey: SECRET,
    workers: 2,
    log: () => {},
    stderr: () => {},
  });
  try {
    const proofs = childPids('proof');
    assert.equal(proofs.length, 2);
    for (const pid of [...proofs, ...childPids('writer')]) {
      for (const entry of environ(pid)) {
        for (const name of KEY_VARIABLES) assert.ok(!entry.startsWith(`${name}=`), `${pid}`);
        assert.ok(!entry.includes(SECRET_HEX) && !entry.includes(KEY_PATH), `${pid}`);
      }
    }
    for (const argv of [...childCommandLines('proof'), ...childCommandLines('writer')]) {
      assert.ok(!argv.some((a) => a.includes(SECRET_HEX) || a.includes(KEY_PATH)));
    }
    const response = await fetch(`${running.url}/v1/lookup/alice`, {
      headers: { accept: 'application/x-protobuf' },
    });
    assert.equal(response.status, 200);
    assert.equal(toHex(new Uint8Array(await response.arrayBuffer())), lookup);
    const history = await fetch(`${running.url}/v1/history/alice`);
    assert.equal(history.status, 200);
  } finally {
    for (const [name, value] of saved) {
      if (value === undefined) delete process.env[name];
      else process.env[name] = value;
    }
    assert.equal(await running.close(), 0);
  }
});

test('a read-only cluster starts without a key; a publishing one needs it', async () => {
  const { url, lookup } = await store();
  const running = await startCluster({
    config: config(url),
    workers: 1,
    log: () => {},
    stderr: () => {},
  });
  try {
    const response = await fetch(`${running.url}/v1/lookup/alice`, {
      headers: { accept: 'application/x-protobuf' },
    });
    assert.equal(response.status, 200);
    assert.equal(toHex(new Uint8Array(await response.arrayBuffer())), lookup);
  } finally {
    assert.equal(await running.close(), 0);
  }
  await assert.rejects(
    startCluster({ config: config(url, TOKEN), workers: 1, log: () => {} }),
    TypeError,
  );
});
