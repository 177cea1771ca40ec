// The directory server relays witness signatures, over real HTTP: a polled witness (Plexi's
// API) and a pushing one, both verified against configured keys before GET /v1/epoch carries
// them; forged, foreign, unknown-key and wrong-root signatures refused; a witness that lies or
// hangs is not relayed and does not hold the answer past its bound.
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { createServer, type Server } from 'node:http';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { AddressInfo } from 'node:net';
import {
  signWitness,
  toHex,
  witnessPublicKey,
  witnessSignatureToJson,
  type PlexiCiphersuite,
} from '@akd-ts/core';
import { buildWitnessApp, WitnessRelay } from '@akd-ts/server';
import { Ajv2020 } from 'ajv/dist/2020.js';
import { demoApp } from './support.js';

const NS = 'demo.akd-ts';
const POLLED = new Uint8Array(32).fill(41);
const PUSHER = new Uint8Array(32).fill(42);
const LIAR = new Uint8Array(32).fill(43);
const STRANGER = new Uint8Array(32).fill(44);
const dir = mkdtempSync(join(tmpdir(), 'akd-relay-'));

function signed(
  seed: Uint8Array,
  epoch: bigint,
  digest: Uint8Array,
  namespace = NS,
  ciphersuite: PlexiCiphersuite = 1,
) {
  const m = { ciphersuite, namespace, epoch, timestamp: 1_700_000_000_000n, digest };
  return witnessSignatureToJson(signWitness(m, seed));
}

let demo: Awaited<ReturnType<typeof demoApp>>;
let base = '';
const witnessApps: { close(): Promise<unknown> }[] = [];
let hanging: Server;
let epoch = 0n;
let root: Uint8Array = new Uint8Array(0);
let witnesses: WitnessRelay;
let hangingAsked: Promise<void>;

before(async () => {
  // the demo's latest root, which the witnesses sign
  const probe = await demoApp();
  const head = await probe.dir.getEpochHash();
  epoch = head.epoch;
  root = head.hash;
  await probe.close();

  const serve = async (seed: Uint8Array, lines: object[]) => {
    const heads = join(dir, `${toHex(seed).slice(0, 8)}.jsonl`);
    writeFileSync(heads, lines.map((l) => JSON.stringify(l) + '\n').join(''));
    const app = buildWitnessApp({ heads, keys: [] });
    witnessApps.push(app);
    return app.listen({ port: 0, host: '127.0.0.1' });
  };
  const polledUrl = await serve(POLLED, [signed(POLLED, epoch, root, NS, 2)]);
  // the liar serves a signature of another root
  const liarUrl = await serve(LIAR, [signed(LIAR, epoch, new Uint8Array(32).fill(1))]);
  // a witness that accepts the connection and never answers
  let asked: () => void = () => undefined;
  hangingAsked = new Promise((resolve) => (asked = resolve));
  hanging = createServer(() => asked());
  await new Promise<void>((resolve) => hanging.listen(0, '127.0.0.1', resolve));
  const hangingUrl = `http://127.0.0.1:${(hanging.address() as AddressInfo).port}`;

  witnesses = new WitnessRelay({
    namespace: NS,
    witnesses: [
      { publicKey: witnessPublicKey(POLLED), url: polledUrl },
      { publicKey: witnessPublicKey(PUSHER) },
      { publicKey: witnessPublicKey(LIAR), url: liarUrl },
      { publicKey: witnessPublicKey(STRANGER), url: hangingUrl },
    ],
    timeoutMs: 3000,
  });
  demo = await demoApp({ witnesses });
  base = await demo.app.listen({ port: 0, host: '127.0.0.1' });
});

after(async () => {
  await demo.close();
  for (const app of witnessApps) await app.close();
  hanging.closeAllConnections();
  await new Promise((resolve) => hanging.close(resolve));
  rmSync(dir, { recursive: true, force: true });
});

async function epochJson(): Promise<{ epoch: string; rootHash: string; witnesses: object[] }> {
  const r = await fetch(`${base}/v1/epoch`);
  assert.equal(r.status, 200);
  return (await r.json()) as { epoch: string; rootHash: string; witnesses: object[] };
}

const push = (body: unknown) =>
  fetch(`${base}/v1/witness-signatures`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify(body),
  });

test('a witness that never answers does not hold GET /v1/epoch', async () => {
  // the first answer starts the polls in the background and carries what is kept: nothing yet
  const body = await epochJson();
  assert.deepEqual(body.witnesses, []);
  // the silent witness was asked, and the answer came without it
  await hangingAsked;
});

test("GET /v1/epoch carries the polled witness's signature, not the liar's or the silent one's", async () => {
  // what a server does after a publish, and what the previous answer started
  await witnesses.pollAll(epoch, root);
  const body = await epochJson();
  assert.equal(body.epoch, epoch.toString());
  assert.equal(body.rootHash, toHex(root));
  assert.deepEqual(body.witnesses, [signed(POLLED, epoch, root, NS, 2)]);
});

test('a pushed signature is kept once it verifies, and carried with the root', async () => {
  const r = await push(signed(PUSHER, epoch, root));
  assert.equal(r.status, 204, await r.text());
  const body = await epochJson();
  assert.equal(body.witnesses.length, 2);
  assert.deepEqual(body.witnesses[1], signed(PUSHER, epoch, root));
});

test('forged, foreign, unknown and wrong-root pushes are refused with their codes', async () => {
  const good = signed(PUSHER, epoch, root);
  const refused = async (body: unknown, status: number, code: string) => {
    const r = await push(body);
    assert.equal(r.status, status);
    assert.equal(((await r.json()) as { error: { code: string } }).error.code, code);
  };
  const sig = String(good['signature']);
  await refused(
    { ...good, signature: (sig[0] === '0' ? '1' : '0') + sig.slice(1) },
    400,
    'WITNESS_SIGNATURE_INVALID',
  );
  await refused({ ...good, epoch: Number(epoch) + 1 }, 400, 'WITNESS_MESSAGE_MISMATCH');
  await refused(signed(PUSHER, epoch, root, 'other.log'), 400, 'WITNESS_NAMESPACE_MISMATCH');
  const unknown = signed(new Uint8Array(32).fill(99), epoch, root);
  const knownIds = [POLLED, PUSHER, LIAR, STRANGER].map((s) => witnessPublicKey(s)[31]);
  if (!knownIds.includes(Number(unknown['key_id']))) {
    await refused(unknown, 400, 'WITNESS_KEY_MISMATCH');
  }
  await refused(signed(PUSHER, epoch, new Uint8Array(32).fill(7)), 400, 'HTTP_BAD_REQUEST');
  await refused(signed(PUSHER, epoch + 5n, root), 400, 'HTTP_BAD_REQUEST');
  await refused({ version: 1 }, 400, 'WITNESS_DECODE');
  const big = await fetch(`${base}/v1/witness-signatures`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ ...good, namespace: 'x'.repeat(10_000) }),
  });
  assert.equal(big.status, 413);
  // what was kept is unchanged
  assert.equal((await epochJson()).witnesses.length, 2);
});

test('the served document lists the witness route, and the epoch answer with witnesses conforms', async () => {
  const doc = (await (await fetch(`${base}/openapi.json`)).json()) as {
    paths: Record<string, Record<string, { responses: Record<string, unknown> }>>;
  };
  const route = doc.paths['/v1/witness-signatures']?.['post'];
  assert.ok(route !== undefined);
  assert.deepEqual(Object.keys(route.responses).sort(), ['204', '400', '413', '415', '500', '503']);
  const ajv = new Ajv2020({ strict: false, validateFormats: false });
  ajv.addSchema(doc, 'openapi.json');
  const validate = ajv.compile({
    $ref: 'openapi.json#/paths/~1v1~1epoch/get/responses/200/content/application~1json/schema',
  });
  const body = await epochJson();
  assert.ok(body.witnesses.length > 0);
  assert.ok(validate(body), ajv.errorsText(validate.errors));
  // and the document refuses an answer whose witness signature lost a field
  const broken = structuredClone(body) as { witnesses: Record<string, unknown>[] };
  delete broken.witnesses[0]!['signature'];
  assert.equal(validate(broken), false);
});

test('without witnesses relayed, neither the route nor the field is served', async () => {
  const plain = await demoApp();
  const doc = (await plain.app.inject({ url: '/openapi.json' })).json() as {
    paths: Record<string, unknown>;
  };
  assert.equal(doc.paths['/v1/witness-signatures'], undefined);
  const res = await plain.app.inject({
    method: 'POST',
    url: '/v1/witness-signatures',
    payload: {},
  });
  assert.equal(res.statusCode, 404);
  assert.equal('witnesses' in (await plain.app.inject({ url: '/v1/epoch' })).json(), false);
  await plain.close();
});

test('a relay refuses a witness key that is not 32 bytes', () => {
  assert.throws(
    () => new WitnessRelay({ namespace: NS, witnesses: [{ publicKey: new Uint8Array(31) }] }),
    RangeError,
  );
});

test("each witness's newest signature at or below the head is carried, checked at its epoch", () => {
  const relay = new WitnessRelay({
    namespace: NS,
    witnesses: [{ publicKey: witnessPublicKey(POLLED) }, { publicKey: witnessPublicKey(PUSHER) }],
  });
  const roots = new Map([
    [1n, new Uint8Array(32).fill(1)],
    [2n, new Uint8Array(32).fill(2)],
    [3n, new Uint8Array(32).fill(3)],
  ]);
  const at = (e: bigint) => roots.get(e);
  relay.accept(signed(POLLED, 1n, roots.get(1n)!), at);
  relay.accept(signed(POLLED, 2n, roots.get(2n)!), at);
  relay.accept(signed(PUSHER, 1n, roots.get(1n)!), at);
  // at epoch 3, nobody has signed yet: each witness's newest earlier signature
  assert.deepEqual(relay.signaturesFor(3n, roots.get(3n)!), [
    signed(POLLED, 2n, roots.get(2n)!),
    signed(PUSHER, 1n, roots.get(1n)!),
  ]);
  // a head at epoch 1 is not carried a signature of a later epoch
  assert.deepEqual(relay.signaturesFor(1n, roots.get(1n)!), [
    signed(POLLED, 1n, roots.get(1n)!),
    signed(PUSHER, 1n, roots.get(1n)!),
  ]);
  // a head whose root differs from the one signed at its own epoch is not carried that signature
  assert.deepEqual(relay.signaturesFor(2n, new Uint8Array(32).fill(9)), [
    signed(POLLED, 1n, roots.get(1n)!),
    signed(PUSHER, 1n, roots.get(1n)!),
  ]);
});
