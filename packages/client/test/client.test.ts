// The client against a real akd-ts server over HTTP, through a hostile server that forwards
// or forges: honest growth, rollback, replaced root, a failing append-only proof, owner and
// contact monitoring, and the state stores.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { isAkdError, toHex, utf8 } from '@akd-ts/core';
import {
  AkdClient,
  MemoryStore,
  WebStorageStore,
  isEvidenceError,
  type Evidence,
  verifyEvidence,
} from '@akd-ts/client';
import { hostileServer, realServer, getJson } from './support/hostile.js';

async function setup() {
  const real = await realServer();
  const hostile = await hostileServer(real.url);
  const store = new MemoryStore();
  const client = new AkdClient({ server: hostile.url, store });
  return {
    real,
    hostile,
    store,
    client,
    close: async () => (await hostile.close(), await real.close()),
  };
}

/** Runs `f`, expecting an EvidenceError with `code`; returns its evidence. */
async function caught(f: () => Promise<unknown>, code: string): Promise<Evidence> {
  try {
    await f();
  } catch (e) {
    assert.ok(isEvidenceError(e), `expected evidence, got ${String(e)}`);
    assert.equal(e.code, code);
    assert.equal(e.evidence.code, code);
    return e.evidence;
  }
  assert.fail(`expected ${code}`);
}

test('an honest directory: first use, then growth proven append-only, lookups on the head', async () => {
  const s = await setup();
  const first = await s.client.refresh();
  assert.equal(first.previous, undefined);
  assert.equal(first.head.epoch, 3n);
  assert.equal(first.head.basis, 'first-use');
  assert.deepEqual(first.head.rootHash, s.real.roots[3]);
  await s.real.publish([['alice', 'alice-key-3']]);
  await s.real.publish([['dave', 'dave-key-1']]);
  const next = await s.client.refresh();
  assert.equal(next.head.epoch, 5n);
  assert.equal(next.head.basis, 'append-only');
  assert.ok(s.hostile.requests.includes('/v1/audit?from=3&to=5'));
  // unchanged head: nothing to prove
  assert.equal((await s.client.refresh()).head.basis, 'same');
  const found = await s.client.lookup('alice');
  assert.equal(found.version, 3n);
  assert.deepEqual(found.value, utf8('alice-key-3'));
  assert.equal(found.head.epoch, 5n);
  // a lookup served against a newer epoch advances the client first
  await s.real.publish([['erin', 'erin-key-1']]);
  const later = await s.client.lookup('erin');
  assert.equal(later.head.epoch, 6n);
  assert.equal((await s.client.head())!.epoch, 6n);
  // a second client on the same store starts from the saved head
  const again = new AkdClient({ server: `${s.hostile.url}/`, store: s.store });
  assert.equal((await again.head())!.epoch, 6n);
  assert.equal((await again.refresh()).head.basis, 'same');
  await s.close();
});

test('a rollback to an older head is refused with evidence', async () => {
  const s = await setup();
  const old = await getJson(s.real.url, '/v1/epoch');
  await s.real.publish([['alice', 'alice-key-3']]);
  await s.client.refresh();
  s.hostile.rule = (path) => (path === '/v1/epoch' ? { body: old } : undefined);
  const ev = await caught(() => s.client.refresh(), 'CLIENT_ROLLBACK');
  assert.equal(ev.kind, 'rollback');
  assert.deepEqual(
    ev.heads.map((h) => [h.epoch, h.rootHash]),
    [
      ['4', toHex((await s.real.dir.getEpochHash()).hash)],
      ['3', toHex(s.real.roots[3]!)],
    ],
  );
  assert.equal(ev.directory.server, s.hostile.url);
  // the saved head is unchanged
  assert.equal((await s.client.head())!.epoch, 4n);
  await s.close();
});

test('a replaced root for a verified epoch is a fork, in /v1/epoch and in a proof answer', async () => {
  const s = await setup();
  await s.client.refresh();
  const replaced = 'ab'.repeat(32);
  s.hostile.rule = async (path, up) =>
    path === '/v1/epoch'
      ? { body: { ...(await (await up(path)).json()), rootHash: replaced } }
      : undefined;
  const ev = await caught(() => s.client.refresh(), 'CLIENT_FORK');
  assert.deepEqual(
    ev.heads.map((h) => h.rootHash),
    [toHex(s.real.roots[3]!), replaced],
  );
  s.hostile.rule = async (path, up) =>
    path.startsWith('/v1/lookup/')
      ? { body: { ...(await (await up(path)).json()), rootHash: replaced } }
      : undefined;
  const ev2 = await caught(() => s.client.lookup('alice'), 'CLIENT_FORK');
  assert.equal(ev2.heads[1]!.rootHash, replaced);
  // a proof claiming an epoch the server's head has not reached
  s.hostile.rule = async (path, up) =>
    path.startsWith('/v1/lookup/')
      ? { body: { ...(await (await up(path)).json()), epoch: '99' } }
      : undefined;
  await assert.rejects(s.client.lookup('alice'), (e) => isAkdError(e, 'CLIENT_RESPONSE'));
  // a proof against an older epoch, again and again, is a rollback
  const older = await getJson(s.real.url, '/v1/lookup/alice');
  await s.real.publish([['zed', 'zed-key']]);
  s.hostile.rule = undefined;
  await s.client.refresh();
  s.hostile.rule = (path) => (path.startsWith('/v1/lookup/') ? { body: older } : undefined);
  const ev3 = await caught(() => s.client.lookup('alice'), 'CLIENT_ROLLBACK');
  assert.deepEqual(
    ev3.heads.map((h) => h.epoch),
    ['4', '3'],
  );
  await s.close();
});

test('a new head whose append-only proof does not lead to it is refused with the proof', async () => {
  const s = await setup();
  await s.client.refresh();
  await s.real.publish([['alice', 'alice-key-3']]);
  // the epoch answer names another root for epoch 4 than the proof leads to
  const other = 'cd'.repeat(32);
  s.hostile.rule = async (path, up) =>
    path === '/v1/epoch'
      ? { body: { ...(await (await up(path)).json()), rootHash: other } }
      : undefined;
  const ev = await caught(() => s.client.refresh(), 'AUDIT_END_HASH_MISMATCH');
  assert.equal(ev.kind, 'append-only');
  assert.equal(ev.appendOnly!.length, 1);
  assert.equal(ev.appendOnly![0]!.from, '3');
  assert.equal(verifyEvidence(ev).proven, true);
  // a proof that starts from another tree
  s.hostile.rule = async (path, up, accept) => {
    if (!path.startsWith('/v1/audit')) return undefined;
    const real = await up('/v1/audit?from=0&to=1', accept);
    return { type: 'application/x-protobuf', body: new Uint8Array(await real.arrayBuffer()) };
  };
  const ev2 = await caught(() => s.client.refresh(), 'AUDIT_EPOCH_GAP');
  assert.equal(ev2.kind, 'append-only');
  assert.equal(verifyEvidence(ev2).proven, true);
  // the honest proof of the same range, put in its place, shows nothing
  const honest = await fetch(`${s.real.url}/v1/audit?from=3&to=4`, {
    headers: { accept: 'application/x-protobuf' },
  });
  const fixed = structuredClone(ev);
  fixed.appendOnly![0]!.proof = Buffer.from(await honest.arrayBuffer()).toString('base64');
  fixed.heads[1]!.rootHash = toHex((await s.real.dir.getEpochHash()).hash);
  assert.equal(verifyEvidence(fixed).proven, false);
  assert.throws(
    () => verifyEvidence({ ...ev, kind: 'odd' }),
    (e) => isAkdError(e, 'DECODE_MALFORMED'),
  );
  // no proof at all: nothing extends the head
  s.hostile.rule = (path) =>
    path.startsWith('/v1/audit')
      ? { status: 503, body: { error: { code: 'HTTP_UNAVAILABLE', message: 'no' } } }
      : undefined;
  await assert.rejects(s.client.refresh(), (e) => isAkdError(e, 'CLIENT_NOT_EXTENDED'));
  s.hostile.rule = undefined;
  assert.equal((await s.client.refresh()).head.epoch, 4n);
  await s.close();
});

test('owner monitoring: registered values pass, a change the owner did not make is caught', async () => {
  const s = await setup();
  await s.client.registerPublished('alice', 'alice-key-1');
  await s.client.registerPublished('alice', 'alice-key-2');
  const first = await s.client.checkOwner('alice');
  assert.equal(first.previousVersion, 0n);
  assert.deepEqual(
    first.newVersions.map((v) => v.version),
    [2n, 1n],
  );
  await s.client.registerPublished('alice', 'alice-key-3');
  await s.real.publish([['alice', 'alice-key-3']]);
  const second = await s.client.checkOwner('alice');
  assert.deepEqual(
    second.newVersions.map((v) => [v.version, v.epoch]),
    [[3n, 4n]],
  );
  assert.ok(s.hostile.requests.includes('/v1/history/hex:616c696365?mostRecent=1'));
  // nothing new: a lookup suffices
  assert.deepEqual((await s.client.checkOwner('alice')).newVersions, []);
  await s.real.publish([['alice', 'mallory-key']]);
  await s.real.publish([['bob', 'bob-key-2']]);
  const ev = await caught(() => s.client.checkOwner('alice'), 'CLIENT_UNEXPECTED_CHANGE');
  assert.equal(ev.kind, 'unexpected-change');
  assert.equal(ev.label!.versionSeen, '3');
  assert.deepEqual(
    ev.label!.registered,
    ['alice-key-1', 'alice-key-2', 'alice-key-3'].map((v) => toHex(utf8(v))),
  );
  assert.equal(ev.heads[0]!.epoch, '6');
  assert.match(ev.message, /version 4 \(epoch 5\)/);
  assert.equal(verifyEvidence(ev).proven, true);
  await s.close();
});

test('contact monitoring: a version below one seen is refused', async () => {
  const s = await setup();
  const seen = await s.client.checkContact('bob');
  assert.equal(seen.current.version, 1n);
  // a state that saw bob at version 5 (as if from before a hostile server swapped the tree)
  const doc = (await s.store.get()) as {
    directories: Record<string, { labels: Record<string, { version: string }> }>;
  };
  doc.directories[s.hostile.url]!.labels[toHex(utf8('bob'))]!.version = '5';
  const client = new AkdClient({ server: s.hostile.url, store: new MemoryStore(doc) });
  const ev = await caught(() => client.checkContact('bob'), 'CLIENT_VERSION_ROLLBACK');
  assert.equal(ev.label!.versionSeen, '5');
  assert.ok(ev.label!.lookup!.proof.length > 0);
  assert.equal(verifyEvidence(ev).proven, true);
  assert.equal(verifyEvidence({ ...ev, label: { ...ev.label!, versionSeen: '1' } }).proven, false);
  await s.close();
});

test('a pinned key or configuration the server does not have is refused', async () => {
  const s = await setup();
  const pinned = new AkdClient({
    server: s.hostile.url,
    store: new MemoryStore(),
    publicKey: new Uint8Array(32),
  });
  await assert.rejects(pinned.refresh(), (e) => isAkdError(e, 'CLIENT_DIRECTORY_KEY'));
  await s.client.refresh();
  s.hostile.rule = async (path, up) =>
    path === '/v1/epoch'
      ? { body: { ...(await (await up(path)).json()), publicKey: '11'.repeat(32) } }
      : undefined;
  const client = new AkdClient({ server: s.hostile.url, store: s.store });
  await assert.rejects(client.refresh(), (e) => isAkdError(e, 'CLIENT_DIRECTORY_KEY'));
  s.hostile.rule = async (path, up) =>
    path === '/v1/epoch'
      ? {
          body: {
            ...(await (await up(path)).json()),
            configuration: { name: 'experimental', domainLabel: 'x' },
          },
        }
      : undefined;
  await assert.rejects(new AkdClient({ server: s.hostile.url, store: s.store }).refresh(), (e) =>
    isAkdError(e, 'CLIENT_DIRECTORY_KEY'),
  );
  s.hostile.rule = () => ({ body: { epoch: 'x' } });
  await assert.rejects(
    new AkdClient({ server: s.hostile.url, store: new MemoryStore() }).refresh(),
    (e) => isAkdError(e, 'CLIENT_RESPONSE'),
  );
  await s.close();
});

test('a trusted head replaces first use: the first head must extend it', async () => {
  const s = await setup();
  const trust = { epoch: 2n, rootHash: s.real.roots[2]! };
  const client = new AkdClient({ server: s.hostile.url, store: new MemoryStore(), trust });
  assert.equal((await client.refresh()).head.basis, 'append-only');
  const wrong = new AkdClient({
    server: s.hostile.url,
    store: new MemoryStore(),
    trust: { epoch: 3n, rootHash: s.real.roots[2]! },
  });
  await caught(() => wrong.refresh(), 'CLIENT_FORK');
  await s.close();
});

test('state stores: web storage round trip, unreadable documents, caller mistakes', async () => {
  const items = new Map<string, string>();
  const storage = {
    getItem: (k: string) => items.get(k) ?? null,
    setItem: (k: string, v: string) => void items.set(k, v),
  };
  const s = await setup();
  const client = new AkdClient({ server: s.hostile.url, store: new WebStorageStore(storage) });
  await client.refresh();
  assert.match(items.get('akd-client-state')!, /"akd-client-state"/);
  items.set('akd-client-state', '{not json');
  const broken = new AkdClient({ server: s.hostile.url, store: new WebStorageStore(storage) });
  await assert.rejects(broken.refresh(), (e) => isAkdError(e, 'CLIENT_STATE'));
  const other = new AkdClient({ server: s.hostile.url, store: new MemoryStore({ format: 'x' }) });
  await assert.rejects(other.refresh(), (e) => isAkdError(e, 'CLIENT_STATE'));
  assert.throws(() => new WebStorageStore({} as never), TypeError);
  assert.throws(() => new AkdClient({ server: 'ftp://x', store: new MemoryStore() }), TypeError);
  assert.throws(
    () => new AkdClient({ server: s.hostile.url, store: new MemoryStore(), maxAgeMs: 5 }),
    TypeError,
  );
  await assert.rejects(s.client.lookup(''), TypeError);
  await s.close();
});
