/**
 * The test runner's coverage step (scripts/coverage-texts.mjs): worker threads compile the
 * sources as CommonJS where the main threads compile them as ES modules, under the same URLs,
 * and only one compiled text per URL may reach c8's merge.
 */

import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { keepOneTextPerUrl } from '../../../scripts/coverage-texts.mjs';

const ESM = 'file:///src/markers.ts';
const ONLY = 'file:///src/vrf-worker.ts';
const PLAIN = 'node:fs';

/** A raw coverage file: one script per url, with the line lengths of its compiled text. */
function coverageFile(scripts: [string, number[] | undefined][]) {
  const cache: Record<string, { lineLengths: number[] }> = {};
  for (const [url, lines] of scripts) if (lines !== undefined) cache[url] = { lineLengths: lines };
  return {
    result: scripts.map(([url]) => ({ scriptId: '1', url, functions: [] })),
    'source-map-cache': cache,
  };
}

/** The URLs of the scripts the coverage file `name` of `dir` holds. */
function urlsIn(dir: string, name: string): string[] {
  const file = JSON.parse(readFileSync(join(dir, name), 'utf8')) as { result: { url: string }[] };
  return file.result.map((s) => s.url);
}

test('each URL keeps the compiled text most processes ran; the others are dropped', () => {
  const dir = mkdtempSync(join(tmpdir(), 'akd-coverage-'));
  try {
    const esm = [40, 80, 7];
    const cjs = [12, 40, 80, 7, 30];
    const files = {
      'main-1.json': coverageFile([
        [ESM, esm],
        [PLAIN, undefined],
      ]),
      'main-2.json': coverageFile([[ESM, esm]]),
      'worker.json': coverageFile([
        [ESM, cjs],
        [ONLY, [9, 9]],
        [PLAIN, undefined],
      ]),
    };
    for (const [name, file] of Object.entries(files)) {
      writeFileSync(join(dir, name), JSON.stringify(file));
    }
    writeFileSync(join(dir, 'notes.txt'), 'not coverage');
    writeFileSync(join(dir, 'cut-short.json'), '{"result":[{"url"');
    const before = readFileSync(join(dir, 'main-1.json'), 'utf8');
    const dropped = keepOneTextPerUrl(dir);
    assert.deepEqual([...dropped], [[ESM, 1]]);
    // the worker's own script and the scripts without a map stay; its other text of ESM goes
    assert.deepEqual(urlsIn(dir, 'worker.json'), [ONLY, PLAIN]);
    assert.deepEqual(urlsIn(dir, 'main-2.json'), [ESM]);
    // a file with nothing to drop is left as it was written, and so is one that is not JSON
    assert.equal(readFileSync(join(dir, 'main-1.json'), 'utf8'), before);
    assert.equal(readFileSync(join(dir, 'cut-short.json'), 'utf8'), '{"result":[{"url"');
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});

test('a tie between two texts keeps the same one whatever order the files come in', () => {
  for (const order of [0, 1]) {
    const dir = mkdtempSync(join(tmpdir(), 'akd-coverage-'));
    try {
      const texts = [
        [1, 2],
        [3, 4],
      ];
      writeFileSync(join(dir, 'a.json'), JSON.stringify(coverageFile([[ESM, texts[order]]])));
      writeFileSync(join(dir, 'b.json'), JSON.stringify(coverageFile([[ESM, texts[1 - order]]])));
      keepOneTextPerUrl(dir);
      // the text [1, 2] is kept: a.json holds it in the first order, b.json in the second
      const holding = ['a.json', 'b.json'].filter((n) => urlsIn(dir, n).length > 0);
      assert.deepEqual(holding, [order === 0 ? 'a.json' : 'b.json']);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  }
});
