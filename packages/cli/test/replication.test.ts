// A real PostgreSQL primary and streaming hot standby (test/support/pg-clusters.ts), in order:
// 1. a read-only `akd serve` on the standby while `akd publish` writes epochs on the primary:
//    every proof it serves verifies against the root the writer published for the epoch the
//    response names, with that epoch's values (never a mixture of two epochs);
// 2. replication lag is visible: with replay paused the server keeps serving the older epoch
//    and reports the lag in the x-akd-replication-lag header and the metrics, and catches up;
// 3. fail-over as docs/operating.md's runbook does it: akd fence on the old primary (its
//    writer is refused from then on), akd promote on the standby, the writer moved there; no
//    epoch is lost or published twice, and the whole history audits.
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import {
  WhatsAppV1Configuration,
  auditVerify,
  decodeLookupProof,
  fromHex,
  isAkdError,
  lookupVerify,
  toHex,
  utf8,
  type EpochHash,
} from '@akd-ts/core';
import { StorageManager } from '@akd-ts/storage';
import { PostgresDatabase } from '@akd-ts/storage-postgres';
import { Directory, InMemoryVrfKeyStore, ReadOnlyDirectory } from '@akd-ts/directory';
import {
  CLUSTERS_SKIP,
  startReplicaPair,
  waitFor,
  type ReplicaPair,
} from '../../../test/support/pg-clusters.js';
import { akd } from './helpers.js';
import { spawnServe, type Child } from './support/children.js';
import { loopUpdates } from './support/publish-loop.js';

const KEY = 'c9afa9d845ba75166b5c215767b1d6934e50c3db36e89b127b8a622b120f6721';
const env = { AKD_VRF_KEY: KEY };
const config = new WhatsAppV1Configuration();
const LABELS = 200;

/** Runs akd with --json output and returns what it printed. */
async function ok(args: string[], stdin?: string): Promise<Record<string, unknown>> {
  const out = await akd(args, { env, ...(stdin === undefined ? {} : { stdin }) });
  assert.equal(out.code, 0, `akd ${args.join(' ')}: ${out.stderr}`);
  return JSON.parse(out.stdout) as Record<string, unknown>;
}

/** Publishes epoch `e` of the workload with akd publish; returns its epoch and root. */
async function publish(url: string, e: bigint): Promise<{ epoch: string; rootHash: string }> {
  const lines = loopUpdates(e).map(
    (u) =>
      `${JSON.stringify({ label: new TextDecoder().decode(u.label), value: new TextDecoder().decode(u.value) })}\n`,
  );
  const out = await ok(
    ['publish', '--db', url, '--json', '--vrf-threads', '0', '--no-progress', '-'],
    lines.join(''),
  );
  return { epoch: String(out.epoch), rootHash: String(out.rootHash) };
}

interface Served {
  label: number;
  status: number;
  epoch: string;
  root: string;
  lag: string;
  body: Uint8Array;
}

describe('PostgreSQL streaming replica and fail-over', { skip: CLUSTERS_SKIP }, () => {
  let pair: ReplicaPair;
  let primary: string;
  let standby: string;
  let server: (Child & { url: string }) | undefined;
  /** Root hash (hex) of each epoch, as the writer published it. */
  const roots = new Map<string, string>();

  before(async () => {
    pair = await startReplicaPair();
    primary = `${pair.primary.url()}?schema=akd`;
    standby = `${pair.standby.url()}?schema=akd`;
    const init = await ok(['init', '--db', primary, '--config', 'whatsapp_v1', '--json']);
    roots.set('0', String(init.rootHash));
    for (const e of [1n, 2n]) {
      const { epoch, rootHash } = await publish(primary, e);
      roots.set(epoch, rootHash);
    }
    await pair.caughtUp();
  });
  after(async () => {
    await server?.stop();
    await pair?.close();
  });

  const get = (path: string, accept = 'application/x-protobuf') =>
    fetch(`${server!.url}${path}`, { headers: { accept } });

  test('a read-only server on the standby serves whole epochs while the primary publishes', async () => {
    server = await spawnServe(['--db', standby, '--poll', '20', '--log-level', 'warn'], env);
    const served: Served[] = [];
    let reading = true;
    const reader = (async () => {
      for (let i = 0; reading; i = (i + 7) % LABELS) {
        const res = await get(`/v1/lookup/user-${i}`);
        served.push({
          label: i,
          status: res.status,
          epoch: res.headers.get('x-akd-epoch') ?? '',
          root: res.headers.get('x-akd-root-hash') ?? '',
          lag: res.headers.get('x-akd-replication-lag') ?? '',
          body: new Uint8Array(await res.arrayBuffer()),
        });
      }
    })();
    try {
      // each epoch is published once the server has served the previous one
      for (let e = 3n; e <= 8n; e++) {
        const { epoch, rootHash } = await publish(primary, e);
        roots.set(epoch, rootHash);
        await waitFor(
          () => served.some((s) => s.epoch === epoch),
          30_000,
          () => `the standby's server served epoch ${epoch}`,
        );
      }
    } finally {
      reading = false;
      await reader;
    }
    const publicKey = fromHex(
      ((await (await get('/v1/epoch', 'application/json')).json()) as { publicKey: string })
        .publicKey,
    );
    const epochs = new Set<string>();
    for (const s of served) {
      assert.equal(s.status, 200, `lookup of user-${s.label}`);
      epochs.add(s.epoch);
      assert.equal(
        s.root,
        roots.get(s.epoch),
        `the root the writer published for epoch ${s.epoch}`,
      );
      assert.match(s.lag, /^[0-9]+\.[0-9]{3}$/);
      const proof = decodeLookupProof(s.body);
      const label = utf8(`user-${s.label}`);
      lookupVerify(config, publicKey, fromHex(s.root), BigInt(s.epoch), label, proof);
      // the value of that epoch: each epoch gives every user-i the value v<epoch>-<i>
      assert.equal(new TextDecoder().decode(proof.value), `v${s.epoch}-${s.label}`);
    }
    assert.ok(epochs.has('8') && epochs.size >= 6, `epochs served: ${[...epochs].join(', ')}`);
  });

  test('replication lag shows in the header and the metrics, and the epoch waits for replay', async () => {
    const metric = async (name: string) => {
      const text = await (await get('/metrics', 'text/plain')).text();
      return Number(new RegExp(`^${name} (\\S+)$`, 'm').exec(text)?.[1]);
    };
    assert.equal(await metric('akd_store_replica'), 1);
    await waitFor(
      async () => (await metric('akd_replication_lag_seconds')) === 0,
      30_000,
      () => 'no lag',
    );
    await pair.standby.query('SELECT pg_wal_replay_pause()');
    try {
      const { epoch, rootHash } = await publish(primary, 9n);
      roots.set(epoch, rootHash);
      // the standby has received epoch 9 and not applied it
      await waitFor(
        async () => (await metric('akd_replication_lag_bytes')) > 0,
        30_000,
        () => 'WAL waits to be applied',
      );
      assert.ok((await metric('akd_replication_lag_seconds')) > 0);
      const lagging = await get('/v1/epoch', 'application/json');
      assert.equal(lagging.headers.get('x-akd-epoch'), '8', 'the last applied epoch');
      assert.ok(Number(lagging.headers.get('x-akd-replication-lag')) > 0);
    } finally {
      await pair.standby.query('SELECT pg_wal_replay_resume()');
    }
    await waitFor(
      async () => {
        const res = await get('/v1/epoch', 'application/json');
        return (
          res.headers.get('x-akd-epoch') === '9' &&
          res.headers.get('x-akd-replication-lag') === '0.000'
        );
      },
      30_000,
      () => 'the server caught up with epoch 9 and reports no lag',
    );
  });

  test('fail-over: fence the old primary, promote the standby, move the writer', async () => {
    // the old primary's writer, a long-running process in a deployment, stays open throughout
    const oldDb = await PostgresDatabase.open(pair.primary.url(), { schema: 'akd', poolSize: 2 });
    const oldWriter = await Directory.open({
      config,
      storage: new StorageManager(oldDb),
      vrfKeys: new InMemoryVrfKeyStore(fromHex(KEY)),
    });
    const published: EpochHash = await oldWriter.publish(loopUpdates(10n));
    roots.set('10', toHex(published.hash));

    // runbook step 1: fence the old primary
    const fenced = await ok(['fence', '--db', primary, '--json']);
    assert.equal(fenced.fenced, true);
    assert.equal(String(fenced.epoch), '10');
    await assert.rejects(
      oldWriter.publish(loopUpdates(11n)),
      (e) => isAkdError(e, 'STORAGE_LOCKED') && /is fenced/.test(e.message),
    );

    // a role that may not promote is told what to do instead, and nothing changes
    await pair.primary.query(
      'CREATE ROLE operator LOGIN; GRANT USAGE ON SCHEMA akd TO operator; GRANT SELECT ON ALL TABLES IN SCHEMA akd TO operator',
    );
    const asOperator = standby.replace('postgres://postgres@', 'postgres://operator@');
    const denied = await akd(
      ['promote', '--db', asOperator, '--fenced-generation', String(fenced.generation)],
      { env },
    );
    assert.equal(denied.code, 1, denied.stderr);
    assert.match(
      denied.stderr,
      /may not call pg_promote: the standby has applied the fence, so promote it by hand \(pg_ctl promote\)/,
    );
    assert.equal((await pair.standby.query('SELECT pg_is_in_recovery() AS r')).rows[0].r, true);

    // runbook step 2: promote the standby once it has applied the fence
    const promoted = await ok([
      'promote',
      '--db',
      standby,
      '--fenced-generation',
      String(fenced.generation),
      '--json',
    ]);
    assert.equal(promoted.promotedServer, true);
    assert.equal(promoted.fenced, false);
    assert.equal(String(promoted.epoch), '10', 'no epoch lost');
    assert.equal(BigInt(String(promoted.generation)), BigInt(String(fenced.generation)) + 1n);

    // runbook step 3: the writer on the new primary continues at epoch 11
    const next = await publish(standby, 11n);
    assert.equal(next.epoch, '11');
    roots.set('11', next.rootHash);
    // the old primary still refuses its writer, and stays at epoch 10
    await assert.rejects(oldWriter.publish(loopUpdates(11n)), (e) =>
      isAkdError(e, 'STORAGE_LOCKED'),
    );
    assert.equal((await oldDb.get({ kind: 'azks' })).latestEpoch, 10n);
    await oldWriter.close();
    await oldDb.close();
    // with its writer gone, the old primary still refuses every writer: it is fenced
    const late = await akd(['publish', '--db', primary, '-'], {
      env,
      stdin: '{"label":"x","value":"y"}\n',
    });
    assert.equal(late.code, 1);
    assert.match(late.stderr, /STORAGE_LOCKED: .*is fenced/);

    // every epoch once: the new primary's history is the published one, and it audits whole
    const newDb = await PostgresDatabase.open(pair.standby.url(), {
      schema: 'akd',
      poolSize: 2,
      migrate: false,
    });
    const history = await ReadOnlyDirectory.open({
      config,
      storage: new StorageManager(newDb),
      vrfKeys: new InMemoryVrfKeyStore(fromHex(KEY)),
    });
    const hashes: Uint8Array[] = [];
    for (let e = 1; e <= 11; e++) hashes.push(fromHex(roots.get(String(e))!));
    await auditVerify(config, hashes, await history.audit(1n, 11n));
    assert.equal(toHex((await history.getEpochHash()).hash), roots.get('11'));
    await history.close();
    await newDb.close();
    // the server that read the standby keeps serving from it, now a primary
    await waitFor(
      async () => (await get('/v1/epoch', 'application/json')).headers.get('x-akd-epoch') === '11',
      30_000,
      () => 'the server sees epoch 11',
    );
  });
});
