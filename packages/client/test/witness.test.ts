// Witnesses over real HTTP: the hostile server relays Plexi signatures in /v1/epoch's
// `witnesses` as a directory server does. A quorum covers a first use; a split view (two
// clients, each served its own root for one epoch) is caught through a shared witness;
// forged, expired, other-namespace and other-key signatures do not count; a server that stops
// advancing goes stale.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { fromHex, isAkdError, toHex } from '@akd-ts/core';
import {
  AkdClient,
  MemoryStore,
  isEvidenceError,
  verifyEvidence,
  type ClientOptions,
} from '@akd-ts/client';
import {
  hostileServer,
  realServer,
  type HostileServer,
  type RealServer,
} from './support/hostile.js';
import { testWitness } from './support/witness.js';

const NS = 'akd-ts/test';
const T0 = Date.UTC(2026, 0, 1);
const W = [testWitness(1), testWitness(2), testWitness(3)];
const OUTSIDER = testWitness(9);

function policy(quorum = 2) {
  return { keys: W.map((w) => w.publicKey), quorum, namespace: NS };
}

/** Relays `sigs()` with every /v1/epoch answer, as a server relays its witnesses'. */
function relay(h: HostileServer, sigs: () => unknown[]) {
  h.rule = async (path, up) =>
    path === '/v1/epoch'
      ? { body: { ...(await (await up(path)).json()), witnesses: sigs() } }
      : undefined;
}

async function head(real: RealServer) {
  return real.dir.getEpochHash();
}

function client(h: HostileServer, clock: { now: number }, extra: Partial<ClientOptions> = {}) {
  return new AkdClient({
    server: h.url,
    store: new MemoryStore(),
    witnesses: policy(),
    now: () => clock.now,
    maxAgeMs: 3_600_000,
    ...extra,
  });
}

async function code(p: Promise<unknown>): Promise<string> {
  try {
    await p;
  } catch (e) {
    assert.ok(isAkdError(e));
    return e.code;
  }
  return 'none';
}

test('a quorum of fresh signatures covers a first use; witnesses may lag behind the head', async () => {
  const real = await realServer();
  const h = await hostileServer(real.url);
  const clock = { now: T0 + 1000 };
  const e3 = await head(real);
  let sigs = [W[0]!.sign(NS, 3n, e3.hash, T0), W[1]!.sign(NS, 3n, e3.hash, T0, 0x0002)];
  relay(h, () => sigs);
  const c = client(h, clock);
  const first = await c.refresh();
  assert.equal(first.head.basis, 'witnesses');
  assert.equal(first.head.witnessedAt, T0);
  // epoch 4 is published; the witnesses still vouch for 3, on the proven chain
  await real.publish([['alice', 'alice-key-3']]);
  const next = await c.refresh();
  assert.equal(next.head.epoch, 4n);
  assert.equal(next.head.basis, 'append-only');
  // one signature is not a quorum of two
  sigs = [W[0]!.sign(NS, 4n, (await head(real)).hash, T0)];
  assert.equal(await code(c.refresh()), 'CLIENT_WITNESS_QUORUM');
  // one witness twice is still one witness
  sigs = [
    W[0]!.sign(NS, 4n, (await head(real)).hash, T0),
    W[0]!.sign(NS, 4n, (await head(real)).hash, T0 + 5),
  ];
  assert.equal(await code(c.refresh()), 'CLIENT_WITNESS_QUORUM');
  await h.close();
  await real.close();
});

test('split view: two clients served different roots for epoch 4 are told apart by a shared witness', async () => {
  const a = await realServer();
  const b = await realServer();
  assert.deepEqual(a.roots, b.roots, 'both directories agree up to epoch 3');
  const ha = await hostileServer(a.url);
  const hb = await hostileServer(b.url);
  const clock = { now: T0 + 1000 };
  // both clients trust epoch 3, witnessed
  let sigs = W.slice(0, 2).map((w) => w.sign(NS, 3n, a.roots[3]!, T0));
  relay(ha, () => sigs);
  relay(hb, () => sigs);
  const alice = client(ha, clock);
  const bob = client(hb, clock);
  await alice.refresh();
  await bob.refresh();
  // the server shows alice one tree and bob another at epoch 4
  await a.publish([['alice', 'alice-key-3']]);
  await b.publish([['alice', 'mallory-key']]);
  const rootA = (await head(a)).hash;
  // the witnesses audit the tree alice sees, and sign it; the server relays those to both
  sigs = W.slice(0, 2).map((w) => w.sign(NS, 4n, rootA, T0 + 500));
  assert.equal((await alice.refresh()).head.basis, 'append-only');
  try {
    await bob.refresh();
    assert.fail('bob must see the fork');
  } catch (e) {
    assert.ok(isEvidenceError(e));
    assert.equal(e.code, 'CLIENT_FORK');
    const [mine, theirs] = e.evidence.heads;
    assert.equal(mine!.rootHash, toHex((await head(b)).hash));
    assert.equal(theirs!.rootHash, toHex(rootA));
    assert.equal(theirs!.epoch, '4');
    assert.equal(theirs!.witnesses.length, 1);
    const verdict = verifyEvidence(e.evidence);
    assert.equal(verdict.proven, true, verdict.problems.join('; '));
    // the witness signature moved onto bob's head no longer verifies
    const moved = structuredClone(e.evidence);
    moved.heads[0]!.witnesses = moved.heads[1]!.witnesses;
    assert.equal(verifyEvidence(moved).proven, false);
  }
  // relaying no signature leaves bob without a quorum: the fork cannot be hidden as valid
  sigs = [];
  assert.equal(await code(bob.refresh()), 'CLIENT_WITNESS_QUORUM');
  assert.equal((await bob.head())!.epoch, 3n);
  for (const x of [ha, hb, a, b]) await x.close();
});

test('forged, other-namespace and other-key signatures do not count; expired ones are stale', async () => {
  const real = await realServer();
  const h = await hostileServer(real.url);
  const clock = { now: T0 + 1000 };
  const root = (await head(real)).hash;
  const good = W[0]!.sign(NS, 3n, root, T0);
  const forged = { ...W[1]!.sign(NS, 3n, root, T0) };
  const sig = fromHex(forged.signature as string);
  sig[5]! ^= 1;
  forged.signature = toHex(sig);
  const cases: [string, unknown[], string][] = [
    ['forged', [good, forged], 'CLIENT_WITNESS_QUORUM'],
    ['other namespace', [good, W[1]!.sign('other', 3n, root, T0)], 'CLIENT_WITNESS_QUORUM'],
    ['other key', [good, OUTSIDER.sign(NS, 3n, root, T0)], 'CLIENT_WITNESS_QUORUM'],
    ['unreadable', [good, { version: 1 }], 'CLIENT_WITNESS_QUORUM'],
    [
      'expired',
      [W[0]!.sign(NS, 3n, root, T0 - 7_200_000), W[1]!.sign(NS, 3n, root, T0)],
      'CLIENT_STALE_HEAD',
    ],
  ];
  for (const [name, sigs, expected] of cases) {
    relay(h, () => sigs);
    assert.equal(await code(client(h, clock).refresh()), expected, name);
  }
  relay(h, () => [good, W[1]!.sign(NS, 3n, root, T0)]);
  assert.equal((await client(h, clock).refresh()).head.basis, 'witnesses');
  await h.close();
  await real.close();
});

test('a server that stops advancing goes stale once its newest quorum is too old', async () => {
  const real = await realServer();
  const h = await hostileServer(real.url);
  const clock = { now: T0 + 1000 };
  const frozen = await (await fetch(`${real.url}/v1/epoch`)).json();
  const sigs = W.slice(0, 2).map((w) => w.sign(NS, 3n, real.roots[3]!, T0));
  h.rule = (path) => (path === '/v1/epoch' ? { body: { ...frozen, witnesses: sigs } } : undefined);
  const c = client(h, clock);
  await c.refresh();
  // the directory publishes a change to alice; the server keeps showing epoch 3
  await real.publish([['alice', 'mallory-key']]);
  clock.now = T0 + 1_800_000;
  assert.equal((await c.refresh()).head.epoch, 3n);
  clock.now = T0 + 3_600_001;
  try {
    await c.refresh();
    assert.fail('stale');
  } catch (e) {
    assert.ok(isEvidenceError(e));
    assert.equal(e.code, 'CLIENT_STALE_HEAD');
    assert.equal(e.evidence.kind, 'stale');
    assert.equal(e.evidence.witnesses!.maxAgeMs, 3_600_000);
    assert.equal(e.evidence.detectedAt, T0 + 3_600_001);
    assert.equal(verifyEvidence(e.evidence).proven, true);
    assert.equal(verifyEvidence({ ...e.evidence, detectedAt: T0 + 1000 }).proven, false);
  }
  await h.close();
  await real.close();
});

test('without an append-only proof, a quorum on the served head alone extends it', async () => {
  const real = await realServer();
  const h = await hostileServer(real.url);
  const clock = { now: T0 + 1000 };
  let sigs = W.slice(0, 2).map((w) => w.sign(NS, 3n, real.roots[3]!, T0));
  const c = client(h, clock);
  relay(h, () => sigs);
  await c.refresh();
  await real.publish([['alice', 'alice-key-3']]);
  const e4 = await head(real);
  const epochRule = h.rule!;
  h.rule = (path, up, accept) =>
    path.startsWith('/v1/audit')
      ? { status: 503, body: { error: { code: 'HTTP_UNAVAILABLE', message: 'later' } } }
      : epochRule(path, up, accept);
  assert.equal(await code(c.refresh()), 'CLIENT_NOT_EXTENDED', 'witnesses of epoch 3 only');
  sigs = W.slice(0, 2).map((w) => w.sign(NS, 4n, e4.hash, T0 + 10));
  const next = await c.refresh();
  assert.equal(next.head.basis, 'witnesses');
  assert.equal(next.head.epoch, 4n);
  await h.close();
  await real.close();
});
