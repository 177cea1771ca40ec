import { test } from 'node:test';
import assert from 'node:assert/strict';
import fc from 'fast-check';
import {
  NodeLabel,
  PrefixOrdering,
  WhatsAppV1Configuration,
  ExperimentalConfiguration,
} from '@akd-ts/core';

/** A label from a bit string such as "1010" (bits MSB-first, zero-padded). */
function bits(s: string, len = s.length): NodeLabel {
  const val = new Uint8Array(32);
  for (let i = 0; i < s.length; i++) if (s[i] === '1') val[i >> 3]! |= 0x80 >> (i & 7);
  return new NodeLabel(val, len);
}

const wa = new WhatsAppV1Configuration();
const ex = new ExperimentalConfiguration();

test('getBit reads MSB-first and rejects indexes past the length (spec 4.3)', () => {
  const l = bits('1010');
  assert.deepEqual(
    [0, 1, 2, 3].map((i) => l.getBit(i)),
    [1, 0, 1, 0],
  );
  for (const i of [4, 100, 255]) assert.throws(() => l.getBit(i), RangeError);
});

test('getPrefix copies bits and zeroes the rest (spec 4.3)', () => {
  const l = bits('1000101101110110110000000000110101110001000000000110011001000101');
  assert.ok(l.getPrefix(10).equals(bits('1000101101')));
  assert.ok(l.getPrefix(0).equals(NodeLabel.root()));
  assert.equal(l.getPrefix(256), l, 'len >= 256 returns the label unchanged');
  const a5 = new Uint8Array(32).fill(0xa5);
  const p = new NodeLabel(a5, 256).getPrefix(5);
  assert.equal(p.val[0], 0xa0);
  assert.equal(p.len, 5);
  assert.ok(p.val.subarray(1).every((b) => b === 0));
});

test('longest common prefix examples of spec 4.3, both configurations', () => {
  for (const cfg of [wa, ex]) {
    const lcp = (a: NodeLabel, b: NodeLabel) => a.longestCommonPrefix(b, cfg.emptyLabel);
    assert.ok(lcp(bits('10000000'), bits('11000000')).equals(bits('1')));
    assert.ok(lcp(bits('010000000'), bits('011000000')).equals(bits('01')));
    assert.ok(lcp(NodeLabel.root(), bits('0110')).equals(NodeLabel.root()));
    assert.ok(lcp(bits('01'), bits('010')).equals(bits('01')));
    assert.ok(lcp(bits('010000000'), bits('11000000')).equals(NodeLabel.root()));
    assert.ok(lcp(cfg.emptyLabel, bits('1')).equals(cfg.emptyLabel));
    assert.ok(lcp(bits('1'), cfg.emptyLabel).equals(cfg.emptyLabel));
  }
});

test('prefix ordering ignores junk bits of the shorter label (spec 4.3)', () => {
  const junk = new Uint8Array(32).fill(0x3f);
  const self = new NodeLabel(junk, 1);
  assert.equal(self.prefixOrdering(bits('0', 64)), PrefixOrdering.WithZero);
  const low = new Uint8Array(32);
  low[31] = 1;
  assert.equal(new NodeLabel(low, 0).prefixOrdering(bits('0', 64)), PrefixOrdering.WithZero);
  assert.equal(bits('1').prefixOrdering(bits('11', 2)), PrefixOrdering.WithOne);
  assert.equal(bits('1').prefixOrdering(bits('01', 2)), PrefixOrdering.Invalid);
  assert.equal(bits('11').prefixOrdering(bits('1')), PrefixOrdering.Invalid);
  assert.equal(bits('1').prefixOrdering(bits('1')), PrefixOrdering.Invalid);
});

test('ordering is by length, then bytes; toBytes puts the length first', () => {
  assert.ok(bits('1').compare(bits('00')) < 0);
  assert.ok(bits('10').compare(bits('01')) > 0);
  assert.equal(bits('10').compare(bits('10')), 0);
  const b = bits('1', 1).toBytes();
  assert.deepEqual([...b.subarray(0, 5)], [0, 0, 0, 1, 0x80]);
  assert.equal(String(NodeLabel.root()), `(0x${'0'.repeat(64)}, 0)`);
});

test('constructor rejects wrong sizes', () => {
  assert.throws(() => new NodeLabel(new Uint8Array(31), 0), TypeError);
  assert.throws(() => new NodeLabel(new Uint8Array(32), 257), RangeError);
  assert.throws(() => new NodeLabel(new Uint8Array(32), -1), RangeError);
});

test('property: isPrefixOf, commonPrefixLength and prefixOrdering agree with a bit-string model', () => {
  const bitString = fc
    .array(fc.boolean(), { minLength: 0, maxLength: 256 })
    .map((a) => a.map((b) => (b ? '1' : '0')).join(''));
  fc.assert(
    fc.property(bitString, bitString, (a, b) => {
      const la = bits(a);
      const lb = bits(b);
      let common = 0;
      while (common < Math.min(a.length, b.length) && a[common] === b[common]) common++;
      assert.equal(la.commonPrefixLength(lb), common);
      assert.equal(la.isPrefixOf(lb), b.startsWith(a));
      const expected =
        a.length < b.length && b.startsWith(a)
          ? b[a.length] === '0'
            ? PrefixOrdering.WithZero
            : PrefixOrdering.WithOne
          : PrefixOrdering.Invalid;
      assert.equal(la.prefixOrdering(lb), expected);
      assert.ok(la.getPrefix(common).equals(bits(a.slice(0, common))));
    }),
    { numRuns: 500 },
  );
});
