import { test } from 'node:test';
import assert from 'node:assert/strict';
import { utf8 } from '@akd-ts/core';
import { displayBytes, jsonBytes, toJson } from '../src/output.js';
import { parseEpoch, parseHex, parseLabel, quote } from '../src/args.js';

test('displayBytes shows safe text as is and everything else as hex:', () => {
  assert.equal(displayBytes(utf8('16,48')), '16,48');
  assert.equal(displayBytes(utf8('clé publique ✓')), 'clé publique ✓');
  assert.equal(displayBytes(new Uint8Array()), '(empty)');
  for (const unsafe of [
    '\x1b[2Jcleared',
    'line\nbreak',
    'tab\there',
    '\u202etxt.exe',
    ' padded',
    'hex:00',
    '(empty)',
  ]) {
    assert.match(displayBytes(utf8(unsafe)), /^hex:[0-9a-f]+$/, JSON.stringify(unsafe));
  }
  assert.equal(displayBytes(new Uint8Array([0xff, 0xfe])), 'hex:fffe');
});

test('a displayed label reads back as the same bytes', () => {
  for (const bytes of [utf8('alice'), utf8('hex:31'), new Uint8Array([0, 0xff])]) {
    assert.deepEqual(parseLabel(displayBytes(bytes)), bytes);
  }
});

test('jsonBytes gives text only for UTF-8', () => {
  assert.deepEqual(jsonBytes(utf8('a\nb')), { text: 'a\nb', hex: '610a62' });
  assert.deepEqual(jsonBytes(new Uint8Array([0xc3])), { text: null, hex: 'c3' });
});

test('toJson writes bigints as exact numbers', () => {
  const max = (1n << 64n) - 1n;
  assert.equal(
    toJson({ epoch: max, list: [1, 'a', null, true], nested: { v: 2n } }),
    `{"epoch":${max},"list":[1,"a",null,true],"nested":{"v":2}}`,
  );
});

test('argument helpers', () => {
  assert.deepEqual(parseHex(' AB cd\n', '--x'), new Uint8Array([0xab, 0xcd]));
  assert.equal(parseEpoch('18446744073709551615', '--epoch'), (1n << 64n) - 1n);
  assert.equal(quote('x'.repeat(50)), `"${'x'.repeat(40)}..."`);
});

test('the package entry exports the in-process runner', async () => {
  const cli = await import('@akd-ts/cli');
  assert.equal(typeof cli.run, 'function');
  assert.equal(typeof cli.buildProgram(cli.processIo()).helpInformation(), 'string');
  assert.equal(cli.EXIT.usage, 2);
});
