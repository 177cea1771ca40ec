// akd vrf backfill: a store whose versions have no stored VRF proofs (as an older akd-ts left
// it) cannot serve lookups without the key, names the label, and serves them once the
// backfill ran; the backfill reports progress per batch and needs the key.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { join } from 'node:path';
import { openBetterSqlite } from '@akd-ts/storage-sqlite';
import { akd, tempDir } from './helpers.js';

const KEY = 'c9afa9d845ba75166b5c215767b1d6934e50c3db36e89b127b8a622b120f6721';
const jsonl = (rows: object[]) => rows.map((r) => JSON.stringify(r)).join('\n') + '\n';

test('a store without stored VRF proofs is backfilled once, then served without the key', async () => {
  const tmp = tempDir();
  try {
    const path = join(tmp.dir, 'akd.db');
    const db = `sqlite:${path}`;
    const env = { AKD_VRF_KEY: KEY };
    assert.equal((await akd(['init', '--db', db, '--config', 'whatsapp_v1'], { env })).code, 0);
    const rows = ['alice', 'bob', 'carol'].map((label) => ({ label, value: `${label}-1` }));
    assert.equal((await akd(['publish', '--db', db, '-'], { env, stdin: jsonl(rows) })).code, 0);
    // what an older akd-ts left: no proofs, no mark
    const raw = openBetterSqlite(path);
    raw.exec("DELETE FROM vrf_proof_rows; DELETE FROM settings WHERE name = 'vrf_proofs'");
    raw.close();
    const noKey = { AKD_VRF_KEY_FILE: join(tmp.dir, 'no-such.key') };

    const missing = await akd(['lookup', '--db', db, '--label', 'bob'], { env: noKey });
    assert.equal(missing.code, 1);
    assert.match(missing.stderr, /VRF_PROOF_MISSING: .*626f62 .*akd vrf backfill/);

    const withoutKey = await akd(['vrf', 'backfill', '--db', db], { env: noKey });
    assert.equal(withoutKey.code, 2);
    assert.match(
      withoutKey.stderr,
      /the VRF secret key is needed: the proofs are computed with it/,
    );

    const filled = await akd(['vrf', 'backfill', '--db', db, '--batch', '2'], { env });
    assert.equal(filled.code, 0, filled.stderr);
    assert.match(
      filled.stderr,
      /^backfill: 2 labels done \(last 626f62\)\nbackfill: 3 labels done/,
    );
    assert.match(filled.stdout, /^stored the VRF proofs of 3 labels in [0-9.]+ s/);

    const lookup = await akd(['lookup', '--db', db, '--label', 'bob'], { env: noKey });
    assert.equal(lookup.code, 0, lookup.stderr);
    assert.match(lookup.stdout, /value: bob-1/);
    const again = await akd(['vrf', 'backfill', '--db', db, '--json'], { env });
    assert.equal(again.code, 0, again.stderr);
    assert.equal(JSON.parse(again.stdout).labels, 3, 'a finished walk starts over when run again');
    const bad = await akd(['vrf', 'backfill', '--db', db, '--batch', '0'], { env });
    assert.equal(bad.code, 2);
  } finally {
    tmp.cleanup();
  }
});
