// Plexi's JSON of a witness signature: written in Plexi's field order and encodings, read
// with Plexi's leniencies (version or ciphersuite alone, a null serialized_message, unknown
// fields, uppercase hex) and refused, naming the field, when a field is missing or malformed.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import {
  AkdError,
  encodeSignatureMessage,
  parseWitnessSignature,
  signWitness,
  toHex,
  verifyWitnessSignature,
  witnessSignatureToJson,
  type WitnessSignature,
} from '@akd-ts/core';
import { ed25519 } from '@noble/curves/ed25519.js';

const SEED = new Uint8Array(32).fill(9);
const KEY = ed25519.getPublicKey(SEED);
const SIGNED = signWitness(
  {
    ciphersuite: 2,
    namespace: 'whatsapp.key-transparency.v1',
    timestamp: 1_727_110_425_000n,
    epoch: 489_193n,
    digest: new Uint8Array(32).fill(0xcb),
  },
  SEED,
);
const JSON_FORM = witnessSignatureToJson(SIGNED);

function refused(json: unknown, field: string | undefined): void {
  try {
    parseWitnessSignature(json);
  } catch (e) {
    assert.ok(e instanceof AkdError, String(e));
    assert.equal(e.code, 'WITNESS_DECODE', e.message);
    assert.equal(e.field, field, e.message);
    return;
  }
  assert.fail(`accepted ${JSON.stringify(json)}`);
}

test("the JSON has Plexi's fields, order and encodings, and reads back", () => {
  assert.deepEqual(Object.keys(JSON_FORM), [
    'version',
    'ciphersuite',
    'namespace',
    'timestamp',
    'epoch',
    'digest',
    'signature',
    'key_id',
    'serialized_message',
  ]);
  assert.equal(JSON_FORM['version'], 2);
  assert.equal(JSON_FORM['timestamp'], 1_727_110_425_000);
  assert.equal(JSON_FORM['epoch'], 489_193);
  assert.equal(JSON_FORM['digest'], 'cb'.repeat(32));
  assert.equal(JSON_FORM['key_id'], KEY[31]);
  assert.equal(JSON_FORM['serialized_message'], toHex(SIGNED.serializedMessage));
  const back = parseWitnessSignature(JSON.parse(JSON.stringify(JSON_FORM)));
  assert.deepEqual(back, SIGNED);
  verifyWitnessSignature(back, KEY);
});

test("Plexi's leniencies: one ciphersuite field, null message, extra fields, uppercase hex", () => {
  const { version: _v, ...noVersion } = JSON_FORM;
  const { ciphersuite: _c, ...noSuite } = JSON_FORM;
  assert.equal(parseWitnessSignature(noVersion).version, 2);
  assert.equal(parseWitnessSignature(noSuite).ciphersuite, 2);
  const nullMessage = parseWitnessSignature({ ...JSON_FORM, serialized_message: null });
  assert.deepEqual(nullMessage.serializedMessage, encodeSignatureMessage(SIGNED));
  const { serialized_message: _s, ...noMessage } = JSON_FORM;
  verifyWitnessSignature(parseWitnessSignature(noMessage), KEY);
  verifyWitnessSignature(parseWitnessSignature({ ...JSON_FORM, extra: [1] }), KEY);
  const upper = { ...JSON_FORM, signature: toHex(SIGNED.signature).toUpperCase() };
  verifyWitnessSignature(parseWitnessSignature(upper), KEY);
});

test('each missing or malformed field is refused by name', () => {
  refused(null, undefined);
  refused('{}', undefined);
  refused([JSON_FORM], undefined);
  const { version: _v, ciphersuite: _c, ...neither } = JSON_FORM;
  refused(neither, 'ciphersuite');
  refused({ ...JSON_FORM, version: 1 }, 'version');
  refused({ ...JSON_FORM, version: 3, ciphersuite: 3 }, 'ciphersuite');
  refused({ ...JSON_FORM, ciphersuite: '2' }, 'ciphersuite');
  refused({ ...JSON_FORM, namespace: 7 }, 'namespace');
  refused({ ...JSON_FORM, namespace: 'a\udc00' }, 'namespace');
  const cases: [string, unknown][] = [
    ['timestamp', undefined],
    ['timestamp', '1727110425000'],
    ['timestamp', -1],
    ['timestamp', 1.5],
    ['timestamp', 2 ** 53],
    ['epoch', undefined],
    ['epoch', null],
    ['digest', undefined],
    ['digest', 'abc'],
    ['digest', 'zz'],
    ['signature', '00'.repeat(63)],
    ['signature', 5],
    ['key_id', undefined],
    ['key_id', 256],
    ['serialized_message', 'xyz0'],
  ];
  for (const [field, value] of cases) refused({ ...JSON_FORM, [field]: value }, field);
});

test('an integer JSON numbers cannot carry exactly is not written', () => {
  const big: WitnessSignature = { ...SIGNED, epoch: 1n << 53n };
  assert.throws(() => witnessSignatureToJson(big), RangeError);
  assert.throws(() => witnessSignatureToJson({ ...SIGNED, timestamp: 1n << 60n }), RangeError);
  assert.equal(
    witnessSignatureToJson({ ...SIGNED, epoch: (1n << 53n) - 1n })['epoch'],
    2 ** 53 - 1,
  );
});
