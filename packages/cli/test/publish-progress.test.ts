// akd publish's progress: a bar with throughput on a terminal, plain lines otherwise, none
// with --no-progress, and the phase times in the summary.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import type { PublishProgress } from '@akd-ts/directory';
import { formatPhaseTimes, publishReporter } from '../src/commands/publish-progress.js';
import { akd } from './helpers.js';

const KEY = 'c9afa9d845ba75166b5c215767b1d6934e50c3db36e89b127b8a622b120f6721';

/** A publish of 3,000 labels as Directory.publish reports it, one simulated second apart. */
const STEPS: PublishProgress[] = [
  { phase: 'versions', done: 0, total: 3000 },
  { phase: 'vrf', done: 0, total: 3000 },
  { phase: 'vrf', done: 1024, total: 3000 },
  { phase: 'vrf', done: 2048, total: 3000 },
  { phase: 'vrf', done: 3000, total: 3000 },
  { phase: 'tree', done: 0, total: 3000 },
  { phase: 'commit', done: 0, total: 9000 },
  { phase: 'done', done: 3000, total: 3000 },
];

function replay(
  sink: { write(s: string): unknown; isTTY?: boolean; columns?: number },
  enabled = true,
) {
  let clock = 0;
  const reporter = publishReporter(sink, enabled, () => clock);
  for (const step of STEPS) {
    reporter.onProgress(step);
    clock += 1000;
  }
  return reporter.finish();
}

test('on a terminal, the VRF phase is a bar with labels per second', () => {
  let out = '';
  const times = replay({ write: (s: string) => (out += s), isTTY: true, columns: 100 });
  assert.match(out, /computing VRF labels \|[█░]+\| 3000\/3000 labels \| 1000 labels\/s/);
  assert.match(out, /publish: updating the tree \(3000 leaves\)/);
  assert.match(out, /publish: committing \(9000 records\)/);
  assert.deepEqual(times, { versions: 1, vrf: 4, tree: 1, commit: 1 });
});

test('elsewhere, plain lines: one per phase and at most one a second for the VRF', () => {
  let out = '';
  replay({ write: (s: string) => (out += s) });
  assert.equal(
    out,
    [
      'publish: reading current versions (3000 updates)',
      'publish: computing VRF labels (3000 labels)',
      'publish: computing VRF labels 1024/3000 (1024 labels/s)',
      'publish: computing VRF labels 2048/3000 (1024 labels/s)',
      'publish: computing VRF labels 3000/3000 (1000 labels/s)',
      'publish: updating the tree (3000 leaves)',
      'publish: committing (9000 records)',
      '',
    ].join('\n'),
  );
});

test('disabled, nothing is written but the times are kept', () => {
  let out = '';
  const times = replay({ write: (s: string) => (out += s), isTTY: true }, false);
  assert.equal(out, '');
  assert.equal(formatPhaseTimes(times), 'versions 1.00 s, vrf 4.00 s, tree 1.00 s, commit 1.00 s');
});

test('akd publish: progress on stderr, result and phase times on stdout, --no-progress', async () => {
  const db = 'memory:publish-progress-1';
  const env = { AKD_VRF_KEY: KEY };
  assert.equal((await akd(['init', '--db', db, '--config', 'whatsapp_v1'], { env })).code, 0);
  const updates = Array.from({ length: 50 }, (_, i) =>
    JSON.stringify({ label: `u${i}`, value: 'v' }),
  ).join('\n');
  const text = await akd(['publish', '--db', db, '-'], { env, stdin: updates });
  assert.equal(text.code, 0, text.stderr);
  assert.match(text.stdout, /^published epoch 1: 50 updates in/);
  assert.match(
    text.stdout,
    /\nphases: versions \d+\.\d\d s, vrf \d+\.\d\d s, preload \d+\.\d\d s, tree \d+\.\d\d s, commit \d+\.\d\d s, proofs \d+\.\d\d s\n$/,
  );
  assert.match(
    text.stderr,
    /^publish: reading current versions \(50 updates\)\npublish: computing VRF labels \(50 labels\)\n/,
  );
  assert.match(text.stderr, /\npublish: storing the VRF proofs of epoch 1\n$/);

  const json = await akd(['publish', '--db', db, '--json', '--no-progress', '-'], {
    env,
    stdin: '{"label":"u1","value":"w"}',
  });
  assert.equal(json.code, 0, json.stderr);
  assert.equal(json.stderr, '');
  const result = JSON.parse(json.stdout);
  assert.equal(result.epoch, 2);
  assert.deepEqual(Object.keys(result.phases), [
    'versions',
    'vrf',
    'preload',
    'tree',
    'commit',
    'proofs',
  ]);

  const failed = await akd(['publish', '--db', db, '-'], {
    env,
    stdin: '{"label":"u1","value":""}',
  });
  assert.equal(failed.code, 1);
  assert.match(failed.stderr, /error: DIRECTORY_LIMIT/);
});
