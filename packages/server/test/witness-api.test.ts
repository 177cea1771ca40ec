// Plexi's read API over a witness's heads file, over real HTTP: the shapes plexi_core's serde
// types read, new lines picked up per request, a replaced file re-read, bad lines skipped, and
// the project's error shape for what Plexi answers with a bare 404.
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { appendFileSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import {
  parseWitnessSignature,
  signWitness,
  toHex,
  verifyWitnessSignature,
  witnessPublicKey,
  witnessSignatureToJson,
  type PlexiCiphersuite,
} from '@akd-ts/core';
import { buildWitnessApp } from '@akd-ts/server';

const dir = mkdtempSync(join(tmpdir(), 'akd-witness-'));
const heads = join(dir, 'heads.jsonl');
const SEED = new Uint8Array(32).fill(12);
const KEY = witnessPublicKey(SEED);
const root = (epoch: number) => new Uint8Array(32).fill(epoch);
const line = (epoch: number, namespace = 'log-a', ciphersuite: PlexiCiphersuite = 1) =>
  JSON.stringify(
    witnessSignatureToJson(
      signWitness(
        {
          ciphersuite,
          namespace,
          epoch: BigInt(epoch),
          timestamp: 1_700_000_000_000n + BigInt(epoch),
          digest: root(epoch),
        },
        SEED,
      ),
    ),
  ) + '\n';

const app = buildWitnessApp({
  heads,
  keys: [{ publicKey: toHex(KEY), notBefore: 1_700_000_000 }],
  logDirectory: { 'log-a': 'https://kt.example/v1/audit-blobs' },
});
let base = '';
before(async () => {
  writeFileSync(heads, line(3) + line(4) + line(5, 'log b', 2));
  base = await app.listen({ port: 0, host: '127.0.0.1' });
});
after(async () => {
  await app.close();
  rmSync(dir, { recursive: true, force: true });
});

// eslint-disable-next-line @typescript-eslint/no-explicit-any -- JSON answers, checked field by field
async function get(path: string): Promise<{ status: number; body: any }> {
  const r = await fetch(base + path);
  return { status: r.status, body: await r.json() };
}

test('/info lists the keys and the logs', async () => {
  assert.deepEqual(await get('/info'), {
    status: 200,
    body: {
      keys: [{ public_key: toHex(KEY), not_before: 1_700_000_000 }],
      logs: ['log-a', 'log b'],
    },
  });
});

test("/namespaces and /namespaces/{ns} give Plexi's NamespaceInfo", async () => {
  const a = {
    name: 'log-a',
    log_directory: 'https://kt.example/v1/audit-blobs',
    root: `3/${toHex(root(3))}`,
    last_verified_epoch: 4,
    status: 'Online',
    reports_uri: '/namespaces/log-a/reports',
    audits_uri: '/namespaces/log-a/audits',
    signature_version: 1,
    ciphersuite: 1,
  };
  const list = await get('/namespaces');
  assert.equal(list.status, 200);
  assert.deepEqual(list.body.namespaces[0], a);
  assert.equal(list.body.namespaces[1].ciphersuite, 2);
  assert.equal(list.body.namespaces[1].log_directory, null);
  assert.deepEqual(await get('/namespaces/log-a'), { status: 200, body: a });
  const b = await get('/namespaces/log%20b');
  assert.equal(b.body.audits_uri, '/namespaces/log%20b/audits');
});

test('/namespaces/{ns}/audits/{epoch} serves the signature as signed, and it verifies', async () => {
  const r = await fetch(`${base}/namespaces/log-a/audits/4`);
  assert.equal(r.status, 200);
  assert.match(r.headers.get('content-type')!, /^application\/json/);
  const text = await r.text();
  assert.equal(text + '\n', line(4));
  const s = parseWitnessSignature(JSON.parse(text));
  verifyWitnessSignature(s, KEY);
  assert.deepEqual(s.digest, root(4));
  const bincode = parseWitnessSignature((await get('/namespaces/log%20b/audits/5')).body);
  verifyWitnessSignature(bincode, KEY);
  assert.equal(bincode.ciphersuite, 2);
});

test('/namespaces/{ns}/last-verified-epoch names the last step and its roots', async () => {
  assert.deepEqual((await get('/namespaces/log-a/last-verified-epoch')).body, {
    job_id: '00000000-0000-0000-0000-000000000000',
    epoch: 4,
    start_hash: toHex(root(3)),
    end_hash: toHex(root(4)),
    timestamp: 1_700_000_000_004,
  });
  // the first epoch signed: its previous root is not known, so the step's own root stands in
  const b = (await get('/namespaces/log%20b/last-verified-epoch')).body;
  assert.equal(b.start_hash, b.end_hash);
});

test('lines appended later are served; half lines wait; bad lines are skipped', async () => {
  appendFileSync(heads, 'not json\n' + line(6).slice(0, 40));
  assert.equal((await get('/namespaces/log-a')).body.last_verified_epoch, 4);
  appendFileSync(heads, line(6).slice(40));
  assert.equal((await get('/namespaces/log-a')).body.last_verified_epoch, 6);
  assert.equal((await get('/namespaces/log-a/audits/6')).status, 200);
});

test('a replaced (shorter) heads file is read again from the start', async () => {
  writeFileSync(heads, line(9, 'log-c'));
  const info = await get('/info');
  assert.deepEqual(info.body.logs, ['log-c']);
  writeFileSync(heads, line(3) + line(4) + line(5, 'log b', 2) + line(6));
  assert.deepEqual((await get('/info')).body.logs, ['log-a', 'log b']);
});

test("what is not there is a 404 in the project's error shape; bad epochs a 400", async () => {
  for (const path of [
    '/namespaces/nope',
    '/namespaces/log-a/audits/99',
    '/namespaces/nope/last-verified-epoch',
    '/other',
  ]) {
    const r = await get(path);
    assert.equal(r.status, 404, path);
    assert.equal(r.body.error.code, 'HTTP_NOT_FOUND');
  }
  const bad = await get('/namespaces/log-a/audits/x1');
  assert.equal(bad.status, 400);
  assert.equal(bad.body.error.code, 'HTTP_BAD_REQUEST');
  const post = await fetch(`${base}/info`, { method: 'POST' });
  assert.equal(post.status, 404);
  // a parameter over 1024 bytes is refused before any lookup (fastify answers 414)
  const long = await fetch(`${base}/namespaces/${'n'.repeat(2000)}`);
  assert.equal(long.status, 414);
});

test('no heads file yet: nothing to list', async () => {
  const empty = buildWitnessApp({ heads: join(dir, 'none.jsonl'), keys: [] });
  const r = await empty.inject({ method: 'GET', url: '/namespaces' });
  assert.deepEqual(r.json(), { namespaces: [] });
  await empty.close();
});
