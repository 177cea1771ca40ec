import { test } from 'node:test';
import assert from 'node:assert/strict';
import fc from 'fast-check';
import { be64, toHex, writeBe64, writeBe64Number } from '../src/bytes.js';

/** be64 through a DataView, the definition the fast paths must agree with. */
function reference(v: bigint): string {
  const out = new Uint8Array(8);
  new DataView(out.buffer).setBigUint64(0, BigInt.asUintN(64, v), false);
  return toHex(out);
}

test('writeBe64 writes be64 at an offset, on both sides of 2^53 and at the edges', () => {
  const edges = [0n, 1n, 255n, 256n, 2n ** 32n - 1n, 2n ** 32n, 2n ** 53n - 1n, 2n ** 53n];
  for (const v of [...edges, 2n ** 63n, 2n ** 64n - 1n]) {
    const out = new Uint8Array(12).fill(0xaa);
    writeBe64(out, 3, v);
    assert.equal(toHex(out.subarray(3, 11)), reference(v), `value ${v}`);
    assert.equal(out[2], 0xaa);
    assert.equal(out[11], 0xaa);
    assert.equal(toHex(be64(v)), reference(v));
  }
  fc.assert(
    fc.property(fc.bigInt({ min: 0n, max: 2n ** 64n - 1n }), (v) => {
      const out = new Uint8Array(8);
      writeBe64(out, 0, v);
      assert.equal(toHex(out), reference(v));
    }),
  );
});

test('writeBe64Number agrees with writeBe64 for every safe integer', () => {
  fc.assert(
    fc.property(fc.integer({ min: 0, max: Number.MAX_SAFE_INTEGER }), (n) => {
      const a = new Uint8Array(9);
      const b = new Uint8Array(9);
      writeBe64Number(a, 1, n);
      writeBe64(b, 1, BigInt(n));
      assert.equal(toHex(a), toHex(b));
      assert.equal(toHex(a.subarray(1)), reference(BigInt(n)));
    }),
  );
});
