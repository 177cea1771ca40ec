// Putting a checked copy in place for akd restore: a hard link that never replaces a file; on
// a file system without hard links, a copy that never replaces one either; a path that cannot
// be created is a usage error naming it.
import { after, test } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync, readFileSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { UsageError } from '../src/errors.js';
import { placeNewFile, removeStore, stagingPath } from '../src/commands/store-files.js';
import { tempDir } from './helpers.js';

const tmp = tempDir();
after(tmp.cleanup);

/** A link function that fails as `link(2)` does with `code`. */
const failingLink = (code: string) => async () => {
  throw Object.assign(new Error(`${code}: link failed`), { code });
};

test('the checked copy gets the name by a hard link, never over an existing file', async () => {
  const staged = tmp.write('a.db.restoring-1', new Uint8Array([1, 2, 3]));
  const target = join(tmp.dir, 'a.db');
  await placeNewFile(staged, target);
  assert.equal(statSync(target).ino, statSync(staged).ino, 'one file, two names');
  await assert.rejects(
    placeNewFile(staged, target),
    (e: unknown) =>
      e instanceof UsageError && /"[^"]*a\.db" exists: a restore never/.test(e.message),
  );
  // a file appearing between the check and the link is refused the same way
  const other = tmp.write('b.db', new Uint8Array([9]));
  await assert.rejects(placeNewFile(staged, other, failingLink('EEXIST')), /exists/);
  assert.deepEqual([...readFileSync(other)], [9], 'left alone');
});

test('without hard links the copy is copied, still never over an existing file', async () => {
  const staged = tmp.write('c.db.restoring-2', new Uint8Array([4, 5]));
  const target = join(tmp.dir, 'c.db');
  await placeNewFile(staged, target, failingLink('EPERM'));
  assert.deepEqual([...readFileSync(target)], [4, 5]);
  assert.notEqual(statSync(target).ino, statSync(staged).ino);
  await assert.rejects(
    placeNewFile(staged, target, failingLink('EPERM')),
    (e: unknown) =>
      e instanceof UsageError && /--db: cannot create .*c\.db.*EEXIST/.test(e.message),
  );
  await assert.rejects(
    placeNewFile(staged, join(tmp.dir, 'missing', 'd.db'), failingLink('ENOTSUP')),
    /--db: cannot create .*missing.*ENOENT/,
  );
});

test('staging paths are beside the store and differ; removing a store takes its WAL files', async () => {
  const target = join(tmp.dir, 'e.db');
  const [one, two] = [stagingPath(target), stagingPath(target)];
  assert.match(one, /e\.db\.restoring-[0-9a-f]{8}$/);
  assert.notEqual(one, two);
  for (const suffix of ['', '-wal', '-shm']) tmp.write(`e.db${suffix}`, new Uint8Array([1]));
  await removeStore(target);
  for (const suffix of ['', '-wal', '-shm']) assert.equal(existsSync(`${target}${suffix}`), false);
  await removeStore(target);
});
