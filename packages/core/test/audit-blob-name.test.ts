import { test } from 'node:test';
import assert from 'node:assert/strict';
import { AkdError, formatAuditBlobName, parseAuditBlobName } from '@akd-ts/core';

const ONES = '01'.repeat(32);
const ZEROS = '00'.repeat(32);
const code = (f: () => unknown) => {
  try {
    f();
  } catch (e) {
    assert.ok(e instanceof AkdError, String(e));
    return e.code;
  }
  return 'ACCEPTED';
};

test('the spec 16 example: epoch 54, previous 32 x 0x01, current 32 x 0x00', () => {
  const name = {
    epoch: 54n,
    previousHash: new Uint8Array(32).fill(1),
    currentHash: new Uint8Array(32),
  };
  const text = formatAuditBlobName(name);
  assert.equal(text, `54/${ONES}/${ZEROS}`);
  assert.deepEqual(parseAuditBlobName(text), name);
});

test('hex is read in either case; the largest u64 epoch parses', () => {
  const upper = parseAuditBlobName(`${(1n << 64n) - 1n}/${'AB'.repeat(32)}/${'cD'.repeat(32)}`);
  assert.equal(upper.epoch, (1n << 64n) - 1n);
  assert.equal(upper.previousHash[0], 0xab);
  assert.equal(upper.currentHash[31], 0xcd);
  assert.equal(parseAuditBlobName(`0/${ONES}/${ZEROS}`).epoch, 0n);
});

test('malformed names fail with AUDIT_BLOB_NAME and say why', () => {
  const cases: [string, RegExp][] = [
    [`54/${ONES}`, /3 part|got 2 part/],
    [`54/${ONES}/${ZEROS}/extra`, /got 4 part/],
    [`054/${ONES}/${ZEROS}`, /leading zeros/],
    [`+5/${ONES}/${ZEROS}`, /decimal/],
    [`/${ONES}/${ZEROS}`, /decimal/],
    [`${1n << 64n}/${ONES}/${ZEROS}`, /64 bits/],
    [`1/${ONES.slice(2)}/${ZEROS}`, /previous hash/],
    [`1/${ONES}/${ZEROS}0`, /current hash/],
    [`1/${'zz'.repeat(32)}/${ZEROS}`, /previous hash/],
    ['', /part/],
  ];
  for (const [text, reason] of cases) {
    try {
      parseAuditBlobName(text);
      assert.fail(`accepted ${text}`);
    } catch (e) {
      assert.ok(e instanceof AkdError);
      assert.equal(e.code, 'AUDIT_BLOB_NAME', text);
      assert.match(e.message, reason, text);
      assert.equal(e.field, 'name');
    }
  }
  // a very long key is cut short in the message
  const long = `1/${'a'.repeat(500)}`;
  assert.equal(
    code(() => parseAuditBlobName(long)),
    'AUDIT_BLOB_NAME',
  );
  assert.throws(
    () => parseAuditBlobName(long),
    (e: Error) => e.message.length < 300,
  );
});

test('formatting checks its arguments (caller mistakes are RangeError / TypeError)', () => {
  const h = new Uint8Array(32);
  assert.throws(
    () => formatAuditBlobName({ epoch: -1n, previousHash: h, currentHash: h }),
    RangeError,
  );
  assert.throws(
    () => formatAuditBlobName({ epoch: 1n, previousHash: h.subarray(1), currentHash: h }),
    RangeError,
  );
  assert.throws(
    () => formatAuditBlobName({ epoch: 1n, previousHash: h, currentHash: h.subarray(1) }),
    RangeError,
  );
  assert.throws(() => parseAuditBlobName(5 as unknown as string), TypeError);
});
