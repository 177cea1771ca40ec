// The page's checking logic, in Node: verdicts for good, tampered and garbled proofs, the
// path display, and the parsing of what a person types.
import { before, after, test } from 'node:test';
import assert from 'node:assert/strict';
import { NodeLabel, encodeLookupProof, encodeHistoryProof, toHex, utf8 } from '@akd-ts/core';
import {
  bits,
  checkHistory,
  checkLookup,
  display,
  labelPath,
  parseLabel,
  pathView,
  trustedRoot,
  type EpochInfo,
  PUBLIC_DIR_URL,
} from '@akd-ts/web';
import { demoDirectory, type Fixture } from '../../server/test/support.js';

let fixture: Fixture;
let info: EpochInfo;
before(async () => {
  fixture = await demoDirectory();
  const { epoch, hash } = await fixture.dir.getEpochHash();
  info = {
    epoch: epoch.toString(),
    rootHash: toHex(hash),
    publicKey: toHex(fixture.dir.getPublicKey()),
    configuration: { name: 'whatsapp_v1', domainLabel: null },
  };
});
after(() => fixture.close());

test('a served lookup proof verifies, with its path leading to the trusted root', async () => {
  const { proof } = await fixture.dir.lookup(utf8('alice'));
  const verdict = checkLookup(trustedRoot(info), utf8('alice'), encodeLookupProof(proof));
  assert.ok(verdict.verified);
  assert.deepEqual(verdict.result, { epoch: 2n, version: 2n, value: utf8('alice-key-2') });
  assert.ok(verdict.path!.matchesTrustedRoot);
  assert.equal(verdict.path!.computedRoot, info.rootHash);
  assert.equal(verdict.path!.levels.length, proof.existenceProof.siblingProofs.length);
  assert.match(verdict.path!.levels.at(-1)!.node, /\(\d+ bits?\)$/);
});

test('a tampered proof, a wrong root, a wrong label and garbage are NOT verified, with codes', async () => {
  const { proof } = await fixture.dir.lookup(utf8('alice'));
  const bytes = encodeLookupProof(proof);
  const sibling = proof.existenceProof.siblingProofs[0]!.siblings[0];
  sibling.value = sibling.value.slice();
  sibling.value[31]! ^= 1;
  const tampered = checkLookup(trustedRoot(info), utf8('alice'), encodeLookupProof(proof));
  assert.equal(tampered.verified, false);
  assert.equal(!tampered.verified && tampered.code, 'VERIFY_ROOT_MISMATCH');
  assert.equal(tampered.path!.matchesTrustedRoot, false);

  const old = trustedRoot(info, { rootHash: toHex(fixture.roots[2]!), epoch: '2' });
  const stale = checkLookup(old, utf8('alice'), bytes);
  assert.equal(!stale.verified && stale.code, 'VERIFY_ROOT_MISMATCH');
  // the reason names the label as the person typed it, not its position in the tree
  assert.match(!stale.verified ? stale.reason : '', /^the proof of label "alice" does not lead/);
  assert.doesNotMatch(!stale.verified ? stale.reason : '', /, 256\)/);
  const otherRoot = trustedRoot(info, { rootHash: toHex(fixture.roots[2]!), epoch: '3' });
  assert.equal(
    (checkLookup(otherRoot, utf8('alice'), bytes) as { code: string }).code,
    'VERIFY_ROOT_MISMATCH',
  );
  const wrongLabel = checkLookup(trustedRoot(info), utf8('bob'), bytes);
  assert.equal(wrongLabel.verified, false);
  assert.match((wrongLabel as { code: string }).code, /^VRF_/);
  assert.match((wrongLabel as { reason: string }).reason, /label "bob" .*another label/);
  const garbage = checkLookup(trustedRoot(info), utf8('alice'), new Uint8Array([0xff, 1, 2]));
  assert.equal(garbage.verified, false);
  assert.match((garbage as { code: string }).code, /^DECODE_/);
  assert.equal(garbage.path, undefined);
});

test('a served history verifies; a truncated one does not', async () => {
  const { proof } = await fixture.dir.keyHistory(utf8('alice'));
  const ok = checkHistory(trustedRoot(info), utf8('alice'), encodeHistoryProof(proof));
  assert.ok(ok.verified);
  assert.deepEqual(
    ok.result.map((r) => r.version),
    [2n, 1n],
  );
  const recent = await fixture.dir.keyHistory(utf8('alice'), { kind: 'mostRecent', count: 1 });
  const one = checkHistory(trustedRoot(info), utf8('alice'), encodeHistoryProof(recent.proof), 1);
  assert.ok(one.verified && one.result.length === 1);
  const cut = { ...proof, updateProofs: proof.updateProofs.slice(0, 1) };
  const bad = checkHistory(trustedRoot(info), utf8('alice'), encodeHistoryProof(cut));
  assert.equal(bad.verified, false);
});

test('trusted roots: malformed pasted hashes and epochs are refused with a field', () => {
  assert.throws(() => trustedRoot(info, { rootHash: 'abc', epoch: '1' }), /64 hex digits/);
  assert.throws(() => trustedRoot(info, { rootHash: info.rootHash, epoch: '-1' }), /epoch/);
  const pasted = trustedRoot(info, { rootHash: ` ${info.rootHash.toUpperCase()} `, epoch: '3' });
  assert.equal(toHex(pasted.rootHash), info.rootHash);
  const experimental = trustedRoot({
    ...info,
    configuration: { name: 'experimental', domainLabel: 'ExampleLabel' },
  });
  assert.equal(experimental.config.name, 'experimental');
});

test('labels as typed, in URLs and on screen', () => {
  assert.deepEqual(parseLabel('alice'), utf8('alice'));
  assert.deepEqual(parseLabel('hex:00 ff'), new Uint8Array([0, 255]));
  assert.throws(() => parseLabel(''), /type a label/);
  assert.throws(() => parseLabel('hex:0'), /even number/);
  assert.throws(() => parseLabel('a\ud800'), {
    code: 'DECODE_INVALID_VALUE',
    message: /lone surrogate/,
  });
  assert.throws(() => parseLabel('hex:'), /even number/);
  assert.equal(labelPath(utf8('carol@example.com/x')), 'carol%40example.com%2Fx');
  assert.equal(labelPath(new Uint8Array([0xff])), 'hex:ff');
  assert.equal(display(utf8('alice')), 'alice');
  assert.equal(display(new Uint8Array()), '(empty)');
  assert.equal(display(utf8('a\u202eb')), `hex:${toHex(utf8('a\u202eb'))}`);
  assert.equal(display(utf8('hex:00')), `hex:${toHex(utf8('hex:00'))}`);
  assert.equal(display(new Uint8Array([0xff])), 'hex:ff');
});

test('node labels show their leading bits and length', () => {
  assert.equal(bits(new NodeLabel(new Uint8Array(32), 0)), 'root (0 bits)');
  assert.equal(bits(new NodeLabel(new Uint8Array(32).fill(0xf0), 1)), '1 (1 bit)');
  assert.equal(bits(new NodeLabel(new Uint8Array(32).fill(0xf0), 6)), '111100 (6 bits)');
  assert.equal(
    bits(new NodeLabel(new Uint8Array(32).fill(0xff), 256)),
    `${'1'.repeat(24)}… (256 bits)`,
  );
});

test('pathView of a proof with no siblings is the leaf itself', async () => {
  const { proof } = await fixture.dir.lookup(utf8('bob'));
  const view = pathView(
    trustedRoot(info).config,
    { ...proof.existenceProof, siblingProofs: [] },
    new Uint8Array(32),
  );
  assert.equal(view.levels.length, 0);
  assert.equal(view.matchesTrustedRoot, false);
});

test("the built page lives in the package's dist/page/ folder", () => {
  assert.match(PUBLIC_DIR_URL.pathname, /packages\/web\/dist\/page\/$/);
});
