// The page end to end in headless Chromium, against real servers on 127.0.0.1 over a demo
// directory: a label verifies and its value shows; an unknown label is a clear not-found; a
// server that tampers with its proofs is caught (NOT verified, with the code); a pasted wrong
// root is refused. The page is built by the package's own build script, and bundles with the
// harness's Node built-in guard.
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, readFileSync, readdirSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { gzipSync, inflateSync } from 'node:zlib';
import { chromium, type Browser, type Page } from 'playwright-core';
import {
  AkdError,
  decodeLookupProof,
  lookupVerify,
  toHex,
  utf8,
  type HistoryProof,
  type LookupProof,
  type MembershipProof,
} from '@akd-ts/core';
import type { ReadOnlyDirectory } from '@akd-ts/directory';
import { startServer, type RunningServer } from '@akd-ts/server';
import {
  CHROMIUM_ARGS,
  bundleForBrowser,
  PAGE_BANNER,
  chromiumPath,
  skippedWithoutChromium,
} from '../../../test/browser/harness.js';
import { demoDirectory, type Fixture } from '../../server/test/support.js';

const executablePath = chromiumPath();

const webRoot = mkdtempSync(join(tmpdir(), 'akd-web-page-'));
// AKD_SCREENSHOT_DIR keeps the screenshots for a person to look at; else they are removed
const keptScreenshots = process.env.AKD_SCREENSHOT_DIR;
const screenshots = keptScreenshots || mkdtempSync(join(tmpdir(), 'akd-web-screenshots-'));
let fixture: Fixture;
let honest: RunningServer;
let tampering: RunningServer;
let browser: Browser | undefined;

before(async () => {
  const build = spawnSync(
    process.execPath,
    [fileURLToPath(new URL('../build.mjs', import.meta.url)), '--out', webRoot],
    { encoding: 'utf8' },
  );
  assert.equal(build.status, 0, build.stderr);
  mkdirSync(screenshots, { recursive: true });
  fixture = await demoDirectory();
  const deps = { directory: fixture.dir, processMetrics: false, webRoot };
  honest = await startServer(deps, { port: 0 });
  // closing a server closes its directory: the tampering one gets a reader of its own
  const { reader } = await import('../../server/test/support.js');
  tampering = await startServer(
    { ...deps, directory: tamperingWith(await reader(fixture.db)) },
    { port: 0 },
  );
  if (executablePath !== undefined) {
    browser = await chromium.launch({ executablePath, headless: true, args: CHROMIUM_ARGS });
  }
});

after(async () => {
  await browser?.close();
  await tampering?.close();
  await honest?.close();
  rmSync(webRoot, { recursive: true, force: true });
  if (!keptScreenshots) rmSync(screenshots, { recursive: true, force: true });
});

/**
 * A server that tampers with its proofs: one bit flipped in the first sibling hash of each
 * served existence proof. The proof still decodes, so a verifier must fail on the root hash
 * it leads to (VERIFY_ROOT_MISMATCH), not on its encoding.
 */
function flipInPath(proof: MembershipProof): MembershipProof {
  const [first, ...rest] = proof.siblingProofs;
  if (first === undefined) {
    // a one-leaf tree has no siblings: flip the proven hash instead
    const hashVal = proof.hashVal.slice();
    hashVal[0]! ^= 1;
    return { ...proof, hashVal };
  }
  const sibling = first.siblings[0];
  const value = sibling.value.slice();
  value[value.length - 1]! ^= 1;
  return {
    ...proof,
    siblingProofs: [{ ...first, siblings: [{ ...sibling, value }] }, ...rest],
  };
}

function tamperLookup(proof: LookupProof): LookupProof {
  return { ...proof, existenceProof: flipInPath(proof.existenceProof) };
}

function tamperHistory(proof: HistoryProof): HistoryProof {
  const [first, ...rest] = proof.updateProofs;
  if (first === undefined) return proof;
  return {
    ...proof,
    updateProofs: [{ ...first, existenceProof: flipInPath(first.existenceProof) }, ...rest],
  };
}

/** `directory`, serving its lookup and history proofs tampered with. */
function tamperingWith(directory: ReadOnlyDirectory): ReadOnlyDirectory {
  return new Proxy(directory, {
    get(target, name) {
      if (name === 'lookup') {
        return async (label: Uint8Array) => {
          const answer = await target.lookup(label);
          return { ...answer, proof: tamperLookup(answer.proof) };
        };
      }
      if (name === 'keyHistory') {
        return async (...args: Parameters<ReadOnlyDirectory['keyHistory']>) => {
          const answer = await target.keyHistory(...args);
          return { ...answer, proof: tamperHistory(answer.proof) };
        };
      }
      const value: unknown = Reflect.get(target, name, target);
      return typeof value === 'function' ? value.bind(target) : value;
    },
  });
}

test('the tampering server serves proofs that decode but lead to another root', async () => {
  const res = await fetch(`${tampering.url}/v1/lookup/alice`, {
    headers: { accept: 'application/x-protobuf' },
  });
  assert.equal(res.status, 200);
  const proof = decodeLookupProof(new Uint8Array(await res.arrayBuffer()));
  const honestProof = (await fixture.dir.lookup(utf8('alice'))).proof;
  const flipped = proof.existenceProof.siblingProofs[0]!.siblings[0].value;
  const original = honestProof.existenceProof.siblingProofs[0]!.siblings[0].value;
  assert.equal(
    flipped.reduce((n, x, i) => n + popcount(x ^ original[i]!), 0),
    1,
    'one bit flipped',
  );
  const epochHash = await fixture.dir.getEpochHash();
  assert.throws(
    () =>
      lookupVerify(
        fixture.dir.config,
        fixture.dir.getPublicKey(),
        epochHash.hash,
        epochHash.epoch,
        utf8('alice'),
        proof,
      ),
    (e: unknown) => e instanceof AkdError && e.code === 'VERIFY_ROOT_MISMATCH',
  );
  // a one-leaf path flips the proven hash; an empty history is left alone
  const leafOnly = tamperLookup({
    ...honestProof,
    existenceProof: { ...honestProof.existenceProof, siblingProofs: [] },
  });
  assert.notDeepEqual(leafOnly.existenceProof.hashVal, honestProof.existenceProof.hashVal);
  const empty = { ...(await fixture.dir.keyHistory(utf8('alice'), { kind: 'complete' })).proof };
  empty.updateProofs = [];
  assert.equal(tamperHistory(empty), empty);
});

function popcount(x: number): number {
  let n = 0;
  for (; x; x &= x - 1) n++;
  return n;
}

/** Opens the page of `server`, looks `label` up and returns the settled verdict. */
async function lookUp(
  server: RunningServer,
  label: string,
  options: { history?: boolean; root?: string; epoch?: string } = {},
): Promise<{ page: Page; kind: string; verdict: string; details: string }> {
  // a laptop screen, on which the result section starts below the form
  const page = await browser!.newPage({ viewport: { width: 1280, height: 800 } });
  const errors: string[] = [];
  page.on('pageerror', (e) => errors.push(e.message));
  page.on('console', (m) => {
    // Chromium reports every 4xx answer as a console error; the page handles those itself
    if (m.type() === 'error' && !m.text().startsWith('Failed to load resource')) {
      errors.push(m.text());
    }
  });
  await page.goto(server.url);
  await page.waitForSelector('#server-root:not([hidden])', { timeout: 15_000 });
  if (options.root !== undefined || options.epoch !== undefined) {
    await page.click('#trusted summary');
    if (options.root !== undefined) await page.fill('#trusted-root', options.root);
    if (options.epoch !== undefined) await page.fill('#trusted-epoch', options.epoch);
  }
  await page.fill('#label', label);
  if (options.history === true) await page.check('#with-history');
  await page.click('#submit');
  // the page marks the verdict once the lookup (with its history) is over and shown
  await page.waitForSelector('#verdict[data-presented]', { timeout: 30_000 });
  assert.notEqual(await page.getAttribute('#verdict', 'data-verdict'), 'checking');
  if (options.history === true) {
    assert.notEqual(await page.getAttribute('#history-verdict', 'data-verdict'), null);
  }
  assert.deepEqual(errors, [], 'no errors in the page');
  return {
    page,
    kind: (await page.getAttribute('#verdict', 'data-verdict'))!,
    verdict: (await page.textContent('#verdict'))!,
    details: (await page.textContent('#details'))!,
  };
}

/** The colour of one screen pixel, read from a 1x1 screenshot (PNG: filters leave one pixel as is). */
async function pixelAt(page: Page, x: number, y: number): Promise<string> {
  const png = await page.screenshot({ clip: { x, y, width: 1, height: 1 } });
  const chunks: Buffer[] = [];
  for (let at = 8; at < png.length;) {
    const length = png.readUInt32BE(at);
    if (png.toString('latin1', at + 4, at + 8) === 'IDAT') {
      chunks.push(png.subarray(at + 8, at + 8 + length));
    }
    at += 12 + length;
  }
  const row = inflateSync(Buffer.concat(chunks)); // [filter type, r, g, b(, a)]
  return `rgb(${row[1]}, ${row[2]}, ${row[3]})`;
}

/** Where the verdict is on screen, whether it has the focus, and what covers its corner. */
async function verdictPlacement(page: Page) {
  return page.evaluate(() => {
    const verdict = document.getElementById('verdict')!;
    const r = verdict.getBoundingClientRect();
    const corner = document.elementFromPoint(r.left + 6, r.top + 6);
    return {
      focused: document.activeElement === verdict,
      top: r.top,
      bottom: r.bottom,
      left: r.left,
      viewport: innerHeight,
      scrolled: scrollY,
      cornerIsVerdict: corner === verdict,
      background: getComputedStyle(verdict).backgroundColor,
    };
  });
}

test('the page bundles for the browser without any Node built-in', async () => {
  const code = await bundleForBrowser('packages/web/src/main.ts');
  assert.ok(code.length > 10_000);
  assert.deepEqual(readdirSync(webRoot).sort(), [
    'app.js',
    'app.js.map',
    'index.html',
    'style.css',
  ]);
  // the page's budget: its code, core and the embedded WebAssembly within 150 KiB gzip
  const app = readFileSync(join(webRoot, 'app.js'));
  // the compile hint works only as the script's first line, and the benches bundle with it
  assert.equal(app.toString('utf8').split('\n', 1)[0], PAGE_BANNER);
  assert.equal(code.split('\n', 1)[0], PAGE_BANNER);
  const gzip = gzipSync(app, { level: 9 }).length;
  assert.ok(gzip <= 150 * 1024, `app.js is ${(gzip / 1024).toFixed(1)} KiB gzip`);
  assert.ok(gzip > 20 * 1024, 'the bundle holds core');
});

test('a published label verifies in the browser: verdict, value, version, epoch and path', async (t) => {
  if (skippedWithoutChromium(t)) return;
  const { page, kind, verdict, details } = await lookUp(honest, 'alice', { history: true });
  assert.equal(kind, 'verified', verdict);
  assert.match(verdict, /Verified: alice has this value at epoch 3/);
  // verified on the WebAssembly arithmetic: the server's policy allows 'wasm-unsafe-eval'
  assert.equal(await page.getAttribute('html', 'data-vrf'), 'wasm');
  assert.match(details, /Valuealice-key-2/);
  assert.match(details, /Version2/);
  assert.match(details, /Published in epoch2/);
  assert.match(details, /Checked against epoch3/);
  const path = (await page.textContent('#path'))!;
  assert.match(path, /Leaf value/);
  assert.match(path, /= the trusted root hash ✔/);
  assert.equal(await page.getAttribute('#history-verdict', 'data-verdict'), 'verified');
  assert.match(
    (await page.textContent('#history'))!,
    /Version 1, published in epoch 1: alice-key-1/,
  );
  // the server's root is shown, with the warning that it is not independent
  assert.match((await page.textContent('#server-root-hash'))!, /^[0-9a-f]{64}$/);
  assert.match((await page.textContent('.note'))!, /auditor or by gossip/);
  await page.close();
});

test('raw-byte labels written hex:<hex> verify too', async (t) => {
  if (skippedWithoutChromium(t)) return;
  const { page, kind, details } = await lookUp(honest, 'hex:00ff07');
  assert.equal(kind, 'verified');
  assert.match(details, /Labelhex:00ff07/);
  assert.match(details, /Value.*hex:010203/);
  await page.close();
});

test('an unknown label is a clear not-found', async (t) => {
  if (skippedWithoutChromium(t)) return;
  const { page, kind, verdict } = await lookUp(honest, 'nobody@example.com');
  assert.equal(kind, 'not-found');
  assert.match(verdict, /Not found: no key is published for nobody@example\.com/);
  await page.close();
});

test('a TAMPERED proof is NOT verified, with the error code', async (t) => {
  if (skippedWithoutChromium(t)) return;
  const { page, kind, verdict } = await lookUp(tampering, 'alice', { history: true });
  assert.equal(kind, 'failed', verdict);
  assert.match(verdict, /NOT verified: VERIFY_ROOT_MISMATCH/);
  assert.match(verdict, /Do not use the value/);
  assert.match((await page.textContent('#path'))!, /≠ the trusted root hash/);
  assert.equal(await page.getAttribute('#history-verdict', 'data-verdict'), 'failed');
  assert.doesNotMatch((await page.textContent('#details'))!, /alice-key-2/, 'no value is shown');
  await page.close();
});

test('a pasted root the proof does not lead to is refused; the right one is accepted', async (t) => {
  if (skippedWithoutChromium(t)) return;
  const wrong = await lookUp(honest, 'bob', { root: toHex(fixture.roots[2]!) });
  assert.equal(wrong.kind, 'failed');
  assert.match(wrong.verdict, /VERIFY_ROOT_MISMATCH/);
  assert.match(wrong.details, /Root hash fromthe root hash you pasted/);
  await wrong.page.close();
  const right = await lookUp(honest, 'bob', { root: toHex(fixture.roots[3]!), epoch: '3' });
  assert.equal(right.kind, 'verified');
  await right.page.close();
  const malformed = await lookUp(honest, 'bob', { root: 'not-a-hash' });
  assert.equal(malformed.kind, 'error');
  assert.match(malformed.verdict, /DECODE_INVALID_VALUE/);
  await malformed.page.close();
});

test('at 1280x800 the verdict is brought into view and focused, as a screenshot shows; errors show no empty box', async (t) => {
  if (skippedWithoutChromium(t)) return;
  const cases = [
    { label: 'alice', kind: 'verified', history: true },
    { label: 'nobody@example.com', kind: 'not-found', history: false },
  ];
  for (const c of cases) {
    const { page, kind } = await lookUp(honest, c.label, { history: c.history });
    assert.equal(kind, c.kind);
    const at = await verdictPlacement(page);
    assert.ok(at.scrolled > 0, `${c.kind}: the page scrolled down to the verdict`);
    assert.ok(
      at.top >= 0 && at.bottom <= at.viewport,
      `${c.kind}: in view (${at.top}..${at.bottom} of ${at.viewport})`,
    );
    assert.ok(at.focused, `${c.kind}: the verdict has the focus`);
    assert.ok(at.cornerIsVerdict, `${c.kind}: nothing covers the verdict`);
    // what is on the screen: the verdict's own colour inside its box, in a 1280x800 screenshot
    assert.equal(await pixelAt(page, at.left + 6, at.top + 6), at.background);
    const shot = await page.screenshot({
      path: join(screenshots, `verdict-${c.kind}-1280x800.png`),
    });
    assert.deepEqual([shot.readUInt32BE(16), shot.readUInt32BE(20)], [1280, 800]);
    if (c.kind === 'not-found') {
      // nothing is known but the verdict: no empty box of details, path or history
      for (const id of ['details', 'path-section', 'history-section']) {
        assert.equal(await page.isVisible(`#${id}`), false, `#${id} is hidden`);
      }
    }
    await page.close();
  }
  t.diagnostic(`screenshots in ${screenshots}`);
});
