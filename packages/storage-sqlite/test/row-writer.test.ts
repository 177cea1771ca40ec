import { test } from 'node:test';
import assert from 'node:assert/strict';
import { ParamArrays, TableRows } from '../src/row-writer.js';
import { chunks } from '../src/sql.js';

test('rows fill reused parameter arrays in place and each statement runs once its rows are in', () => {
  const arrays = new ParamArrays();
  const runs: { rows: number; params: unknown[]; copy: unknown[] }[] = [];
  const table = new TableRows<number>(
    2,
    (out, at, n) => {
      out[at] = n;
      out[at + 1] = -n;
    },
    arrays,
    (rows, params) => runs.push({ rows, params, copy: [...params] }),
    chunks(11, 4, true), // [4, 4, 2, 1]
  );
  for (let n = 1; n <= 11; n++) table.add(n);
  assert.deepEqual(
    runs.map((r) => r.rows),
    [4, 4, 2, 1],
  );
  assert.deepEqual(runs[1]!.copy, [5, -5, 6, -6, 7, -7, 8, -8]);
  assert.deepEqual(runs[3]!.copy, [11, -11]);
  // statements of one size share one array
  assert.equal(runs[0]!.params, runs[1]!.params);
  assert.equal(arrays.get(8), runs[0]!.params);
  assert.notEqual(runs[2]!.params, runs[0]!.params);
  assert.throws(() => table.add(12), /more rows than the statements were sized for/);
});
