// The small pieces: Accept negotiation, parameter parsing and the size-delimited format.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { AkdError, utf8 } from '@akd-ts/core';
import { HttpError, negotiate, sizeDelimited } from '@akd-ts/server';
import { parseBytesField, parseCount, parseEpoch, parseLabel, quote } from '../src/params.js';

const code = (c: string) => (e: unknown) =>
  (e instanceof HttpError || e instanceof AkdError) && e.code === c;

test('negotiate follows q-values and specificity', () => {
  assert.equal(negotiate(undefined), 'json');
  assert.equal(negotiate(''), 'json');
  assert.equal(negotiate('garbage'), 'json');
  assert.equal(negotiate('application/x-protobuf'), 'protobuf');
  assert.equal(negotiate('application/vnd.google.protobuf'), 'protobuf');
  assert.equal(negotiate('application/json'), 'json');
  assert.equal(negotiate('*/*;q=0.1, application/x-protobuf;q=0.5'), 'protobuf');
  assert.equal(negotiate('application/x-protobuf;q=0.2, application/*;q=0.9'), 'json');
  assert.equal(negotiate('application/json;q=0, */*'), 'protobuf');
  assert.equal(negotiate('application/x-protobuf; q=bogus, application/json;q=0.1'), 'json');
  assert.throws(() => negotiate('text/html'), code('HTTP_NOT_ACCEPTABLE'));
  assert.throws(() => negotiate('application/json;q=0'), code('HTTP_NOT_ACCEPTABLE'));
});

test('labels, values, epochs and counts', () => {
  assert.deepEqual(parseLabel('alice', 'label', 10), utf8('alice'));
  assert.deepEqual(parseLabel('hex:00FF', 'label', 10), new Uint8Array([0, 255]));
  assert.deepEqual(parseLabel('é', 'label', 2), utf8('é'));
  assert.throws(() => parseLabel('éé', 'label', 3), code('DIRECTORY_LIMIT'));
  assert.throws(() => parseLabel(7, 'labels[0]', 3), /labels\[0\]: expected a string/);
  assert.throws(() => parseLabel('', 'label', 3), code('HTTP_BAD_REQUEST'));
  assert.throws(() => parseLabel('\ud800', 'label', 3), /well-formed/);
  assert.deepEqual(parseBytesField({ valueHex: 'a1' }, 'value', 'u'), new Uint8Array([0xa1]));
  assert.deepEqual(parseBytesField({ label: 'x' }, 'label', 'u'), utf8('x'));
  assert.throws(() => parseBytesField({ value: 3 }, 'value', 'u'), /"value" \(text\)/);
  assert.equal(parseEpoch('18446744073709551615', 'to'), (1n << 64n) - 1n);
  assert.throws(() => parseEpoch(undefined, 'to'), /to: expected .* got nothing/);
  assert.throws(() => parseEpoch('1e3', 'to'), code('HTTP_BAD_REQUEST'));
  assert.equal(parseCount('5', 'n', 5), 5);
  assert.throws(() => parseCount(undefined, 'n', 5), /got nothing/);
  assert.throws(() => parseCount('6', 'n', 5), code('DIRECTORY_LIMIT'));
  assert.equal(quote('x'.repeat(50)), `"${'x'.repeat(40)}..."`);
});

test('sizeDelimited writes varint lengths, multi-byte ones included', () => {
  assert.deepEqual(sizeDelimited([]), new Uint8Array());
  assert.deepEqual(
    sizeDelimited([new Uint8Array([9]), new Uint8Array()]),
    new Uint8Array([1, 9, 0]),
  );
  const big = new Uint8Array(300);
  const out = sizeDelimited([big]);
  assert.deepEqual([...out.slice(0, 2)], [0xac, 0x02]);
  assert.equal(out.length, 302);
});
