import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import {
  cpSync,
  existsSync,
  mkdirSync,
  readFileSync,
  readdirSync,
  rmSync,
  writeFileSync,
} from 'node:fs';
import { join } from 'node:path';
import { Readable } from 'node:stream';
import {
  decodeSingleAppendOnlyProof,
  encodeSingleAppendOnlyProof,
  fromHex,
  parseAuditBlobName,
  rootHashOfElements,
  encodeSignatureMessage,
  parseWitnessSignature,
  toHex,
  verifyWitnessSignature,
  WhatsAppV1Configuration,
  witnessPublicKey,
  type AzksElement,
} from '@akd-ts/core';
import { run } from '../src/program.js';
import { akd, tempDir } from './helpers.js';

const KEY = 'c9afa9d845ba75166b5c215767b1d6934e50c3db36e89b127b8a622b120f6721';
const env = { AKD_VRF_KEY: KEY };
const DB = 'memory:audit-blobs-cli';
const EPOCHS = 50;
const tmp = tempDir();
const roots: string[] = [];

async function publish(e: number): Promise<void> {
  const updates = [
    { label: `user-${e}`, value: `key-${e}` },
    { label: e % 2 === 0 ? 'alice' : 'bob', value: `v${e}` },
  ];
  const r = await akd(['publish', '--db', DB, '--json', '-'], {
    env,
    stdin: updates.map((u) => JSON.stringify(u)).join('\n'),
  });
  assert.equal(r.code, 0, r.stderr);
  roots[e] = JSON.parse(r.stdout).rootHash;
}

/** A fresh copy of the 50-epoch export to damage. */
function copy(name: string, from = 'end'): string {
  const dir = join(tmp.dir, name);
  cpSync(join(tmp.dir, from), dir, { recursive: true });
  return dir;
}

/** The single blob file of `epoch` in `dir`. */
function blobPath(dir: string, epoch: number): string {
  const prev = readdirSync(join(dir, String(epoch)))[0]!;
  const cur = readdirSync(join(dir, String(epoch), prev))[0]!;
  return join(dir, String(epoch), prev, cur);
}

const verify = (...args: string[]) => akd(['audit', 'verify', ...args]);

before(async () => {
  const init = await akd(['init', '--db', DB, '--config', 'whatsapp_v1', '--json'], { env });
  assert.equal(init.code, 0, init.stderr);
  roots[0] = JSON.parse(init.stdout).rootHash;
  for (let e = 1; e <= 30; e++) await publish(e);
  // the first 30 epochs are exported now, the rest later (a resumed audit)
  const early = await akd(['audit', 'export', '--db', DB, '--out', join(tmp.dir, 'end')], { env });
  assert.equal(early.code, 0, early.stderr);
  for (let e = 31; e <= EPOCHS; e++) await publish(e);
});
after(tmp.cleanup);

test('export writes one blob per epoch, named <end epoch>/<previous root>/<current root>, and an index', async () => {
  const out = join(tmp.dir, 'end');
  const r = await akd(['audit', 'export', '--db', DB, '--out', out, '--from', '30'], { env });
  assert.equal(r.code, 0, r.stderr);
  assert.match(
    r.stdout,
    /^exported 20 audit blobs \(epochs 30 -> 50, whatsapp_v1, named by their end epoch, [0-9.]+ KiB\) to /,
  );
  assert.match(r.stdout, new RegExp(`root hash at epoch 50: ${roots[50]}`));
  const epochs = readdirSync(out).filter((n) => n !== 'index.json');
  assert.equal(epochs.length, EPOCHS);
  for (let e = 1; e <= EPOCHS; e++) {
    const name = parseAuditBlobName(blobPath(out, e).slice(out.length + 1));
    assert.equal(toHex(name.previousHash), roots[e - 1]);
    assert.equal(toHex(name.currentHash), roots[e]);
  }
  const index = JSON.parse(readFileSync(join(out, 'index.json'), 'utf8'));
  assert.deepEqual(
    [index.format, index.naming, index.configuration, index.from, index.to, index.rootHash],
    ['akd-audit-blobs', 'end', 'whatsapp_v1', '0', '50', roots[50]],
  );
  // start naming, as JSON, to another folder
  const json = await akd(
    ['audit', 'export', '--db', DB, '--out', join(tmp.dir, 'start'), '--naming', 'start', '--json'],
    { env },
  );
  assert.equal(json.code, 0, json.stderr);
  const summary = JSON.parse(json.stdout);
  assert.deepEqual(
    [summary.exported, summary.from, summary.to, summary.naming],
    [50, 0, 50, 'start'],
  );
  assert.ok(existsSync(join(tmp.dir, 'start', '0')));
  assert.ok(!existsSync(join(tmp.dir, 'start', '50')));
});

test('export refuses ranges outside the history and a folder of another naming', async () => {
  const beyond = await akd(
    ['audit', 'export', '--db', DB, '--out', join(tmp.dir, 'x'), '--to', '51'],
    { env },
  );
  assert.equal(beyond.code, 1);
  assert.match(beyond.stderr, /^error: DIRECTORY_INVALID_EPOCH: /);
  const empty = await akd(
    ['audit', 'export', '--db', DB, '--out', join(tmp.dir, 'x'), '--from', '9', '--to', '9'],
    { env },
  );
  assert.equal(empty.code, 2);
  assert.match(empty.stderr, /nothing to export from epoch 9 to 9/);
  const mixed = await akd(
    [
      'audit',
      'export',
      '--db',
      DB,
      '--out',
      join(tmp.dir, 'end'),
      '--naming',
      'start',
      '--to',
      '2',
    ],
    { env },
  );
  assert.equal(mixed.code, 2);
  assert.match(mixed.stderr, /holds blobs of whatsapp_v1 named by their end epoch/);
  mkdirSync(join(tmp.dir, 'bad-index'));
  writeFileSync(join(tmp.dir, 'bad-index', 'index.json'), '{');
  const bad = await akd(
    ['audit', 'export', '--db', DB, '--out', join(tmp.dir, 'bad-index'), '--to', '2'],
    { env },
  );
  assert.equal(bad.code, 2);
  assert.match(bad.stderr, /index.json" is not JSON/);
  // the parent command keeps its own options
  const parent = await akd(['audit', '--db', DB, '--from', '1', '--to', '2'], { env });
  assert.equal(parent.code, 0, parent.stderr);
  assert.match(parent.stdout, /audit proof: epochs 1 -> 2/);
});

test('verify checks all 50 epochs of a folder as one chain from the empty tree', async () => {
  const r = await verify(join(tmp.dir, 'end'), '--progress-every', '10');
  assert.equal(r.code, 0, r.stderr);
  const lines = r.stdout.trim().split('\n');
  assert.equal(lines.filter((l) => l.startsWith('verified through epoch')).length, 5);
  assert.match(r.stdout, /verified through epoch 10: 10 blobs \(/);
  assert.match(r.stdout, /\(whatsapp_v1, blobs named by their end epoch\)/);
  assert.match(r.stdout, /verified 50 blobs: epochs 0 -> 50 in /);
  assert.match(r.stdout, /anchored at the empty tree of epoch 0/);
  assert.match(r.stdout, new RegExp(`head: epoch 50, root hash ${roots[50]}`));
  assert.equal(r.stderr, '');
});

test('both namings are detected; a pinned naming the blobs do not use fails with AUDIT_BLOB_EPOCH', async () => {
  const start = await verify(join(tmp.dir, 'start'), '--json', '--progress-every', '25');
  assert.equal(start.code, 0, start.stderr);
  const lines = start.stdout
    .trim()
    .split('\n')
    .map((l) => JSON.parse(l));
  assert.deepEqual(
    lines.map((l) => l.event),
    ['progress', 'progress', 'summary'],
  );
  const summary = lines[2];
  assert.deepEqual(
    [
      summary.ok,
      summary.naming,
      summary.verified,
      summary.startEpoch,
      summary.epoch,
      summary.rootHash,
      summary.anchor,
    ],
    [true, 'start', 50, 0, 50, roots[50], 'genesis'],
  );
  const pinned = await verify(join(tmp.dir, 'start'), '--naming', 'end');
  assert.equal(pinned.code, 1);
  assert.match(
    pinned.stderr,
    /^error: AUDIT_BLOB_EPOCH: blob 0\/[0-9a-f]{8}\.\.\.\/[0-9a-f]{8}\.\.\.: the blob is named by its start epoch: it verifies as the step 0 -> 1/,
  );
  assert.match(pinned.stdout, /no blob verified\nFAILED: AUDIT_BLOB_EPOCH/);
  const other = await verify(join(tmp.dir, 'end'), '--naming', 'start');
  assert.equal(other.code, 1);
  assert.match(other.stderr, /AUDIT_BLOB_EPOCH: .*named by its end epoch/);
});

test('a state file makes a rerun resume, and catches a history rewritten under it', async () => {
  const dir = copy('resume');
  for (let e = 31; e <= EPOCHS; e++) rmSync(join(dir, String(e)), { recursive: true });
  const state = join(tmp.dir, 'resume.state');
  const first = await verify(dir, '--state', state);
  assert.equal(first.code, 0, first.stderr);
  assert.match(first.stdout, /verified 30 blobs: epochs 0 -> 30/);
  const saved = JSON.parse(readFileSync(state, 'utf8'));
  assert.deepEqual(
    [saved.format, saved.epoch, saved.rootHash, saved.naming, saved.verified, saved.failure],
    ['akd-audit-state', '30', roots[30], 'end', 30, null],
  );
  // nothing new: verifies nothing, succeeds
  const again = await verify(dir, '--state', state);
  assert.equal(again.code, 0, again.stderr);
  assert.match(again.stdout, /verified 0 blobs in/);
  assert.match(again.stdout, /resumed from the state file at epoch 30/);
  // the rest of the history arrives
  cpSync(join(tmp.dir, 'end'), dir, { recursive: true });
  const resumed = await verify(dir, '--state', state);
  assert.equal(resumed.code, 0, resumed.stderr);
  assert.match(resumed.stdout, /verified 20 blobs: epochs 30 -> 50/);
  assert.equal(JSON.parse(readFileSync(state, 'utf8')).verified, 50);
  // a state that remembers another root at its epoch: the served history forked
  const forked = join(tmp.dir, 'forked.state');
  writeFileSync(forked, JSON.stringify({ ...saved, rootHash: roots[29] }));
  const fork = await verify(dir, '--state', forked);
  assert.equal(fork.code, 1);
  assert.match(fork.stderr, /^error: AUDIT_CHAIN_BROKEN: /);
  assert.equal(JSON.parse(readFileSync(forked, 'utf8')).failure.code, 'AUDIT_CHAIN_BROKEN');
  // a state for another configuration, or with a pinned naming that contradicts it
  const cfg = await verify(dir, '--state', state, '--config', 'experimental');
  assert.equal(cfg.code, 2);
  assert.match(
    cfg.stderr,
    /the state file is for whatsapp_v1, not experimental \(domain label ExampleLabel\)/,
  );
  const naming = await verify(dir, '--state', state, '--naming', 'start');
  assert.equal(naming.code, 2);
  assert.match(naming.stderr, /named by their end epoch/);
  const behind = await verify(dir, '--state', state, '--trust', `60:${roots[1]}`);
  assert.equal(behind.code, 2);
  const other = await verify(dir, '--state', state, '--trust', `50:${roots[1]}`);
  assert.equal(other.code, 2);
  assert.match(other.stderr, /another root for epoch 50/);
  assert.equal((await verify(dir, '--state', state, '--trust', `50:${roots[50]}`)).code, 0);
});

test('--trust anchors the chain at a root checked out of band', async () => {
  const ok = await verify(join(tmp.dir, 'end'), '--trust', `20:${roots[20]}`);
  assert.equal(ok.code, 0, ok.stderr);
  assert.match(ok.stdout, /verified 30 blobs: epochs 20 -> 50/);
  assert.match(ok.stdout, /anchored at the trusted root of epoch 20 \(--trust\)/);
  const wrong = await verify(join(tmp.dir, 'end'), '--trust', `20:${roots[21]}`);
  assert.equal(wrong.code, 1);
  assert.match(wrong.stderr, /AUDIT_CHAIN_BROKEN/);
  const genesis = await verify(join(tmp.dir, 'end'), '--trust', `0:${roots[0]}`, '--json');
  assert.equal(JSON.parse(genesis.stdout).anchor, 'genesis');
  // without an anchor, a folder starting mid-history is trusted on first use, and says so
  const mid = copy('mid');
  for (let e = 1; e <= 10; e++) rmSync(join(mid, String(e)), { recursive: true });
  const tofu = await verify(mid);
  assert.equal(tofu.code, 0, tofu.stderr);
  assert.match(
    tofu.stdout,
    new RegExp(`trust on first use: check the root of epoch 10, ${roots[10]}, out of band`),
  );
});

test('a corrupted blob, a bad name, a missing epoch each fail with a clear error and their code', async () => {
  const corrupt = copy('corrupt');
  const victim = blobPath(corrupt, 17);
  writeFileSync(victim, readFileSync(victim).subarray(0, 100));
  const c = await verify(corrupt);
  assert.equal(c.code, 1);
  assert.match(c.stderr, /^error: DECODE_[A-Z_]+: blob 17\//);
  assert.match(c.stdout, /verified 16 blobs: epochs 0 -> 16/);
  assert.match(c.stdout, /FAILED at epoch 17: DECODE_/);

  const flipped = copy('flipped');
  const target = blobPath(flipped, 9);
  const bytes = readFileSync(target);
  bytes[bytes.length - 3]! ^= 0x01; // a bit of a hash inside the proof
  writeFileSync(target, bytes);
  const f = await verify(flipped);
  assert.equal(f.code, 1);
  assert.match(f.stderr, /^error: AUDIT_(START|END)_HASH_MISMATCH: blob 9\//);

  const stray = copy('stray');
  mkdirSync(join(stray, '7', 'zz'));
  writeFileSync(join(stray, '7', 'zz', 'yy'), 'x');
  const s = await verify(stray);
  assert.equal(s.code, 1);
  assert.match(
    s.stderr,
    /^error: AUDIT_BLOB_NAME: in .*: "7\/zz\/yy" is not an audit blob name: the previous hash is not 64 hex digits/,
  );
  const loose = copy('loose');
  writeFileSync(join(loose, 'notes.txt'), 'x');
  const l = await verify(loose);
  assert.equal(l.code, 1);
  assert.match(l.stderr, /AUDIT_BLOB_NAME: ".*notes.txt" is not a blob folder/);
  const shallow = copy('shallow');
  writeFileSync(join(shallow, '7', 'file'), 'x');
  assert.match((await verify(shallow)).stderr, /AUDIT_BLOB_NAME: ".*file" is not a folder/);
  const deep = copy('deep');
  mkdirSync(join(blobPath(deep, 7) + '-dir'));
  assert.match((await verify(deep)).stderr, /AUDIT_BLOB_NAME: ".*-dir" is not a file/);

  const missing = copy('missing');
  rmSync(join(missing, '20'), { recursive: true });
  const m = await verify(missing, '--state', join(tmp.dir, 'missing.state'));
  assert.equal(m.code, 1);
  assert.match(
    m.stderr,
    /^error: AUDIT_EPOCH_GAP: no blob for epoch 20, but the source holds one for epoch 21/,
  );
  assert.match(m.stdout, /verified 19 blobs: epochs 0 -> 19/);
  assert.equal(JSON.parse(readFileSync(join(tmp.dir, 'missing.state'), 'utf8')).epoch, '19');

  const large = copy('large');
  writeFileSync(blobPath(large, 5), Buffer.alloc(1024 * 1024 + 1));
  const g = await verify(large, '--max-blob-mb', '1');
  assert.equal(g.code, 1);
  assert.match(
    g.stderr,
    /^error: DECODE_INVALID_LENGTH: the blob at .*large\/5\/[0-9a-f]{64}\/[0-9a-f]{64} is over the limit of 1 MiB \(it is 1048577 bytes\); --max-blob-mb raises the limit\n$/,
  );
  assert.match(g.stdout, /verified 4 blobs: epochs 0 -> 4/);

  const twice = copy('twice');
  cpSync(join(tmp.dir, 'start', '12'), join(twice, '12'), { recursive: true });
  const t = await verify(twice);
  assert.equal(t.code, 1);
  assert.match(t.stderr, /AUDIT_CHAIN_BROKEN: the source holds 2 blobs named with epoch 12/);
});

test('blobs a malicious server would publish fail with their own codes', async () => {
  const config = new WhatsAppV1Configuration();
  const tamper = (
    name: string,
    epoch: number,
    change: (p: ReturnType<typeof decodeSingleAppendOnlyProof>) => Uint8Array | void,
  ) => {
    const dir = copy(name);
    const path = blobPath(dir, epoch);
    const proof = decodeSingleAppendOnlyProof(readFileSync(path));
    const newCurrent = change(proof);
    rmSync(path);
    const key = path.slice(dir.length + 1).split('/');
    const cur = newCurrent === undefined ? key[2]! : toHex(newCurrent);
    mkdirSync(join(dir, key[0]!, key[1]!), { recursive: true });
    writeFileSync(join(dir, key[0]!, key[1]!, cur), encodeSingleAppendOnlyProof(proof));
    return dir;
  };
  const bound = (e: AzksElement, epoch: bigint): AzksElement => ({
    label: e.label,
    value: config.hashLeafWithCommitment(e.value, epoch),
  });
  // an existing leaf re-inserted with another value: a duplicate label
  const replaced = tamper('replaced', 40, (p) => {
    const leaf = p.unchangedNodes.find((e) => e.label.len === 256)!;
    const evil = { label: leaf.label, value: new Uint8Array(32).fill(0xee) };
    p.inserted.push(evil);
    return rootHashOfElements(config, [
      ...p.unchangedNodes.filter((e) => e !== leaf),
      ...p.inserted.map((e) => bound(e, 40n)),
    ]);
  });
  const r = await verify(replaced);
  assert.equal(r.code, 1);
  assert.match(r.stderr, /AUDIT_MALFORMED_PROOF: blob 40\/.*appears twice/);
  // a leaf removed: the proof of the smaller tree cannot rebuild the old root
  const removed = tamper('removed', 40, (p) => {
    p.unchangedNodes.shift();
    return rootHashOfElements(config, [
      ...p.unchangedNodes,
      ...p.inserted.map((e) => bound(e, 40n)),
    ]);
  });
  assert.match((await verify(removed)).stderr, /AUDIT_START_HASH_MISMATCH: blob 40\//);
  // a nested label
  const nested = tamper('nested', 40, (p) => {
    p.unchangedNodes.push({ label: p.inserted[0]!.label.getPrefix(9), value: new Uint8Array(32) });
  });
  assert.match((await verify(nested)).stderr, /AUDIT_MALFORMED_PROOF: .*prefix of label/);
});

test("signed heads: each verified head is signed in Plexi's format, in the heads file and the state", async () => {
  const keyFile = join(tmp.dir, 'auditor.key');
  const secret = 'ab'.repeat(32);
  writeFileSync(keyFile, `${secret}\n`);
  const heads = join(tmp.dir, 'heads.jsonl');
  const state = join(tmp.dir, 'signed.state');
  const r = await verify(
    join(tmp.dir, 'end'),
    '--sign-key',
    keyFile,
    '--heads',
    heads,
    '--state',
    state,
    '--namespace',
    'test-log',
    '--until-epoch',
    '5',
  );
  assert.equal(r.code, 0, r.stderr);
  const publicKey = witnessPublicKey(fromHex(secret));
  assert.match(
    r.stdout,
    new RegExp(
      `signed head: epoch 5 by auditor key ${toHex(publicKey)} \\(Plexi ciphersuite 0x0001\\)`,
    ),
  );
  assert.doesNotMatch(r.stdout + r.stderr, new RegExp(secret));
  const lines = readFileSync(heads, 'utf8').trim().split('\n');
  assert.equal(lines.length, 5);
  lines.forEach((line, i) => {
    const json = JSON.parse(line);
    assert.equal(json.version, 1);
    assert.equal(json.key_id, publicKey[31]);
    const head = parseWitnessSignature(json);
    verifyWitnessSignature(head, publicKey);
    assert.equal(head.ciphersuite, 1);
    assert.equal(head.namespace, 'test-log');
    assert.equal(head.epoch, BigInt(i + 1));
    assert.equal(toHex(head.digest), roots[i + 1]);
  });
  const saved = JSON.parse(readFileSync(state, 'utf8'));
  verifyWitnessSignature(parseWitnessSignature(saved.signedHead), publicKey);
  const json = await verify(
    join(tmp.dir, 'end'),
    '--sign-key',
    keyFile,
    '--ciphersuite',
    '0x0002',
    '--heads',
    join(tmp.dir, 'heads-bincode.jsonl'),
    '--json',
    '--until-epoch',
    '2',
  );
  const summary = JSON.parse(json.stdout.trim().split('\n').pop()!);
  assert.equal(summary.stopped, 'until-epoch');
  assert.equal(summary.signedHead.publicKey, toHex(publicKey));
  assert.equal(summary.signedHead.ciphersuite, 2);
  const bincode = readFileSync(join(tmp.dir, 'heads-bincode.jsonl'), 'utf8').trim().split('\n');
  const last = parseWitnessSignature(JSON.parse(bincode.pop()!));
  verifyWitnessSignature(last, publicKey);
  assert.equal(last.ciphersuite, 2);
  // the bincode layout: le32(2), then the namespace with its u64 length
  assert.equal(toHex(last.serializedMessage.subarray(0, 4)), '02000000');
  assert.deepEqual(last.serializedMessage, encodeSignatureMessage(last));
  const badSuite = await verify(join(tmp.dir, 'end'), '--sign-key', keyFile, '--ciphersuite', '3');
  assert.equal(badSuite.code, 2);
  assert.match(
    badSuite.stderr,
    /--ciphersuite: expected 0x0001 \(protobuf\) or 0x0002 \(bincode\)/,
  );
  // bad keys are usage errors that never echo the file
  writeFileSync(keyFile, 'not a key');
  const bad = await verify(join(tmp.dir, 'end'), '--sign-key', keyFile);
  assert.equal(bad.code, 2);
  assert.doesNotMatch(bad.stderr, /not a key/);
  assert.equal((await verify(join(tmp.dir, 'end'), '--sign-key', join(tmp.dir, 'nope'))).code, 2);
  assert.equal((await verify(join(tmp.dir, 'end'), '--heads', heads)).code, 2);
});

test('usage errors exit 2', async () => {
  const dir = join(tmp.dir, 'end');
  const cases: [string[], RegExp][] = [
    [[join(tmp.dir, 'nope')], /no such folder/],
    [[join(dir, 'index.json')], /is not a folder/],
    [['http://[bad'], /not a valid URL/],
    [[dir, '--trust', '5'], /--trust: expected <epoch>:<root hash>/],
    [[dir, '--trust', 'x:00'], /--trust epoch/],
    [[dir, '--trust', '5:00'], /--trust root: expected 32 bytes/],
    [[dir, '--trust', `0:${'00'.repeat(32)}`], /the root at epoch 0 is the empty tree's/],
    [[dir, '--domain-label', 'x'], /applies to the experimental configuration only/],
    [[dir, '--naming', 'middle'], /Allowed choices are auto, end, start/],
    [[dir, '--config', 'nope'], /Allowed choices are whatsapp_v1, experimental/],
    [[dir, '--interval', '0'], /--interval: expected a positive number/],
    [[dir, '--timeout', 'x'], /--timeout/],
    [[dir, '--read-ahead', '-1'], /--read-ahead/],
    [[dir, '--progress-every', '0'], /--progress-every/],
    [[dir, '--until-epoch', 'x'], /--until-epoch/],
  ];
  for (const [args, message] of cases) {
    const r = await verify(...args);
    assert.equal(r.code, 2, `${args.join(' ')}: ${r.stderr}`);
    assert.match(r.stderr, message, args.join(' '));
  }
  const empty = join(tmp.dir, 'empty');
  mkdirSync(empty);
  const e = await verify(empty);
  assert.equal(e.code, 2);
  assert.match(e.stderr, /holds no audit blobs/);
  const badState = join(tmp.dir, 'bad.state');
  for (const [content, why] of [
    ['{', /not JSON/],
    ['{}', /no "format"/],
    ['{"format":"akd-audit-state","version":2}', /unknown version 2/],
    ['{"format":"akd-audit-state","version":1,"epoch":"x"}', /malformed epoch/],
    ['{"format":"akd-audit-state","version":1,"epoch":"1","rootHash":"00"}', /malformed root hash/],
    [
      `{"format":"akd-audit-state","version":1,"epoch":"1","rootHash":"${'00'.repeat(32)}"}`,
      /no configuration/,
    ],
    [
      `{"format":"akd-audit-state","version":1,"epoch":"1","rootHash":"${'00'.repeat(32)}","configuration":"whatsapp_v1","naming":"x"}`,
      /malformed naming/,
    ],
  ] as const) {
    writeFileSync(badState, content);
    const r = await verify(dir, '--state', badState);
    assert.equal(r.code, 2, content);
    assert.match(r.stderr, why, content);
  }
  const r = await verify(dir, '--state', tmp.dir);
  assert.equal(r.code, 2);
  assert.match(r.stderr, /--state: cannot read/);
  const unwritable = await verify(dir, '--state', join(tmp.dir, 'no', 'such', 'dir', 's.json'));
  assert.equal(unwritable.code, 2);
  assert.match(unwritable.stderr, /--state: cannot write/);
});

test('on a terminal, progress is one redrawn line', async () => {
  let stdout = '';
  const code = await run(['audit', 'verify', join(tmp.dir, 'end')], {
    stdout: { write: (s: string) => (stdout += s), isTTY: true, columns: 60 },
    stderr: { write: () => true },
    stdin: Readable.from([]),
    env: {},
  });
  assert.equal(code, 0);
  assert.match(stdout, /^\rverifying: epoch 1, 1 blobs/);
  assert.match(stdout, /\r {60}\raudit of /);
  assert.doesNotMatch(stdout, /verified through epoch/);
});
