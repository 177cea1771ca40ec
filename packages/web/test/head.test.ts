// What the page says about the head it remembers (head.ts), in Node: witness settings as
// typed and as saved, verdicts for every way a refresh ends, the evidence file, and the rows
// of relayed witness signatures (valid, of another namespace or key, unreadable, dated in the
// future, of another root).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { AkdError, toHex } from '@akd-ts/core';
import { EvidenceError, type Evidence, type VerifiedHead } from '@akd-ts/client';
import {
  WITNESS_KEY,
  ageText,
  clientPolicy,
  evidenceFile,
  headFailure,
  headVerdict,
  loadWitnessSettings,
  parseWitnessSettings,
  witnessRows,
} from '../src/head.js';
import { testWitness } from '../../client/test/support/witness.js';

const KEY_A = 'aa'.repeat(32);
const KEY_B = 'bb'.repeat(32);
const form = (over: Partial<Record<'keys' | 'quorum' | 'namespace' | 'maxAgeHours', string>>) => ({
  keys: `${KEY_A}\n${KEY_B.toUpperCase()}`,
  quorum: '2',
  namespace: ' ns ',
  maxAgeHours: '24',
  ...over,
});

function code(f: () => unknown): string {
  try {
    f();
  } catch (e) {
    assert.ok(e instanceof AkdError);
    return `${e.code}:${String(e.field)}`;
  }
  assert.fail('expected an error');
}

test('witness settings: keys one a line or separated, quorum, namespace and maximum age', () => {
  assert.deepEqual(parseWitnessSettings(form({})), {
    keys: [KEY_A, KEY_B],
    quorum: 2,
    namespace: 'ns',
    maxAgeHours: 24,
  });
  const loose = parseWitnessSettings(
    form({ keys: `${KEY_A}, ${KEY_A} ${KEY_B}`, quorum: '', maxAgeHours: ' ' }),
  );
  assert.deepEqual([loose.keys, loose.quorum, loose.maxAgeHours], [[KEY_A, KEY_B], 1, 0]);
  const policy = clientPolicy(parseWitnessSettings(form({})));
  assert.deepEqual(policy.witnesses.keys.map(toHex), [KEY_A, KEY_B]);
  assert.equal(policy.maxAgeMs, 24 * 3_600_000);
  assert.equal(clientPolicy(loose).maxAgeMs, undefined);
});

test('witness settings that are wrong name the field', () => {
  assert.equal(
    code(() => parseWitnessSettings(form({ keys: ' ' }))),
    'DECODE_INVALID_VALUE:keys',
  );
  assert.equal(
    code(() => parseWitnessSettings(form({ keys: 'abcd' }))),
    'DECODE_INVALID_VALUE:keys',
  );
  for (const quorum of ['0', '3', '1.5', 'two']) {
    assert.equal(
      code(() => parseWitnessSettings(form({ quorum }))),
      'DECODE_INVALID_VALUE:quorum',
    );
  }
  assert.equal(
    code(() => parseWitnessSettings(form({ namespace: '  ' }))),
    'DECODE_INVALID_VALUE:namespace',
  );
  for (const maxAgeHours of ['-1', 'soon']) {
    assert.equal(
      code(() => parseWitnessSettings(form({ maxAgeHours }))),
      'DECODE_INVALID_VALUE:maxAgeHours',
    );
  }
});

test('saved witness settings are read back; what is not settings counts as none', () => {
  const storage = (text: string | null) => ({ getItem: () => text, setItem: () => {} });
  assert.equal(loadWitnessSettings(storage(null)), undefined);
  const saved = parseWitnessSettings(form({}));
  assert.deepEqual(loadWitnessSettings(storage(JSON.stringify(saved))), saved);
  assert.equal(loadWitnessSettings(storage('{not json')), undefined);
  assert.equal(loadWitnessSettings(storage(JSON.stringify({ keys: 'x' }))), undefined);
  assert.equal(WITNESS_KEY, 'akd-page-witnesses');
});

test('ages in words, rounded down', () => {
  assert.equal(ageText(59_999), '59 s');
  assert.equal(ageText(-5_000), '5 s');
  assert.equal(ageText(60_000), '1 min');
  assert.equal(ageText(3_600_000 * 2 + 1), '2 h');
  assert.equal(ageText(3_600_000 * 47), '47 h');
  assert.equal(ageText(3_600_000 * 48), '2 days');
});

const head = (epoch: bigint, basis: VerifiedHead['basis']): VerifiedHead => ({
  epoch,
  rootHash: new Uint8Array(32).fill(Number(epoch)),
  verifiedAt: Date.UTC(2026, 0, 2, 3, 4, 5),
  basis,
});

test('a refresh that succeeded, in words for each basis', () => {
  const first = headVerdict({ previous: undefined, head: head(3n, 'first-use') });
  assert.equal(first.kind, 'first-use');
  assert.match(first.headline, /First visit: this browser now remembers epoch 3/);
  const same = headVerdict({ previous: head(3n, 'first-use'), head: head(3n, 'same') });
  assert.equal(same.kind, 'verified');
  assert.match(same.reason!, /epoch 3, which this browser verified on 2026-01-02 03:04:05 UTC/);
  const grown = headVerdict({ previous: head(3n, 'same'), head: head(5n, 'append-only') });
  assert.match(grown.headline, /✔ Epoch 5 extends your last visit's epoch 3/);
  const signed = headVerdict({ previous: head(3n, 'same'), head: head(5n, 'witnesses') });
  assert.match(signed.reason!, /No append-only proof could be had/);
  const signedFirst = headVerdict({ previous: undefined, head: head(5n, 'witnesses') });
  assert.match(signedFirst.reason!, /^A quorum of the witnesses you trust/);
  assert.match(
    headVerdict({ previous: undefined, head: head(2n, 'trusted') }).headline,
    /Epoch 2 is trusted/,
  );
});

function evidenceOf(kind: Evidence['kind'], heads: string[]): Evidence {
  return {
    format: 'akd-evidence',
    version: 1,
    kind,
    code: 'CLIENT_FORK',
    message: 'two roots',
    detectedAt: 1,
    directory: {
      server: 'http://x',
      publicKey: '00',
      configuration: { name: 'whatsapp_v1', domainLabel: null },
    },
    witnesses: null,
    heads: heads.map((epoch) => ({ epoch, rootHash: '00', source: 'served', witnesses: [] })),
  };
}

test('a refresh that failed: caught with evidence, or no verdict with the code', () => {
  const caught = headFailure(new EvidenceError(evidenceOf('fork', ['3', '3'])));
  assert.equal(caught.kind, 'failed');
  assert.equal(caught.headline, '✘ FORK: CLIENT_FORK');
  assert.match(caught.reason!, /two roots\. Do not trust.*akd verify evidence FILE/);
  assert.equal(caught.code, 'CLIENT_FORK');
  assert.equal(caught.evidence?.kind, 'fork');
  const odd = headFailure(new EvidenceError(evidenceOf('version-rollback', ['3'])));
  assert.match(odd.headline, /version-rollback/);
  const quorum = headFailure(new AkdError('CLIENT_WITNESS_QUORUM', 'none relayed'));
  assert.deepEqual(
    [quorum.kind, quorum.code, quorum.reason, quorum.evidence],
    ['error', 'CLIENT_WITNESS_QUORUM', 'none relayed', undefined],
  );
  assert.equal(headFailure(new TypeError('Failed to fetch')).code, 'ERROR');
});

test('the evidence file is named after its kind and latest head, and is the evidence', () => {
  const e = evidenceOf('rollback', ['5', '2']);
  const file = evidenceFile(e);
  assert.equal(file.name, 'akd-evidence-rollback-epoch-2.json');
  assert.deepEqual(JSON.parse(file.text), e);
  assert.equal(evidenceFile(evidenceOf('stale', [])).name, 'akd-evidence-stale-epoch-unknown.json');
});

test('relayed witness signatures: valid, unchecked, of another namespace or key, unreadable', () => {
  const w = testWitness(3);
  const stranger = testWitness(4);
  const root = new Uint8Array(32).fill(9);
  const other = new Uint8Array(32).fill(8);
  const now = Date.UTC(2026, 0, 2);
  const relayed = [
    w.sign('ns', 3n, root, now - 90_000),
    w.sign('ns', 3n, other, now - 1000, 0x0002),
    w.sign('ns', 2n, other, now + 7_200_000),
    w.sign('elsewhere', 3n, root, now),
    stranger.sign('ns', 3n, root, now),
    { not: 'a signature' },
  ];
  const served = { epoch: 3n, rootHash: root };
  const policy = { keys: [w.publicKey], quorum: 1, namespace: 'ns' };
  const rows = witnessRows(relayed, served, policy, now);
  assert.deepEqual(
    rows.map((r) => r.status),
    ['valid', 'valid', 'valid', 'invalid', 'invalid', 'unreadable'],
  );
  assert.match(
    rows[0]!.text,
    /ciphersuite 0x0001: epoch 3, the served root hash, signed 1 min ago/,
  );
  assert.match(rows[0]!.text, new RegExp(`trusted key ${toHex(w.publicKey)}`));
  assert.match(rows[1]!.text, new RegExp(`0x0002: epoch 3, ANOTHER root hash ${toHex(other)}`));
  assert.match(rows[2]!.text, /epoch 2 \(root hash 0808.*dated 2 h in the future/);
  assert.match(rows[3]!.text, /Not the namespace you trust/);
  assert.match(rows[4]!.text, /Not a valid signature of a trusted witness/);
  const unchecked = witnessRows(relayed.slice(0, 1), served, undefined, now);
  assert.equal(unchecked[0]!.status, 'unchecked');
  // a key whose last byte is the signer's, but which did not sign: not counted
  const lookalike = new Uint8Array(32).fill(1);
  lookalike[31] = w.publicKey[31]!;
  const forged = witnessRows(relayed.slice(0, 1), served, { ...policy, keys: [lookalike] }, now);
  assert.equal(forged[0]!.status, 'invalid');
});
