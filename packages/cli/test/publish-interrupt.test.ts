// Ctrl-C during akd publish: the message for each point a publish can be interrupted at, the
// signal raised again after it, and a real interrupted publish (a child process) that says
// nothing was published, leaves the store at its epoch and leaves no journal file behind.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { EventEmitter } from 'node:events';
import { readdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import {
  interruptMessage,
  sayWhenInterrupted,
  type SignalTarget,
} from '../src/commands/publish-interrupt.js';
import { akd, tempDir } from './helpers.js';
import { spawnTs } from './support/children.js';

const KEY = 'c9afa9d845ba75166b5c215767b1d6934e50c3db36e89b127b8a622b120f6721';
const BIN = fileURLToPath(new URL('../src/bin.ts', import.meta.url));

test('the message says whether anything was published, for each point of a publish', () => {
  const store = 'sqlite:./akd.db';
  assert.match(interruptMessage({ store }), /before the store was opened: nothing was published/);
  for (const phase of ['versions', 'vrf', 'preload', 'tree'] as const) {
    assert.equal(
      interruptMessage({ store, before: 4n, phase }),
      'interrupted before committing: nothing was published; sqlite:./akd.db stays at epoch 4',
    );
  }
  assert.match(
    interruptMessage({ store, before: 4n, phase: 'commit' }),
    /while committing epoch 5: .* published whole or not at all \(akd epoch --db sqlite:.\/akd.db/,
  );
  assert.match(interruptMessage({ store, before: 4n, phase: 'done' }), /after the publish ended/);
  assert.match(interruptMessage({ store, before: 4n, finished: true }), /after the publish ended/);
  assert.match(
    interruptMessage({ store, before: 4n, finished: true, proving: 5n }),
    /storing the VRF proofs of epoch 5: the epoch is published; .* once the next writer/,
  );
});

/** A stand-in for `process`: signals are emitted by the test, kills are recorded. */
function fakeProcess(): SignalTarget & EventEmitter & { kills: string[] } {
  const target = new EventEmitter() as SignalTarget & EventEmitter & { kills: string[] };
  target.kills = [];
  target.pid = 4242;
  target.kill = (pid: number, signal: string) => target.kills.push(`${pid} ${signal}`);
  return target;
}

test('on a signal the message is printed, the handlers removed and the signal raised again', () => {
  const target = fakeProcess();
  let out = '';
  const state = { store: 'memory:', before: 0n, phase: 'vrf' as const };
  sayWhenInterrupted(state, { write: (s: string) => (out += s) }, target);
  assert.equal(target.listenerCount('SIGINT') + target.listenerCount('SIGTERM'), 2);
  target.emit('SIGTERM', 'SIGTERM');
  assert.equal(
    out,
    '\ninterrupted before committing: nothing was published; memory: stays at epoch 0\n',
  );
  assert.deepEqual(target.kills, ['4242 SIGTERM']);
  assert.equal(target.listenerCount('SIGINT') + target.listenerCount('SIGTERM'), 0);
});

test('once removed, the handlers say nothing', () => {
  const target = fakeProcess();
  const stop = sayWhenInterrupted({ store: 'memory:' }, { write: () => assert.fail() }, target);
  stop();
  assert.equal(target.listenerCount('SIGINT'), 0);
  assert.deepEqual(target.kills, []);
});

test('Ctrl-C during a publish: nothing published, the store consistent, no journal left', async () => {
  const tmp = tempDir();
  try {
    const db = `sqlite:${join(tmp.dir, 'akd.db')}`;
    const env = { AKD_VRF_KEY: KEY };
    assert.equal((await akd(['init', '--db', db, '--config', 'whatsapp_v1'], { env })).code, 0);
    // enough labels that the VRF phase is still running when the signal arrives
    const lines = Array.from({ length: 20_000 }, (_, i) => `{"label":"u${i}","value":"v"}`);
    const updates = join(tmp.dir, 'updates.jsonl');
    writeFileSync(updates, `${lines.join('\n')}\n`);
    const child = spawnTs(BIN, ['publish', '--db', db, '--vrf-threads', '0', updates], env);
    const exited = new Promise<string | number | null>((resolve) =>
      child.process.on('exit', (code, signal) => resolve(signal ?? code)),
    );
    await child.waitForLine(/^publish: computing VRF labels/, { stream: 'stderr' });
    child.process.kill('SIGINT');
    assert.equal(await exited, 'SIGINT', 'it ends as interrupted (130 in a shell)');
    assert.match(
      child.stderr(),
      /\ninterrupted before committing: nothing was published; sqlite:.*akd\.db stays at epoch 0\n$/,
    );
    assert.deepEqual(
      readdirSync(tmp.dir).filter((f) => f.endsWith('-journal')),
      [],
      'no journal file',
    );
    const epoch = await akd(['epoch', '--db', db, '--json']);
    assert.equal(JSON.parse(epoch.stdout).epoch, 0);
    // the writer lock is free: the next publish goes through
    const next = await akd(['publish', '--db', db, '-'], {
      env,
      stdin: '{"label":"a","value":"b"}\n',
    });
    assert.equal(next.code, 0, next.stderr);
  } finally {
    tmp.cleanup();
  }
});
