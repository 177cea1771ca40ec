/**
 * The first lookup of a fresh Chromium page on WebAssembly, with core's sources of another
 * commit beside the working tree's: the page side of `npm run bench -- verify`
 * (`bench/support/verify-browser.ts`, `firstLookup`) is bundled twice, once against
 * `<commit>`'s packages/core/src (extracted under tmp/, which git ignores), and fresh browsers
 * alternate between the two bundles, so both see the same machine at the same time. Each side
 * is bundled as its commit bundled pages: without the compile hint (`PAGE_BANNER`) for a
 * commit whose harness did not add it.
 *
 *   npx tsx bench/first-lookup-compare.ts <commit> [pages per side, default 9]
 */

import { execFileSync } from 'node:child_process';
import { mkdirSync, rmSync } from 'node:fs';
import { loadavg } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import {
  PAGE_BANNER,
  bundleForBrowser,
  chromiumPath,
  openInChromium,
} from '../test/browser/harness.js';
import { toHexInputs } from '../test/browser/wire.js';
import { loadVectors } from '../test/support/vectors.js';
import type { AkdBenchApi } from './support/verify-browser.js';

const [commit, pagesArg] = process.argv.slice(2);
const executablePath = chromiumPath();
if (commit === undefined || executablePath === undefined) {
  console.error('usage: npx tsx bench/first-lookup-compare.ts <commit> [pages] (needs Chromium)');
  process.exit(2);
}
const pages = Number(pagesArg ?? 9);
const root = fileURLToPath(new URL('..', import.meta.url));
const dir = join(root, 'tmp', `compare-${commit}`);
rmSync(dir, { recursive: true, force: true });
mkdirSync(dir, { recursive: true });
const archive = execFileSync('git', ['archive', commit, 'packages/core/src'], { cwd: root });
execFileSync('tar', ['-x', '-C', dir], { input: archive });

const entry = 'bench/support/verify-browser.ts';
const baseHarness = execFileSync('git', ['show', `${commit}:test/browser/harness.ts`], {
  cwd: root,
  encoding: 'utf8',
});
const baseBundle = await bundleForBrowser(entry, {
  '@akd-ts/core': join(dir, 'packages/core/src/index.ts'),
});
const sides = [
  {
    name: commit,
    bundle: baseHarness.includes(PAGE_BANNER)
      ? baseBundle
      : baseBundle.slice(baseBundle.indexOf('\n') + 1),
  },
  { name: 'working tree', bundle: await bundleForBrowser(entry) },
];
const hex = toHexInputs(loadVectors('whatsapp_v1'));
const load = [loadavg()];
const ms = new Map<string, number[]>(sides.map((s) => [s.name, []]));
for (let i = 0; i < pages; i++) {
  for (const side of sides) {
    const fresh = await openInChromium(side.bundle, 'akdBench', executablePath);
    try {
      const first = await fresh.page.evaluate(
        (h) => (globalThis as unknown as { akdBench: AkdBenchApi }).akdBench.firstLookup(h, 'wasm'),
        hex,
      );
      ms.get(side.name)!.push(first.ms);
    } finally {
      await fresh.close();
    }
  }
}
load.push(loadavg());
rmSync(dir, { recursive: true, force: true });

const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;
console.log(
  `first lookup of a fresh Chromium page, WebAssembly, ${pages} pages a side, alternating; load average ${load.map((l) => l.map((x) => x.toFixed(2)).join(' ')).join(' -> ')}`,
);
for (const [name, xs] of ms) {
  console.log(
    `${name}: median ${median(xs).toFixed(1)} ms (${xs.map((x) => x.toFixed(1)).join(', ')})`,
  );
}
const [base, head] = [...ms.values()].map(median);
console.log(`working tree / ${commit}: ${(head! / base!).toFixed(2)}`);
