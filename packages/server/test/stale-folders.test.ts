// Private folders left by akd serve primaries that were killed outright
// (cluster/stale-folders.ts): removed only when provably stale, over real sockets and real
// processes; anything that may be in use is left alone.
import { after, test } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, rmSync, utimesSync, writeFileSync } from 'node:fs';
import { createServer, type Server } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { processExists, removeStaleFolders } from '../src/cluster/stale-folders.js';

const dir = mkdtempSync(join(tmpdir(), 'akd-stale-test-'));
after(() => rmSync(dir, { recursive: true, force: true }));

/** A Unix socket at `path` that nobody listens on any more (as a killed writer leaves it). */
async function deadSocket(path: string): Promise<void> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(path, resolve));
  // a listening server's file stays when the process is killed; close() would remove it
  (server as unknown as { _handle: { close(): void } | null })._handle?.close();
  (server as unknown as { _handle: unknown })._handle = null;
}

async function liveSocket(path: string): Promise<Server> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(path, resolve));
  after(() => server.close());
  return server;
}

/** The pid of a process that has exited. */
function gonePid(): number {
  const child = spawnSync(process.execPath, ['-e', 'process.stdout.write(String(process.pid))']);
  const pid = Number(String(child.stdout));
  assert.equal(processExists(pid), false);
  return pid;
}

test('stale folders are removed; live, recent and foreign ones are left', async () => {
  const gone = gonePid();
  const folder = (name: string) => {
    const path = join(dir, name);
    mkdirSync(path);
    return path;
  };
  const staleCurrent = folder(`akd-serve-${gone}-AbC123`);
  await deadSocket(join(staleCurrent, 'writer-1.sock'));
  writeFileSync(join(staleCurrent, 'snapshot-1'), 'x');
  const live = folder(`akd-serve-${process.pid}-Def456`);
  // a process that is gone, but a socket in the folder answers: not ours to judge
  const answering = folder(`akd-serve-${gone}-Ghi789`);
  await liveSocket(join(answering, 'writer-2.sock'));
  const hour = Date.now() / 1000 - 3_600;
  const staleEarlier = folder('akd-writer-Jkl012');
  await deadSocket(join(staleEarlier, 'writer.sock'));
  utimesSync(staleEarlier, hour, hour);
  const emptyEarlier = folder('akd-writer-Mno345');
  utimesSync(emptyEarlier, hour, hour);
  // an earlier version's writer that made its folder moments ago may not listen yet
  const recentEarlier = folder('akd-writer-Pqr678');
  const listeningEarlier = folder('akd-writer-Stu901');
  await liveSocket(join(listeningEarlier, 'writer.sock'));
  utimesSync(listeningEarlier, hour, hour);
  const other = folder('akd-serve-notapid-Vwx234');
  utimesSync(other, hour, hour);
  writeFileSync(join(dir, `akd-serve-${gone}-Yza567`), 'a file, not a folder');

  const removed: string[] = [];
  await removeStaleFolders(dir, (path, why) => removed.push(`${path}: ${why}`));
  assert.deepEqual(
    removed.sort(),
    [
      `${staleCurrent}: its primary, process ${gone}, is gone`,
      `${staleEarlier}: no writer listens there`,
      `${emptyEarlier}: no writer listens there`,
    ].sort(),
  );
  for (const path of [staleCurrent, staleEarlier, emptyEarlier]) assert.ok(!existsSync(path));
  for (const path of [live, answering, recentEarlier, listeningEarlier, other]) {
    assert.ok(existsSync(path), path);
  }
});

test('a temporary directory that cannot be read is no error', async () => {
  const removed: string[] = [];
  await removeStaleFolders(join(dir, 'no-such-folder'), (path) => removed.push(path));
  assert.deepEqual(removed, []);
});
