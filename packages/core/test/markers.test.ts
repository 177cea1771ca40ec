import { test } from 'node:test';
import assert from 'node:assert/strict';
import { getMarkerVersions, markerVersion } from '@akd-ts/core';

const cases: [bigint, bigint, bigint, bigint[], bigint[]][] = [
  [65n, 65n, 128n, [16n, 64n], [66n, 68n, 72n, 80n, 96n, 128n]],
  [85n, 85n, 65537n, [16n, 64n, 80n, 84n], [86n, 88n, 96n, 128n, 256n, 65536n]],
  [1n, 5n, 33n, [], [6n, 8n, 16n]],
  [2n, 5n, 33n, [], [6n, 8n, 16n]],
  [3n, 5n, 33n, [2n], [6n, 8n, 16n]],
  [6n, 12n, 128n, [4n], [13n, 14n, 16n]],
  [6n, 12n, 256n, [4n], [13n, 14n, 16n, 256n]],
  [130n, 130n, 256n, [16n, 128n], [131n, 132n, 136n, 144n, 160n, 192n, 256n]],
  [1n, 2n, 2n, [], []],
  // the test-vector run (spec 10.4): label "16", versions 1..3 at epoch 49
  [1n, 3n, 49n, [], [4n, 16n]],
  [3n, 3n, 49n, [2n], [4n, 16n]],
];

test('get_marker_versions reproduces every case of spec 10.4', () => {
  for (const [start, end, epoch, past, future] of cases) {
    assert.deepEqual(
      getMarkerVersions(start, end, epoch),
      { past, future },
      `(${start}, ${end}, ${epoch})`,
    );
  }
});

test('markers beyond 2^32 use the whole skiplist', () => {
  const { future } = getMarkerVersions(1n, 1n, 1n << 33n);
  assert.ok(future.includes(1n << 32n));
  assert.ok(
    future.every((f, i) => i === 0 || f > future[i - 1]!),
    'ascending',
  );
  assert.ok(future.every((f) => f <= 1n << 33n && f > 1n));
});

test('past markers are ascending, below start and free of duplicates', () => {
  for (let start = 1n; start < 600n; start++) {
    const { past } = getMarkerVersions(start, start, 1000n);
    for (let i = 0; i < past.length; i++) {
      assert.ok(past[i]! < start && past[i]! > 0n);
      if (i > 0) assert.ok(past[i]! > past[i - 1]!);
    }
  }
});

test('markerVersion is the greatest power of two not above the version', () => {
  assert.equal(markerVersion(1n), 1n);
  assert.equal(markerVersion(3n), 2n);
  assert.equal(markerVersion(64n), 64n);
  assert.equal(markerVersion((1n << 40n) + 5n), 1n << 40n);
  assert.throws(() => markerVersion(0n), RangeError);
  assert.throws(() => getMarkerVersions(0n, 1n, 2n), RangeError);
  assert.throws(() => getMarkerVersions(3n, 2n, 4n), RangeError);
});
