// The cluster's primary (cluster/launcher.ts) over real processes and a SQLite store: proof
// servers killed again and again are started again (never given up on), while a writer that
// keeps exiting stops the cluster, here at its first exit (maxRestarts 0), with the reason;
// and a killed writer's socket does not outlive it.
import { after, test } from 'node:test';
import assert from 'node:assert/strict';
import cluster from 'node:cluster';
import { existsSync, mkdtempSync, readdirSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { configurationByName } from '@akd-ts/core';
import { StorageManager } from '@akd-ts/storage';
import { SqliteDatabase } from '@akd-ts/storage-sqlite';
import { Directory, InMemoryVrfKeyStore } from '@akd-ts/directory';
import { startCluster } from '@akd-ts/server';
import { childPids, eventually } from '../../../test/support/processes.js';
import { PUBLIC_HEX, SECRET, TOKEN } from './support.js';

const dir = mkdtempSync(join(tmpdir(), 'akd-cluster-restart-'));
after(() => rmSync(dir, { recursive: true, force: true }));
const linuxOnly = { skip: process.platform !== 'linux' && 'reads /proc' };

/** A SQLite store holding an empty directory. */
async function store(): Promise<string> {
  const path = join(dir, 'store.db');
  const db = await SqliteDatabase.open(path);
  const directory = await Directory.open({
    config: configurationByName('whatsapp_v1'),
    storage: new StorageManager(db),
    vrfKeys: new InMemoryVrfKeyStore(SECRET),
  });
  await directory.close();
  await db.close();
  return `sqlite:${path}`;
}

/** The pid of the one proof server (a cluster worker of this process). */
const proofPid = () => {
  const pids = Object.values(cluster.workers ?? {}).map((w) => w!.process.pid!);
  assert.equal(pids.length, 1);
  return pids[0]!;
};

test(
  'proof servers are always started again; a writer exiting once too often stops the cluster',
  linuxOnly,
  async () => {
    const lines: string[] = [];
    const running = await startCluster({
      config: {
        storeUrl: await store(),
        configuration: 'whatsapp_v1',
        publicKey: PUBLIC_HEX,
        port: 0,
        host: '127.0.0.1',
        publishToken: TOKEN,
        pollMs: 1_000,
        logLevel: 'warn',
        vrfThreads: 0,
      },
      secretKey: SECRET,
      workers: 1,
      // a writer's first exit is one too many; proof servers do not count against it
      maxRestarts: 0,
      // every exit of the test counts, however slowly a busy machine restarts the processes
      restartWindowMs: 3_600_000,
      log: (line) => lines.push(line),
      stderr: () => {},
    });
    let stopped = false;
    void running.done.then(() => (stopped = true));
    // three times: more than a writer is allowed
    for (let i = 1; i <= 3; i++) {
      const before = proofPid();
      process.kill(before, 'SIGKILL');
      await eventually(`proof server ${i} started again`, async () => {
        if (Object.keys(cluster.workers ?? {}).length !== 1 || proofPid() === before) return false;
        return (await fetch(`${running.url}/healthz`)).status === 200;
      });
      assert.equal(stopped, false);
    }
    const restarts = lines
      .map((l) => JSON.parse(l) as { msg: string })
      .filter((l) => /the proof process exited/.test(l.msg))
      .map((l) => /starting it again in ([0-9.]+) s \(([0-9]+) exits?/.exec(l.msg)!.slice(1));
    assert.deepEqual(restarts, [
      ['1', '1'],
      ['2', '2'],
      ['4', '3'],
    ]);

    const [writer] = childPids('writer');
    assert.ok(writer !== undefined);
    const sockets = () =>
      readdirSync(tmpdir())
        .filter((f) => f.startsWith(`akd-serve-${process.pid}-`))
        .flatMap((f) => readdirSync(join(tmpdir(), f)).map((s) => join(tmpdir(), f, s)));
    const [socket] = sockets();
    assert.match(socket!, /writer-1\.sock$/);
    process.kill(writer, 'SIGKILL');
    assert.equal(await running.done, 1);
    assert.equal(
      running.fatal(),
      'the writer process keeps exiting (1 time within 3600 s; last: signal SIGKILL)',
    );
    assert.equal(running.error()?.message, running.fatal());
    assert.ok(!existsSync(socket!), 'the killed writer left no socket');
    assert.deepEqual(sockets(), [], 'and the cluster no folder');
  },
);
