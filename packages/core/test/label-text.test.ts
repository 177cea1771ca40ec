// Labels in messages: describeLabel's quoting and escaping, and the verifiers naming the
// label the client asked about when a VRF proof or a path fails (upstream's proofs, with the
// wrong label or the wrong root).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import {
  AkdError,
  decodeHistoryProof,
  decodeLookupProof,
  describeLabel,
  keyHistoryVerify,
  lookupVerify,
  utf8,
} from '@akd-ts/core';
import { loadVectors } from '../../../test/support/vectors.js';
import { configFor } from '../../../test/support/mutations.js';

test('describeLabel quotes text, escapes what does not print, and shows other bytes as hex', () => {
  assert.equal(describeLabel(utf8('alice')), '"alice"');
  assert.equal(describeLabel(utf8('')), '""');
  assert.equal(describeLabel(utf8('say "hi" \\ bye')), '"say \\"hi\\" \\\\ bye"');
  assert.equal(describeLabel(utf8('a\nb\u001b[31m')), '"a\\u{a}b\\u{1b}[31m"');
  // a right-to-left override and a zero-width space would hide what the label is
  assert.equal(describeLabel(utf8('ab\u202ecd\u200b')), '"ab\\u{202e}cd\\u{200b}"');
  assert.equal(describeLabel(utf8('zoë 🔑')), '"zoë 🔑"');
  assert.equal(describeLabel(new Uint8Array([0x68, 0xff])), 'hex:68ff');
  assert.equal(describeLabel(utf8('x'.repeat(70))), `"${'x'.repeat(64)}..."`);
  assert.equal(describeLabel(new Uint8Array(40).fill(0xff)), `hex:${'ff'.repeat(32)}...`);
});

const failure =
  (code: string, ...parts: string[]) =>
  (e: unknown) => {
    assert.ok(e instanceof AkdError, String(e));
    assert.equal(e.code, code);
    for (const part of parts) assert.ok(e.message.includes(part), `${e.message} lacks ${part}`);
    assert.ok(e.cause instanceof AkdError, 'the inner failure is kept as the cause');
    return true;
  };

for (const name of ['whatsapp_v1', 'experimental'] as const) {
  const vectors = loadVectors(name);
  const config = configFor(name);
  const { publicKey, epochHash, epoch } = vectors;

  test(`${name}: a proof checked under another label names that label as the likely cause`, () => {
    const lookup = decodeLookupProof(vectors.lookupProof);
    assert.throws(
      () => lookupVerify(config, publicKey, epochHash, epoch, utf8('bob'), lookup),
      failure('VRF_VERIFY_FAILED', 'label "bob"', 'the proof is of another label'),
    );
    const history = decodeHistoryProof(vectors.historyComplete);
    assert.throws(
      () => keyHistoryVerify(config, publicKey, epochHash, epoch, utf8('bob'), history),
      failure('VRF_VERIFY_FAILED', 'label "bob"'),
    );
  });

  test(`${name}: a proof checked against another root names the label as text`, () => {
    const wrongRoot = new Uint8Array(32).fill(7);
    const lookup = decodeLookupProof(vectors.lookupProof);
    const check = (e: unknown) => {
      failure('VERIFY_ROOT_MISMATCH', `label "${new TextDecoder().decode(vectors.label)}"`)(e);
      assert.ok(!(e as Error).message.includes(', 256)'), 'no tree position in the message');
      return true;
    };
    assert.throws(
      () => lookupVerify(config, publicKey, wrongRoot, epoch, vectors.label, lookup),
      check,
    );
    const history = decodeHistoryProof(vectors.historyComplete);
    assert.throws(
      () => keyHistoryVerify(config, publicKey, wrongRoot, epoch, vectors.label, history),
      check,
    );
  });
}
