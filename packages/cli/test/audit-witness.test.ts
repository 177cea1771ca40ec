// `akd audit witness`: the heads file akd audit verify writes, served with Plexi's read API
// over real HTTP until SIGTERM; option mistakes are usage errors.
import { after, test } from 'node:test';
import assert from 'node:assert/strict';
import {
  parseWitnessSignature,
  signWitness,
  toHex,
  verifyWitnessSignature,
  witnessPublicKey,
  witnessSignatureToJson,
} from '@akd-ts/core';
import { akd, eventually, start, tempDir } from './helpers.js';

const tmp = tempDir();
after(() => tmp.cleanup());
const SEED = new Uint8Array(32).fill(31);
const KEY = toHex(witnessPublicKey(SEED));
const head = (epoch: bigint) =>
  JSON.stringify(
    witnessSignatureToJson(
      signWitness(
        { ciphersuite: 1, namespace: 'my-log', epoch, timestamp: 5n, digest: new Uint8Array(32) },
        SEED,
      ),
    ),
  );
const heads = tmp.write('heads.jsonl', new TextEncoder().encode(`${head(1n)}\n${head(2n)}\n`));

test('serves the heads until SIGTERM', async () => {
  const running = start([
    'audit',
    'witness',
    '--heads',
    heads,
    '--public-key',
    KEY,
    '--log-directory',
    'my-log=https://kt.example/v1/audit-blobs',
    '--port',
    '0',
  ]);
  await eventually(
    () => /akd audit witness: http:\/\/\S+\//.test(running.stderr()),
    'listening',
    60_000,
  );
  const base = /akd audit witness: (http:\/\/\S+)\//.exec(running.stderr())![1]!;
  const info = (await (await fetch(`${base}/info`)).json()) as Record<string, unknown>;
  assert.deepEqual(info, { keys: [{ public_key: KEY, not_before: 0 }], logs: ['my-log'] });
  const ns = (await (await fetch(`${base}/namespaces/my-log`)).json()) as Record<string, unknown>;
  assert.equal(ns['log_directory'], 'https://kt.example/v1/audit-blobs');
  assert.equal(ns['last_verified_epoch'], 2);
  const s = parseWitnessSignature(await (await fetch(`${base}/namespaces/my-log/audits/2`)).json());
  verifyWitnessSignature(s, witnessPublicKey(SEED));
  process.emit('SIGTERM', 'SIGTERM');
  const outcome = await running.done;
  assert.equal(outcome.code, 0, outcome.stderr);
  assert.match(outcome.stderr, /akd audit witness: stopped \(SIGTERM\)/);
});

test('option mistakes are usage errors', async () => {
  const base = ['audit', 'witness', '--heads', heads];
  const cases: [string[], RegExp][] = [
    [['--public-key', 'zz'], /--public-key: expected hex/],
    [['--public-key', KEY, '--port', '70000'], /--port: expected 0 to 65535/],
    [['--public-key', KEY, '--not-before', 'soon'], /--not-before: expected seconds/],
    [
      ['--public-key', KEY, '--log-directory', 'nourl'],
      /--log-directory: expected <namespace>=<url>/,
    ],
    [[], /required option '--public-key <hex>'/],
  ];
  for (const [extra, message] of cases) {
    const r = await akd([...base, ...extra]);
    assert.equal(r.code, 2, extra.join(' '));
    assert.match(r.stderr, message);
  }
});
