// akd backup and akd restore on SQLite: a backup taken while another process publishes is one
// epoch whole (its root is the root the writer published for that epoch), the restored store
// serves proofs that verify and publishing continues from it; stores that are not
// directories, existing destinations and PostgreSQL URLs are refused, leaving no file behind.
// A damaged backup (4 KB inverted mid-file) or an inconsistent one (azks.latest_epoch raised
// by SQL) is refused with what failed and nothing written; a backup whose copy fails its
// check is removed; --verify full finds a wrong node the standard check does not read.
import { after, test } from 'node:test';
import assert from 'node:assert/strict';
import { copyFileSync, existsSync, readFileSync, readdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import {
  WhatsAppV1Configuration,
  auditVerify,
  fromHex,
  lookupVerify,
  toHex,
  utf8,
} from '@akd-ts/core';
import { StorageManager } from '@akd-ts/storage';
import { SqliteDatabase, openBetterSqlite } from '@akd-ts/storage-sqlite';
import { InMemoryVrfKeyStore, ReadOnlyDirectory } from '@akd-ts/directory';
import { akd, tempDir } from './helpers.js';
import { spawnTs } from './support/children.js';

const KEY = 'c9afa9d845ba75166b5c215767b1d6934e50c3db36e89b127b8a622b120f6721';
const env = { AKD_VRF_KEY: KEY };
const tmp = tempDir();
after(tmp.cleanup);
const path = (name: string) => join(tmp.dir, name);
const LOOP = fileURLToPath(new URL('./support/publish-loop.ts', import.meta.url));

async function ok(args: string[], stdin?: string) {
  const out = await akd(args, { env, ...(stdin === undefined ? {} : { stdin }) });
  assert.equal(out.code, 0, out.stderr);
  return out;
}

function reader(file: string) {
  return SqliteDatabase.open(file).then(async (db) => ({
    db,
    dir: await ReadOnlyDirectory.open({
      config: new WhatsAppV1Configuration(),
      storage: new StorageManager(db),
      vrfKeys: new InMemoryVrfKeyStore(fromHex(KEY)),
    }),
  }));
}

test('a backup taken while another process publishes restores to a whole epoch', async () => {
  const source = path('live.db');
  const init = JSON.parse(
    (await ok(['init', '--db', `sqlite:${source}`, '--config', 'whatsapp_v1', '--json'])).stdout,
  );
  const roots = new Map<string, string>([['0', init.rootHash]]);
  const writer = spawnTs(LOOP, [`sqlite:${source}`, KEY]);
  try {
    await writer.waitForLine(/^done 3 /);
    const backup = path('live-backup.db');
    const taken = JSON.parse(
      (await ok(['backup', '--db', `sqlite:${source}`, '--out', backup, '--json'])).stdout,
    );
    // the writer goes on after the backup
    const after = Number(taken.epoch) + 1;
    await writer.waitForLine(new RegExp(`^done ${after} `));
    assert.equal(await writer.stop(), 0, writer.stderr());
    for (const line of writer.lines) {
      const [, epoch, root] = line.split(' ');
      roots.set(epoch!, root!);
    }
    assert.ok(Number(taken.epoch) >= 3);
    assert.equal(taken.rootHash, roots.get(String(taken.epoch)), 'the root of a published epoch');
    assert.equal(taken.from, `sqlite:${source}`);

    const restoredPath = path('restored.db');
    const restored = JSON.parse(
      (await ok(['restore', '--from', backup, '--db', `sqlite:${restoredPath}`, '--json'])).stdout,
    );
    assert.deepEqual(
      [restored.epoch, restored.rootHash, restored.configuration],
      [taken.epoch, taken.rootHash, 'whatsapp_v1'],
    );
    const text = await ok(['epoch', '--db', `sqlite:${restoredPath}`]);
    assert.match(text.stdout, new RegExp(`epoch: ${taken.epoch}\nroot hash: ${taken.rootHash}`));

    // its proofs verify against that root, and publishing continues from it
    const { db, dir } = await reader(restoredPath);
    const epochHash = await dir.getEpochHash();
    assert.equal(toHex(epochHash.hash), taken.rootHash);
    const { proof } = await dir.lookup(utf8('user-7'));
    assert.equal(
      new TextDecoder().decode(proof.value),
      `v${taken.epoch}-7`,
      'the value of the backed-up epoch',
    );
    lookupVerify(
      dir.config,
      dir.getPublicKey(),
      epochHash.hash,
      epochHash.epoch,
      utf8('user-7'),
      proof,
    );
    await dir.close();
    await db.close();
    const next = JSON.parse(
      (
        await ok(
          ['publish', '--db', `sqlite:${restoredPath}`, '--json', '--vrf-threads', '0', '-'],
          '{"label":"user-7","value":"after-restore"}\n',
        )
      ).stdout,
    );
    assert.equal(BigInt(next.epoch), BigInt(taken.epoch) + 1n);
    const again = await reader(restoredPath);
    const audit = await again.dir.audit(1n, BigInt(next.epoch));
    const hashes = [fromHex(roots.get('1')!)];
    for (let e = 2n; e < BigInt(next.epoch); e++) hashes.push(fromHex(roots.get(String(e))!));
    hashes.push(fromHex(next.rootHash));
    await auditVerify(again.dir.config, hashes, audit);
    await again.dir.close();
    await again.db.close();
  } finally {
    await writer.stop();
  }
});

test('backup and restore refuse what is not a directory, and never overwrite', async () => {
  const refused = async (args: string[], code: number, message: RegExp) => {
    const out = await akd(args, { env });
    assert.equal(out.code, code, out.stderr);
    assert.match(out.stderr, message);
  };
  const out = path('never.db');
  await refused(['backup', '--db', `sqlite:${path('missing.db')}`, '--out', out], 2, /no store at/);
  assert.equal(existsSync(path('missing.db')), false, 'a missing store is not created');
  writeFileSync(path('empty.db'), '');
  await refused(['backup', '--db', `sqlite:${path('empty.db')}`, '--out', out], 2, /is empty/);
  await refused(['backup', '--db', `sqlite:${tmp.dir}`, '--out', out], 2, /is not a file/);
  writeFileSync(path('text.db'), 'not a database, just text that is long enough to look like one');
  await refused(
    ['backup', '--db', `sqlite:${path('text.db')}`, '--out', out],
    1,
    /STORAGE_CORRUPT/,
  );
  await (await SqliteDatabase.open(path('bare.db'))).close();
  await refused(
    ['backup', '--db', `sqlite:${path('bare.db')}`, '--out', out],
    1,
    /DIRECTORY_READ_ONLY: .*holds no directory/,
  );
  assert.equal(existsSync(out), false, 'no backup file was left');
  await refused(
    ['backup', '--db', 'postgres://db/akd', '--out', out],
    2,
    /pg_dump or pg_basebackup/,
  );
  await refused(['backup', '--db', 'memory:x', '--out', out], 2, /expected a SQLite store/);

  const store = path('store.db');
  await ok(['init', '--db', `sqlite:${store}`, '--config', 'whatsapp_v1']);
  writeFileSync(path('taken.db'), 'x');
  await refused(
    ['backup', '--db', `sqlite:${store}`, '--out', path('taken.db')],
    2,
    /exists: a backup never overwrites/,
  );
  const backup = path('store-backup.db');
  const text = await ok(['backup', '--db', `sqlite:${store}`, '--out', backup]);
  assert.match(
    text.stdout,
    /^backed up sqlite:.*store\.db to .*store-backup\.db\nepoch: 0\nroot hash: [0-9a-f]{64}\n/,
  );

  // a restore never overwrites a store, and leaves nothing when the file is no directory
  await refused(
    ['restore', '--from', backup, '--db', `sqlite:${store}`],
    2,
    /exists: a restore never overwrites/,
  );
  await refused(
    ['restore', '--from', path('missing.db'), '--db', `sqlite:${path('r1.db')}`],
    2,
    /--from: no store at/,
  );
  await refused(
    ['restore', '--from', path('bare.db'), '--db', `sqlite:${path('r2.db')}`],
    1,
    /holds no directory/,
  );
  assert.equal(existsSync(path('r2.db')), false);
  await refused(
    ['restore', '--from', backup, '--db', `sqlite:${path('no-dir/r3.db')}`],
    2,
    /cannot create/,
  );
  await refused(['restore', '--from', backup, '--db', 'postgres://db/akd'], 2, /pg_dump/);
  const restored = await ok(['restore', '--from', backup, '--db', `sqlite:${path('r4.db')}`]);
  assert.match(restored.stdout, /^restored .*store-backup\.db to sqlite:.*r4\.db\nepoch: 0\n/);
  const help = await ok(['backup', '--help']);
  assert.match(help.stdout, /online backup/);
});

/** Files in the test directory whose name starts with `name` (a store, its staging copies). */
const filesOf = (name: string) => readdirSync(tmp.dir).filter((f) => f.startsWith(name));

/** A copy of the file `from` as `to`, with `change` applied to its bytes. */
function copyWith(from: string, to: string, change: (bytes: Buffer) => Buffer | void): string {
  const bytes = readFileSync(from);
  writeFileSync(path(to), change(bytes) ?? bytes);
  return path(to);
}

/** Inverts 4 KB in the middle of a file. */
const invertMiddle = (b: Buffer) => {
  const middle = Math.floor(b.length / 2);
  for (let i = middle; i < middle + 4096; i++) b[i] = b[i]! ^ 0xff;
};

/** A copy of the store `from` as `to`, with `sql` run on it. */
function copyWithSql(from: string, to: string, sql: string): string {
  copyFileSync(from, path(to));
  const client = openBetterSqlite(path(to));
  client.exec(sql);
  client.close();
  return path(to);
}

/** A store of 4 epochs of 250 labels each (the first 50 updated every epoch), and its backup. */
const epochs = (async () => {
  const store = path('epochs.db');
  await ok(['init', '--db', `sqlite:${store}`, '--config', 'whatsapp_v1']);
  const roots = new Map<bigint, string>();
  for (let e = 1; e <= 4; e++) {
    const lines = Array.from({ length: 250 }, (_, i) =>
      JSON.stringify({ label: i < 50 ? `old-${i}` : `e${e}-${i}`, value: `v${e}-${i}` }),
    );
    const args = ['publish', '--db', `sqlite:${store}`, '--json', '--vrf-threads', '0', '-'];
    const out = JSON.parse((await ok(args, lines.join('\n'))).stdout);
    roots.set(BigInt(out.epoch), out.rootHash);
  }
  const backup = path('epochs-backup.db');
  await ok(['backup', '--db', `sqlite:${store}`, '--out', backup]);
  return { store, backup, roots };
})();

async function refusedRestore(from: string, to: string, message: RegExp, extra: string[] = []) {
  const out = await akd(['restore', '--from', from, '--db', `sqlite:${path(to)}`, ...extra], {
    env,
  });
  assert.equal(out.code, 1, out.stderr);
  assert.match(out.stderr, message);
  assert.equal(out.stderr.split('\n').length, 2, 'one line');
  assert.deepEqual(filesOf(to), [], 'nothing written');
}

test('a backup with 4 KB inverted mid-file is refused, and nothing is written', async () => {
  const { backup } = await epochs;
  const damaged = copyWith(backup, 'damaged.db', invertMiddle);
  // the damage is real: SQLite's own check of the file fails
  const raw = openBetterSqlite(copyWith(damaged, 'damaged-probe.db', () => {}));
  assert.throws(() => {
    const rows = raw.pragma('integrity_check') as { integrity_check: string }[];
    if (rows[0]?.integrity_check !== 'ok') throw new Error(rows[0]?.integrity_check);
  });
  raw.close();
  const before = readFileSync(damaged);
  await refusedRestore(
    damaged,
    'from-damaged.db',
    /^error: STORAGE_CORRUPT: restore refused, nothing was written: .*damaged\.db: integrity_check: \S/,
  );
  assert.deepEqual(readFileSync(damaged), before, 'the backup itself is only read');

  // SQLite's problems beyond the first are counted: a free list miscounted, two pages unused
  const miscounted = copyWith(backup, 'miscounted.db', (b) => {
    b.writeUInt32BE(7, 36);
    b.writeUInt32BE(b.readUInt32BE(28) + 2, 28);
    return Buffer.concat([b, Buffer.alloc(8192)]);
  });
  await refusedRestore(
    miscounted,
    'from-miscounted.db',
    /integrity_check: Freelist: size is 0 but should be 7 \(and 2 more\)$/m,
  );
});

test('a backup whose azks.latest_epoch was raised by 5 is refused, and nothing is written', async () => {
  const { backup } = await epochs;
  const raised = copyWithSql(
    backup,
    'raised.db',
    'UPDATE azks SET latest_epoch = latest_epoch + 5',
  );
  await refusedRestore(
    raised,
    'from-raised.db',
    /^error: STORAGE_CORRUPT: restore refused, nothing was written: .*raised\.db: azks latest epoch 9 but the tree's root was last written in epoch 4$/m,
  );
  const lowered = copyWithSql(backup, 'lowered.db', 'UPDATE azks SET latest_epoch = 3');
  await refusedRestore(
    lowered,
    'from-lowered.db',
    /azks latest epoch 3 but the tree's root was last written in epoch 4$/m,
  );
  const miscount = copyWithSql(backup, 'miscount.db', 'UPDATE azks SET num_nodes = num_nodes + 1');
  await refusedRestore(
    miscount,
    'from-miscount.db',
    /azks counts \d+ tree nodes but the store holds \d+$/m,
  );
});

test('a clean backup restores and publishes the next epoch with no gap', async () => {
  const { backup, roots } = await epochs;
  const restored = path('clean-restored.db');
  const out = JSON.parse(
    (await ok(['restore', '--from', backup, '--db', `sqlite:${restored}`, '--json'])).stdout,
  );
  assert.deepEqual([out.epoch, out.rootHash], [4, roots.get(4n)]);
  assert.deepEqual(filesOf('clean-restored.db'), ['clean-restored.db'], 'no staging copy left');
  const next = JSON.parse(
    (
      await ok(
        ['publish', '--db', `sqlite:${restored}`, '--json', '--vrf-threads', '0', '-'],
        '{"label":"after","value":"restore"}\n',
      )
    ).stdout,
  );
  assert.equal(next.epoch, 5);
  // epochs 1 to 5 form one chain: the restored epochs' roots, then the new one
  const { db, dir } = await reader(restored);
  const hashes = [1n, 2n, 3n, 4n].map((e) => fromHex(roots.get(e)!));
  await auditVerify(dir.config, [...hashes, fromHex(next.rootHash)], await dir.audit(1n, 5n));
  const blob = await db.getAuditBlob(5n);
  assert.equal(toHex(blob.previousHash), roots.get(4n), 'the new step starts at the restored root');
  await dir.close();
  await db.close();
});

test('--verify full reads every node: a wrong leaf the standard check does not read', async () => {
  const { backup } = await epochs;
  // a leaf of the latest epoch below an interior node (not a child of the root) with its value
  // zeroed: the store keeps versions (node_versions, whose data ends with the hash, and whose
  // leaves begin with type 1, flags, a one-byte varint and the parent's two-byte head)
  const tampered = copyWithSql(
    backup,
    'tampered.db',
    'UPDATE node_versions SET data = CAST(substr(data, 1, length(data) - 32) || zeroblob(32) AS BLOB) ' +
      'WHERE (epoch, label) = (SELECT epoch, label FROM node_versions ' +
      "WHERE epoch = (SELECT max(epoch) FROM node_versions) AND substr(data, 1, 1) = x'01' " +
      "AND substr(data, 4, 2) != x'0000' ORDER BY label LIMIT 1)",
  );
  await ok(['restore', '--from', tampered, '--db', `sqlite:${path('tampered-standard.db')}`]);
  await refusedRestore(
    tampered,
    'tampered-full.db',
    /restore refused, nothing was written: .*tampered\.db: tree node \(0x[0-9a-f]{64}, \d+\) at epoch 4: its stored hash is not the hash of its children$/m,
    ['--verify', 'full'],
  );
  const full = await ok([
    'restore',
    '--from',
    backup,
    '--db',
    `sqlite:${path('full.db')}`,
    '--verify',
    'full',
  ]);
  assert.match(full.stdout, /^restored .* to sqlite:.*full\.db\nepoch: 4\n/);
  const bad = await akd(
    ['restore', '--from', backup, '--db', `sqlite:${path('x2.db')}`, '--verify', 'most'],
    { env },
  );
  assert.equal(bad.code, 2);
  assert.match(bad.stderr, /--verify.*most.*standard, full/);
});

test('a backup whose copy fails its check is removed and names what failed', async () => {
  const { store } = await epochs;
  const refusedBackup = async (
    from: string,
    out: string,
    message: RegExp,
    extra: string[] = [],
  ) => {
    const r = await akd(['backup', '--db', `sqlite:${from}`, '--out', path(out), ...extra], {
      env,
    });
    assert.equal(r.code, 1, r.stderr);
    assert.match(r.stderr, message);
    assert.deepEqual(filesOf(out), [], 'the copy was removed');
  };
  await refusedBackup(
    copyWith(store, 'damaged-store.db', invertMiddle),
    'of-damaged.db',
    /^error: STORAGE_CORRUPT: the backup fails its check and was removed \(is sqlite:.*damaged-store\.db damaged\?\): integrity_check: \S/,
  );
  await refusedBackup(
    copyWithSql(store, 'raised-store.db', 'UPDATE azks SET latest_epoch = latest_epoch + 5'),
    'of-raised.db',
    /: azks latest epoch 9 but the tree's root was last written in epoch 4$/m,
  );
  const full = JSON.parse(
    (
      await ok([
        'backup',
        '--db',
        `sqlite:${store}`,
        '--out',
        path('of-store-full.db'),
        '--verify',
        'full',
        '--json',
      ])
    ).stdout,
  );
  assert.equal(full.epoch, 4);
});
