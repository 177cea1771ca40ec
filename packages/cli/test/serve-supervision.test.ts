// akd serve's primary as a user runs it (spawned, so that nothing of the test keeps it alive):
// it outlives the processes it supervises and starts them again, and cleans up after a writer
// that was killed.
import { after, test } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { akd, tempDir } from './helpers.js';
import { childPids, eventually, spawnServe } from './support/children.js';

const KEY = 'c9afa9d845ba75166b5c215767b1d6934e50c3db36e89b127b8a622b120f6721';
const env = { AKD_VRF_KEY: KEY };
const tmp = tempDir();
after(tmp.cleanup);
const linuxOnly = process.platform !== 'linux' && 'reads /proc';

/** A SQLite store with a directory in it (spawned servers cannot share a memory store). */
async function sqliteStore(name: string): Promise<string> {
  const db = `sqlite:${join(tmp.dir, `${name}.db`)}`;
  const init = await akd(['init', '--db', db, '--config', 'whatsapp_v1'], { env });
  assert.equal(init.code, 0, init.stderr);
  return db;
}

const alive = (pid: number) => existsSync(`/proc/${pid}`);

test(
  'a read-only server outlives its killed proof server and starts a new one',
  { skip: linuxOnly },
  async () => {
    const db = await sqliteStore('read-only');
    const server = await spawnServe(['--db', db, '--workers', '1'], env);
    let stopped: number | string | null;
    try {
      const primary = server.process.pid!;
      const [proof] = childPids('proof', primary);
      assert.ok(proof !== undefined, 'a proof server');
      process.kill(proof, 'SIGKILL');
      await eventually('a new proof server answers /healthz', async () => {
        const now = childPids('proof', primary);
        if (now.length !== 1 || now[0] === proof) return false;
        return (await fetch(`${server.url}/healthz`)).status === 200;
      });
      // the same primary, still running
      assert.equal(server.process.exitCode, null, server.stderr());
      assert.ok(alive(primary));
      assert.ok(
        server.lines.some((l) => /the proof process exited \(signal SIGKILL\)/.test(l)),
        server.lines.join('\n'),
      );
    } finally {
      stopped = await server.stop();
    }
    assert.equal(stopped, 0, server.stderr());
    assert.match(server.stderr(), /stopped \(SIGTERM\)/);
  },
);
