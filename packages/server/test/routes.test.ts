// The proof routes answer proofs a client verifies with core alone, in protobuf (the bare
// upstream message, epoch and root in headers) and in JSON (the same bytes in base64).
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import {
  auditVerify,
  configurationByName,
  decodeAppendOnlyProof,
  decodeHistoryProof,
  decodeLookupProof,
  fromHex,
  fromUtf8,
  keyHistoryVerify,
  lookupVerify,
  toHex,
  utf8,
} from '@akd-ts/core';
import type {
  BatchLookupJson,
  EpochJson,
  HistoryJson,
  LookupJson,
  AuditJson,
} from '@akd-ts/server';
import { demoApp } from './support.js';

const config = configurationByName('whatsapp_v1');
const PROTOBUF = { accept: 'application/x-protobuf' };
let demo: Awaited<ReturnType<typeof demoApp>>;
let epoch: EpochJson;

before(async () => {
  demo = await demoApp();
  epoch = (await demo.app.inject({ url: '/v1/epoch' })).json();
});
after(() => demo.close());

const b64 = (s: string) => new Uint8Array(Buffer.from(s, 'base64'));

test('GET /v1/epoch gives the epoch, root hash, public key and configuration', async () => {
  const res = await demo.app.inject({ url: '/v1/epoch', headers: PROTOBUF });
  assert.equal(res.statusCode, 200);
  assert.match(res.headers['content-type'] as string, /^application\/json/);
  const body = res.json() as EpochJson;
  assert.deepEqual(body, epoch);
  assert.equal(body.epoch, '3');
  assert.equal(body.rootHash, toHex(demo.roots[3]!));
  assert.equal(body.publicKey, toHex(demo.dir.getPublicKey()));
  assert.deepEqual(body.configuration, { name: 'whatsapp_v1', domainLabel: null });
  assert.equal(body.publishing, false);
  assert.equal(body.limits.maxLabelBytes, 256);
  assert.equal(res.headers['x-akd-epoch'], '3');
  assert.equal(res.headers['x-akd-root-hash'], body.rootHash);
});

test('GET /v1/lookup/:label in protobuf verifies with core against /v1/epoch', async () => {
  const res = await demo.app.inject({ url: '/v1/lookup/alice', headers: PROTOBUF });
  assert.equal(res.statusCode, 200);
  assert.equal(res.headers['content-type'], 'application/x-protobuf');
  assert.equal(res.headers['x-akd-epoch'], '3');
  assert.equal(res.headers['x-akd-root-hash'], epoch.rootHash);
  assert.equal(res.headers['vary'], 'Accept');
  assert.equal(res.headers['cache-control'], 'no-store');
  const proof = decodeLookupProof(new Uint8Array(res.rawPayload));
  const result = lookupVerify(
    config,
    fromHex(epoch.publicKey),
    fromHex(epoch.rootHash),
    3n,
    utf8('alice'),
    proof,
  );
  assert.deepEqual(result, { epoch: 2n, version: 2n, value: utf8('alice-key-2') });
});

test('GET /v1/lookup/:label in JSON carries the same proof in base64, and claims match it', async () => {
  const json = (await demo.app.inject({ url: '/v1/lookup/alice' })).json() as LookupJson;
  const proto = await demo.app.inject({ url: '/v1/lookup/alice', headers: PROTOBUF });
  assert.deepEqual(b64(json.proof), new Uint8Array(proto.rawPayload));
  assert.deepEqual(json.label, { text: 'alice', hex: toHex(utf8('alice')) });
  assert.equal(json.epoch, '3');
  assert.equal(json.rootHash, epoch.rootHash);
  assert.deepEqual(json.claimed, {
    version: '2',
    epoch: '2',
    value: { text: 'alice-key-2', hex: toHex(utf8('alice-key-2')) },
  });
});

test('labels: percent-encoded UTF-8 (including "/") and hex:<hex> raw bytes', async () => {
  const carol = (
    await demo.app.inject({ url: `/v1/lookup/${encodeURIComponent('carol@example.com')}` })
  ).json() as LookupJson;
  assert.equal(carol.claimed.value.text, 'carol-key-1');
  const same = (
    await demo.app.inject({ url: `/v1/lookup/hex:${toHex(utf8('carol@example.com'))}` })
  ).json() as LookupJson;
  assert.equal(same.proof, carol.proof);
  const raw = await demo.app.inject({ url: '/v1/lookup/hex:00FF07', headers: PROTOBUF });
  assert.equal(raw.statusCode, 200);
  const result = lookupVerify(
    config,
    fromHex(epoch.publicKey),
    fromHex(epoch.rootHash),
    3n,
    new Uint8Array([0, 0xff, 7]),
    decodeLookupProof(new Uint8Array(raw.rawPayload)),
  );
  assert.deepEqual(result.value, new Uint8Array([1, 2, 3]));
  const slash = await demo.app.inject({ url: '/v1/lookup/a%2Fb' });
  assert.equal(slash.statusCode, 404);
  // the label as the client wrote it, not its bytes in hex
  assert.match(slash.json().error.message, /^label "a\/b" has no value at epoch/);
});

test('POST /v1/lookup proves a batch against one epoch, in JSON and size-delimited protobuf', async () => {
  const labels = ['alice', 'bob', 'hex:00ff07'];
  const json = await demo.app.inject({ method: 'POST', url: '/v1/lookup', payload: { labels } });
  assert.equal(json.statusCode, 200);
  const body = json.json() as BatchLookupJson;
  assert.equal(body.epoch, '3');
  assert.deepEqual(
    body.results.map((r) => r.claimed.value.hex),
    ['alice-key-2', 'bob-key-1'].map((v) => toHex(utf8(v))).concat('010203'),
  );
  const proto = await demo.app.inject({
    method: 'POST',
    url: '/v1/lookup',
    payload: { labels },
    headers: PROTOBUF,
  });
  assert.equal(proto.headers['x-akd-proof-count'], '3');
  const bytes = new Uint8Array(proto.rawPayload);
  const proofs: Uint8Array[] = [];
  for (let offset = 0; offset < bytes.length;) {
    let length = 0;
    for (let shift = 0; ; shift += 7) {
      const b = bytes[offset++]!;
      length += (b & 0x7f) * 2 ** shift;
      if (b < 0x80) break;
    }
    proofs.push(bytes.slice(offset, offset + length));
    offset += length;
  }
  assert.equal(proofs.length, 3);
  proofs.forEach((p, i) => assert.deepEqual(p, b64(body.results[i]!.proof)));
  const bob = lookupVerify(
    config,
    fromHex(epoch.publicKey),
    fromHex(epoch.rootHash),
    3n,
    utf8('bob'),
    decodeLookupProof(proofs[1]!),
  );
  assert.equal(fromUtf8(bob.value), 'bob-key-1');
});

test('GET /v1/history/:label: complete and mostRecent, both verify', async () => {
  const complete = (await demo.app.inject({ url: '/v1/history/alice' })).json() as HistoryJson;
  assert.equal(complete.mostRecent, null);
  assert.deepEqual(
    complete.claimed.map((c) => [c.version, c.epoch, c.value.text]),
    [
      ['2', '2', 'alice-key-2'],
      ['1', '1', 'alice-key-1'],
    ],
  );
  const results = keyHistoryVerify(
    config,
    fromHex(epoch.publicKey),
    fromHex(epoch.rootHash),
    3n,
    utf8('alice'),
    decodeHistoryProof(b64(complete.proof)),
    { historyParams: { kind: 'complete' } },
  );
  assert.equal(results.length, 2);

  const recent = await demo.app.inject({
    url: '/v1/history/alice?mostRecent=1',
    headers: PROTOBUF,
  });
  assert.equal(recent.headers['x-akd-epoch'], '3');
  const one = keyHistoryVerify(
    config,
    fromHex(epoch.publicKey),
    fromHex(epoch.rootHash),
    3n,
    utf8('alice'),
    decodeHistoryProof(new Uint8Array(recent.rawPayload)),
    { historyParams: { kind: 'mostRecent', count: 1 } },
  );
  assert.deepEqual(
    one.map((r) => r.version),
    [2n],
  );
});

test('GET /v1/audit proves the tree only grew, checked against the recorded roots', async () => {
  const json = (await demo.app.inject({ url: '/v1/audit?from=1&to=3' })).json() as AuditJson;
  assert.deepEqual(json.epochs, ['1', '2']);
  assert.equal(json.from, '1');
  assert.equal(json.to, '3');
  assert.equal(json.inserted, 4);
  const proto = await demo.app.inject({ url: '/v1/audit?from=1&to=3', headers: PROTOBUF });
  assert.equal(proto.headers['x-akd-epoch'], '3');
  assert.deepEqual(new Uint8Array(proto.rawPayload), b64(json.proof));
  const verified = auditVerify(
    config,
    demo.roots.slice(1, 4),
    decodeAppendOnlyProof(new Uint8Array(proto.rawPayload)),
  );
  assert.deepEqual(verified, { startEpoch: 1n, endEpoch: 3n });
});

test('the experimental configuration reports its domain label', async () => {
  const { demoDirectory } = await import('./support.js');
  const { buildApp } = await import('@akd-ts/server');
  const fixture = await demoDirectory('experimental');
  const app = await buildApp({ directory: fixture.dir, processMetrics: false });
  const body = (await app.inject({ url: '/v1/epoch' })).json() as EpochJson;
  assert.deepEqual(body.configuration, { name: 'experimental', domainLabel: 'ExampleLabel' });
  await app.close();
  await fixture.close();
});

test('Accept negotiation: JSON by default and on ties, protobuf when preferred', async () => {
  const type = async (accept?: string) =>
    (
      await demo.app.inject({
        url: '/v1/lookup/bob',
        headers: accept === undefined ? {} : { accept },
      })
    ).headers['content-type'];
  assert.match(String(await type()), /json/);
  assert.match(String(await type('*/*')), /json/);
  assert.match(String(await type('text/html,application/xhtml+xml,*/*;q=0.8')), /json/);
  assert.equal(await type('application/protobuf'), 'application/x-protobuf');
  assert.equal(
    await type('application/json;q=0.5, application/x-protobuf'),
    'application/x-protobuf',
  );
  assert.match(String(await type('application/json, application/x-protobuf')), /json/);
  assert.match(String(await type('application/*')), /json/);
});
