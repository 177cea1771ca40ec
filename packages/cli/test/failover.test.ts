// akd fence and akd promote against one PostgreSQL server (the replica pair's run is in
// replication.test.ts): their text output, a store that holds no directory, and their usage
// errors.
import { after, test } from 'node:test';
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import pg from 'pg';
import { PostgresDatabase } from '@akd-ts/storage-postgres';
import { akd } from './helpers.js';

const PG_URL = process.env['AKD_TEST_POSTGRES_URL'];
const skip = PG_URL ? false : 'AKD_TEST_POSTGRES_URL is not set: PostgreSQL tests skipped';
const env = { AKD_VRF_KEY: 'c9afa9d845ba75166b5c215767b1d6934e50c3db36e89b127b8a622b120f6721' };
const schemas: string[] = [];
after(async () => {
  if (schemas.length === 0) return;
  const client = new pg.Client({ connectionString: PG_URL });
  await client.connect();
  for (const s of schemas) await client.query(`DROP SCHEMA IF EXISTS "${s}" CASCADE`);
  await client.end();
});

function store(): string {
  const schema = `akd_test_fence_${randomBytes(5).toString('hex')}`;
  schemas.push(schema);
  return `${PG_URL}?schema=${schema}`;
}

test('fence then promote on one server: the store is writable again', { skip }, async () => {
  const db = store();
  // akd init's directory claims generation 1
  assert.equal((await akd(['init', '--db', db, '--config', 'whatsapp_v1'], { env })).code, 0);
  const fenced = await akd(['fence', '--db', db], { env });
  assert.equal(fenced.code, 0, fenced.stderr);
  assert.match(
    fenced.stdout,
    /^fenced schema "akd_test_fence_\w+" at generation 2, epoch 0: no writer may publish/,
  );
  assert.match(fenced.stdout, /next: akd promote --db <standby> --fenced-generation 2\n$/);
  const refused = await akd(['publish', '--db', db, '-'], {
    env,
    stdin: '{"label":"a","value":"b"}\n',
  });
  assert.equal(refused.code, 1);
  assert.match(refused.stderr, /is fenced/);
  const promoted = await akd(['promote', '--db', db, '--fenced-generation', '2'], { env });
  assert.equal(promoted.code, 0, promoted.stderr);
  assert.match(
    promoted.stdout,
    /^the server was already a primary; schema "\w+" is writable at generation 3, epoch 0\n/,
  );
  const published = await akd(['publish', '--db', db, '-'], {
    env,
    stdin: '{"label":"a","value":"b"}\n',
  });
  assert.equal(published.code, 0, published.stderr);
  const again = await akd(['promote', '--db', db, '--no-fence', '--json'], { env });
  assert.equal(JSON.parse(again.stdout).generation, 4, 'akd publish claimed generation 4');
});

test('fence and promote refuse a schema without a directory', { skip }, async () => {
  for (const args of [['fence'], ['promote', '--no-fence']]) {
    const out = await akd([...args, '--db', store()], { env });
    assert.equal(out.code, 1);
    assert.match(out.stderr, /STORAGE_SCHEMA: schema "akd_test_fence_\w+" has no akd tables/);
  }
  // tables, but no directory in them
  const bare = store();
  const schema = new URL(bare).searchParams.get('schema')!;
  await (await PostgresDatabase.open(PG_URL!, { schema })).close();
  const out = await akd(['fence', '--db', bare], { env });
  assert.equal(out.code, 1);
  assert.match(out.stderr, /DIRECTORY_READ_ONLY: schema "\w+" holds no directory/);
});

test('fence and promote usage errors', async () => {
  const cases: [string[], RegExp][] = [
    [['fence', '--db', 'sqlite:./x.db'], /fencing and promotion are for PostgreSQL stores/],
    [['promote', '--db', 'postgres://h/d'], /give --fenced-generation <n>.*or --no-fence/],
    [
      ['promote', '--db', 'postgres://h/d', '--fenced-generation', '2', '--no-fence'],
      /exclude each other/,
    ],
    [
      ['promote', '--db', 'postgres://h/d', '--fenced-generation', 'x'],
      /--fenced-generation: expected/,
    ],
    [
      ['promote', '--db', 'postgres://h/d', '--no-fence', '--timeout', '0'],
      /--timeout: expected seconds/,
    ],
  ];
  for (const [args, message] of cases) {
    const out = await akd(args, { env });
    assert.equal(out.code, 2, `${args.join(' ')}: ${out.stderr}`);
    assert.match(out.stderr, message);
  }
  const help = await akd(['promote', '--help']);
  assert.match(help.stdout, /--no-fence/);
});
