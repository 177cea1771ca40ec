import { test } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync, readFileSync, readdirSync, statSync } from 'node:fs';
import { randomBytes } from 'node:crypto';
import { join } from 'node:path';
import pg from 'pg';
import { POSTGRES_SKIP, POSTGRES_URL } from '../../../test/support/postgres-url.js';
import { openBetterSqlite } from '@akd-ts/storage-sqlite';
import { akd, tempDir } from './helpers.js';

const KEY = 'c9afa9d845ba75166b5c215767b1d6934e50c3db36e89b127b8a622b120f6721';
const PUBLIC_KEY = 'f6ec49c8085f4d4be69db8e248bf11ce288026f5b8c5f6599defe58303d0702d';

let counter = 0;
/** A fresh shared in-memory store name per test, so commands of one test see one store. */
const store = () => `memory:cli-test-${++counter}`;
const jsonl = (rows: object[]) => rows.map((r) => JSON.stringify(r)).join('\n') + '\n';

test('init, publish, epoch, lookup, history and audit work together, and their proofs verify', async () => {
  const db = store();
  const env = { AKD_VRF_KEY: KEY };
  const init = await akd(['init', '--db', db, '--config', 'whatsapp_v1', '--json'], { env });
  assert.equal(init.code, 0, init.stderr);
  const info = JSON.parse(init.stdout);
  assert.equal(info.publicKey, PUBLIC_KEY);
  assert.equal(info.epoch, 0);
  assert.equal(info.keyFile, null);

  const first = await akd(['publish', '--db', db, '-'], {
    env,
    stdin: jsonl([{ label: 'hello', value: 'world' }]),
  });
  assert.equal(first.code, 0, first.stderr);
  assert.match(first.stdout, /published epoch 1: 1 update in/);
  // spec 3.5: the root after publishing hello -> world
  assert.match(first.stdout, /b8d31596e8603a24f3a94bf42ecdcd8f87aee41f798220eb37ea02b4365e7bb4/);
  const second = await akd(['publish', '--db', db, '--json', '-'], {
    env,
    stdin: jsonl([
      { label: 'hello', value: 'world2' },
      { labelHex: '6869', valueHex: '7468657265' },
    ]),
  });
  assert.equal(second.code, 0, second.stderr);
  const published = JSON.parse(second.stdout);
  assert.equal(published.epoch, 2);
  assert.equal(
    published.rootHash,
    '565a0cf104305cddd624f7fd1cd8799148f2dd94c1ad6d1229118e78279c25ec',
  );
  const same = await akd(['publish', '--db', db, '-'], {
    env,
    stdin: jsonl([{ label: 'hi', value: 'there' }]),
  });
  assert.match(same.stdout, /no change/);

  const epoch = await akd(['epoch', '--db', db], { env });
  assert.match(epoch.stdout, /^epoch: 2\nroot hash: 565a0cf1/);
  assert.match(epoch.stdout, new RegExp(`public key: ${PUBLIC_KEY}`));
  // past roots, for akd verify audit --hashes: epoch 1's is the root its publish printed
  const past = await akd(['epoch', '--db', db, '--epoch', '1'], { env });
  assert.match(past.stdout, /^epoch: 1 \(the latest is 2\)\nroot hash: b8d31596e860/);
  const pastJson = JSON.parse((await akd(['epoch', '--db', db, '--epoch', '1', '--json'])).stdout);
  assert.deepEqual([pastJson.epoch, pastJson.latestEpoch], [1, 2]);
  const future = await akd(['epoch', '--db', db, '--epoch', '3'], { env });
  assert.equal(future.code, 1);
  assert.match(future.stderr, /DIRECTORY_INVALID_EPOCH: epoch 3 is not published/);
  assert.equal((await akd(['epoch', '--db', db, '--epoch', 'one'], { env })).code, 2);

  const tmp = tempDir();
  try {
    const out = join(tmp.dir, 'lookup.bin');
    const lookup = await akd(['lookup', '--db', db, '--label', 'hi', '--out', out], { env });
    assert.equal(lookup.code, 0, lookup.stderr);
    assert.match(
      lookup.stdout,
      /^lookup verified: label hi \(whatsapp_v1\)\nchecked against root hash 565a0cf1[0-9a-f]{56}, the store's root of epoch 2\n/,
    );
    assert.match(lookup.stdout, /value: there/);
    const verified = await akd([
      'verify',
      'lookup',
      '--config',
      'whatsapp_v1',
      '--public-key',
      PUBLIC_KEY,
      '--root',
      '565a0cf104305cddd624f7fd1cd8799148f2dd94c1ad6d1229118e78279c25ec',
      '--epoch',
      '2',
      '--label',
      'hi',
      '--proof',
      out,
    ]);
    assert.equal(verified.code, 0, verified.stderr);
    assert.equal(readFileSync(out).length, 1252, 'spec 10.5: lookup("hi") is 1252 bytes');

    const history = await akd(['history', '--db', db, '--label', 'hello', '--json'], { env });
    assert.equal(history.code, 0, history.stderr);
    assert.deepEqual(
      JSON.parse(history.stdout).versions.map((v: { value: string }) => v.value),
      ['world2', 'world'],
    );
    const recent = await akd(['history', '--db', db, '--label', 'hello', '--most-recent', '1'], {
      env,
    });
    assert.match(recent.stdout, /1 version, newest first/);

    const auditFile = join(tmp.dir, 'audit.bin');
    const audit = await akd(['audit', '--db', db, '--from', '1', '--to', '2', '--out', auditFile], {
      env,
    });
    assert.equal(audit.code, 0, audit.stderr);
    assert.match(audit.stdout, /1 step, 3 inserted leaves/);
    const auditJson = await akd(['audit', '--db', db, '--from', '0', '--to', '2', '--json'], {
      env,
    });
    assert.equal(JSON.parse(auditJson.stdout).steps, 2);
    const checked = await akd([
      'verify',
      'audit',
      '--config',
      'whatsapp_v1',
      '--proof',
      auditFile,
      '--hashes',
      'b8d31596e8603a24f3a94bf42ecdcd8f87aee41f798220eb37ea02b4365e7bb4,565a0cf104305cddd624f7fd1cd8799148f2dd94c1ad6d1229118e78279c25ec',
    ]);
    assert.equal(checked.code, 0, checked.stderr);
  } finally {
    tmp.cleanup();
  }
});

test('init on a memory store keeps no key file and refuses to reinitialise', async () => {
  const tmp = tempDir();
  try {
    const keyFile = join(tmp.dir, 'akd.key');
    const db = `memory:keyfile-${++counter}`;
    const r = await akd([
      'init',
      '--db',
      db,
      '--config',
      'experimental',
      '--domain-label',
      'Mine',
      '--key-file',
      keyFile,
    ]);
    assert.equal(r.code, 0, r.stderr);
    assert.match(r.stdout, /experimental \(domain label Mine\)/);
    assert.equal(existsSync(keyFile), false, 'no key file for a memory store');
    const again = await akd([
      'init',
      '--db',
      db,
      '--config',
      'experimental',
      '--key-file',
      keyFile,
    ]);
    assert.equal(again.code, 2);
    assert.match(again.stderr, /already holds a directory/);
  } finally {
    tmp.cleanup();
  }
});

test('commands on a store refuse a missing store, a foreign key and bad input', async () => {
  const db = store();
  const env = { AKD_VRF_KEY: KEY };
  const uninitialised = await akd(['epoch', '--db', db], { env });
  assert.equal(uninitialised.code, 1);
  assert.match(uninitialised.stderr, /DIRECTORY_READ_ONLY: .*run akd init/);
  await akd(['init', '--db', db, '--config', 'whatsapp_v1'], { env });
  await akd(['publish', '--db', db, '-'], { env, stdin: '{"label":"a","value":"b"}\n' });
  // a command that publishes checks the key against the directory's public key
  const foreign = await akd(['publish', '--db', db, '-'], {
    env: { AKD_VRF_KEY: '11'.repeat(32) },
    stdin: '{"label":"a","value":"c"}\n',
  });
  assert.equal(foreign.code, 1);
  assert.match(foreign.stderr, /VRF_INVALID_SECRET_KEY/);
  const badKey = await akd(['publish', '--db', db, '-'], {
    env: { AKD_VRF_KEY: 'zz' },
    stdin: '{"label":"a","value":"c"}\n',
  });
  assert.equal(badKey.code, 2);
  assert.match(badKey.stderr, /^usage error: AKD_VRF_KEY: expected a 32-byte VRF secret key/);
  assert.doesNotMatch(badKey.stderr, /zz/, 'a secret is never echoed');
  // proofs never read the key: lookups and histories take no key option at all
  const noKey = await akd(['lookup', '--db', db, '--label', 'a', '--key-file', '/nonexistent/k']);
  assert.equal(noKey.code, 2);
  assert.match(noKey.stderr, /unknown option '--key-file'/);
  const badEnvKey = await akd(['history', '--db', db, '--label', 'a'], {
    env: { AKD_VRF_KEY: 'zz' },
  });
  assert.equal(badEnvKey.code, 0, 'AKD_VRF_KEY is never read by a proof command');
  const noPublishKey = await akd(['publish', '--db', db, '--key-file', '/nonexistent/k', '-'], {
    stdin: '{"label":"a","value":"c"}',
  });
  assert.equal(noPublishKey.code, 2);
  assert.match(
    noPublishKey.stderr,
    /the VRF secret key is needed: publishing computes each new label's VRF with it/,
  );
  const badLine = await akd(['publish', '--db', db, '-'], {
    env,
    stdin: '{"label":"a","value":"b"}\nnot json\n',
  });
  assert.equal(badLine.code, 2);
  assert.match(badLine.stderr, /line 2: not valid JSON/);
  const both = await akd(['publish', '--db', db, '-'], {
    env,
    stdin: '{"label":"a","labelHex":"61","value":"b"}',
  });
  assert.match(both.stderr, /line 1: give either "label" or "labelHex"/);
  const missing = await akd(['publish', '--db', db, '-'], { env, stdin: '{"label":"a"}' });
  assert.match(missing.stderr, /line 1: "value" \(text\) or "valueHex"/);
  const array = await akd(['publish', '--db', db, '-'], { env, stdin: '[1,2]' });
  assert.match(array.stderr, /line 1: expected an object/);
  const unknown = await akd(['lookup', '--db', db, '--label', 'nobody'], { env });
  assert.equal(unknown.code, 1);
  assert.match(unknown.stderr, /DIRECTORY_LABEL_NOT_FOUND: label "nobody" has no value at epoch/);
  const range = await akd(['audit', '--db', db, '--from', '3', '--to', '9'], { env });
  assert.equal(range.code, 1);
  assert.match(range.stderr, /DIRECTORY_INVALID_EPOCH/);
  const noRange = await akd(['audit', '--db', db], { env });
  assert.equal(noRange.code, 2);
  const badStore = await akd(['epoch', '--db', 'mysql://x'], { env });
  assert.equal(badStore.code, 2);
  assert.match(badStore.stderr, /unknown store/);
  const emptySqlite = await akd(['epoch', '--db', 'sqlite:'], { env });
  assert.equal(emptySqlite.code, 2);
  const badOut = await akd(
    ['lookup', '--db', db, '--label', 'nobody', '--out', '/nonexistent/dir/x'],
    { env },
  );
  assert.equal(badOut.code, 1, 'the lookup fails before writing');
});

test('publish names the lines of repeated labels and of updates the directory would refuse, and publishes nothing', async () => {
  const db = store();
  const env = { AKD_VRF_KEY: KEY };
  await akd(['init', '--db', db, '--config', 'whatsapp_v1'], { env });
  const publish = (stdin: string) => akd(['publish', '--db', db, '-'], { env, stdin });
  const dup = await publish(
    jsonl([
      { label: 'alice', value: '1' },
      { label: 'bob', value: '1' },
      { labelHex: '616c696365', value: '2' },
    ]),
  );
  assert.equal(dup.code, 1);
  assert.equal(
    dup.stderr,
    'error: DIRECTORY_DUPLICATE_LABEL: lines 1 and 3: label "alice" appears twice; a publish takes each label once\n',
  );
  const rawDup = await publish(
    jsonl([
      { labelHex: '00ff', value: '1' },
      { labelHex: '00FF', value: '2' },
    ]),
  );
  assert.match(rawDup.stderr, /lines 1 and 2: label hex:00ff appears twice/);
  const long = await publish(
    jsonl([
      { label: 'a', value: '1' },
      { label: 'x'.repeat(257), value: '1' },
    ]),
  );
  assert.equal(long.code, 1);
  assert.match(
    long.stderr,
    /^error: DIRECTORY_LIMIT: line 2: a label must have 1 to 256 bytes, not 257/,
  );
  const empty = await publish(
    jsonl(
      [{ label: 'a', value: '1' }, {}, { label: 'carol', value: '' }].filter((r) => 'label' in r),
    ),
  );
  assert.match(
    empty.stderr,
    /^error: DIRECTORY_LIMIT: line 2: the value of label "carol" is empty/,
  );
  const big = await publish(jsonl([{ label: 'dave', valueHex: '00'.repeat(65_537) }]));
  assert.match(big.stderr, /line 1: the value of label "dave" has 65537 bytes, more than 65536/);
  assert.match(
    (await akd(['epoch', '--db', db], { env })).stdout,
    /^epoch: 0\n/,
    'nothing published',
  );
});

test('a publish whose VRF proofs cannot be stored says its epoch is published; the next writer stores them', async () => {
  const tmp = tempDir();
  try {
    const file = join(tmp.dir, 'lag.db');
    const db = `sqlite:${file}`;
    const env = { AKD_VRF_KEY: KEY };
    const publish = (value: string) =>
      akd(['publish', '--db', db, '-'], { env, stdin: jsonl([{ label: 'hello', value }]) });
    assert.equal((await akd(['init', '--db', db, '--config', 'whatsapp_v1'], { env })).code, 0);
    assert.equal((await publish('a')).code, 0);
    // the store refuses proof records from now on: the epoch commits, its proofs do not
    const raw = openBetterSqlite(file);
    raw.exec(
      "CREATE TRIGGER no_proofs BEFORE INSERT ON vrf_proof_rows BEGIN SELECT RAISE(ABORT, 'disk says no'); END",
    );
    const failed = await publish('b');
    assert.equal(failed.code, 1);
    assert.match(
      failed.stderr,
      /epoch 2 is published, but its VRF proofs could not be stored \(servers without the key serve the epoch before until the next writer stores them\): .*disk says no/,
    );
    const lagging = await akd(['epoch', '--db', db]);
    assert.match(lagging.stdout, /^epoch: 2\n/);
    assert.match(
      lagging.stdout,
      /\nproofs: served at epoch 1 until the VRF proofs of epoch 2 are stored\n$/,
    );
    const json = JSON.parse((await akd(['epoch', '--db', db, '--json'])).stdout);
    assert.deepEqual([json.epoch, json.latestEpoch, json.servedEpoch], [2, 2, 1]);
    const lookup = await akd(['lookup', '--db', db, '--label', 'hello']);
    assert.equal(lookup.code, 0, lookup.stderr);
    assert.match(lookup.stdout, /the store's root of epoch 1\n/);
    assert.match(lookup.stdout, /value: a/);
    // the next writer stores what epoch 2 owes before anything else, even with nothing to add
    raw.exec('DROP TRIGGER no_proofs');
    raw.close();
    const empty = await akd(['publish', '--db', db, '--allow-empty', '-'], { env, stdin: '' });
    assert.equal(empty.code, 0, empty.stderr);
    const caughtUp = JSON.parse((await akd(['epoch', '--db', db, '--json'])).stdout);
    assert.equal(caughtUp.servedEpoch, 2);
    const now = await akd(['lookup', '--db', db, '--label', 'hello']);
    assert.match(now.stdout, /value: b/);
  } finally {
    tmp.cleanup();
  }
});

test('publish refuses empty input unless --allow-empty', async () => {
  const db = store();
  const env = { AKD_VRF_KEY: KEY };
  await akd(['init', '--db', db, '--config', 'whatsapp_v1'], { env });
  for (const stdin of ['', '\n\n', '  \r\n\t\n']) {
    const r = await akd(['publish', '--db', db, '-'], { env, stdin });
    assert.equal(r.code, 2, JSON.stringify(stdin));
    assert.match(
      r.stderr,
      /^usage error: <updates>: stdin holds no update \(it is empty or blank\); pass --allow-empty/,
    );
  }
  const tmp = tempDir();
  try {
    const file = tmp.write('empty.jsonl', new Uint8Array(0));
    const r = await akd(['publish', '--db', db, file], { env });
    assert.equal(r.code, 2);
    assert.match(r.stderr, /<updates>: ".*empty\.jsonl" holds no update/);
  } finally {
    tmp.cleanup();
  }
  const allowed = await akd(['publish', '--db', db, '--allow-empty', '-'], { env, stdin: '' });
  assert.equal(allowed.code, 0, allowed.stderr);
  assert.match(allowed.stdout, /^no change: .*epoch stays 0/);
});

test('text must be well-formed: lone surrogates and invalid UTF-8 are refused by line or option, and nothing is published', async () => {
  const db = store();
  const env = { AKD_VRF_KEY: KEY };
  await akd(['init', '--db', db, '--config', 'whatsapp_v1'], { env });
  const publish = (stdin: string | Uint8Array) => akd(['publish', '--db', db, '-'], { env, stdin });
  for (const [input, line, what] of [
    ['{"label":"ok","value":"1"}\n{"label":"\\ud800","value":"1"}\n', 2, 'label'],
    ['{"label":"\\udfff","value":"1"}', 1, 'label'],
    ['{"label":"x","value":"a\\ud83d"}', 1, 'value'],
  ] as const) {
    const r = await publish(input);
    assert.equal(r.code, 2, input);
    assert.equal(
      r.stderr,
      `usage error: line ${line}: "${what}" holds a lone surrogate, which is not text; write bytes as "${what}Hex"\n(see 'akd publish --help')\n`,
    );
  }
  const invalid = Buffer.concat([
    Buffer.from('{"label":"a","value":"1"}\n\n{"label":"'),
    Buffer.from([0xff]),
    Buffer.from('","value":"1"}\n'),
  ]);
  const bytes = await publish(new Uint8Array(invalid));
  assert.equal(bytes.code, 2);
  assert.match(bytes.stderr, /^usage error: line 3: not valid UTF-8 text\n/);
  // a well-formed pair and U+FFFD itself are text
  const fine = await publish('{"label":"\\ud83d\\ude00","value":"\\ufffd"}\n');
  assert.equal(fine.code, 0, fine.stderr);
  assert.match(
    (await akd(['lookup', '--db', db, '--label', '\u{1f600}'], { env })).stdout,
    /value: \ufffd/,
  );
  // in-process arguments with a lone surrogate are refused, naming the option
  for (const args of [
    ['lookup', '--db', db, '--label', '\ud800'],
    ['lookup', '--db', db, '--label=\udc00x'],
  ]) {
    const r = await akd(args, { env });
    assert.equal(r.code, 2);
    assert.match(
      r.stderr,
      /^usage error: --label: the argument holds a lone surrogate, which is not text; write bytes as hex:<hex>/,
    );
  }
  assert.match(
    (await akd(['epoch', '--db', db], { env })).stdout,
    /^epoch: 1\n/,
    'only the good publish',
  );
});

test('commands on public data need no VRF secret key, and a mistyped store is never created', async () => {
  const tmp = tempDir();
  try {
    const path = join(tmp.dir, 'akd.db');
    const db = `sqlite:${path}`;
    const env = { AKD_VRF_KEY: KEY };
    await akd(['init', '--db', db, '--config', 'whatsapp_v1'], { env });
    for (const e of [1, 2]) {
      await akd(['publish', '--db', db, '-'], {
        env,
        stdin: jsonl([{ label: `u${e}`, value: 'v' }]),
      });
    }
    // no AKD_VRF_KEY, and no ./akd.key where the key file would be looked up
    const noKey = { AKD_VRF_KEY_FILE: join(tmp.dir, 'no-such.key') };
    const epoch = await akd(['epoch', '--db', db, '--json'], { env: noKey });
    assert.equal(epoch.code, 0, epoch.stderr);
    assert.equal(JSON.parse(epoch.stdout).epoch, 2);
    const audit = await akd(['audit', '--db', db, '--from', '0', '--to', '2'], { env: noKey });
    assert.equal(audit.code, 0, audit.stderr);
    const exported = await akd(['audit', 'export', '--db', db, '--out', join(tmp.dir, 'blobs')], {
      env: noKey,
    });
    assert.equal(exported.code, 0, exported.stderr);
    assert.match(exported.stdout, /exported 2 audit blobs/);
    // they take no key option at all, and say so in their help
    const withKey = await akd(['epoch', '--db', db, '--key-file', 'x'], { env: noKey });
    assert.equal(withKey.code, 2);
    assert.match(withKey.stderr, /unknown option '--key-file'/);
    for (const cmd of [['epoch'], ['audit'], ['audit', 'export']]) {
      assert.match(
        (await akd([...cmd, '--help'])).stdout,
        /Reads public data only: no VRF secret key is needed/,
      );
    }
    assert.match(
      (await akd(['lookup', '--help'])).stdout,
      /The VRF proofs come from the store, where the writer put them/,
    );
    // lookups and histories do not need it either: they serve the proofs stored at publish
    const lookup = await akd(['lookup', '--db', db, '--label', 'u1'], { env: noKey });
    assert.equal(lookup.code, 0, lookup.stderr);
    assert.match(lookup.stdout, /^lookup verified: label u1/);
    const history = await akd(['history', '--db', db, '--label', 'u1'], { env: noKey });
    assert.equal(history.code, 0, history.stderr);

    const before = readdirSync(tmp.dir).sort();
    for (const args of [
      ['epoch', '--db', `sqlite:${join(tmp.dir, 'akd.dbb')}`],
      ['audit', '--db', `sqlite:${join(tmp.dir, 'typo.db')}`, '--from', '0', '--to', '1'],
      [
        'audit',
        'export',
        '--db',
        `sqlite:${join(tmp.dir, 'typo.db')}`,
        '--out',
        join(tmp.dir, 'o'),
      ],
      ['lookup', '--db', `sqlite:${join(tmp.dir, 'typo.db')}`, '--label', 'u1'],
      ['publish', '--db', `sqlite:${join(tmp.dir, 'typo.db')}`, '-'],
    ]) {
      const r = await akd(args, { env, stdin: '{"label":"u1","value":"v"}\n' });
      assert.equal(r.code, 2, args.join(' '));
      assert.match(
        r.stderr,
        /^usage error: --db: no store at ".*" \(akd init creates one; check the path\)/,
      );
    }
    assert.deepEqual(readdirSync(tmp.dir).sort(), before, 'no file was created');
  } finally {
    tmp.cleanup();
  }
});

test('on SQLite the directory persists between commands and the key file is private', async () => {
  const tmp = tempDir();
  try {
    const db = `sqlite:${join(tmp.dir, 'akd.db')}`;
    const keyFile = join(tmp.dir, 'akd.key');
    const init = await akd(['init', '--db', db, '--config', 'experimental', '--key-file', keyFile]);
    assert.equal(init.code, 0, init.stderr);
    assert.match(init.stdout, /VRF key: generated into/);
    assert.equal(statSync(keyFile).mode & 0o777, 0o600);
    const again = await akd([
      'init',
      '--db',
      `sqlite:${join(tmp.dir, 'other.db')}`,
      '--config',
      'experimental',
      '--key-file',
      keyFile,
    ]);
    assert.equal(again.code, 0, again.stderr);
    assert.match(again.stdout, /reused from/);
    const other = await akd([
      'init',
      '--db',
      `sqlite:${join(tmp.dir, 'third.db')}`,
      '--config',
      'experimental',
      '--key-file',
      keyFile,
      '--vrf-key',
      KEY,
    ]);
    assert.equal(other.code, 2, 'a different key never replaces a key file');
    assert.match(other.stderr, /already holds another key/);

    const published = await akd(['publish', '--db', db, '--key-file', keyFile, '-'], {
      stdin: jsonl([{ label: 'carol', value: 'c1' }]),
    });
    assert.equal(published.code, 0, published.stderr);
    const epoch = await akd(['epoch', '--db', db, '--json']);
    assert.equal(JSON.parse(epoch.stdout).epoch, 1);
    assert.equal(JSON.parse(epoch.stdout).configuration, 'experimental');
    const lookup = await akd(['lookup', '--db', db, '--label', 'carol']);
    assert.match(lookup.stdout, /value: c1/);
  } finally {
    tmp.cleanup();
  }
});

test('publish takes a number of VRF worker threads', async () => {
  const db = store();
  const env = { AKD_VRF_KEY: KEY };
  await akd(['init', '--db', db, '--config', 'whatsapp_v1'], { env });
  const bad = await akd(['publish', '--db', db, '--vrf-threads', 'many', '-'], { env, stdin: '' });
  assert.equal(bad.code, 2);
  assert.match(bad.stderr, /--vrf-threads: expected a number of threads/);
  const rows = Array.from({ length: 80 }, (_, i) => ({ label: `t${i}`, value: 'v' }));
  const two = await akd(['publish', '--db', db, '--vrf-threads', '2', '--json', '-'], {
    env,
    stdin: jsonl(rows),
  });
  assert.equal(two.code, 0, two.stderr);
  assert.equal(JSON.parse(two.stdout).epoch, 1);
});

test(
  'over PostgreSQL a publish to a mistyped schema is refused and creates no schema',
  { skip: POSTGRES_SKIP },
  async () => {
    const schema = `akd_test_typo_${randomBytes(5).toString('hex')}`;
    const publish = await akd(['publish', '--db', `${POSTGRES_URL}?schema=${schema}`, '-'], {
      env: { AKD_VRF_KEY: KEY },
      stdin: jsonl([{ label: 'a', value: 'b' }]),
    });
    assert.equal(publish.code, 1);
    assert.match(publish.stderr, /STORAGE_SCHEMA: .*has no akd tables/);
    const client = new pg.Client({ connectionString: POSTGRES_URL });
    await client.connect();
    try {
      const { rows } = await client.query(
        'SELECT 1 FROM information_schema.schemata WHERE schema_name = $1',
        [schema],
      );
      assert.equal(rows.length, 0, 'no schema was created');
    } finally {
      await client.end();
    }
  },
);
