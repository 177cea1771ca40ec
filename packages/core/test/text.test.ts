// isWellFormedText decides whether text from outside (a JSON line, an argument, a form field)
// may become label or value bytes: exactly when UTF-8 encoding keeps it intact.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import fc from 'fast-check';
import { fromUtf8, isWellFormedText, utf8 } from '@akd-ts/core';

test('lone surrogates anywhere are not well-formed; pairs, BMP and astral text are', () => {
  for (const bad of [
    '\ud800',
    '\udfff',
    'a\ud800',
    '\udc00a',
    'a\ud800b',
    '\ud83d\ud83d',
    '\ude00\ud83d',
  ]) {
    assert.equal(isWellFormedText(bad), false, JSON.stringify(bad));
  }
  for (const good of ['', 'alice', 'é', '\u{1f600}', 'a\ud83d\ude00b', '\ufffd', '\u0000']) {
    assert.equal(isWellFormedText(good), true, JSON.stringify(good));
  }
});

/** Any UTF-16 code unit, with surrogates (paired or not) made common. */
const codeUnit = fc.oneof(
  fc.integer({ min: 0, max: 0xffff }).map((c) => String.fromCharCode(c)),
  fc.constantFrom('\ud800', '\udbff', '\udc00', '\udfff', '\ud83d', '\ude00'),
);

test('well-formed exactly when the UTF-8 round trip gives the same text', () => {
  fc.assert(
    fc.property(fc.string({ unit: codeUnit }), (s) => {
      assert.equal(isWellFormedText(s), fromUtf8(utf8(s)) === s);
    }),
    { numRuns: 2000 },
  );
  // the generator does produce both kinds
  const samples = fc.sample(fc.string({ unit: codeUnit, minLength: 2 }), 500);
  assert.ok(samples.some((s) => !isWellFormedText(s)));
  assert.ok(samples.some((s) => isWellFormedText(s) && /[\ud800-\udbff]/.test(s)));
});
