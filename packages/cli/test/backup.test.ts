// akd backup and akd restore on SQLite: a backup taken while another process publishes is one
// epoch whole (its root is the root the writer published for that epoch), the restored store
// serves proofs that verify and publishing continues from it; stores that are not
// directories, existing destinations and PostgreSQL URLs are refused, leaving no file behind.
import { after, test } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync, writeFileSync } from 'node:fs';
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
import { SqliteDatabase } from '@akd-ts/storage-sqlite';
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
