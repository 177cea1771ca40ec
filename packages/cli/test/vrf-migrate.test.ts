// akd vrf migrate: a store whose VRF proofs an older akd-ts kept one row per proof moves them to
// rows by label, without the key, serving the same proofs before, after, and while it resumes.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { join } from 'node:path';
import { randomBytes } from 'node:crypto';
import BetterSqlite3 from 'better-sqlite3';
import { POSTGRES_SKIP, POSTGRES_URL } from '../../../test/support/postgres-url.js';
import { vrfProofsByKey } from '../../storage-sqlite/test/support/helpers.js';
import { akd, tempDir } from './helpers.js';

const KEY = 'c9afa9d845ba75166b5c215767b1d6934e50c3db36e89b127b8a622b120f6721';
const env = { AKD_VRF_KEY: KEY };
const noKey = { AKD_VRF_KEY_FILE: '/nonexistent/akd.key' };
const LABELS = ['alice', 'bob', 'carol', 'dave', 'erin'];
const epoch = (labels: string[], v: number) =>
  labels.map((label) => JSON.stringify({ label, value: `${label}-${v}` })).join('\n') + '\n';

/** What a reader without the key serves for every label: its lookup and history, as JSON. */
async function proofs(db: string): Promise<string[]> {
  const out: string[] = [];
  for (const label of LABELS) {
    for (const cmd of ['lookup', 'history']) {
      const r = await akd([cmd, '--db', db, '--label', label, '--json'], { env: noKey });
      assert.equal(r.code, 0, r.stderr);
      out.push(r.stdout);
    }
  }
  return out;
}

async function publish(db: string, labels: string[], v: number): Promise<void> {
  const r = await akd(['publish', '--db', db, '-'], { env, stdin: epoch(labels, v) });
  assert.equal(r.code, 0, r.stderr);
}

test("a SQLite store's proofs kept by key move to rows by label, serving the same proofs", async () => {
  const tmp = tempDir();
  try {
    const path = join(tmp.dir, 'akd.db');
    const db = `sqlite:${path}`;
    const init = await akd(['init', '--db', db, '--config', 'whatsapp_v1'], { env });
    assert.equal(init.code, 0, init.stderr);
    await publish(db, LABELS, 1);
    await publish(db, LABELS.slice(0, 2), 2);
    const before = await proofs(db);
    const count = (table: string) => {
      const r = new BetterSqlite3(path);
      try {
        return (r.prepare(`SELECT count(*) AS n FROM ${table}`).get() as { n: number }).n;
      } finally {
        r.close();
      }
    };
    // the publishes stored a row per label and epoch: 5 new labels, then 2 updated (and the
    // sweep of marker 4 over some of the 3 others)
    const published = count('vrf_proof_rows');
    assert.ok(published >= 7 && published <= 10, `${published} rows`);
    // as schema version 9 kept them: a row of vrf_proofs per proof
    const raw = new BetterSqlite3(path);
    vrfProofsByKey(raw);
    raw.pragma('user_version = 9');
    raw.close();
    const kept = count('vrf_proofs');
    assert.ok(kept > published * 2, `${kept} proofs in ${published} rows`);
    assert.deepEqual(await proofs(db), before, 'read from the older tables');

    const moved = await akd(['vrf', 'migrate', '--db', db, '--chunk', '2'], { env: noKey });
    assert.equal(moved.code, 0, moved.stderr);
    const lines = moved.stderr.trim().split('\n');
    assert.deepEqual(lines, [
      `vrf migrate: 0 of ${kept} proofs moved`,
      ...lines.slice(1, -1),
      `vrf migrate: ${kept} of ${kept} proofs moved`,
    ]);
    assert.equal(lines.length, 1 + Math.ceil(LABELS.length / 2));
    assert.match(
      moved.stdout,
      new RegExp(
        `now keeps its VRF proofs as rows by label: ${kept} proofs of 5 labels moved to 5 rows in [0-9.]+ s, then vacuumed\n$`,
      ),
    );
    assert.deepEqual([count('vrf_proofs'), count('vrf_proof_rows')], [0, 5]);
    assert.deepEqual(await proofs(db), before, 'the proofs of every label, byte for byte');
    await publish(db, ['carol', 'zoe'], 3);
    const zoe = await akd(['lookup', '--db', db, '--label', 'zoe'], { env: noKey });
    assert.match(zoe.stdout, /value: zoe-3/);

    const again = await akd(['vrf', 'migrate', '--db', db, '--json'], { env: noKey });
    assert.equal(again.code, 0, again.stderr);
    assert.deepEqual((({ moved, total }) => ({ moved, total }))(JSON.parse(again.stdout)), {
      moved: 0,
      total: 0,
    });
    const nothing = await akd(['vrf', 'migrate', '--db', db], { env: noKey });
    assert.match(nothing.stdout, /as rows by label already: nothing to do/);
  } finally {
    tmp.cleanup();
  }
});

test('akd vrf migrate refuses a store it cannot move', async () => {
  const tmp = tempDir();
  try {
    const missing = await akd(['vrf', 'migrate', '--db', `sqlite:${join(tmp.dir, 'no.db')}`]);
    assert.notEqual(missing.code, 0);
    assert.match(missing.stderr, /no store at/);
    const memory = await akd(['vrf', 'migrate', '--db', 'memory:']);
    assert.notEqual(memory.code, 0);
    assert.match(memory.stderr, /is not a sqlite: or postgres:\/\/ store/);
  } finally {
    tmp.cleanup();
  }
});

test('a PostgreSQL store with nothing to move says so', { skip: POSTGRES_SKIP }, async () => {
  const url = new URL(POSTGRES_URL!);
  url.searchParams.set('schema', `vrf_migrate_${randomBytes(4).toString('hex')}`);
  const db = url.toString();
  const init = await akd(['init', '--db', db, '--config', 'whatsapp_v1'], { env });
  assert.equal(init.code, 0, init.stderr);
  await publish(db, LABELS, 1);
  const r = await akd(['vrf', 'migrate', '--db', db, '--json'], { env: noKey });
  assert.equal(r.code, 0, r.stderr);
  assert.equal(JSON.parse(r.stdout).total, 0);
});
