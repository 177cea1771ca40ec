// akd init --node-layout and akd layout migrate: a store created with versions, and a store of
// records moved to versions in chunks, serve the same proofs as before and go on publishing.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { join } from 'node:path';
import { openBetterSqlite } from '@akd-ts/storage-sqlite';
import { POSTGRES_SKIP, POSTGRES_URL } from '../../../test/support/postgres-url.js';
import { randomBytes } from 'node:crypto';
import pg from 'pg';
import { akd, tempDir } from './helpers.js';

const KEY = 'c9afa9d845ba75166b5c215767b1d6934e50c3db36e89b127b8a622b120f6721';
const env = { AKD_VRF_KEY: KEY };
const jsonl = (rows: object[]) => rows.map((r) => JSON.stringify(r)).join('\n') + '\n';
const epoch = (labels: string[], v: number) =>
  jsonl(labels.map((label) => ({ label, value: `${label}-${v}` })));
const LABELS = ['alice', 'bob', 'carol', 'dave', 'erin', 'frank', 'grace'];

/** What a reader without the key serves for every label: its lookup and history, as JSON. */
async function proofs(db: string): Promise<string[]> {
  const out: string[] = [];
  for (const label of LABELS) {
    for (const cmd of ['lookup', 'history']) {
      const r = await akd([cmd, '--db', db, '--label', label, '--json'], {
        env: { AKD_VRF_KEY_FILE: '/nonexistent/akd.key' },
      });
      assert.equal(r.code, 0, r.stderr);
      out.push(r.stdout);
    }
  }
  return out;
}

/** A directory of three epochs in `db`, created with `init` arguments `extra`. */
async function threeEpochs(db: string, extra: string[]): Promise<void> {
  const init = await akd(['init', '--db', db, '--config', 'whatsapp_v1', ...extra], { env });
  assert.equal(init.code, 0, init.stderr);
  for (const [labels, v] of [
    [LABELS.slice(0, 4), 1],
    [LABELS.slice(2), 2],
    [['alice'], 3],
  ] as const) {
    const r = await akd(['publish', '--db', db, '-'], { env, stdin: epoch([...labels], v) });
    assert.equal(r.code, 0, r.stderr);
  }
}

test('a SQLite store of records moves to versions in chunks and serves the same proofs', async () => {
  const tmp = tempDir();
  try {
    const path = join(tmp.dir, 'akd.db');
    const db = `sqlite:${path}`;
    await threeEpochs(db, ['--node-layout', 'records']);
    const before = await proofs(db);

    const moved = await akd(['layout', 'migrate', '--db', db, '--chunk', '5'], { env: {} });
    assert.equal(moved.code, 0, moved.stderr);
    const lines = moved.stderr.trim().split('\n');
    assert.ok(lines.length >= 3, 'progress chunk by chunk');
    for (const line of lines) assert.match(line, /^layout: \d+ of \d+ records copied$/);
    assert.match(
      moved.stdout,
      /now keeps its tree nodes as versions: \d+ records copied as \d+ versions in [0-9.]+ s, then vacuumed/,
    );
    const raw = openBetterSqlite(path);
    const layout = raw.prepare('SELECT count(*) AS n FROM node_versions').get() as { n: number };
    const free = raw.prepare('PRAGMA freelist_count').get() as { freelist_count: number };
    raw.close();
    assert.ok(layout.n > 0);
    assert.equal(free.freelist_count, 0, 'the pages the records held are given back');

    assert.deepEqual(await proofs(db), before, 'the proofs of every label, byte for byte');
    const next = await akd(['publish', '--db', db, '-'], { env, stdin: epoch(['bob', 'zoe'], 4) });
    assert.equal(next.code, 0, next.stderr);
    const zoe = await akd(['lookup', '--db', db, '--label', 'zoe'], { env });
    assert.match(zoe.stdout, /value: zoe-4/);

    const again = await akd(['layout', 'migrate', '--db', db, '--json'], { env: {} });
    assert.equal(again.code, 0, again.stderr);
    assert.equal(JSON.parse(again.stdout).already, true);
  } finally {
    tmp.cleanup();
  }
});

test('akd layout collect deletes the versions no reader reaches, without the key, and resumes', async () => {
  const tmp = tempDir();
  try {
    const path = join(tmp.dir, 'akd.db');
    const db = `sqlite:${path}`;
    await threeEpochs(db, []);
    const more = await akd(['publish', '--db', db, '-'], { env, stdin: epoch(LABELS, 4) });
    assert.equal(more.code, 0, more.stderr);
    const before = await proofs(db);
    const versions = () => {
      const raw = openBetterSqlite(path);
      const row = raw.prepare('SELECT count(*) AS n FROM node_versions').get() as { n: number };
      raw.close();
      return row.n;
    };
    const stored = versions();

    const noKey = { AKD_VRF_KEY_FILE: '/nonexistent/akd.key' };
    const run = await akd(['layout', 'collect', '--db', db], { env: noKey });
    assert.equal(run.code, 0, run.stderr);
    assert.deepEqual(
      run.stderr
        .trim()
        .split('\n')
        .map((line) => line.replace(/, \d+ versions deleted$/, '')),
      [
        'layout: epoch 1 of 3 collected',
        'layout: epoch 2 of 3 collected',
        'layout: epoch 3 of 3 collected',
      ],
    );
    const deleted = Number(
      /epochs 1 to 3 collected, (\d+) node versions deleted/.exec(run.stdout)?.[1],
    );
    assert.ok(deleted > 0, run.stdout);
    assert.equal(versions(), stored - deleted);
    assert.deepEqual(await proofs(db), before, 'the proofs of every label, byte for byte');
    // a collected store backs up and restores, through the checks both run (the full one too)
    const copy = join(tmp.dir, 'copy.db');
    const backup = await akd(['backup', '--db', db, '--out', copy], { env: noKey });
    assert.equal(backup.code, 0, backup.stderr);
    const restored = `sqlite:${join(tmp.dir, 'restored.db')}`;
    const restore = await akd(['restore', '--from', copy, '--db', restored, '--verify', 'full'], {
      env: noKey,
    });
    assert.equal(restore.code, 0, restore.stderr);
    assert.deepEqual(await proofs(restored), before, 'the restored store serves them too');

    const again = await akd(['layout', 'collect', '--db', db, '--json'], { env: noKey });
    assert.equal(again.code, 0, again.stderr);
    assert.deepEqual(
      [
        JSON.parse(again.stdout).epochs,
        JSON.parse(again.stdout).deleted,
        JSON.parse(again.stdout).from,
      ],
      [0, 0, 4],
    );
    const nothing = await akd(['layout', 'collect', '--db', db], { env: noKey });
    assert.match(
      nothing.stdout,
      /nothing to collect \(every epoch a reader may skip is collected\)/,
    );
    const next = await akd(['publish', '--db', db, '-'], { env, stdin: epoch(['bob'], 5) });
    assert.equal(next.code, 0, next.stderr);
    const after = await akd(['layout', 'collect', '--db', db, '--json'], { env: noKey });
    assert.equal(JSON.parse(after.stdout).epochs, 1);
    const bob = await akd(['lookup', '--db', db, '--label', 'bob'], { env: noKey });
    assert.match(bob.stdout, /value: bob-5/);

    const records = `sqlite:${join(tmp.dir, 'records.db')}`;
    await threeEpochs(records, ['--node-layout', 'records']);
    const none = await akd(['layout', 'collect', '--db', records], { env: noKey });
    assert.equal(none.code, 0, none.stderr);
    assert.match(none.stdout, /keeps its tree nodes as records: nothing to collect/);
    const missing = await akd(['layout', 'collect', '--db', `sqlite:${join(tmp.dir, 'no.db')}`], {
      env: noKey,
    });
    assert.equal(missing.code, 2);
  } finally {
    tmp.cleanup();
  }
});

test('akd init creates a store of versions (by default) or records; bad layouts and stores are refused', async () => {
  const tmp = tempDir();
  try {
    const versions = `sqlite:${join(tmp.dir, 'versions.db')}`;
    const records = `sqlite:${join(tmp.dir, 'records.db')}`;
    await threeEpochs(versions, ['--node-layout', 'versions']);
    await threeEpochs(records, ['--node-layout', 'records']);
    assert.deepEqual(await proofs(versions), await proofs(records), 'the same proofs');
    const kept = await akd(['layout', 'migrate', '--db', records, '--no-vacuum', '--json'], {
      env: {},
    });
    assert.equal(kept.code, 0, kept.stderr);
    assert.equal(JSON.parse(kept.stdout).vacuumed, false);
    const plain = `sqlite:${join(tmp.dir, 'default.db')}`;
    await threeEpochs(plain, []);
    const raw = openBetterSqlite(join(tmp.dir, 'default.db'));
    const stored = raw.prepare('SELECT layout FROM node_layout').get() as { layout: string };
    raw.close();
    assert.equal(stored.layout, 'versions', 'a new SQLite store keeps versions by default');
    const already = await akd(['layout', 'migrate', '--db', versions], { env: {} });
    assert.equal(already.code, 0, already.stderr);
    assert.match(already.stdout, /keeps its tree nodes as versions already/);

    const bad = await akd(
      [
        'init',
        '--db',
        `sqlite:${join(tmp.dir, 'x.db')}`,
        '--config',
        'whatsapp_v1',
        '--node-layout',
        'columns',
      ],
      { env },
    );
    assert.equal(bad.code, 2);
    assert.match(bad.stderr, /--node-layout: "columns" is not records or versions/);
    const memory = await akd(['layout', 'migrate', '--db', 'memory:'], { env: {} });
    assert.equal(memory.code, 2);
    assert.match(memory.stderr, /takes its layout when created/);
    const missing = await akd(['layout', 'migrate', '--db', `sqlite:${join(tmp.dir, 'none.db')}`], {
      env: {},
    });
    assert.equal(missing.code, 2);
    assert.match(missing.stderr, /no store at/);
  } finally {
    tmp.cleanup();
  }
});

test(
  'a PostgreSQL store of records moves to versions and serves the same proofs',
  { skip: POSTGRES_SKIP },
  async () => {
    const schema = `akd_cli_layout_${randomBytes(6).toString('hex')}`;
    const url = new URL(POSTGRES_URL!);
    url.searchParams.set('schema', schema);
    const db = url.toString();
    try {
      await threeEpochs(db, ['--node-layout', 'records']);
      const before = await proofs(db);
      const moved = await akd(['layout', 'migrate', '--db', db, '--chunk', '4'], { env: {} });
      assert.equal(moved.code, 0, moved.stderr);
      assert.match(moved.stderr, /^layout: \d+ of about -?\d+ records copied$/m);
      assert.deepEqual(await proofs(db), before, 'the proofs of every label, byte for byte');
      const next = await akd(['publish', '--db', db, '-'], { env, stdin: epoch(['zoe'], 4) });
      assert.equal(next.code, 0, next.stderr);
    } finally {
      const client = new pg.Client({ connectionString: POSTGRES_URL });
      await client.connect();
      await client.query(`DROP SCHEMA IF EXISTS "${schema}" CASCADE`);
      await client.end();
    }
  },
);
