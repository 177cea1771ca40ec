// The page's memory across visits, in headless Chromium against real servers on 127.0.0.1
// behind a proxy that can switch directories between two visits of one browser: a second
// visit after a publish is proven to extend the first; a server that forks (another
// directory's root for the epoch the browser verified) is a failed verdict whose evidence
// downloads as the client's JSON; relayed witness signatures show with their age, and a quorum
// older than the maximum age is a stale head.
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { chromium, type Browser, type BrowserContext, type Page } from 'playwright-core';
import { configurationByName, toHex, utf8 } from '@akd-ts/core';
import { Directory, InMemoryVrfKeyStore } from '@akd-ts/directory';
import { MemoryDatabase, StorageManager } from '@akd-ts/storage';
import { startServer, type RunningServer } from '@akd-ts/server';
import {
  CHROMIUM_ARGS,
  chromiumPath,
  skippedWithoutChromium,
} from '../../../test/browser/harness.js';
import { demoDirectory, EPOCHS, SECRET, type Fixture } from '../../server/test/support.js';
import { testWitness } from '../../client/test/support/witness.js';
import { akd } from '../../cli/test/helpers.js';
import { switchProxy, type SwitchProxy } from './support/switch-proxy.js';

const executablePath = chromiumPath();
const webRoot = mkdtempSync(join(tmpdir(), 'akd-web-visits-'));
const running: { close(): Promise<void> }[] = [];
let browser: Browser | undefined;

before(async () => {
  const build = spawnSync(
    process.execPath,
    [fileURLToPath(new URL('../build.mjs', import.meta.url)), '--out', webRoot],
    { encoding: 'utf8' },
  );
  assert.equal(build.status, 0, build.stderr);
  if (executablePath !== undefined) {
    browser = await chromium.launch({ executablePath, headless: true, args: CHROMIUM_ARGS });
  }
});

after(async () => {
  await browser?.close();
  for (const r of running.reverse()) await r.close();
  rmSync(webRoot, { recursive: true, force: true });
});

async function serve(fixture: Fixture): Promise<RunningServer> {
  const server = await startServer(
    { directory: fixture.dir, processMetrics: false, webRoot },
    { port: 0 },
  );
  running.push(server);
  return server;
}

/** A directory with the demo's VRF key and configuration that published `epochs`. */
async function directoryOf(epochs: { label: Uint8Array; value: Uint8Array }[][]): Promise<Fixture> {
  const db = new MemoryDatabase();
  const dir = await Directory.open({
    config: configurationByName('whatsapp_v1'),
    storage: new StorageManager(db),
    vrfKeys: new InMemoryVrfKeyStore(SECRET),
  });
  const roots = [(await dir.getEpochHash()).hash];
  for (const updates of epochs) roots.push((await dir.publish(updates)).hash);
  return { db, dir, roots, close: () => dir.close() };
}

/**
 * The demo directory's first two epochs, then another third epoch: what a server forking its
 * clients at epoch 3 serves to some of them (same VRF key and configuration, another root).
 */
function forkedDirectory(): Promise<Fixture> {
  return directoryOf([
    ...EPOCHS.slice(0, 2),
    [{ label: utf8('alice'), value: utf8('mallory-key') }],
  ]);
}

async function proxyTo(server: RunningServer): Promise<SwitchProxy> {
  const proxy = await switchProxy(server.url);
  running.push(proxy);
  return proxy;
}

/** Opens the page in `context` (one browser's storage) and returns the settled head verdict. */
async function visit(context: BrowserContext, url: string) {
  const page = await context.newPage();
  const errors: string[] = [];
  page.on('pageerror', (e) => errors.push(e.message));
  await page.goto(url);
  await page.waitForSelector('#head-verdict[data-settled]', { timeout: 30_000 });
  assert.deepEqual(errors, [], 'no errors in the page');
  return { page, ...(await headOf(page)) };
}

async function headOf(page: Page) {
  return {
    kind: (await page.getAttribute('#head-verdict', 'data-verdict'))!,
    verdict: (await page.textContent('#head-verdict'))!,
    remembered: (await page.textContent('#remembered'))!,
  };
}

/** `akd verify evidence FILE` checks the downloaded file and finds it proves `kind`. */
async function provenOffline(file: string, kind: string): Promise<void> {
  const checked = await akd(['verify', 'evidence', file]);
  assert.equal(checked.code, 0, checked.stdout + checked.stderr);
  assert.match(checked.stdout, new RegExp(`proven: ${kind}`));
}

/** The browser's verdict on a lookup of `label`. */
async function lookUp(page: Page, label: string): Promise<{ kind: string; verdict: string }> {
  await page.fill('#label', label);
  await page.click('#submit');
  await page.waitForSelector('#verdict[data-presented]', { timeout: 30_000 });
  return {
    kind: (await page.getAttribute('#verdict', 'data-verdict'))!,
    verdict: (await page.textContent('#verdict'))!,
  };
}

test('a second visit after a publish is proven to extend the first (append-only proof)', async (t) => {
  if (skippedWithoutChromium(t)) return;
  const fixture = await demoDirectory();
  const proxy = await proxyTo(await serve(fixture));
  const context = await browser!.newContext();
  const first = await visit(context, proxy.url);
  assert.equal(first.kind, 'first-use', first.verdict);
  assert.match(first.verdict, /First visit: this browser now remembers epoch 3/);
  assert.match(first.remembered, /epoch 3, root hash [0-9a-f]{64}, trusted on first use/);
  await first.page.close();

  const root4 = (await fixture.dir.publish([{ label: utf8('dave'), value: utf8('dave-key') }]))
    .hash;
  const second = await visit(context, proxy.url);
  assert.equal(second.kind, 'verified', second.verdict);
  assert.match(second.verdict, /Epoch 4 extends your last visit's epoch 3/);
  assert.match(
    second.remembered,
    new RegExp(`epoch 4, root hash ${toHex(root4)}, proven to extend`),
  );
  // lookups verify against the head the browser verified
  const found = await lookUp(second.page, 'dave');
  assert.equal(found.kind, 'verified', found.verdict);
  assert.match(
    (await second.page.textContent('#details'))!,
    /Root hash fromthe head this browser verified/,
  );
  // a publish while the page is open: the lookup's newer epoch is proven before it is used
  const root5 = (await fixture.dir.publish([{ label: utf8('erin'), value: utf8('erin-key') }]))
    .hash;
  const fresh = await lookUp(second.page, 'erin');
  assert.equal(fresh.kind, 'verified', fresh.verdict);
  assert.match(fresh.verdict, /at epoch 5/);
  const now = await headOf(second.page);
  assert.match(now.verdict, /Epoch 5 extends your last visit's epoch 4/);
  assert.match(now.remembered, new RegExp(`epoch 5, root hash ${toHex(root5)}`));
  await context.close();
});

test('a server that forks between two visits is a failed verdict with evidence to download', async (t) => {
  if (skippedWithoutChromium(t)) return;
  const honest = await demoDirectory();
  const forked = await forkedDirectory();
  const honestServer = await serve(honest);
  const proxy = await proxyTo(honestServer);
  const context = await browser!.newContext({ acceptDownloads: true });
  const first = await visit(context, proxy.url);
  assert.equal(first.kind, 'first-use', first.verdict);
  await first.page.close();

  // the same origin now serves another directory's root and proofs for epoch 3
  proxy.target = (await serve(forked)).url;
  const second = await visit(context, proxy.url);
  assert.equal(second.kind, 'failed', second.verdict);
  assert.match(second.verdict, /FORK: CLIENT_FORK/);
  assert.match(second.verdict, new RegExp(toHex(forked.roots[3]!)));
  // the browser still remembers the head it verified, not the forked one
  assert.match(second.remembered, new RegExp(`epoch 3, root hash ${toHex(honest.roots[3]!)}`));
  assert.equal(await second.page.textContent('#server-root-hash'), toHex(forked.roots[3]!));
  // AKD_SCREENSHOT_DIR keeps a picture of the verdict for a person to look at
  const shots = process.env.AKD_SCREENSHOT_DIR;
  if (shots) await second.page.screenshot({ path: join(shots, 'head-fork.png'), fullPage: true });

  const [download] = await Promise.all([
    second.page.waitForEvent('download'),
    second.page.click('#evidence-download'),
  ]);
  assert.equal(download.suggestedFilename(), 'akd-evidence-fork-epoch-3.json');
  const evidence = JSON.parse(readFileSync((await download.path())!, 'utf8')) as {
    format: string;
    kind: string;
    code: string;
    directory: { server: string; publicKey: string };
    heads: { epoch: string; rootHash: string; source: string }[];
  };
  assert.equal(evidence.format, 'akd-evidence');
  assert.equal(evidence.kind, 'fork');
  assert.equal(evidence.code, 'CLIENT_FORK');
  assert.equal(evidence.directory.server, proxy.url);
  const served = (await (await fetch(`${honestServer.url}/v1/epoch`)).json()) as {
    publicKey: string;
  };
  assert.equal(evidence.directory.publicKey, served.publicKey);
  assert.deepEqual(
    evidence.heads.map((h) => [h.epoch, h.rootHash, h.source]),
    [
      ['3', toHex(honest.roots[3]!), 'verified (first-use)'],
      ['3', toHex(forked.roots[3]!), 'served'],
    ],
  );
  await provenOffline((await download.path())!, 'fork');

  // nothing the forked server proves is shown as verified
  const lookup = await lookUp(second.page, 'alice');
  assert.equal(lookup.kind, 'failed');
  assert.match(lookup.verdict, /head failed its check \(CLIENT_FORK\)/);
  assert.doesNotMatch((await second.page.textContent('#details'))!, /mallory-key/);
  await context.close();
});

test('a server that rolls back between two visits is a failed verdict with evidence', async (t) => {
  if (skippedWithoutChromium(t)) return;
  const proxy = await proxyTo(await serve(await demoDirectory()));
  const context = await browser!.newContext({ acceptDownloads: true });
  const first = await visit(context, proxy.url);
  assert.equal(first.kind, 'first-use', first.verdict);
  await first.page.close();

  // the same directory as it was at epoch 2 (same key, same roots up to there)
  const older = await directoryOf(EPOCHS.slice(0, 2));
  proxy.target = (await serve(older)).url;
  const second = await visit(context, proxy.url);
  assert.equal(second.kind, 'failed', second.verdict);
  assert.match(second.verdict, /ROLLBACK: CLIENT_ROLLBACK/);
  assert.match(second.verdict, /epoch 2, older than the verified epoch 3/);
  const [download] = await Promise.all([
    second.page.waitForEvent('download'),
    second.page.click('#evidence-download'),
  ]);
  assert.equal(download.suggestedFilename(), 'akd-evidence-rollback-epoch-2.json');
  const evidence = JSON.parse(readFileSync((await download.path())!, 'utf8')) as {
    kind: string;
    heads: { epoch: string; rootHash: string }[];
  };
  assert.equal(evidence.kind, 'rollback');
  assert.deepEqual(
    evidence.heads.map((h) => h.epoch),
    ['3', '2'],
  );
  assert.equal(evidence.heads[1]!.rootHash, toHex(older.roots[2]!));
  await provenOffline((await download.path())!, 'rollback');
  await context.close();
});

test('witness signatures show with their age; a quorum older than the maximum age is stale', async (t) => {
  if (skippedWithoutChromium(t)) return;
  const fixture = await demoDirectory();
  const proxy = await proxyTo(await serve(fixture));
  const witness = testWitness(7);
  const other = testWitness(9);
  const signedAt = Date.now() - 2 * 3_600_000; // two hours before the visit
  proxy.epochBody = (body) => ({
    ...body,
    witnesses: [
      witness.sign('akd-test', 3n, fixture.roots[3]!, signedAt),
      other.sign('akd-test', 3n, fixture.roots[3]!, signedAt, 0x0002),
    ],
  });
  const context = await browser!.newContext({ acceptDownloads: true });
  const { page, kind } = await visit(context, proxy.url);
  assert.equal(kind, 'first-use');
  // no keys trusted yet: shown, not counted
  const unchecked = (await page.textContent('#witness-list'))!;
  assert.match(
    unchecked,
    /namespace 'akd-test', ciphersuite 0x0001: epoch 3, the served root hash, signed 2 h ago/,
  );
  assert.match(unchecked, /ciphersuite 0x0002/);
  assert.match(unchecked, /Not checked: no trusted witness keys set/);

  // trust one of the two witnesses
  await page.click('#witness-settings summary');
  await page.fill('#witness-keys', toHex(witness.publicKey));
  await page.fill('#witness-namespace', 'akd-test');
  await page.click('#witness-save');
  await page.waitForSelector('#head-verdict[data-settled]');
  const same = await headOf(page);
  assert.equal(same.kind, 'verified', same.verdict);
  assert.match(same.verdict, /Same head as on your last visit: epoch 3/);
  const rows = await page.$$eval('#witness-list li', (lis) =>
    lis.map((li) => [li.getAttribute('data-status'), li.textContent]),
  );
  assert.equal(rows[0]![0], 'valid');
  assert.match(
    rows[0]![1]!,
    new RegExp(`Valid signature of trusted key ${toHex(witness.publicKey)}`),
  );
  assert.equal(rows[1]![0], 'invalid');
  assert.match(
    (await page.textContent('#witness-status'))!,
    /relayed 2 witness signatures.*You trust 1 witness; a head needs 1 of their signatures/,
  );

  // at most one hour old: the quorum's two-hour-old signatures make the head stale
  await page.fill('#witness-max-age', '1');
  await page.click('#witness-save');
  await page.waitForSelector('#head-verdict[data-settled]');
  const stale = await headOf(page);
  assert.equal(stale.kind, 'failed', stale.verdict);
  assert.match(stale.verdict, /STALE head: CLIENT_STALE_HEAD/);
  const [download] = await Promise.all([
    page.waitForEvent('download'),
    page.click('#evidence-download'),
  ]);
  const evidence = JSON.parse(readFileSync((await download.path())!, 'utf8')) as {
    kind: string;
    witnesses: { keys: string[]; quorum: number; namespace: string; maxAgeMs: number };
    heads: { witnesses: unknown[] }[];
  };
  assert.equal(evidence.kind, 'stale');
  assert.deepEqual(evidence.witnesses, {
    keys: [toHex(witness.publicKey)],
    quorum: 1,
    namespace: 'akd-test',
    maxAgeMs: 3_600_000,
  });
  assert.equal(evidence.heads[0]!.witnesses.length, 1);
  await provenOffline((await download.path())!, 'stale');

  // the settings are kept by the browser: a later visit reads them back
  const later = await visit(context, proxy.url);
  assert.equal(later.kind, 'failed');
  assert.equal(await later.page.inputValue('#witness-max-age'), '1');
  await context.close();
});

test('a saved state the client cannot read is an error until the person forgets it', async (t) => {
  if (skippedWithoutChromium(t)) return;
  const proxy = await proxyTo(await serve(await demoDirectory()));
  const context = await browser!.newContext();
  const first = await visit(context, proxy.url);
  // what another page of the origin, or a person, left in the page's storage key
  await first.page.evaluate(() => localStorage.setItem('akd-page-state', '{"format":"other"}'));
  await first.page.close();
  const second = await visit(context, proxy.url);
  assert.equal(second.kind, 'error', second.verdict);
  assert.match(second.verdict, /Could not verify the server's head: CLIENT_STATE/);
  assert.equal(await second.page.isVisible('#evidence-actions'), false, 'no evidence to offer');
  const refused = await lookUp(second.page, 'alice');
  assert.equal(refused.kind, 'failed');
  assert.match(refused.verdict, /head failed its check \(CLIENT_STATE\)/);
  await second.page.click('#forget-head');
  await second.page.waitForSelector('#head-verdict[data-settled][data-verdict="first-use"]');
  const found = await lookUp(second.page, 'alice');
  assert.equal(found.kind, 'verified', found.verdict);
  await context.close();
});
