// The file store of @akd-ts/client/node: nothing before the first write, atomic replacement
// (no temporary file left), and an unreadable file refused as client state.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, readdirSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { isAkdError } from '@akd-ts/core';
import { AkdClient, FileStore } from '@akd-ts/client/node';

test('a file store starts empty, replaces its document whole, and refuses a broken one', async () => {
  const dir = mkdtempSync(join(tmpdir(), 'akd-client-'));
  const path = join(dir, 'state.json');
  const store = new FileStore(path);
  assert.equal(await store.get(), undefined);
  await store.set({ a: 1 });
  await store.set({ b: [2] });
  assert.deepEqual(await store.get(), { b: [2] });
  assert.deepEqual(readdirSync(dir), ['state.json'], 'no temporary file left');
  assert.equal(statSync(path).mode & 0o777, 0o600);
  writeFileSync(path, '{"format":');
  const client = new AkdClient({ server: 'http://127.0.0.1:1', store, fetch: () => assert.fail() });
  await assert.rejects(client.refresh(), (e) => isAkdError(e, 'CLIENT_STATE'));
  // a path that cannot be written fails as the file system says
  await assert.rejects(new FileStore(join(dir, 'missing', 'x.json')).set({}), /ENOENT/);
  assert.throws(() => new FileStore(''), TypeError);
  rmSync(dir, { recursive: true, force: true });
});
