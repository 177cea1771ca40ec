/**
 * What the client's checks cost in Chromium beside Node, in one run over one directory: an
 * append-only check (fetch once, then decode and chain the steps, as `AkdClient.refresh` does)
 * over 1, 10 and 1,000 epochs, and a monitor check per epoch (a refresh and an owner check of
 * one label, over HTTP on localhost) after each new epoch, each measured in Node and then in a
 * page the akd server serves (so the client's requests are same-origin, as the web page's).
 *
 *   npm run bench -- client-chromium [--json] [--epochs N]
 */

import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { chromium } from 'playwright-core';
import { decodeAppendOnlyProof, initVrfWasm, toHex, utf8 } from '@akd-ts/core';
import { buildApp } from '@akd-ts/server';
import { clientBenchDirectory } from './support/client-directory.js';
import { medianRunMs } from './support/timing.js';
import { AkdClient, MemoryStore, verifyRange } from '@akd-ts/client';
import { CHROMIUM_ARGS, bundleForBrowser, chromiumPath } from '../test/browser/harness.js';
import type { ClientBenchApi } from './support/client-browser.js';

const args = process.argv.slice(2);
const json = args.includes('--json');
const at = args.indexOf('--epochs');
const EPOCHS = at >= 0 ? Number(args[at + 1]) : 1000;
const PER_EPOCH = 10;
const MONITOR_EPOCHS = 21;
const executablePath = chromiumPath();
if (executablePath === undefined) {
  console.error('no Chromium (set AKD_CHROMIUM_PATH or install Debian chromium)');
  process.exit(1);
}

const { config, dir, roots } = await clientBenchDirectory(EPOCHS, PER_EPOCH);
// the bench page, served by the akd server as its web page (its CSP allows same-origin fetches)
const webRoot = mkdtempSync(join(tmpdir(), 'akd-bench-client-'));
writeFileSync(
  join(webRoot, 'index.html'),
  '<!doctype html><meta charset="utf-8"><title>bench</title><script type="module" src="/assets/bench.js"></script>',
);
writeFileSync(join(webRoot, 'bench.js'), await bundleForBrowser('bench/support/client-browser.ts'));
const app = await buildApp({
  directory: dir,
  processMetrics: false,
  webRoot,
  limits: { maxAuditEpochs: EPOCHS },
} as never);
const url = await app.listen({ host: '127.0.0.1', port: 0 });
const browser = await chromium.launch({ executablePath, headless: true, args: CHROMIUM_ARGS });
const page = await browser.newPage();
page.on('pageerror', (e) => console.error(`error in the page: ${e.message}`));
await page.goto(url);
await page.waitForFunction(() => 'akdBench' in globalThis, undefined, { timeout: 30_000 });
const inPage = <M extends keyof ClientBenchApi>(method: M, ...a: Parameters<ClientBenchApi[M]>) =>
  page.evaluate(
    ({ method, a }) =>
      (globalThis as unknown as { akdBench: Record<string, (...x: unknown[]) => unknown> })
        .akdBench[method]!(...a),
    { method, a: a as unknown[] },
  ) as Promise<Awaited<ReturnType<ClientBenchApi[M]>>>;

const rows: { what: string; node: number; chromium: number }[] = [];
for (const span of [1, 10, EPOCHS]) {
  const from = EPOCHS - span;
  const runs = span >= 1000 ? 5 : 21;
  const res = await fetch(`${url}/v1/audit?from=${from}&to=${EPOCHS}`, {
    headers: { accept: 'application/x-protobuf' },
  });
  if (!res.ok) throw new Error(`audit ${from}..${EPOCHS}: ${res.status} ${await res.text()}`);
  const bytes = new Uint8Array(await res.arrayBuffer());
  const head = { epoch: BigInt(from), rootHash: roots[from]! };
  const node = await medianRunMs(runs, () =>
    verifyRange(config, head, BigInt(EPOCHS), decodeAppendOnlyProof(bytes), new Map()),
  );
  const inChromium = await inPage('appendOnly', from, toHex(roots[from]!), EPOCHS, runs);
  rows.push({ what: `append-only check, ${span} epochs (ms)`, node, chromium: inChromium });
}

await initVrfWasm();
const client = new AkdClient({ server: url, store: new MemoryStore() });
await client.registerPublished('owner', 'owner-key');
await dir.publish([{ label: utf8('owner'), value: utf8('owner-key') }]);
await client.checkOwner('owner');
await inPage('monitorSetup');
const nodeChecks: number[] = [];
const pageChecks: number[] = [];
for (let i = 0; i < MONITOR_EPOCHS; i++) {
  await dir.publish([{ label: utf8(`other-${i}`), value: utf8('v') }]);
  const t = performance.now();
  await client.refresh();
  await client.checkOwner('owner');
  nodeChecks.push(performance.now() - t);
  pageChecks.push(await inPage('monitorCheck'));
}
const mid = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;
rows.push({
  what: 'monitor check per epoch, HTTP on localhost (ms)',
  node: mid(nodeChecks),
  chromium: mid(pageChecks),
});

const engine = `Node ${process.version}, Chromium ${browser.version()}`;
await browser.close();
await app.close();
await dir.close();
rmSync(webRoot, { recursive: true, force: true });
if (json) console.log(JSON.stringify({ epochs: EPOCHS, perEpoch: PER_EPOCH, engine, rows }));
else {
  console.log(`client checks, ${engine}, ${EPOCHS} epochs of ${PER_EPOCH} updates (medians)`);
  console.log(`  ${''.padEnd(50)} ${'Node'.padStart(9)} ${'Chromium'.padStart(9)}  ratio`);
  for (const r of rows) {
    console.log(
      `  ${r.what.padEnd(50)} ${r.node.toFixed(3).padStart(9)} ${r.chromium.toFixed(3).padStart(9)}  ${(r.chromium / r.node).toFixed(2)}x`,
    );
  }
}
