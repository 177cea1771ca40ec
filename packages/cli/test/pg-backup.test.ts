// PostgreSQL backups as docs/operating.md describes them, taken while another process
// publishes: a logical dump (pg_dump -Fc -n <schema>, restored with pg_restore into a new
// server) and a physical base backup (pg_basebackup -X stream, started as a server of its
// own). Each restored store holds one whole published epoch (its root is the root the writer
// published for it), its proofs verify, and publishing continues from it.
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { fileURLToPath } from 'node:url';
import { WhatsAppV1Configuration, fromHex, lookupVerify, toHex, utf8 } from '@akd-ts/core';
import { StorageManager } from '@akd-ts/storage';
import { PostgresDatabase } from '@akd-ts/storage-postgres';
import { InMemoryVrfKeyStore, ReadOnlyDirectory } from '@akd-ts/directory';
import {
  CLUSTERS_SKIP,
  PgWorkspace,
  tool,
  type PgCluster,
} from '../../../test/support/pg-clusters.js';
import { akd } from './helpers.js';
import { spawnTs } from './support/children.js';

const KEY = 'c9afa9d845ba75166b5c215767b1d6934e50c3db36e89b127b8a622b120f6721';
const env = { AKD_VRF_KEY: KEY };
const LOOP = fileURLToPath(new URL('./support/publish-loop.ts', import.meta.url));

describe('PostgreSQL backups taken while publishing', { skip: CLUSTERS_SKIP }, () => {
  let space: PgWorkspace;
  let primary: PgCluster;
  /** The root (hex) the writer published for each epoch. */
  const roots = new Map<string, string>();
  const url = (c: PgCluster) => `${c.url()}?schema=akd`;

  before(async () => {
    space = PgWorkspace.create();
    primary = await space.initdb('primary');
    const init = await akd(['init', '--db', url(primary), '--config', 'whatsapp_v1'], { env });
    assert.equal(init.code, 0, init.stderr);
    const writer = spawnTs(LOOP, [url(primary), KEY]);
    try {
      await writer.waitForLine(/^done 2 /);
      const port = ['-h', '127.0.0.1', '-p', String(primary.port), '-U', 'postgres'];
      // the two backups, while the writer publishes
      await tool('pg_dump', [
        ...port,
        '-Fc',
        '-n',
        'akd',
        '-f',
        space.path('akd.dump'),
        'postgres',
      ]);
      await space.baseBackup(primary, 'base', false);
      const seen = writer.lines.length;
      await writer.waitForLine(new RegExp(`^done ${seen + 1} `));
    } finally {
      assert.equal(await writer.stop(), 0, writer.stderr());
    }
    for (const line of writer.lines) {
      const [, epoch, root] = line.split(' ');
      roots.set(epoch!, root!);
    }
  });
  after(() => space?.close());

  /** Checks the store at `store`: a published epoch whole, proofs, and a further publish. */
  async function restoredStore(store: string): Promise<void> {
    const epoch = await akd(['epoch', '--db', store, '--json'], { env });
    assert.equal(epoch.code, 0, epoch.stderr);
    const { epoch: e, rootHash } = JSON.parse(epoch.stdout);
    assert.ok(e >= 2, `epoch ${e}`);
    assert.equal(rootHash, roots.get(String(e)), `the root the writer published for epoch ${e}`);
    const [connection, schema] = store.split('?schema=');
    const db = await PostgresDatabase.open(connection!, { schema: schema!, poolSize: 2 });
    const dir = await ReadOnlyDirectory.open({
      config: new WhatsAppV1Configuration(),
      storage: new StorageManager(db),
      vrfKeys: new InMemoryVrfKeyStore(fromHex(KEY)),
    });
    const { proof, epochHash } = await dir.lookup(utf8('user-3'));
    assert.equal(toHex(epochHash.hash), rootHash);
    assert.equal(new TextDecoder().decode(proof.value), `v${e}-3`);
    lookupVerify(
      dir.config,
      dir.getPublicKey(),
      epochHash.hash,
      epochHash.epoch,
      utf8('user-3'),
      proof,
    );
    await dir.close();
    await db.close();
    const next = await akd(['publish', '--db', store, '--json', '--vrf-threads', '0', '-'], {
      env,
      stdin: '{"label":"user-3","value":"after-restore"}\n',
    });
    assert.equal(next.code, 0, next.stderr);
    assert.equal(JSON.parse(next.stdout).epoch, e + 1);
  }

  test('pg_dump, restored with pg_restore into a new server', async () => {
    const target = await space.initdb('restored');
    const port = ['-h', '127.0.0.1', '-p', String(target.port), '-U', 'postgres'];
    await tool('pg_restore', [
      ...port,
      '-d',
      'postgres',
      '--exit-on-error',
      space.path('akd.dump'),
    ]);
    await restoredStore(url(target));
  });

  test('pg_basebackup, started as a server of its own', async () => {
    const copy = await space.start('base');
    await restoredStore(url(copy));
  });
});
