// `akd verify head`: a witness's signed head in Plexi's JSON, either ciphersuite, one object or
// JSON lines (the last): exit 0 valid, 1 invalid (with its code), 2 unreadable.
import { after, test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import {
  fromHex,
  signWitness,
  toHex,
  witnessPublicKey,
  witnessSignatureToJson,
  type PlexiCiphersuite,
} from '@akd-ts/core';
import { akd, tempDir } from './helpers.js';

const tmp = tempDir();
after(() => tmp.cleanup());
const SECRET = new Uint8Array(32).fill(21);
const KEY = toHex(witnessPublicKey(SECRET));
const ROOT = new Uint8Array(32).fill(0x3c);
const text = (s: string) => new TextEncoder().encode(s);

function head(ciphersuite: PlexiCiphersuite, epoch: bigint, namespace = 'my-log') {
  const m = { ciphersuite, namespace, epoch, timestamp: 1_700_000_000_000n, digest: ROOT };
  return witnessSignatureToJson(signWitness(m, SECRET));
}
const lines = (...heads: object[]) => text(heads.map((h) => JSON.stringify(h)).join('\n') + '\n');

for (const cs of [1, 2] as const) {
  test(`ciphersuite ${cs}: a valid head exits 0 and says what it binds`, async () => {
    const file = tmp.write(`one-${cs}.json`, text(JSON.stringify(head(cs, 7n), null, 2)));
    const r = await akd(['verify', 'head', file, '--auditor-key', KEY, '--namespace', 'my-log']);
    assert.equal(r.code, 0, r.stderr);
    assert.equal(
      r.stdout,
      `valid head: epoch 7, root hash ${toHex(ROOT)}\n` +
        `signed for "my-log" at 2023-11-14T22:13:20.000Z by witness key ${KEY}, Plexi ciphersuite 0x000${cs} (${cs === 1 ? 'protobuf' : 'bincode'})\n`,
    );
  });
}

test('JSON lines: the last head is checked; --json prints one object', async () => {
  const file = tmp.write('heads.jsonl', lines(head(1, 5n), head(2, 6n)));
  const r = await akd(['verify', 'head', file, '--auditor-key', KEY, '--json']);
  assert.equal(r.code, 0, r.stderr);
  assert.deepEqual(JSON.parse(r.stdout), {
    head: 'witness',
    verified: true,
    namespace: 'my-log',
    epoch: 6,
    rootHash: toHex(ROOT),
    timestamp: 1_700_000_000_000,
    ciphersuite: 2,
    keyId: fromHex(KEY)[31],
    auditorKey: KEY,
  });
  // a Plexi head with its bytes as Plexi writes them (this file is what audit verify appends)
  assert.equal(readFileSync(file, 'utf8').split('\n')[0], JSON.stringify(head(1, 5n)));
});

test('an invalid head exits 1 with its code', async () => {
  const check = async (name: string, json: object, extra: string[] = []) => {
    const file = tmp.write(name, lines(json));
    const r = await akd(['verify', 'head', file, '--auditor-key', KEY, ...extra]);
    assert.equal(r.code, 1, `${name}: ${r.stdout}`);
    return r.stderr;
  };
  const good = head(1, 9n);
  assert.match(
    await check('other-ns.json', good, ['--namespace', 'x']),
    /WITNESS_NAMESPACE_MISMATCH/,
  );
  assert.match(await check('epoch.json', { ...good, epoch: 10 }), /WITNESS_MESSAGE_MISMATCH/);
  const sig = String(good['signature']);
  const flipped = (sig[0] === '0' ? '1' : '0') + sig.slice(1);
  assert.match(
    await check('sig.json', { ...good, signature: flipped }),
    /WITNESS_SIGNATURE_INVALID/,
  );
  assert.match(
    await check('key-id.json', { ...good, key_id: 0 }),
    /WITNESS_KEY_MISMATCH|SIGNATURE/,
  );
  assert.match(await check('decode.json', { ...good, digest: 7 }), /^error: WITNESS_DECODE: /);
  const other = toHex(witnessPublicKey(new Uint8Array(32).fill(22)));
  const file = tmp.write('good.json', lines(good));
  const r = await akd(['verify', 'head', file, '--auditor-key', other]);
  assert.equal(r.code, 1);
  assert.match(r.stderr, /^error: WITNESS_KEY_MISMATCH: /);
});

test('an unreadable file, or one with no JSON, exits 2', async () => {
  const missing = await akd(['verify', 'head', '/nonexistent/h.json', '--auditor-key', KEY]);
  assert.equal(missing.code, 2);
  assert.match(missing.stderr, /<file>: cannot read "\/nonexistent\/h.json"/);
  const notJson = await akd([
    'verify',
    'head',
    tmp.write('n.txt', text('x\n')),
    '--auditor-key',
    KEY,
  ]);
  assert.equal(notJson.code, 2);
  assert.match(notJson.stderr, /holds no JSON head/);
  const empty = await akd(['verify', 'head', tmp.write('e.txt', text('')), '--auditor-key', KEY]);
  assert.equal(empty.code, 2);
  const badKey = await akd([
    'verify',
    'head',
    tmp.write('k.json', lines(head(1, 1n))),
    '--auditor-key',
    'zz',
  ]);
  assert.equal(badKey.code, 2);
});
